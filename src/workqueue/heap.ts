// A min-heap of delayed items ordered by ready time, with in-place "move earlier" for deduplication.

/** One item waiting in a {@link DelayHeap}. `index` is maintained by the heap. */
export interface DelayEntry<T> {
  /** The queued item. */
  readonly item: T;
  /** Clock time (ms) at which the item becomes ready. */
  readyAt: number;
  /** Insertion order; breaks ties between equal ready times (first in, first out). */
  readonly seq: number;
  /** Position in the heap array; -1 once removed. */
  index: number;
}

/**
 * A binary min-heap on `(readyAt, seq)`. Internal to the delaying queue: it keeps every entry's index so
 * that an entry can be moved earlier in O(log n) when the same item is delayed again with a sooner time.
 */
export class DelayHeap<T> {
  #entries: DelayEntry<T>[] = [];

  /** How many entries are waiting. */
  get size(): number {
    return this.#entries.length;
  }

  /** The entry that is ready first, without removing it. */
  peek(): DelayEntry<T> | undefined {
    return this.#entries[0];
  }

  /** Adds an entry. */
  push(entry: DelayEntry<T>): void {
    entry.index = this.#entries.length;
    this.#entries.push(entry);
    this.#up(entry.index);
  }

  /** Removes and returns the entry that is ready first. */
  pop(): DelayEntry<T> | undefined {
    const entries = this.#entries;
    if (entries.length === 0) return undefined;
    const top = entries[0];
    const last = entries.pop() as DelayEntry<T>;
    if (entries.length > 0) {
      entries[0] = last;
      last.index = 0;
      this.#down(0);
    }
    top.index = -1;
    return top;
  }

  /** Moves `entry` to an earlier ready time (later times are the caller's business to ignore). */
  moveEarlier(entry: DelayEntry<T>, readyAt: number): void {
    entry.readyAt = readyAt;
    this.#up(entry.index);
  }

  /** Drops every entry (their references included, so they can be collected). */
  clear(): void {
    for (const e of this.#entries) e.index = -1;
    this.#entries = [];
  }

  #less(a: DelayEntry<T>, b: DelayEntry<T>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  #swap(i: number, j: number): void {
    const entries = this.#entries;
    const a = entries[i];
    const b = entries[j];
    entries[i] = b;
    entries[j] = a;
    b.index = i;
    a.index = j;
  }

  #up(i: number): void {
    const entries = this.#entries;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(entries[i], entries[parent])) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const entries = this.#entries;
    const n = entries.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < n && this.#less(entries[left], entries[smallest])) smallest = left;
      if (right < n && this.#less(entries[right], entries[smallest])) smallest = right;
      if (smallest === i) break;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
