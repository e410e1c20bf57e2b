// Shard selectors (KEP-5866, Kubernetes 1.36+, alpha gate ShardedListAndWatch): which slice of a
// collection a list or watch asks for, by a 64-bit FNV-1a hash of an object's uid or namespace.
//
// The server's rules, from k8s.io/apimachinery/pkg/sharding and k8s.io/apiserver/pkg/sharding at
// v1.37.2: the hash is FNV-1a 64 over the field's UTF-8 bytes, written as 16 lowercase hex digits; an
// object matches `shardRange(field, start, end)` when start ≤ hash < end, the bounds being `0x` and
// exactly 16 hex digits, or `0x10000000000000000` (2^64) for the end of the space; ranges are joined
// with `||` and must all name the same field. test/core/shard-selector.test.ts checks this code
// against vectors the server's own Go code produced (scripts/sharding/vectors).

import { KubeInformerError, ErrorCodes } from './errors.js';
import { preview } from './preview.js';

/** The field a shard selector hashes: `uid` (objects spread evenly) or `namespace` (a namespace stays whole). */
export type ShardField = 'uid' | 'namespace';

/** A half-open range `[start, end)` of the 64-bit hash space, `0 ≤ start < end ≤ 2^64`. */
export interface HashRange {
  /** The first hash in the range (inclusive), ≥ 0. */
  readonly start: bigint;
  /** The end of the range (exclusive), ≤ 2^64. */
  readonly end: bigint;
}

/** A shard selector: objects whose `field` hashes into one of `ranges`. Build one with {@link shardSelector}. */
export interface ShardSelector {
  /** What is hashed: `uid` or `namespace`. */
  readonly field: ShardField;
  /** Sorted, non-empty, neither overlapping nor touching (adjacent ranges are merged). */
  readonly ranges: readonly HashRange[];
}

/** The size of the hash space: 2^64. */
export const HASH_SPACE = 1n << 64n;

const PATHS: Record<ShardField, string> = { uid: 'object.metadata.uid', namespace: 'object.metadata.namespace' };

/** A shard selector that is malformed: its text does not parse, or its ranges are out of order (code `INVALID_SELECTOR`). */
export class ShardSelectorError extends KubeInformerError {
  /** The input, or a preview of it. */
  readonly selector: string;
  /** Why it failed. */
  readonly reason: string;

  constructor(selector: string, reason: string) {
    super(ErrorCodes.INVALID_SELECTOR, `invalid shard selector ${preview(selector)}: ${reason}`);
    this.selector = selector;
    this.reason = reason;
  }
}

/**
 * The one validator of shard selectors: checks the field and every range (`0 ≤ start < end ≤ 2^64`),
 * sorts the ranges and merges those that overlap or touch. Throws {@link ShardSelectorError}.
 */
export function shardSelector(field: ShardField, ranges: readonly HashRange[]): ShardSelector {
  const shown = (): string => `${String(field)} ${Array.from(ranges ?? [], (r) => `[${String(r?.start)}, ${String(r?.end)})`).join(' ')}`;
  if (field !== 'uid' && field !== 'namespace') throw new ShardSelectorError(shown(), `the field must be 'uid' or 'namespace', not ${JSON.stringify(field)}`);
  // Not Array.isArray: it would widen a readonly array to any[].
  if (ranges === null || typeof ranges !== 'object' || typeof ranges.length !== 'number' || ranges.length === 0) {
    throw new ShardSelectorError(shown(), 'at least one range is needed');
  }
  for (const r of ranges) {
    if (typeof r?.start !== 'bigint' || typeof r.end !== 'bigint') throw new ShardSelectorError(shown(), 'range bounds must be bigints');
    if (r.start < 0n || r.end > HASH_SPACE || r.start >= r.end) {
      throw new ShardSelectorError(shown(), `the range [${hex(r.start)}, ${hex(r.end)}) is empty or outside [0, 2^64)`);
    }
  }
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: HashRange[] = [];
  for (const r of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && r.start <= last.end) merged[merged.length - 1] = { start: last.start, end: r.end > last.end ? r.end : last.end };
    else merged.push({ start: r.start, end: r.end });
  }
  return Object.freeze({ field, ranges: Object.freeze(merged.map((r) => Object.freeze(r))) });
}

/** Shard `index` of `count` even shards of the hash space (`count` ≥ 1, `0 ≤ index < count`). */
export function evenShard(index: number, count: number, field: ShardField = 'uid'): ShardSelector {
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(index) || index < 0 || index >= count) {
    throw new ShardSelectorError(`${index} of ${count}`, 'needs whole numbers with 0 ≤ index < count');
  }
  return shardSelector(field, [evenRange(index, count)]);
}

/** The `index`-th of `count` equal ranges of the hash space (the last one ends at 2^64). */
export function evenRange(index: number, count: number): HashRange {
  const n = BigInt(count);
  return { start: (BigInt(index) * HASH_SPACE) / n, end: (BigInt(index + 1) * HASH_SPACE) / n };
}

/** A bound as the server writes it: `0x` and 16 lowercase hex digits (17 for 2^64). */
function hex(v: bigint): string {
  return `0x${v.toString(16).padStart(16, '0')}`;
}

