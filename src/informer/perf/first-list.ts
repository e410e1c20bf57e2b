// A fresh first list taken whole: gathered page by page while the list is paged, made the indexer's
// contents in one step once it is complete, then its adds told as the one-by-one hand-over tells them.
//
// Why (bench/notes.md, issue 29, eighth session): after a paged list's last page the informer used to
// write every object into the indexer, one call chain per object (queue → process → applyDelta → put),
// all of it cold. That burst is where V8's first major collection of the process lands; the raw loop,
// which writes each page as it arrives, is done by then. Here the writes happen page by page, into a
// store content nobody can see (its map and its indices), while the next page is on its way:
// client-go's rule that the cache shows a list only once it is complete still holds, and a list that
// fails drops the content.

import { compareComparable, isComparableResourceVersion } from '../../core/index.js';
import { getResourceVersion } from '../../core/types.js';
import { adoptContent, IndexedStore, prepareContent, type StoreContent } from '../../store/index.js';
import type { Indexer } from '../../store/types.js';
import type { FirstListSink } from '../../fifo/index.js';

/** What a {@link FirstList} needs from its informer. */
export interface FirstListDeps<T> {
  /** The informer's indexer: a list is taken whole only while it is an empty `IndexedStore`. */
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
 * same indexer content, indices and resource version, the same `onAdd` calls in the same order)
 * whenever it takes one; `test/informer/first-list.test.ts` compares the two on random lists.
 */
export class FirstList<T> implements FirstListSink<T> {
  readonly #deps: FirstListDeps<T>;
  /** The staged pages' objects by key with their index values, in list order; `undefined` when nothing usable is staged. */
  #content: StoreContent<T> | undefined;
  /** How many listed objects the content holds (the staged prefix of the list). */
  #count = 0;
  /** The staged prefix's versions. */
  #versions: Versions = { last: '', newest: undefined };

  constructor(deps: FirstListDeps<T>) {
    this.#deps = deps;
  }

  stage(page: readonly T[], keys: readonly string[], from: number): void {
    if (from === 0) {
      this.#content = this.#prepare();
      this.#count = 0;
      this.#versions = { last: '', newest: undefined };
    }
    const content = this.#content;
    if (content === undefined) return;
    if (from !== this.#count) {
      this.drop();
      return;
    }
    // A key listed twice (the one-by-one path gives the second an onUpdate), or an index function that
    // throws (the one-by-one path meets it at that object, after the ones before): left to that path.
    if (!addAll(content, this.#versions, page, 0, keys, from)) {
      this.drop();
      return;
    }
    this.#count = from + page.length;
  }

  drop(): void {
    this.#content = undefined;
    this.#count = 0;
    this.#versions = { last: '', newest: undefined };
  }

  take(keys: readonly string[], objects: readonly T[], staged: number, isInInitialList: boolean): boolean {
    const staging = this.#content;
    const count = this.#count;
    const stagedVersions = this.#versions;
    this.drop();
    const { indexer, eligible, onAdded } = this.#deps;
    // Asked again: what made the list eligible when its first page was staged may have changed since
    // (someone began to wait in awaitObserved, the informer is stopping).
    if (!(indexer instanceof IndexedStore) || !eligible()) return false;
    // The staged content serves only when it is exactly the list's staged prefix.
    const reuse = staging !== undefined && count === staged;
    const content = reuse ? staging : prepareContent(indexer as IndexedStore<T>);
    if (content === undefined) return false;
    const versions: Versions = reuse ? stagedVersions : { last: '', newest: undefined };
    const from = reuse ? staged : 0;
    if (!addAll(content, versions, objects, from, keys, 0)) return false;
    try {
      if (!adoptContent(indexer as IndexedStore<T>, content, versions.last)) return false;
    } catch {
      // A key the store keys otherwise: the one-by-one path meets the same error at the first write.
      return false;
    }
    onAdded(objects, isInInitialList, versions.newest);
    return true;
  }

  /** A content to gather a list into, when the informer takes lists whole now and its indexer is empty. */
  #prepare(): StoreContent<T> | undefined {
    const indexer = this.#deps.indexer;
    if (!(indexer instanceof IndexedStore) || !this.#deps.eligible()) return undefined;
    return prepareContent(indexer as IndexedStore<T>);
  }
}

/**
 * Adds each `objects[j]` from `start` on under `keys[keyOffset + j]` to `content` and notes its version;
 * false at the first key added before, or index function that throws (the content is then not usable).
 */
function addAll<T>(content: StoreContent<T>, versions: Versions, objects: readonly T[], start: number, keys: readonly string[], keyOffset: number): boolean {
  for (let j = start; j < objects.length; j++) {
    const key = keys[keyOffset + j];
    const obj = objects[j];
    if (content.items.has(key)) return false;
    try {
      content.add(key, obj);
    } catch {
      return false;
    }
    noteVersion(versions, obj);
  }
  return true;
}
