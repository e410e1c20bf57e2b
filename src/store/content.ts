// A store's next content, built aside: an informer's fresh first list gathered page by page while the
// list is paged (informer/first-list.ts), then made a store's content in one step (store.ts adoptContent).

import { reindex, type IndexState } from './indices.js';

/**
 * Objects by key with their index values, built as {@link IndexedStore}'s own writes would build them
 * into an empty store with the same index functions: `add(key, obj)` in list order leaves what
 * `putByKey(store, key, obj)` of each would leave. Internal (not exported from the package); made by
 * `prepareContent(store)`, taken by `adoptContent(store, content, …)`.
 */
export class StoreContent<T> {
  /** The objects by key, in the order they were added. */
  readonly items = new Map<string, T>();
  /** The index states, in the store's order, each an empty copy of the store's filled by `add`. */
  readonly indices: IndexState<T>[];
  /** The store's own index states when this was prepared: adopted only while they are still the store's. */
  readonly basis: readonly IndexState<T>[];

  constructor(basis: readonly IndexState<T>[]) {
    this.basis = basis.slice();
    this.indices = basis.map((index) => index.emptyCopy());
  }

  /**
   * Adds `obj` under `key` (computed with the store's key function; not added before) and indexes it.
   * Throws the index function's `IndexFuncError` with nothing of `obj` added; the content already built
   * stays as it was.
   */
  add(key: string, obj: T): void {
    reindex(this.indices, key, obj, undefined);
    this.items.set(key, obj);
  }
}
