// Our shard-selector parser against kube-apiserver's own: the `parses` vectors of
// test/fixtures/sharding-vectors.json are what k8s.io/apiserver/pkg/sharding.Parse (v0.37.2, the CEL
// parser behind `?shardSelector=`) made of each input — accepted with the String() it echoes in
// `metadata.shardInfo.selector`, or refused. (The hash and matcher vectors of the same file are
// checked in test/core/shard-selector.test.ts.)
//
// The direction that matters: whatever the server refuses, we refuse too — `newListWatch` validates its
// `shard` option at construction, so a selector we accepted and the server refused would be a 500 on
// every request. The other way round, we accept a subset of CEL: the forms a client writes, not
// parentheses, comments, raw or triple-quoted strings, or escapes; the list of those is pinned below.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  HASH_SPACE,
  ShardSelectorError,
  evenShard,
  formatShardSelector,
  parseShardSelector,
  shardHash,
  shardMatcher,
  shardSelector,
  type HashRange,
  type ShardSelector,
} from '../../src/sharding/index.js';

interface ParseVector {
  input: string;
  ok: boolean;
  string?: string;
  error?: string;
}
interface Vectors {
  hashes: Array<{ value: string; hash: string }>;
  parses: ParseVector[];
}
const vectors = JSON.parse(readFileSync(new URL('../fixtures/sharding-vectors.json', import.meta.url), 'utf8')) as Vectors;
const accepted = vectors.parses.filter((p) => p.ok);
const refused = vectors.parses.filter((p) => !p.ok);

/** CEL spellings the server accepts and our parser does not (no client of ours sends them). */
const CEL_ONLY = [
  "shardRange(object.metadata.uid, r'0x0000000000000000', '0x8000000000000000')",
  "shardRange(object.metadata.uid, '\\x30x0000000000000000', '0x8000000000000000')",
  "shardRange(object.metadata.uid, '''0x0000000000000000''', '0x8000000000000000')",
  "(shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')) || (shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000'))",
  "(shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000'))",
  "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || (shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000') || shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'))",
  "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') // a comment",
];

function tryParse(text: string): ShardSelector | ShardSelectorError {
  try {
    return parseShardSelector(text);
  } catch (err) {
    if (err instanceof ShardSelectorError) return err;
    throw err;
  }
}

/** The ranges of the server's String() form, read term by term (each term is canonical there). */
function serverRanges(text: string): { field: string; ranges: HashRange[] } {
  const terms = [...text.matchAll(/shardRange\(object\.metadata\.(uid|namespace), '(0x[0-9a-f]+)', '(0x[0-9a-f]+)'\)/g)];
  expect(terms.map((t) => t[0]).join(' || ')).toBe(text);
  return { field: terms[0][1], ranges: terms.map((t) => ({ start: BigInt(t[2]), end: BigInt(t[3]) })) };
}

describe("parseShardSelector against kube-apiserver's parser (vectors from k8s.io/apiserver v0.37.2)", () => {
  it('the vectors hold the cases of parser_test.go and both outcomes', () => {
    expect(vectors.parses.length).toBeGreaterThanOrEqual(60);
    expect(accepted.length).toBeGreaterThan(15);
    expect(refused.length).toBeGreaterThan(30);
  });

  it.each(refused.map((p) => [p.input, p.error] as const))('refuses %j, as the server does (%s)', (input) => {
    const result = tryParse(input);
    expect(result).toBeInstanceOf(ShardSelectorError);
    expect(result).toMatchObject({ code: 'INVALID_SELECTOR' });
  });

  it.each(accepted.filter((p) => !CEL_ONLY.includes(p.input)).map((p) => [p.input, p.string!] as const))(
    'accepts %j with the ranges the server parsed',
    (input, echoed) => {
      const ours = tryParse(input);
      expect(ours).not.toBeInstanceOf(ShardSelectorError);
      const server = serverRanges(echoed);
      // Ours sorts and merges; the same hashes match.
      expect(ours).toEqual(shardSelector(server.field as 'uid' | 'namespace', server.ranges));
      // A selector with one range, or ranges apart and in order, formats exactly as the server echoes it.
      const s = ours as ShardSelector;
      if (s.ranges.length === server.ranges.length) expect(formatShardSelector(s)).toBe(echoed);
    },
  );

  it('refuses exactly the pinned CEL-only spellings among what the server accepts', () => {
    const theirsNotOurs = accepted.filter((p) => tryParse(p.input) instanceof ShardSelectorError).map((p) => p.input);
    expect(theirsNotOurs).toEqual(CEL_ONLY);
  });

  it('the server echoes ranges as written — in order, repeats kept, nothing merged', () => {
    const lo = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
    const hi = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";
    const echo = (input: string): string | undefined => accepted.find((p) => p.input === input)?.string;
    expect(echo(`${hi} || ${lo}`)).toBe(`${hi} || ${lo}`);
    expect(echo(`${lo} || ${lo}`)).toBe(`${lo} || ${lo}`);
    expect(echo(`${lo}||${hi}`)).toBe(`${lo} || ${hi}`);
    // What we send is already sorted and merged, so the echo is the text sent.
    const sent = formatShardSelector(shardSelector('uid', [{ start: 1n << 63n, end: HASH_SPACE }, { start: 0n, end: 1n << 62n }]));
    expect(parseShardSelector(sent).ranges).toHaveLength(2);
    expect(formatShardSelector(parseShardSelector(sent))).toBe(sent);
  });
});

