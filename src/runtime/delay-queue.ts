// The one keyed delayed queue: each key waits once for its due time, on one clock timer for the earliest.

import type { Clock, ClockTimer } from '../core/clock.js';

/** A key and the clock time it is due at, as {@link DelayQueue.peek} and {@link DelayQueue.pop} hand it out. */
export interface DelayedKey<K> {
  /** The key. */
  readonly key: K;
  /** Clock time (ms) at which the key is due. */
  readonly dueAt: number;
}

interface Entry<K> {
  readonly key: K;
  dueAt: number;
  /** The order of the request that set `dueAt`; breaks ties between equal due times (first in, first out). */
  seq: number;
  /** Position in the heap; {@link IN_LANE} in the ready lane; -1 while held, once popped, or when replaced. */
  index: number;
}

/** `Entry.index` of an entry in the ready lane. */
const IN_LANE = -2;

/**
 * Keys waiting for a due time (the reconcile scheduler's requests, the delaying work queue's `addAfter`):
 * a key waits at most once, with one due time; a binary min-heap on (due time, request order) finds
 * the earliest, and {@link DelayQueue.arm} keeps one timer on the clock for it, calling `onDue` when
 * it fires. A request that sorts after every one in the **ready lane** (a FIFO; in practice a request
 * due now, the hot path of a controller) is appended there instead of sifted into the heap: the next
 * key is the earlier of the lane's head and the heap's top, so the order is the heap's order, at O(1)
 * for a burst of keys due now (the heap's pops were a tenth of a cold reconcile's CPU). A key can be
 * **held** ({@link DelayQueue.hold}): its request is kept but not handed out until
 * {@link DelayQueue.release} (a key being reconciled is not started twice).
 *
 * Keys are compared like `Map` keys (SameValueZero).
 */
export class DelayQueue<K> {
  readonly #clock: Clock;
  readonly #onDue: () => void;
  readonly #entries = new Map<K, Entry<K>>();
  readonly #held = new Set<K>();
  #heap: Entry<K>[] = [];
  /** The ready lane, sorted on (due time, order) from `#laneHead`; an entry no longer `IN_LANE` there is skipped. */
  #lane: Entry<K>[] = [];
  #laneHead = 0;
  /** The entry last appended to the lane (what a new one must sort after). */
  #laneTail: Entry<K> | undefined;
  #seq = 0;
  #timer: ClockTimer | undefined;
  #timerDueAt = Infinity;

  /** `onDue` runs when the timer {@link DelayQueue.arm} set fires (the earliest key is due). */
  constructor(clock: Clock, onDue: () => void) {
    this.#clock = clock;
    this.#onDue = onDue;
  }

  /** How many keys wait (held keys included). */
  get size(): number {
    return this.#entries.size;
  }

  /** The due time of `key`'s request, or `undefined` when it has none. */
  dueAt(key: K): number | undefined {
    return this.#entries.get(key)?.dueAt;
  }

  /** Makes `key` due at `dueAt` — earlier or later than a request it has — as a new request. */
  set(key: K, dueAt: number): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      const created: Entry<K> = { key, dueAt, seq: this.#seq++, index: -1 };
      this.#entries.set(key, created);
      if (!this.#held.has(key)) this.#push(created);
      return;
    }
    if (entry.index === IN_LANE) {
      // Its lane slot is left behind (skipped); a fresh entry is the key's request.
      this.#push(this.#replace(entry, dueAt, this.#seq++));
      return;
    }
    const later = dueAt >= entry.dueAt; // equal: a newer request, so after the others due then
    entry.dueAt = dueAt;
    entry.seq = this.#seq++;
    if (entry.index >= 0) {
      if (later) this.#down(entry.index);
      else this.#up(entry.index);
    }
  }

  /** Makes `key` due at `dueAt` unless it is due earlier already (the earlier request wins); true when it changed. */
  setEarlier(key: K, dueAt: number): boolean {
    const old = this.#entries.get(key)?.dueAt;
    if (old !== undefined && old <= dueAt) return false;
    this.set(key, dueAt);
    return true;
  }

