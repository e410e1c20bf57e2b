// One secondary index: buckets from indexed value to keys, and each key's current values.

import { IndexFuncError } from './errors.js';
import type { IndexFunc } from './types.js';

/**
 * The values one object has in one index: `undefined` for none, a string for exactly one (the common
 * case, stored without an array), or an array of two or more distinct strings.
 */
export type IndexValues = string | readonly string[] | undefined;

/** Dedupes a validated list of two or more strings; returns a string when only one is left. */
function distinct(list: readonly string[]): string | readonly string[] {
  if (list.length <= 8) {
    const out: string[] = [];
    for (const v of list) if (!out.includes(v)) out.push(v);
    return out.length === 1 ? out[0] : out;
  }
  const out = Array.from(new Set(list));
  return out.length === 1 ? out[0] : out;
}

/** True when `v` is among `vals`. */
function has(vals: IndexValues, v: string): boolean {
  if (vals === undefined) return false;
  if (typeof vals === 'string') return vals === v;
  return vals.includes(v);
}

/**
 * One index of a store: buckets `value → key | Set<key>` (a single member is kept as a bare string, so
 * a high-cardinality index costs no Set per object). Empty buckets are dropped at once.
 *
 * Memory: nothing is stored per object for the common case of exactly one value. Keys with no value
 * or with several are remembered (a Set and a Map, usually empty). To move a single-valued key, its old
 * value is recomputed from the stored object and *verified* by bucket membership (a single-valued key
 * is in exactly one bucket); when that fails (the stored object was changed in place, the index
 * function is not pure, or it throws now) the index is scanned for the key instead, so no stale bucket
 * can ever be left behind.
 *
 * Not exported from the package: the store is the only user.
 */
export class IndexState<T> {
  /** The index name. */
  readonly name: string;
  /** The index function. */
  readonly fn: IndexFunc<T>;
  #buckets = new Map<string, string | Set<string>>();
  /** Keys indexed under no value. */
  #none = new Set<string>();
  /** Keys indexed under two or more values, with those values. */
  #multi = new Map<string, readonly string[]>();

  constructor(name: string, fn: IndexFunc<T>) {
    this.name = name;
    this.fn = fn;
  }

  /**
   * Runs the index function on `obj` (stored under `key`) and normalizes the result. Changes nothing.
   * Throws {@link IndexFuncError} when the function throws or returns anything but an array of strings.
   */
  compute(key: string, obj: T): IndexValues {
    let out: unknown;
    try {
      out = this.fn(obj);
    } catch (err) {
      throw new IndexFuncError(this.name, key, err);
    }
    if (!Array.isArray(out)) {
      throw new IndexFuncError(this.name, key, new TypeError(`returned ${typeof out}, not an array of strings`));
    }
    const n = out.length;
    if (n === 1 && typeof out[0] === 'string') return out[0];
    for (let i = 0; i < n; i++) {
      if (typeof out[i] !== 'string') {
        throw new IndexFuncError(this.name, key, new TypeError(`returned a non-string value at position ${i}`));
      }
    }
    return n === 0 ? undefined : distinct(out as string[]);
  }

