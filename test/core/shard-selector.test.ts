// Shard selectors against the server's own code: hashes and matches from k8s.io/apimachinery's
// pkg/sharding (test/fixtures/sharding-vectors.json, made by scripts/sharding/vectors.sh), and the
// parser cases of k8s.io/apiserver's pkg/sharding/parser_test.go.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  HASH_SPACE,
  ShardSelectorError,
  evenRange,
  evenShard,
  formatShardSelector,
  parseShardSelector,
  shardHash,
  shardMatcher,
  shardSelector,
} from '../../src/core/shard-selector.js';

interface Vectors {
  hashes: Array<{ value: string; hash: string }>;
  matches: Array<{ selector: string; uid: string; namespace: string; matches: boolean }>;
}
const vectors = JSON.parse(readFileSync(new URL('../fixtures/sharding-vectors.json', import.meta.url), 'utf8')) as Vectors;

describe('shard hash and matcher, bit-exact with kube-apiserver', () => {
  it(`hashes all ${vectors.hashes.length} values as the server does (FNV-1a 64 of the UTF-8 bytes)`, () => {
    expect(vectors.hashes.length).toBeGreaterThan(200);
    for (const v of vectors.hashes) expect([v.value, shardHash(v.value)]).toEqual([v.value, v.hash]);
  });

  it(`matches all ${vectors.matches.length} object/selector pairs as the server does, and formats its selectors identically`, () => {
    expect(vectors.matches.some((m) => m.matches) && vectors.matches.some((m) => !m.matches)).toBe(true);
    for (const m of vectors.matches) {
      const selector = parseShardSelector(m.selector);
      const obj = { metadata: { uid: m.uid, namespace: m.namespace } };
      expect([m.selector, m.uid, shardMatcher(selector)(obj)]).toEqual([m.selector, m.uid, m.matches]);
    }
    // The server's String() of a one-range selector round-trips through ours.
    const single = vectors.matches.find((m) => !m.selector.includes('||'))!.selector;
    expect(formatShardSelector(parseShardSelector(single))).toBe(single);
  });

  it('an object without the field hashes the empty string, as the server reads it', () => {
    const empty = BigInt(`0x${shardHash('')}`);
    const holding = shardSelector('uid', [{ start: empty, end: empty + 1n }]);
    expect(shardMatcher(holding)({ metadata: {} })).toBe(true);
    expect(shardMatcher(holding)({ metadata: { uid: 'x' } })).toBe(false);
  });
});

describe('parseShardSelector (the server parser cases)', () => {
  const ok: Array<[string, string, Array<[bigint, bigint]>]> = [
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')", 'uid', [[0n, 1n << 63n]]],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')", 'uid', [[0n, HASH_SPACE]]],
    ["shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')", 'namespace', [[0xaan, 0xffn]]],
    // Adjacent ranges are merged: the same objects match.
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')", 'uid', [[0n, HASH_SPACE]]],
    ["shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')", 'uid', [[0n, 1n << 63n]]],
    ["  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  ", 'uid', [[0n, 1n << 63n]]],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000005') || shardRange(object.metadata.uid, '0x000000000000000a', '0x000000000000000f')", 'uid', [[0n, 5n], [10n, 15n]]],
  ];
  it.each(ok)('parses %s', (text, field, ranges) => {
    const s = parseShardSelector(text);
    expect(s.field).toBe(field);
    expect(s.ranges.map((r) => [r.start, r.end])).toEqual(ranges);
  });

  const bad = [
    '',
    "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')",
    "shardRange(object.metadata.uid, '0x', '0x8000000000000000')",
    "shardRange(object.metadata.name, '0x00', '0x80')",
    "shardRange(object.metadata.labels, '0x00', '0x80')",
    "invalidFunc(object.metadata.uid, '0x00', '0x80')",
    "shardRange(object.metadata.uid, '0x000000000000000000', '0x80')",
    "shardRange(object.metadata.uid, '0x0g', '0x80')",
    "shardRange(object.metadata.uid, '0x0', '0x8') && shardRange(object.metadata.uid, '0x8', '0xf')",
    'shardRange(object.metadata.uid, 0, 8)',
    "object.metadata.uid > '0x0'",
    "shardRange(object.metadata.uid, '0x0')",
    "shardRange(object.metadata.uid, hex(0), '0x8')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0xff')",
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000001')",
  ];
  it.each(bad)('rejects %s with INVALID_SELECTOR', (text) => {
    expect(() => parseShardSelector(text)).toThrow(ShardSelectorError);
    expect(() => parseShardSelector(text)).toThrow(expect.objectContaining({ code: 'INVALID_SELECTOR' }));
  });
});

describe('building shard selectors', () => {
  it('even shards cover the space exactly once, and every object lands in exactly one', () => {
    for (const n of [1, 2, 3, 4, 7, 64]) {
      const ranges = Array.from({ length: n }, (_, i) => evenRange(i, n));
      expect(ranges[0].start).toBe(0n);
      expect(ranges[n - 1].end).toBe(HASH_SPACE);
      for (let i = 1; i < n; i++) expect(ranges[i].start).toBe(ranges[i - 1].end);
      const matchers = Array.from({ length: n }, (_, i) => shardMatcher(evenShard(i, n)));
      for (const v of vectors.hashes) {
        const owners = matchers.filter((m) => m({ metadata: { uid: v.value } })).length;
        expect(owners).toBe(1);
      }
    }
  });

  it('formats as the server writes it, and parses back to the same selector', () => {
    const s = shardSelector('namespace', [{ start: 3n << 62n, end: HASH_SPACE }, { start: 0n, end: 1n << 62n }]);
    const text = formatShardSelector(s);
    expect(text).toBe("shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')");
    expect(parseShardSelector(text)).toEqual(s);
  });

  it('rejects empty, reversed and out-of-space ranges, and unknown fields', () => {
    expect(() => shardSelector('uid', [])).toThrow(ShardSelectorError);
    expect(() => shardSelector('uid', [{ start: 5n, end: 5n }])).toThrow(/empty or outside/);
    expect(() => shardSelector('uid', [{ start: -1n, end: 5n }])).toThrow(/outside/);
    expect(() => shardSelector('uid', [{ start: 0n, end: HASH_SPACE + 1n }])).toThrow(/outside/);
    expect(() => shardSelector('name' as 'uid', [{ start: 0n, end: 1n }])).toThrow(/'uid' or 'namespace'/);
    expect(() => evenShard(3, 3)).toThrow(ShardSelectorError);
  });
});