  /** The earliest key not held, without removing it. */
  peek(): DelayedKey<K> | undefined {
    const lane = this.#laneTop();
    const top = this.#heap[0];
    return lane !== undefined && (top === undefined || this.#less(lane, top)) ? lane : top;
  }

  /** Removes and returns the earliest key not held (due or not). */
  pop(): DelayedKey<K> | undefined {
    const lane = this.#laneTop();
    const heap = this.#heap;
    if (lane !== undefined && (heap.length === 0 || this.#less(lane, heap[0]))) {
      this.#laneHead++;
      lane.index = -1;
      this.#entries.delete(lane.key);
      return lane;
    }
    if (heap.length === 0) return undefined;
    const top = heap[0];
    const last = heap.pop() as Entry<K>;
    if (heap.length > 0) {
      heap[0] = last;
      last.index = 0;
      this.#down(0);
    }
    top.index = -1;
    this.#entries.delete(top.key);
    return top;
  }

  /** Removes and returns the earliest key not held when it is due at `now`. */
  popDue(now: number): DelayedKey<K> | undefined {
    const top = this.peek();
    return top === undefined || top.dueAt > now ? undefined : this.pop();
  }

  /** Holds `key`: a request it has or gets waits (counted in `size`) until {@link DelayQueue.release}. */
  hold(key: K): void {
    this.#held.add(key);
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    if (entry.index >= 0) this.#remove(entry);
    else if (entry.index === IN_LANE) this.#replace(entry, entry.dueAt, entry.seq);
  }

  /** Ends the hold on `key`: its request, if any, waits for its due time among the others again. */
  release(key: K): void {
    if (!this.#held.delete(key)) return;
    const entry = this.#entries.get(key);
    if (entry !== undefined) this.#push(entry);
  }

  /**
   * Keeps one timer on the clock for the earliest key not held (none when there is none): replaces a
   * timer set for another time, keeps one set for the same time. The timer calls `onDue` once.
   */
  arm(): void {
    const next = this.peek();
    const dueAt = next === undefined ? Infinity : next.dueAt;
    if (dueAt === this.#timerDueAt) return;
    this.disarm();
    if (next === undefined) return;
    this.#timerDueAt = dueAt;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#timerDueAt = Infinity;
      this.#onDue();
    }, dueAt - this.#clock.now());
  }

  /** Clears the timer, if one is set. */
  disarm(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
  }

  /** Drops every key and hold, and clears the timer. */
  clear(): void {
    this.disarm();
    for (const entry of this.#heap) entry.index = -1;
    for (const entry of this.#lane) entry.index = -1;
    this.#heap = [];
    this.#lane = [];
    this.#laneHead = 0;
    this.#laneTail = undefined;
    this.#entries.clear();
    this.#held.clear();
  }

  #push(entry: Entry<K>): void {
    const tail = this.#laneTail;
    if (tail === undefined || this.#less(tail, entry)) {
      entry.index = IN_LANE;
      this.#lane.push(entry);
      this.#laneTail = entry;
      return;
    }
    entry.index = this.#heap.length;
    this.#heap.push(entry);
    this.#up(entry.index);
  }

  /** The lane's first live entry (dead slots before it dropped), or undefined when the lane is empty. */
  #laneTop(): Entry<K> | undefined {
    const lane = this.#lane;
    let head = this.#laneHead;
    while (head < lane.length && lane[head].index !== IN_LANE) head++;
    if (head === lane.length) {
      if (lane.length > 0) {
        this.#lane = [];
        this.#laneTail = undefined;
      }
      this.#laneHead = 0;
      return undefined;
    }
    if (head > 1024 && head * 2 > lane.length) {
      this.#lane = lane.slice(head);
      head = 0;
    }
    this.#laneHead = head;
    return this.#lane[head];
  }

  /**
   * Leaves `entry`'s lane slot behind (its `index` no longer says `IN_LANE`, so the lane skips it) and
   * makes a fresh entry the key's, held or waiting to be pushed.
   */
  #replace(entry: Entry<K>, dueAt: number, seq: number): Entry<K> {
    entry.index = -1;
    const fresh: Entry<K> = { key: entry.key, dueAt, seq, index: -1 };
    this.#entries.set(entry.key, fresh);
    return fresh;
  }

  /** Takes `entry` out of the heap (it stays in the map). */
  #remove(entry: Entry<K>): void {
    const heap = this.#heap;
    const at = entry.index;
    const last = heap.pop() as Entry<K>;
    entry.index = -1;
    if (last === entry) return;
    heap[at] = last;
    last.index = at;
    this.#down(at);
    this.#up(last.index);
  }

  #less(a: Entry<K>, b: Entry<K>): boolean {
    return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
  }

  #swap(i: number, j: number): void {
    const heap = this.#heap;
    const a = heap[i];
    const b = heap[j];
    heap[i] = b;
    heap[j] = a;
    b.index = i;
    a.index = j;
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i], heap[parent])) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const heap = this.#heap;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < n && this.#less(heap[left], heap[smallest])) smallest = left;
      if (right < n && this.#less(heap[right], heap[smallest])) smallest = right;
      if (smallest === i) break;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
