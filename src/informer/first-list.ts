// A fresh first list taken whole: gathered page by page while the list is paged, made the indexer's
// contents in one step once it is complete, then its adds told as the one-by-one hand-over tells them.
//
// Why (bench/notes.md, issue 29, eighth session): after a paged list's last page the informer used to
// write every object into the indexer, one call chain per object (queue → process → applyDelta → put),
// all of it cold. That burst is where V8's first major collection of the process lands; the raw loop,
// which writes each page as it arrives, is done by then. Here the writes happen page by page, into a
// map nobody can see, while the next page is on its way: client-go's rule that the cache shows a list
// only once it is complete still holds, and a list that fails drops the map.

import { compareComparable, isComparableResourceVersion } from '../core/resource-version.js';
import { getResourceVersion } from '../core/types.js';
import { adoptByKey, IndexedStore } from '../store/store.js';
import type { Indexer } from '../store/types.js';
import type { FirstListSink } from '../fifo/delta-fifo.js';

/** What a {@link FirstList} needs from its informer. */
export interface FirstListDeps<T> {
  /** The informer's indexer: taken whole only while it is an empty `IndexedStore` without an index. */
  readonly indexer: Indexer<T>;
  /**
   * Whether a list may be taken whole now. False when the one-by-one path could differ: a transform
   * (the queue's key is not the indexer's), an error policy that handles index errors per item, a
   * mutation detector (its `addObject` may throw), someone waiting on `awaitObserved` (its watermark is
   * checked object by object), or a stopping informer.
   */
  readonly eligible: () => boolean;
  /**
   * Once the list is the indexer's contents: what the one-by-one path's `onAdd` after each write would
   * have done, for every object in list order. `newest` is the highest comparable resource version among
   * them (`undefined` for none), read while each object was staged: a pass over 10 000 objects after
   * the list reads every object's metadata again, from memory the pages since have pushed out of cache.
   */
  readonly onAdded: (objects: readonly T[], isInInitialList: boolean, newest: string | undefined) => void;
}

/** The resource versions of a list's prefix, as the one-by-one path's writes would leave them. */
interface Versions {
  /** The last non-empty one: the store's `lastStoreSyncResourceVersion` after writing them in order. */
  last: string;
  /** The highest comparable one: the informer's read-your-writes watermark after applying them. */
  newest: string | undefined;
}

function noteVersion(v: Versions, obj: unknown): void {
  const rv = getResourceVersion(obj);
  if (!rv) return;
  v.last = rv;
  if (isComparableResourceVersion(rv) && (v.newest === undefined || compareComparable(rv, v.newest) > 0)) v.newest = rv;
}

/**
 * The informer's {@link FirstListSink}. Equivalent to the one-by-one hand-over of a fresh list (the
 * same indexer content and resource version, the same `onAdd` calls in the same order) whenever it
 * takes one; `test/informer/first-list.test.ts` compares the two on random lists.
 */
export class FirstList<T> implements FirstListSink<T> {
  readonly #deps: FirstListDeps<T>;
  /** The staged pages' objects by key, in list order; `undefined` when nothing usable is staged. */
  #map: Map<string, T> | undefined;
  /** How many listed objects the map holds (the staged prefix of the list). */
  #count = 0;
  /** The staged prefix's versions. */
  #versions: Versions = { last: '', newest: undefined };

  constructor(deps: FirstListDeps<T>) {
    this.#deps = deps;
  }

  stage(page: readonly T[], keys: readonly string[], from: number): void {
    if (from === 0) {
      this.#map = this.#stageable() ? new Map() : undefined;
      this.#count = 0;
      this.#versions = { last: '', newest: undefined };
    }
    const map = this.#map;
    if (map === undefined) return;
    if (from !== this.#count) {
      this.drop();
      return;
    }
    const versions = this.#versions;
    for (let j = 0; j < page.length; j++) {
      const key = keys[from + j];
      // A key listed twice: the one-by-one path gives the second an onUpdate. Left to it.
      if (map.has(key)) {
        this.drop();
        return;
      }
      map.set(key, page[j]);
      noteVersion(versions, page[j]);
    }
    this.#count = from + page.length;
  }

  drop(): void {
    this.#map = undefined;
    this.#count = 0;
    this.#versions = { last: '', newest: undefined };
  }

  take(keys: readonly string[], objects: readonly T[], staged: number, isInInitialList: boolean): boolean {
    const staging = this.#map;
    const count = this.#count;
    const stagedVersions = this.#versions;
    this.drop();
    const { indexer, eligible, onAdded } = this.#deps;
    if (!(indexer instanceof IndexedStore) || !eligible()) return false;
    // The staged map serves only when it is exactly the list's staged prefix.
    const reuse = staging !== undefined && count === staged;
    const map = reuse ? staging : new Map<string, T>();
    const versions: Versions = reuse ? stagedVersions : { last: '', newest: undefined };
    const n = keys.length;
    for (let i = reuse ? staged : 0; i < n; i++) {
      const key = keys[i];
      if (map.has(key)) return false;
      map.set(key, objects[i]);
      noteVersion(versions, objects[i]);
    }
    try {
      if (!adoptByKey(indexer as IndexedStore<T>, map, versions.last)) return false;
    } catch {
      // A key the store keys otherwise: the one-by-one path meets the same error at the first write.
      return false;
    }
    onAdded(objects, isInInitialList, versions.newest);
    return true;
  }

  /** Worth gathering pages for: the indexer is an empty `IndexedStore` without an index, and the informer takes lists whole. */
  #stageable(): boolean {
    const indexer = this.#deps.indexer;
    // Adopting an empty map changes nothing: it only asks whether the store could adopt one.
    return indexer instanceof IndexedStore && adoptByKey(indexer as IndexedStore<T>, new Map(), '') && this.#deps.eligible();
  }
}