/** The selector as the `shardSelector` query parameter, exactly as the server echoes it in `shardInfo`. */
export function formatShardSelector(selector: ShardSelector): string {
  const path = PATHS[selector.field];
  return selector.ranges.map((r) => `shardRange(${path}, '${hex(r.start)}', '${hex(r.end)}')`).join(' || ');
}

const TERM = /^\s*shardRange\(\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*,\s*(['"])([^'"]*)\2\s*,\s*(['"])([^'"]*)\4\s*\)\s*$/;

/** A bound in the server's strict form: `0x` + 16 lowercase hex digits, or `0x10000000000000000`. */
function parseBound(text: string, which: string, input: string): bigint {
  if (text === '0x10000000000000000') return HASH_SPACE;
  if (!/^0x[0-9a-f]{16}$/.test(text)) {
    throw new ShardSelectorError(input, `${which} ${JSON.stringify(text)} must be 0x and 16 lowercase hex digits (or 0x10000000000000000)`);
  }
  return BigInt(text);
}

/**
 * Parses the wire form (`shardRange(object.metadata.uid, '0x…', '0x…') || …`) with the server's rules:
 * only `shardRange` terms joined by `||`, one field for all, bounds of exactly 16 hex digits, start <
 * end. Throws {@link ShardSelectorError}.
 */
export function parseShardSelector(text: string): ShardSelector {
  if (typeof text !== 'string' || text.trim() === '') throw new ShardSelectorError(String(text), 'an empty shard selector; leave the option out for everything');
  let field: ShardField | undefined;
  const ranges: HashRange[] = [];
  for (const term of text.split('||')) {
    const m = TERM.exec(term);
    if (m === null) throw new ShardSelectorError(text, `${JSON.stringify(term.trim())} is not shardRange(field, 'start', 'end')`);
    const path = m[1].replace(/\s+/g, '');
    const f = (Object.keys(PATHS) as ShardField[]).find((k) => PATHS[k] === path);
    if (f === undefined) throw new ShardSelectorError(text, `unsupported field ${path}; supported: object.metadata.uid, object.metadata.namespace`);
    if (field !== undefined && f !== field) throw new ShardSelectorError(text, `all ranges must use the same field, got ${PATHS[field]} and ${path}`);
    field = f;
    const start = parseBound(m[3], 'start', text);
    const end = parseBound(m[5], 'end', text);
    if (start >= end) throw new ShardSelectorError(text, `start ${m[3]} must be less than end ${m[5]}`);
    ranges.push({ start, end });
  }
  return shardSelector(field as ShardField, ranges);
}

const encoder = new TextEncoder();

/**
 * The 64-bit FNV-1a hash of `value`'s UTF-8 bytes as 16 lowercase hex digits — what the server
 * compares with a range's bounds. Four 16-bit limbs in plain numbers: no bigint per byte.
 */
export function shardHash(value: string): string {
  // Offset basis 0xcbf29ce484222325, low limb first.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  const bytes = isAscii(value) ? undefined : encoder.encode(value);
  const n = bytes === undefined ? value.length : bytes.length;
  for (let i = 0; i < n; i++) {
    h0 ^= bytes === undefined ? value.charCodeAt(i) : bytes[i];
    // × prime 0x100000001b3 = 0x1b3 + 2^40 (limb 2 gets × 0x100), modulo 2^64.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + h0 * 0x100 + Math.floor(t1 / 0x10000);
    const t3 = h3 * 0x1b3 + h1 * 0x100 + Math.floor(t2 / 0x10000);
    h0 = t0 & 0xffff;
    h1 = t1 % 0x10000;
    h2 = t2 % 0x10000;
    h3 = t3 % 0x10000;
  }
  return limb(h3) + limb(h2) + limb(h1) + limb(h0);
}

function limb(v: number): string {
  return v.toString(16).padStart(4, '0');
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** The value of `field` on `obj` (`""` when absent, as the server reads it). */
export function shardFieldValue(obj: unknown, field: ShardField): string {
  const meta = (obj as { metadata?: { uid?: unknown; namespace?: unknown } } | null)?.metadata;
  const v = field === 'uid' ? meta?.uid : meta?.namespace;
  return typeof v === 'string' ? v : '';
}

/**
 * A matcher for `selector`, as the server applies it: true when the object's field hashes into one of
 * the ranges. Bounds are compared as hex text, like the server does, with no bigint per object.
 */
export function shardMatcher(selector: ShardSelector): (obj: unknown) => boolean {
  const bounds = selector.ranges.map((r) => [hexKey(r.start), hexKey(r.end)] as const);
  const field = selector.field;
  return (obj) => {
    const h = shardHash(shardFieldValue(obj, field));
    for (const [start, end] of bounds) if (h >= start && (end === '' || h < end)) return true;
    return false;
  };
}

/** A bound as 16 hex digits for string comparison with a hash; 2^64 (above every hash) as `''`. */
function hexKey(v: bigint): string {
  return v === HASH_SPACE ? '' : v.toString(16).padStart(16, '0');
}
