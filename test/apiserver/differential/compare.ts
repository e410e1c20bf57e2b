// The differential suite's comparison: pairs the two transcripts request by request, names where the normalised answers differ, and checks them against the known differences.

import type { KnownDifference, Mask } from './known-differences.js';
import type { Exchange } from './wire.js';

/** One compared request whose answers differ. */
export interface Difference {
  key: string;
  request: string;
  /** Every differing path (`.status`, `.body.metadata.labels`, …). */
  paths: string[];
  /** Up to eight `path: fake … | real …` lines, for the failure message. */
  where: string[];
}

/** What {@link compareTranscripts} found. */
export interface Comparison {
  /** Requests compared. */
  compared: number;
  /** Requests whose answers differ after the masks. */
  differences: Difference[];
  /** Per mask: how many requests it made equal or closer (a mask that never does is stale). */
  masked: Map<Mask, number>;
}

/**
 * Compares two transcripts of the same scenarios, after applying each mask to both sides; throws
 * when they do not hold the same keys in the same order (a scenario branched on its server).
 */
export function compareTranscripts(fake: Exchange[], real: Exchange[], masks: readonly Mask[]): Comparison {
  const keysA = fake.map((e) => e.key);
  const keysB = real.map((e) => e.key);
  if (JSON.stringify(keysA) !== JSON.stringify(keysB)) {
    const i = keysA.findIndex((k, n) => k !== keysB[n]);
    throw new Error(`the transcripts part at request ${i}: ${keysA[i]} vs ${keysB[i]}`);
  }
  const masked = new Map(masks.map((m) => [m, 0]));
  const differences: Difference[] = [];
  for (const [i, a] of fake.entries()) {
    let x: unknown = a.answer;
    let y: unknown = real[i].answer;
    for (const m of masks) {
      const before = diff(x, y).length;
      const [mx, my] = [m.apply(structuredClone(x)), m.apply(structuredClone(y))];
      if (diff(mx, my).length < before) masked.set(m, (masked.get(m) ?? 0) + 1);
      [x, y] = [mx, my];
    }
    const where = diff(x, y);
    if (where.length > 0) differences.push({ key: a.key, request: a.request, paths: where.map((w) => w.path), where: where.slice(0, 8).map((w) => w.line) });
  }
  return { compared: fake.length, differences, masked };
}

/** True when `known` is about `d`'s request (its keys match). */
export function concerns(known: KnownDifference, d: Difference): boolean {
  const keys = known.keys;
  if (typeof keys === 'string') return keys === d.key;
  if (Array.isArray(keys)) return keys.some((label) => d.key === `${known.scenario ?? ''} › ${label}`);
  return keys.test(d.key);
}

/** The differing paths of `d` that `known` covers (all of them when it names no fields, none when it is not about `d`). */
export function covered(known: KnownDifference, d: Difference): string[] {
  if (!concerns(known, d)) return [];
  const fields = known.fields;
  if (fields === undefined) return d.paths;
  return d.paths.filter((p) => fields.some((f) => p === f || p.startsWith(`${f}.`) || p.startsWith(`${f}[`)));
}

/** True when the known differences together cover every path in which `d` differs. */
export function explained(known: readonly KnownDifference[], d: Difference): boolean {
  const all = new Set(known.flatMap((k) => covered(k, d)));
  return d.paths.every((p) => all.has(p));
}

function diff(a: unknown, b: unknown, path = '', out: Array<{ path: string; line: string }> = []): Array<{ path: string; line: string }> {
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[k], b[k], `${path}.${k}`, out);
  } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((v, i) => diff(v, b[i], `${path}[${i}]`, out));
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push({ path: path || '.', line: `${path || '.'}: fake ${show(a)} | real ${show(b)}` });
  }
  return out;
}

function show(v: unknown): string {
  const s = v === undefined ? 'absent' : JSON.stringify(v);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
