// The indexed store: client-go's thread-safe store and Indexer, with atomic writes and snapshot reads.

import { InvalidObjectError, KubeInformerError } from '../core/errors.js';
import { InvalidOptionError } from '../core/options.js';
import { DeletedFinalStateUnknown, type KeyFunc } from '../core/keys.js';
import { preview } from '../core/preview.js';
import { getResourceVersion } from '../core/types.js';
import { IndexerConflictError, UnknownIndexError } from './errors.js';
import { StoreContent } from './content.js';
import { IndexState, reindex, type IndexValues } from './indices.js';
import type { Indexer, Indexers, IndexFunc, Store } from './types.js';

/** Set in IndexedStore's static block: the one way in to its keyed write (see {@link putByKey}). */
let put: <T>(store: IndexedStore<T>, key: string, obj: T) => T | undefined;

/**
 * Stores `obj` under `key` — which the caller computed with the store's own key function — and returns
 * the object it replaced (`undefined` for an add). Internal (not exported from the package): the
 * informer's delta processing, which has the key from its DeltaFIFO, so the key is not built and
 * hashed again for the read and again for the write. The first keyed write of a store checks the key
 * against its key function and throws `INVALID_OPTION` when they differ (a store keyed another way).
 */
export function putByKey<T>(store: IndexedStore<T>, key: string, obj: T): T | undefined {
  return put(store, key, obj);
}

// Other rooms reach the content's type through this file, the room's door for keyed writes.
export type { StoreContent };

/** Set in IndexedStore's static block: see {@link prepareContent}. */
let prepare: <T>(store: IndexedStore<T>) => StoreContent<T> | undefined;

/**
 * A {@link StoreContent} to build aside for `store`, with empty copies of its indices; `undefined` when
 * the store holds something (its content is then not what adding to an empty store gives). Internal (not
 * exported from the package): an informer's fresh first list (`informer/first-list.ts`).
 */
export function prepareContent<T>(store: IndexedStore<T>): StoreContent<T> | undefined {
  return prepare(store);
}

/** Set in IndexedStore's static block: see {@link adoptContent}. */
let adopt: <T>(store: IndexedStore<T>, content: StoreContent<T>, lastResourceVersion: string) => boolean;

/**
 * Makes `content` (prepared for this store by {@link prepareContent}, each key computed with the store's
 * own key function) the store's whole content and indices: what {@link putByKey} of every entry, in the
 * order added, would leave. `lastResourceVersion` is the last non-empty `metadata.resourceVersion` of
 * the objects in that order (`''` for none), which the caller read as it added them; it becomes
 * {@link IndexedStore.lastStoreSyncResourceVersion}, as the writes would leave it. Returns false,
 * changing nothing, when the store holds something or its indices changed since the content was
 * prepared (`addIndexers`). The store keeps the content's map and indices: the caller must not touch
 * `content` again. Like `putByKey`, the store's first keyed write checks one key against its key function
 * (`INVALID_OPTION` when they differ).
 */
export function adoptContent<T>(store: IndexedStore<T>, content: StoreContent<T>, lastResourceVersion: string): boolean {
  return adopt(store, content, lastResourceVersion);
}

/**
 * The store behind {@link newStore} and {@link newIndexer}: a map from key to object plus any number
 * of secondary indices. Semantics are client-go's (`cache.NewIndexer` over its thread-safe store):
 * `add` and `update` are the same upsert, deleting a missing key does nothing, `replace` swaps the
 * whole content and rebuilds every index, `resync` does nothing.
 *
 * What it adds to client-go:
 * - Every write is atomic. Key and index values are all computed before anything changes, so a key
 *   function or index function that throws leaves the objects and every index exactly as they were.
 *   The error is an `IndexFuncError` (code `INDEX_FUNC_FAILED`) naming the index and the key,
 *   or the key function's error (code `INVALID_OBJECT`), never a crash of the process.
 * - Each key's index values are remembered, so an object that was changed in place after it was
 *   stored (which it must not be) cannot leave stale index entries behind.
 * - Reads return fresh arrays: a later write never changes an array already returned.
 *
 * Warning: objects are stored and returned by reference. Never mutate one you got from a store.
 */
