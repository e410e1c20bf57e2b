// Prints test vectors for kube-informer's shard selector, computed by kube-apiserver's own code: the
// hash of each value and whether objects match selectors (k8s.io/apimachinery/pkg/sharding), and what
// the server's parser behind ?shardSelector= (k8s.io/apiserver/pkg/sharding.Parse, CEL-based) accepts
// and the String() it echoes in metadata.shardInfo.selector.
// Run: scripts/sharding/vectors.sh (writes test/fixtures/sharding-vectors.json).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	apiserversharding "k8s.io/apiserver/pkg/sharding"
)

type hashVector struct {
	Value string `json:"value"`
	Hash  string `json:"hash"`
}

// parseVector: whether the server's Parse accepts Input and, if so, the String() it echoes in
// metadata.shardInfo.selector; if not, its error (which kube-apiserver answers as a 500).
type parseVector struct {
	Input  string `json:"input"`
	OK     bool   `json:"ok"`
	String string `json:"string,omitempty"`
	Error  string `json:"error,omitempty"`
}

type matchVector struct {
	Selector  string `json:"selector"`
	UID       string `json:"uid"`
	Namespace string `json:"namespace"`
	Matches   bool   `json:"matches"`
}

func main() {
	values := []string{"", "a", "b", "default", "kube-system", "kube-public", "ns-0", "ns-49", "ü", "名前空間", "emoji-😀", strings.Repeat("x", 300), "a\"b\\c"}
	// Deterministic uid-shaped strings.
	for i := 0; i < 200; i++ {
		values = append(values, fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", i*2654435761%(1<<32), (i*7)%(1<<16), (i*13)%(1<<12), (i*17)%(1<<12), i*31))
	}
	// Namespace-like names, bytes that need care in UTF-8 or JSON, and a long value (appended, so the
	// match vectors below, made from the first 60 values, stay the same).
	for i := 0; i < 10; i++ {
		values = append(values, fmt.Sprintf("ns-%d", i), fmt.Sprintf("tenant-%c", 'a'+i))
	}
	values = append(values, "kube-node-lease", "\x00", "\x7f", "\u0080", "é", "e\u0301", "\u00df", "\uffff", "\U0010ffff", "<&>", strings.Repeat("名", 5000))
	hashes := make([]hashVector, 0, len(values))
	for _, v := range values {
		hashes = append(hashes, hashVector{Value: v, Hash: sharding.HashField(v)})
	}
	type req struct{ key, start, end string }
	selectors := [][]req{
		{{"object.metadata.uid", "0x0000000000000000", "0x8000000000000000"}},
		{{"object.metadata.uid", "0x8000000000000000", "0x10000000000000000"}},
		{{"object.metadata.uid", "0x0000000000000000", "0x4000000000000000"}, {"object.metadata.uid", "0xc000000000000000", "0x10000000000000000"}},
		{{"object.metadata.namespace", "0x4000000000000000", "0xc000000000000000"}},
		{{"object.metadata.uid", "0x3fffffffffffffff", "0x4000000000000001"}},
	}
	var matches []matchVector
	for _, s := range selectors {
		reqs := make([]sharding.ShardRangeRequirement, 0, len(s))
		for _, r := range s {
			reqs = append(reqs, sharding.ShardRangeRequirement{Key: r.key, Start: r.start, End: r.end})
		}
		sel := sharding.NewSelector(reqs...)
		for i, v := range values[:60] {
			obj := &unstructured.Unstructured{}
			obj.SetUID(types.UID(v))
			obj.SetNamespace(values[(i*7)%len(values[:60])])
			ok, err := sel.Matches(obj)
			if err != nil {
				panic(err)
			}
			matches = append(matches, matchVector{Selector: sel.String(), UID: v, Namespace: obj.GetNamespace(), Matches: ok})
		}
	}
	parses := make([]parseVector, 0, len(parseInputs))
	for _, in := range parseInputs {
		v := parseVector{Input: in}
		if sel, err := apiserversharding.Parse(in); err != nil {
			v.Error = err.Error()
		} else {
			v.OK, v.String = true, sel.String()
		}
		parses = append(parses, v)
	}
	out := map[string]any{
		"source":  "k8s.io/apimachinery v0.37.2 pkg/sharding (HashField, NewSelector, Matches, String), k8s.io/apiserver v0.37.2 pkg/sharding (Parse)",
		"hashes":  hashes,
		"matches": matches,
		"parses":  parses,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}

const (
	lo = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
	hi = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
)

// parseInputs: the cases of apiserver's parser_test.go, then more rejections, then what the server
// accepts beyond one canonical range: several ranges (in any order, repeated, overlapping; String()
// keeps them as written) and other CEL spellings (quotes, whitespace, parentheses, escapes).
var parseInputs = []string{
	// parser_test.go
	"",
	lo,
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
	lo + " || " + hi,
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000005') || shardRange(object.metadata.uid, '0x0000000000000005', '0x000000000000000a') || shardRange(object.metadata.uid, '0x000000000000000a', '0x000000000000000f')",
	"shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')",
	"  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  ",
	"shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')",
	"shardRange(object.metadata.uid, '0x', '0x8000000000000000')",
	"shardRange(object.metadata.name, '0x00', '0x80')",
	"shardRange(object.metadata.labels, '0x00', '0x80')",
	"invalidFunc(object.metadata.uid, '0x00', '0x80')",
	"shardRange(object.metadata.uid, '0x000000000000000000', '0x80')",
	"shardRange(object.metadata.uid, '0x0g', '0x80')",
	"shardRange(object.metadata.uid, '0x0', '0x8') && shardRange(object.metadata.uid, '0x8', '0xf')",
	"shardRange(object.metadata.uid, 0, 8)",
	"object.metadata.uid > '0x0'",
	"shardRange(object.metadata.uid, '0x0')",
	"shardRange(object.metadata.uid, hex(0), '0x8')",
	lo + " || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0xff')",
	"shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')",
	// More rejections.
	"   ",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000001')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0xFFFFFFFFFFFFFFFF')",
	"shardRange(object.metadata.uid, '0X0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, ' 0x0000000000000000', '0x8000000000000000')",
	"shardRange(metadata.uid, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(uid, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000', '0x1')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000',)",
	lo + " ||",
	"|| " + lo,
	lo + " | " + hi,
	lo + " or " + hi,
	"!" + lo,
	"shardrange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(object['metadata'].uid, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, b'0x0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'",
	lo + " || " + lo + " && " + hi,
	// Accepted: several ranges; String() keeps their order and repeats, and merges nothing.
	hi + " || " + lo,
	lo + " || " + lo,
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x9000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.uid, '0xfffffffffffffffe', '0xffffffffffffffff')",
	"shardRange(object.metadata.uid, '0xffffffffffffffff', '0x10000000000000000')",
	// Accepted: other CEL spellings of the same ranges.
	`shardRange(object.metadata.uid, "0x0000000000000000", "0x8000000000000000")`,
	"shardRange(object . metadata . uid, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(\tobject.metadata.uid,\n'0x0000000000000000',\r\n'0x8000000000000000')",
	lo + "||" + hi,
	"shardRange(object.metadata.uid, r'0x0000000000000000', '0x8000000000000000')",
	`shardRange(object.metadata.uid, '\x30x0000000000000000', '0x8000000000000000')`,
	"shardRange(object.metadata.uid, '''0x0000000000000000''', '0x8000000000000000')",
	"(" + lo + ") || (" + hi + ")",
	"(" + lo + " || " + hi + ")",
	lo + " || (" + hi + " || " + lo + ")",
	lo + " // a comment",
}
