// The Store and Indexer contracts, index functions, and the standard namespace index.

import { InvalidObjectError } from '../core/errors.js';
import type { DeletedFinalStateUnknown } from '../core/keys.js';
import { preview } from '../core/preview.js';
import { getMeta } from '../core/types.js';

/**
 * Computes the values an object is indexed under. An object may have no value (it is then absent from
 * the index), one, or several (it is then found under each). Duplicate values count once.
 *
 * An index function should be a pure function of the object. If it throws, the write that called it
 * fails with an {@link IndexFuncError} (code `INDEX_FUNC_FAILED`) and the store is left unchanged.
 */
export type IndexFunc<T> = (obj: T) => string[];

/** Index functions by index name. */
export type Indexers<T> = Record<string, IndexFunc<T>>;

/**
 * A keyed cache of objects: client-go's `cache.Store`. Objects are stored and handed out by reference
 * (never copied): do not mutate an object you got from a store.
 *
 * Every write is atomic: when it throws (a key function or index function failed), the store and all of
 * its indices are exactly as they were before the call.
 */
export interface Store<T> {
  /** Inserts or replaces the object under its key (an upsert, same as {@link Store.update}). */
  add(obj: T): void;
  /** Inserts or replaces the object under its key (an upsert, same as {@link Store.add}). */
  update(obj: T): void;
  /**
   * Removes the object with this object's key; removing a key that is not present does nothing. A
   * {@link DeletedFinalStateUnknown} tombstone is accepted when the key function understands it (as
   * `deletionHandlingMetaNamespaceKeyFunc` does).
   */
  delete(obj: T | DeletedFinalStateUnknown<T>): void;
  /** Every stored object, in a fresh array that later writes never change. Order is unspecified. */
  list(): T[];
  /** Every key, in a fresh array that later writes never change. Order is unspecified. */
  listKeys(): string[];
  /** The stored object with the same key as `obj`, or `undefined`. */
  get(obj: T): T | undefined;
  /** The stored object under `key`, or `undefined`. */
  getByKey(key: string): T | undefined;
  /**
   * Replaces the whole content with `items` (a later item wins over an earlier one with the same key)
   * and rebuilds every index. `resourceVersion` is the version the items were listed at.
   */
  replace(items: T[], resourceVersion: string): void;
  /** Does nothing for a plain store; kept for client-go parity (queues use it to re-deliver items). */
  resync(): void;
}

/**
 * A {@link Store} with secondary indices: client-go's `cache.Indexer`. Every query on an index name
 * that does not exist throws an {@link UnknownIndexError} (code `UNKNOWN_INDEX`).
 */
export interface Indexer<T> extends Store<T> {
  /**
   * The objects that share at least one value of index `indexName` with `obj` (the union of the
   * buckets of all of `obj`'s values, without duplicates), in a fresh array.
   */
  index(indexName: string, obj: T): T[];
  /** The keys of the objects indexed under `indexedValue`, sorted, in a fresh array. */
  indexKeys(indexName: string, indexedValue: string): string[];
  /** Every value that currently has at least one object in index `indexName`, in a fresh array. */
  listIndexFuncValues(indexName: string): string[];
  /** The objects indexed under `indexedValue`, in a fresh array (empty for an unknown value). */
  byIndex(indexName: string, indexedValue: string): T[];
  /** A copy of the index functions by name. */
  getIndexers(): Indexers<T>;
  /**
   * Adds index functions. Works whether or not the store already holds objects: existing objects are
   * indexed at once. Throws {@link IndexerConflictError} (code `INDEXER_CONFLICT`) when a name already
   * exists, and {@link IndexFuncError} when a new function throws on an existing object; either way no
   * index is added.
   */
  addIndexers(indexers: Indexers<T>): void;
}

/** The name of the standard index of objects by namespace, used by listers. */
export const NamespaceIndex = 'namespace';

/**
 * The standard namespace index function: `[metadata.namespace]`, or `['']` for a cluster-scoped
 * object. Throws {@link InvalidObjectError} (code `INVALID_OBJECT`) for a value without metadata.
 */
export function metaNamespaceIndexFunc(obj: unknown): string[] {
  const meta = getMeta(obj);
  if (meta === undefined) {
    throw new InvalidObjectError(`object has no metadata, so it has no namespace: ${preview(obj)}`);
  }
  const ns = meta.namespace;
  return [typeof ns === 'string' ? ns : ''];
}