describe('building selectors', () => {
  it('one validator: empty, reversed, out-of-space and non-bigint ranges, unknown fields', () => {
    const bad: Array<[unknown, unknown]> = [
      ['uid', []],
      ['uid', [{ start: 3n, end: 3n }]],
      ['uid', [{ start: 4n, end: 3n }]],
      ['uid', [{ start: -1n, end: 3n }]],
      ['uid', [{ start: 0n, end: HASH_SPACE + 1n }]],
      ['uid', [{ start: 0, end: 3 }]],
      ['name', [{ start: 0n, end: 3n }]],
      ['uid', undefined],
    ];
    for (const [field, ranges] of bad) {
      expect(() => shardSelector(field as 'uid', ranges as HashRange[])).toThrow(ShardSelectorError);
    }
  });

  it('overlapping and touching ranges merge into one; ranges apart stay apart, sorted', () => {
    const s = shardSelector('uid', [
      { start: 100n, end: 200n },
      { start: 0n, end: 10n },
      { start: 150n, end: 300n },
      { start: 300n, end: 400n },
    ]);
    expect(s.ranges).toEqual([
      { start: 0n, end: 10n },
      { start: 100n, end: 400n },
    ]);
    expect(Object.isFrozen(s) && Object.isFrozen(s.ranges)).toBe(true);
  });

  it('a union of shards of an even split matches what either matches, and merges back when adjacent', () => {
    const a = evenShard(1, 4).ranges[0];
    const b = evenShard(3, 4).ranges[0];
    const union = shardSelector('uid', [a, b]);
    expect(union.ranges).toHaveLength(2);
    const [ma, mb, mu] = [shardMatcher(evenShard(1, 4)), shardMatcher(evenShard(3, 4)), shardMatcher(union)];
    for (const v of vectors.hashes) {
      const obj = { metadata: { uid: v.value } };
      expect(mu(obj)).toBe(ma(obj) || mb(obj));
    }
    const halves = shardSelector('uid', [evenShard(0, 2).ranges[0], evenShard(1, 2).ranges[0]]);
    expect(halves.ranges).toEqual([{ start: 0n, end: HASH_SPACE }]);
  });

  it('the bounds of a range are exact: start is in, end is out', () => {
    const h = BigInt(`0x${shardHash('kube-system')}`);
    const obj = { metadata: { namespace: 'kube-system' } };
    expect(shardMatcher(shardSelector('namespace', [{ start: h, end: h + 1n }]))(obj)).toBe(true);
    expect(shardMatcher(shardSelector('namespace', [{ start: h + 1n, end: HASH_SPACE }]))(obj)).toBe(false);
    expect(shardMatcher(shardSelector('namespace', [{ start: 0n, end: h }]))(obj)).toBe(false);
    expect(shardMatcher(shardSelector('namespace', [{ start: h - 1n, end: h }]))(obj)).toBe(false);
  });
});
