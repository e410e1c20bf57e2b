// Shared fixtures for the DeltaFIFO tests: tiny named objects, a fixed known-objects list, formatting.

import { DeletedFinalStateUnknown } from '../../src/core/index.js';
import type { DeltaFIFO, Deltas, KeyListerGetter } from '../../src/fifo/index.js';
export { seededRandom as prng } from '../../src/testing/random.js';

/** The "fifo object" of client-go's tests: a name and a value (plus an optional transform counter). */
export interface FifoObj {
  metadata: { name: string; resourceVersion?: string };
  val: number;
  transformCount?: number;
}

/** `obj('foo', 10)` is written `foo:10` in the catalogue. */
export function obj(name: string, val: number): FifoObj {
  return { metadata: { name }, val };
}

/** A knownObjects stand-in over a fixed list (client-go's literalListerGetter). */
export function literal(...items: FifoObj[]): KeyListerGetter<FifoObj> {
  return {
    listKeys: () => items.map((i) => i.metadata.name),
    getByKey: (key) => items.find((i) => i.metadata.name === key),
  };
}

function fmtObj(o: unknown): string {
  if (o instanceof DeletedFinalStateUnknown) return `DFSU(${o.key}, ${fmtObj(o.obj)})`;
  if (o === undefined) return 'nil';
  const f = o as FifoObj;
  return `${f.metadata.name}:${f.val}`;
}

/** Renders deltas in the catalogue's notation: `Deleted(DFSU(bar, bar:6))`. */
export function fmt(deltas: Deltas<FifoObj> | undefined): string[] | undefined {
  return deltas?.map((d) => `${d.type}(${fmtObj(d.object)})`);
}

/** The newest object's value of a popped item (a tombstone's inner value). */
export function newestVal(deltas: Deltas<FifoObj>): number {
  const o = deltas[deltas.length - 1].object;
  return o instanceof DeletedFinalStateUnknown ? o.obj.val : o.val;
}

/** Pops one item with a no-op process. */
export function popOne(f: DeltaFIFO<FifoObj>): Promise<Deltas<FifoObj>> {
  return f.pop(() => {});
}

/** Pops until the queue is empty, returning each popped key with its formatted deltas, in order. */
export async function drain(f: DeltaFIFO<FifoObj>): Promise<Array<[string, string[]]>> {
  const out: Array<[string, string[]]> = [];
  while (f.listKeys().length > 0) {
    const deltas = await popOne(f);
    out.push([f.keyOf(deltas), fmt(deltas) as string[]]);
  }
  return out;
}

