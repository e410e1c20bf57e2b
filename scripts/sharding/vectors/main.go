// Prints test vectors for kube-informer's shard selector, computed by kube-apiserver's own code
// (k8s.io/apimachinery/pkg/sharding): the hash of each value, and whether objects match selectors.
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
)

type hashVector struct {
	Value string `json:"value"`
	Hash  string `json:"hash"`
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
	out := map[string]any{
		"source":  "k8s.io/apimachinery v0.37.2 pkg/sharding (HashField, NewSelector, Matches, String)",
		"hashes":  hashes,
		"matches": matches,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