export class IndexedStore<T> implements Indexer<T> {
  static {
    put = (store, key, obj) => store.#put(key, obj);
    prepare = (store) => (store.#items.size > 0 ? undefined : new StoreContent(store.#indices));
    adopt = (store, content, lastResourceVersion) => store.#adopt(content, lastResourceVersion);
  }

  #keyFunc: KeyFunc<T>;
  #items = new Map<string, T>();
  #indices: IndexState<T>[] = [];
  #byName = new Map<string, IndexState<T>>();
  #lastResourceVersion = '';
  /** Whether a key given to putByKey has been checked against this store's key function yet. */
  #givenKeyChecked = false;

  /**
   * @param keyFunc - computes each object's key (usually `deletionHandlingMetaNamespaceKeyFunc`)
   * @param indexers - the initial index functions by name (default: none)
   */
  constructor(keyFunc: KeyFunc<T>, indexers: Indexers<T> = {}) {
    this.#keyFunc = keyFunc;
    for (const [name, fn] of Object.entries(indexers)) {
      checkIndexFunc(name, fn);
      const state = new IndexState(name, fn);
      this.#indices.push(state);
      this.#byName.set(name, state);
    }
  }

  /** Inserts or replaces `obj` under its key. Atomic: on any error nothing changed. */
  add(obj: T): void {
    this.#upsert(obj);
  }

  /** Inserts or replaces `obj` under its key (the same as {@link IndexedStore.add}). */
  update(obj: T): void {
    this.#upsert(obj);
  }

  /**
   * Removes the object with `obj`'s key from the store and every index; a missing key does nothing.
   * A {@link DeletedFinalStateUnknown} is accepted when the key function understands it.
   */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.#keyOf(obj);
    if (!(obj instanceof DeletedFinalStateUnknown)) this.#track(obj);
    const stored = this.#items.get(key);
    if (stored === undefined) return;
    for (const index of this.#indices) index.delete(key, stored);
    this.#items.delete(key);
  }

  /** Every stored object, in a fresh array. */
  list(): T[] {
    return Array.from(this.#items.values());
  }

  /** Every key, in a fresh array. */
  listKeys(): string[] {
    return Array.from(this.#items.keys());
  }

  /** The stored object with `obj`'s key, or `undefined`. */
  get(obj: T): T | undefined {
    return this.#items.get(this.#keyOf(obj));
  }

  /** The stored object under `key`, or `undefined`. */
  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  /**
   * Swaps the whole content for `items` and rebuilds every index; a later item wins over an earlier
   * one with the same key. Atomic: when any key or index function throws, nothing changed.
   */
  replace(items: T[], resourceVersion: string): void {
    const n = items.length;
    const keys = new Array<string>(n);
    for (let i = 0; i < n; i++) keys[i] = this.#keyOf(items[i]);
    const map = new Map<string, T>();
    for (let i = 0; i < n; i++) map.set(keys[i], items[i]);
    const fresh = this.#indices.map((index) => index.emptyCopy());
    for (const index of fresh) {
      for (const [key, obj] of map) index.set(key, undefined, index.compute(key, obj));
    }
    // Everything computed: swap in one step.
    this.#items = map;
    this.#indices = fresh;
    this.#byName = new Map(fresh.map((index) => [index.name, index]));
    this.#lastResourceVersion = resourceVersion;
  }

  /** Does nothing: a store has nobody to re-deliver its items to. */
  resync(): void {}

  /**
   * The resource version of the last write: the `resourceVersion` given to `replace`, or the
   * `metadata.resourceVersion` of the last object added, updated or deleted (a tombstone or an object
   * without one leaves it unchanged). `''` before any. Informational, like client-go's
   * `LastStoreSyncResourceVersion`; the reflector's own bookkeeping is authoritative.
   */
  lastStoreSyncResourceVersion(): string {
    return this.#lastResourceVersion;
  }

  /** Objects sharing at least one value of index `indexName` with `obj`, without duplicates. */
  index(indexName: string, obj: T): T[] {
    const index = this.#index(indexName);
    let key: string;
    try {
      key = this.#keyOf(obj);
    } catch {
      key = '(object without a key)';
    }
    const vals = index.compute(key, obj);
    if (vals === undefined) return [];
    if (typeof vals === 'string') return this.#objects(index, vals);
    const keys = new Set<string>();
    for (const v of vals) index.forEachKey(v, (k) => keys.add(k));
    const out: T[] = [];
    for (const k of keys) out.push(this.#items.get(k) as T);
    return out;
  }

  /** Keys of the objects indexed under `indexedValue`, sorted (as client-go sorts them). */
  indexKeys(indexName: string, indexedValue: string): string[] {
    return this.#index(indexName).keys(indexedValue).sort();
  }

  /** Every value of index `indexName` that has at least one object. */
  listIndexFuncValues(indexName: string): string[] {
    return this.#index(indexName).values();
  }

  /** Objects indexed under `indexedValue`, in a fresh array. */
  byIndex(indexName: string, indexedValue: string): T[] {
    return this.#objects(this.#index(indexName), indexedValue);
  }

  /** A copy of the index functions by name. */
  getIndexers(): Indexers<T> {
    const out: Indexers<T> = {};
    for (const index of this.#indices) out[index.name] = index.fn;
    return out;
  }

  /**
   * Adds index functions and indexes every object already stored. Atomic: on a name conflict
   * (`IndexerConflictError`) or a failing function (`IndexFuncError`) no index is added.
   */
  addIndexers(indexers: Indexers<T>): void {
    const added: IndexState<T>[] = [];
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.#byName.has(name)) throw new IndexerConflictError(name);
      checkIndexFunc(name, fn);
      added.push(new IndexState(name, fn));
    }
    for (const index of added) {
      for (const [key, obj] of this.#items) index.set(key, undefined, index.compute(key, obj));
    }
    for (const index of added) {
      this.#indices.push(index);
      this.#byName.set(index.name, index);
    }
  }

  /**
   * The values the object under `key` is indexed under in `indexName`: `undefined` for none (or no
   * such key), a string for one, an array for several. For tests and tools.
   */
  indexValuesOf(indexName: string, key: string): IndexValues {
    const index = this.#index(indexName);
    if (!this.#items.has(key)) return undefined;
    return index.valuesOf(key, this.#items.get(key) as T);
  }

  #upsert(obj: T): void {
    const key = this.#keyOf(obj);
    reindex(this.#indices, key, obj, this.#indices.length === 0 ? undefined : this.#items.get(key));
    this.#items.set(key, obj);
    this.#track(obj);
  }

  /** {@link putByKey}: the write of #upsert with the key given, returning what it replaced. */
  #put(key: string, obj: T): T | undefined {
    if (!this.#givenKeyChecked) this.#checkGivenKey(key, obj);
    const stored = this.#items.get(key);
    reindex(this.#indices, key, obj, stored);
    this.#items.set(key, obj);
    this.#track(obj);
    return stored;
  }

  /** {@link adoptContent}. */
  #adopt(content: StoreContent<T>, lastResourceVersion: string): boolean {
    const indices = this.#indices;
    if (this.#items.size > 0 || content.basis.length !== indices.length || content.basis.some((b, i) => b !== indices[i])) return false;
    const items = content.items;
    if (items.size === 0) return true;
    if (!this.#givenKeyChecked) {
      const [key, obj] = items.entries().next().value as [string, T];
      this.#checkGivenKey(key, obj);
    }
    this.#items = items;
    this.#indices = content.indices;
    this.#byName = new Map(content.indices.map((index) => [index.name, index]));
    // What #track would leave after writing them in order.
    if (lastResourceVersion !== '') this.#lastResourceVersion = lastResourceVersion;
    return true;
  }

  /** The first key given to a keyed write is checked against the store's own key function. */
  #checkGivenKey(key: string, obj: T): void {
    const own = this.#keyOf(obj);
    if (own !== key) {
      throw new InvalidOptionError(
        `processDeltas was given the key ${JSON.stringify(key)} for an object this store keys as ${JSON.stringify(own)}: ` +
          "pass the queue's key only to a store whose key function keys objects as the queue's does",
      );
    }
    this.#givenKeyChecked = true;
  }

  #track(obj: unknown): void {
    const rv = getResourceVersion(obj);
    if (rv) this.#lastResourceVersion = rv;
  }

  #keyOf(obj: T | DeletedFinalStateUnknown<T>): string {
    let key: unknown;
    try {
      key = this.#keyFunc(obj);
    } catch (err) {
      if (err instanceof KubeInformerError) throw err;
      const why = err instanceof Error ? err.message : preview(err, 80);
      throw new InvalidObjectError(`the key function failed (${why}) for object ${preview(obj)}`, { cause: err });
    }
    if (typeof key !== 'string') {
      throw new InvalidObjectError(`the key function returned ${typeof key}, not a string, for object ${preview(obj)}`);
    }
    return key;
  }

  #index(name: string): IndexState<T> {
    const index = this.#byName.get(name);
    if (index === undefined) throw new UnknownIndexError(name, Array.from(this.#byName.keys()));
    return index;
  }

  #objects(index: IndexState<T>, value: string): T[] {
    const out: T[] = [];
    index.forEachKey(value, (k) => out.push(this.#items.get(k) as T));
    return out;
  }
}

function checkIndexFunc(name: string, fn: unknown): asserts fn is IndexFunc<unknown> {
  if (typeof fn !== 'function') {
    throw new InvalidOptionError(`the indexer "${name}" is ${typeof fn}, not a function`);
  }
}

/**
 * Creates a {@link Store} with no index: client-go's `cache.NewStore`.
 *
 * @param keyFunc - computes each object's key; informers use `deletionHandlingMetaNamespaceKeyFunc`
 */
export function newStore<T>(keyFunc: KeyFunc<T>): Store<T> {
  return new IndexedStore(keyFunc);
}

/**
 * Creates an {@link Indexer}: client-go's `cache.NewIndexer`. More indices can be added later with
 * `addIndexers`, even once objects are stored.
 *
 * @param keyFunc - computes each object's key; informers use `deletionHandlingMetaNamespaceKeyFunc`
 * @param indexers - index functions by name, e.g. `{ [NamespaceIndex]: metaNamespaceIndexFunc }`
 */
export function newIndexer<T>(keyFunc: KeyFunc<T>, indexers: Indexers<T>): Indexer<T> {
  return new IndexedStore(keyFunc, indexers);
}