  /**
   * Moves `key` to the values `next`. `stored` is the object currently stored under `key`, or
   * `undefined` when the key is new. Never throws.
   */
  set(key: string, stored: T | undefined, next: IndexValues): void {
    // Fast path: a single-valued key is in exactly one bucket; if that is already `next`, nothing moves.
    if (stored !== undefined && typeof next === 'string' && this.#bucketHas(next, key) && this.#isSingle(key)) return;
    const old = stored === undefined ? undefined : this.valuesOf(key, stored);
    if (old === next) return; // the same single value (verified), or none before and after
    if (typeof old === 'string') {
      if (!has(next, old)) this.#remove(old, key);
    } else if (old !== undefined) {
      for (const v of old) if (!has(next, v)) this.#remove(v, key);
    }
    if (typeof next === 'string') {
      if (!has(old, next)) this.#add(next, key);
      if (this.#none.size !== 0) this.#none.delete(key);
      if (this.#multi.size !== 0) this.#multi.delete(key);
    } else if (next !== undefined) {
      for (const v of next) if (!has(old, v)) this.#add(v, key);
      this.#multi.set(key, next);
      if (this.#none.size !== 0) this.#none.delete(key);
    } else {
      this.#none.add(key);
      if (this.#multi.size !== 0) this.#multi.delete(key);
    }
  }

  /** Removes `key` (currently holding `stored`) from every bucket it is in. Never throws. */
  delete(key: string, stored: T): void {
    this.set(key, stored, undefined);
    this.#none.delete(key);
  }

  /** The values `key` (currently holding `stored`) is indexed under, exactly. Never throws. */
  valuesOf(key: string, stored: T): IndexValues {
    if (this.#none.size !== 0 && this.#none.has(key)) return undefined;
    if (this.#multi.size !== 0) {
      const m = this.#multi.get(key);
      if (m !== undefined) return m;
    }
    // Single-valued: recompute and verify; a key with one value is in exactly one bucket.
    let v: unknown;
    try {
      v = this.fn(stored);
    } catch {
      v = undefined;
    }
    if (Array.isArray(v) && typeof v[0] === 'string' && this.#bucketHas(v[0], key)) return v[0];
    return this.#scan(key);
  }

  /** The keys in the bucket of `value`, in a fresh array (insertion order). */
  keys(value: string): string[] {
    const b = this.#buckets.get(value);
    if (b === undefined) return [];
    return typeof b === 'string' ? [b] : Array.from(b);
  }

  /** Calls `fn` for each key in the bucket of `value`, without allocating. */
  forEachKey(value: string, fn: (key: string) => void): void {
    const b = this.#buckets.get(value);
    if (b === undefined) return;
    if (typeof b === 'string') fn(b);
    else for (const k of b) fn(k);
  }

  /** Every value with at least one key, in a fresh array. */
  values(): string[] {
    return Array.from(this.#buckets.keys());
  }

  /** A new, empty index with the same name and function. */
  emptyCopy(): IndexState<T> {
    return new IndexState(this.name, this.fn);
  }

  /** Finds the one bucket holding single-valued `key` by looking at every bucket (the slow path). */
  #scan(key: string): string | undefined {
    for (const [value, b] of this.#buckets) {
      if (b === key || (typeof b !== 'string' && b.has(key))) return value;
    }
    return undefined;
  }

  #isSingle(key: string): boolean {
    return !(this.#none.size !== 0 && this.#none.has(key)) && !(this.#multi.size !== 0 && this.#multi.has(key));
  }

  #bucketHas(value: string, key: string): boolean {
    const b = this.#buckets.get(value);
    return b === key || (b !== undefined && typeof b !== 'string' && b.has(key));
  }

  #add(value: string, key: string): void {
    const b = this.#buckets.get(value);
    if (b === undefined) this.#buckets.set(value, key);
    else if (typeof b === 'string') {
      if (b !== key) this.#buckets.set(value, new Set([b, key]));
    } else b.add(key);
  }

  #remove(value: string, key: string): void {
    const b = this.#buckets.get(value);
    if (b === undefined) return;
    if (typeof b === 'string') {
      if (b === key) this.#buckets.delete(value);
      return;
    }
    b.delete(key);
    if (b.size === 1) {
      // Back to a bare string: a bucket never keeps a Set for a single member, and never stays empty.
      const [last] = b;
      this.#buckets.set(value, last);
    }
  }
}

/**
 * Moves `key` from `stored`'s index values to `obj`'s in every index of `indices` (`stored` is
 * `undefined` for a new key). Every value is computed before any is set, so an index function that
 * throws (`IndexFuncError`) leaves every index as it was. The one index write of a store, and of a
 * content built aside for one (content.ts).
 */
export function reindex<T>(indices: readonly IndexState<T>[], key: string, obj: T, stored: T | undefined): void {
  const n = indices.length;
  if (n === 0) return;
  if (n === 1) {
    indices[0].set(key, stored, indices[0].compute(key, obj));
    return;
  }
  const vals = new Array<IndexValues>(n);
  for (let i = 0; i < n; i++) vals[i] = indices[i].compute(key, obj);
  for (let i = 0; i < n; i++) indices[i].set(key, stored, vals[i]);
}
