// Read-only views of a cache: what informers hand out (`getIndexer()`, `getStore()`), objects typed DeepReadonly.

import type { DeepReadonly } from '../core/types.js';
import type { Indexer, Indexers } from './types.js';

/**
 * The reads of a `Store`, with its objects typed {@link DeepReadonly}: what an informer's
 * `getStore()` hands out. Objects are the cache's own (never copied): to change one, copy it with
 * `deepCopy`. There is no way to write through it — the informer alone keeps its cache in sync.
 * A `Store<T>` is assignable to it, so code that only reads a cache can take a `ReadonlyStore<T>`.
 */
export interface ReadonlyStore<T> {
  /** Every cached object, in a fresh array that later writes never change. Order is unspecified. */
  list(): DeepReadonly<T>[];
  /** Every key, in a fresh array that later writes never change. Order is unspecified. */
  listKeys(): string[];
  /** The cached object with the same key as `obj`, or `undefined`. */
  get(obj: T | DeepReadonly<T>): DeepReadonly<T> | undefined;
  /** The cached object under `key`, or `undefined`. */
  getByKey(key: string): DeepReadonly<T> | undefined;
}

/**
 * The reads of an {@link Indexer}, with its objects typed {@link DeepReadonly}: what an informer's
 * `getIndexer()` hands out (index functions are added with the informer's `addIndexers`). An
 * `Indexer<T>` is assignable to it.
 */
export interface ReadonlyIndexer<T> extends ReadonlyStore<T> {
  /** The objects sharing at least one value of index `indexName` with `obj`, in a fresh array. */
  index(indexName: string, obj: T | DeepReadonly<T>): DeepReadonly<T>[];
  /** The keys of the objects indexed under `indexedValue`, sorted, in a fresh array. */
  indexKeys(indexName: string, indexedValue: string): string[];
  /** Every value that currently has at least one object in index `indexName`, in a fresh array. */
  listIndexFuncValues(indexName: string): string[];
  /** The objects indexed under `indexedValue`, in a fresh array (empty for an unknown value). */
  byIndex(indexName: string, indexedValue: string): DeepReadonly<T>[];
  /** A copy of the index functions by name. */
  getIndexers(): Indexers<T>;
}

/**
 * A read-only view of `indexer`: an object with its read methods only (the writes are not there to
 * call, from TypeScript or JavaScript), reading through to it. Internal: the informers build theirs once.
 */
export function readonlyIndexer<T>(indexer: Indexer<T>): ReadonlyIndexer<T> {
  const view: ReadonlyIndexer<T> = {
    list: () => indexer.list() as DeepReadonly<T>[],
    listKeys: () => indexer.listKeys(),
    get: (obj) => indexer.get(obj as T) as DeepReadonly<T> | undefined,
    getByKey: (key) => indexer.getByKey(key) as DeepReadonly<T> | undefined,
    index: (indexName, obj) => indexer.index(indexName, obj as T) as DeepReadonly<T>[],
    indexKeys: (indexName, value) => indexer.indexKeys(indexName, value),
    listIndexFuncValues: (indexName) => indexer.listIndexFuncValues(indexName),
    byIndex: (indexName, value) => indexer.byIndex(indexName, value) as DeepReadonly<T>[],
    getIndexers: () => indexer.getIndexers(),
  };
  return Object.freeze(view);
}
