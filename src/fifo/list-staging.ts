// A paged list staged while it is paged: each page's keys computed while the next page is on its way,
// and offered to the consumer's sink that takes a fresh first list whole.

/**
 * Internal (not exported by the package): a parked consumer that can take a fresh first list whole (the
 * informer's, `informer/perf/first-list.ts`). Given to a queue with `setFirstListSink`.
 */
export interface FirstListSink<T> {
  /** A staged page of a paged list, in list order: `keys[from + j]` is `page[j]`'s key; `from` 0 starts a list. */
  stage(page: readonly T[], keys: readonly string[], from: number): void;
  /** What was staged is dropped: the list failed or was abandoned, a key threw, or its replace was not fresh. */
  drop(): void;
  /**
   * A `replace` that found nothing queued and nothing known, with the consumer parked: `keys[i]` is
   * `objects[i]`'s key, and the first `staged` of them are the pages given to `stage` (what was staged
   * beyond them is not this list's). True when it processed every item as the parked `process` would,
   * one by one, with `isInInitialList`; false when it did nothing, and the items are handed over one by
   * one. A throw is the consumer's own processing failing, after it began: the parked consumer gets
   * the error, as from one item.
   */
  take(keys: readonly string[], objects: readonly T[], staged: number, isInInitialList: boolean): boolean;
}

/**
 * The pages of the paged list in progress and their keys (see `stageListPage`), and the consumer's
 * {@link FirstListSink}, which sees each page as it is staged. Keys only: nothing is queued.
 */
export class ListStaging<T> {
  readonly #keyOf: (obj: T) => string;
  /** The keys of a paged list's pages so far, computed while the next page was on its way. */
  #staged: { readonly pages: (readonly T[])[]; readonly keys: string[] } | undefined;
  /** See {@link FirstListSink}. */
  #sink: FirstListSink<T> | undefined;

  /** `keyOf` is the queue's key function (it throws for an object without a key). */
  constructor(keyOf: (obj: T) => string) {
    this.#keyOf = keyOf;
  }

  /** The consumer's sink for a fresh first list, when it has one. */
  get sink(): FirstListSink<T> | undefined {
    return this.#sink;
  }

  set sink(sink: FirstListSink<T> | undefined) {
    this.#sink = sink;
  }

  /** The sink drops what it staged (the list's `replace` is not fresh, or failed). */
  drop(): void {
    this.#sink?.drop();
  }

  /**
   * Stages a page: `first` starts a new list, `undefined` items drop what was staged. A key that throws
   * drops the staging: `replace` meets the error itself.
   */
  stage(items: readonly T[] | undefined, first: boolean): void {
    if (items === undefined) {
      this.#staged = undefined;
      this.#sink?.drop();
      return;
    }
    if (first) this.#staged = { pages: [], keys: [] };
    const staged = this.#staged;
    if (staged === undefined) return;
    const keys = staged.keys;
    const from = keys.length;
    try {
      for (let i = 0; i < items.length; i++) keys.push(this.#keyOf(items[i]));
    } catch {
      this.#staged = undefined;
      this.#sink?.drop();
      return;
    }
    staged.pages.push(items);
    this.#sink?.stage(items, keys, from);
  }

  /**
   * Copies into `keys` the staged keys of the longest prefix of `items` that is the staged pages' objects,
   * in order, and returns its length (0 without staging); the staging is dropped.
   */
  take(items: readonly T[], keys: string[]): number {
    const staged = this.#staged;
    if (staged === undefined) return 0;
    this.#staged = undefined;
    let i = 0;
    for (const page of staged.pages) {
      for (let j = 0; j < page.length; j++, i++) {
        if (i >= items.length || items[i] !== page[j]) return i;
        keys[i] = staged.keys[i];
      }
    }
    return i;
  }
}
