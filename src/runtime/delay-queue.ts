// The one keyed delayed queue: each key waits once for its due time and priority, on one clock timer for the earliest.

import type { Clock, ClockTimer } from '../core/clock.js';

/** A key and the clock time it is due at, as {@link DelayQueue.peek} and {@link DelayQueue.pop} hand it out. */
export interface DelayedKey<K> {
  /** The key. */
  readonly key: K;
  /** Clock time (ms) at which the key is due. */
  readonly dueAt: number;
  /** Its priority (higher goes first among due keys; `0` unless {@link DelayQueue.set} was given one). */
  readonly priority: number;
}

interface Entry<K> {
  readonly key: K;
  dueAt: number;
  priority: number;
  /** The order of the request that set `dueAt`; breaks ties between equal due times (first in, first out). */
  seq: number;
  /** Position in its level's heap; {@link IN_LANE} in its level's lane; -1 while held, once popped, or when replaced. */
  index: number;
}

/** `Entry.index` of an entry in the ready lane. */
const IN_LANE = -2;

/** Options of a {@link DelayQueue}. */
export interface DelayQueueOptions {
  /**
   * The fairness rule of {@link DelayQueue.popDue} across priorities: after this many pops in a row that
   * each passed over a key due earlier (of a lower priority), the next pop hands out the key due the
   * longest, whatever its priority. Default `9` (so the oldest due key gets at least 1 pop in 10).
   */
  passOverLimit?: number;
}

const less = <K>(a: Entry<K>, b: Entry<K>): boolean => a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);

/**
 * The keys of one priority, ordered on (due time, request order): a binary min-heap, and a **ready
 * lane** (a FIFO) for a request that sorts after every one in the lane — in practice a request due
 * now, the hot path of a controller — appended in O(1) instead of sifted into the heap. The next key
 * is the earlier of the lane's head and the heap's top (the heap's pops were a tenth of a cold
 * reconcile's CPU).
 */
class Level<K> {
  readonly priority: number;
  /** Live entries (heap and lane). */
  size = 0;
  #heap: Entry<K>[] = [];
  /** The ready lane, sorted on (due time, order) from `#laneHead`; an entry no longer `IN_LANE` there is skipped. */
  #lane: Entry<K>[] = [];
  #laneHead = 0;
  /** The entry last appended to the lane (what a new one must sort after). */
  #laneTail: Entry<K> | undefined;

  constructor(priority: number) {
    this.priority = priority;
  }

  push(entry: Entry<K>): void {
    this.size++;
    const tail = this.#laneTail;
    if (tail === undefined || less(tail, entry)) {
      entry.index = IN_LANE;
      this.#lane.push(entry);
      this.#laneTail = entry;
      return;
    }
    entry.index = this.#heap.length;
    this.#heap.push(entry);
    this.#up(entry.index);
  }

  /** The earliest entry, without removing it. */
  peek(): Entry<K> | undefined {
    const lane = this.#laneTop();
    const top = this.#heap[0];
    return lane !== undefined && (top === undefined || less(lane, top)) ? lane : top;
  }

  /** Removes the earliest entry (`peek`'s) and returns it. */
  pop(): Entry<K> | undefined {
    const lane = this.#laneTop();
    const heap = this.#heap;
    if (lane !== undefined && (heap.length === 0 || less(lane, heap[0]))) {
      this.#laneHead++;
      lane.index = -1;
      this.size--;
      return lane;
    }
    if (heap.length === 0) return undefined;
    const top = heap[0];
    this.#take(0);
    return top;
  }

  /**
   * Takes `entry` out of the level. An entry of the lane leaves its slot behind (its `index` no longer
   * says `IN_LANE`, so the lane skips it): the caller must use a fresh entry for the key from then on.
   */
  remove(entry: Entry<K>): void {
    if (entry.index >= 0) this.#take(entry.index);
    else entry.index = -1;
    this.size--;
  }

  /** Moves a heap entry after its due time or order changed. */
  resift(entry: Entry<K>, later: boolean): void {
    if (later) this.#down(entry.index);
    else this.#up(entry.index);
  }

  clear(): void {
    for (const entry of this.#heap) entry.index = -1;
    for (const entry of this.#lane) entry.index = -1;
    this.#heap = [];
    this.#lane = [];
    this.#laneHead = 0;
    this.#laneTail = undefined;
    this.size = 0;
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

  /** Takes the heap's entry at `at` out. */
  #take(at: number): void {
    const heap = this.#heap;
    const entry = heap[at];
    const last = heap.pop() as Entry<K>;
    entry.index = -1;
    if (last === entry) return;
    heap[at] = last;
    last.index = at;
    this.#down(at);
    this.#up(last.index);
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
      if (!less(heap[i], heap[parent])) break;
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
      if (left < n && less(heap[left], heap[smallest])) smallest = left;
      if (right < n && less(heap[right], heap[smallest])) smallest = right;
      if (smallest === i) break;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}

/**
 * Keys waiting for a due time (the reconcile scheduler's requests, the delaying work queue's `addAfter`):
 * a key waits at most once, with one due time and one priority; {@link DelayQueue.arm} keeps one timer
 * on the clock for the earliest key, calling `onDue` when it fires. Each priority is a {@link Level}
 * ordered on (due time, request order) — with one priority (`0`, the default) the queue is one level
 * and hands keys out in that order.
 *
 * Among keys **due** ({@link DelayQueue.popDue}) the highest priority goes first, the earlier due time
 * (then the earlier request) first within a priority — with one fairness rule so that no priority
 * starves: a pop that hands out a key while a key of a lower priority has been due for longer *passes
 * it over*; after `passOverLimit` (default 9) such pops in a row, the next one hands out the key due
 * the longest, whatever its priority. The key due the longest is then started within (its rank among
 * older due keys + 1) × 10 pops, and higher priorities still get at least 9 pops in 10.
 *
 * A key can be **held** ({@link DelayQueue.hold}): its request is kept but not handed out until
 * {@link DelayQueue.release} (a key being reconciled is not started twice). Keys are compared like
 * `Map` keys (SameValueZero).
 */
export class DelayQueue<K> {
  readonly #clock: Clock;
  readonly #onDue: () => void;
  readonly #passOverLimit: number;
  readonly #entries = new Map<K, Entry<K>>();
  readonly #held = new Set<K>();
  /** The level of each priority with keys; `#levels` holds them sorted, the highest priority first. */
  readonly #byPriority = new Map<number, Level<K>>();
  #levels: Array<Level<K>> = [];
  /** The level of priority 0, kept even when empty (the only one unless priorities are given). */
  readonly #base = new Level<K>(0);
  /** Pops in a row that passed over a key due earlier (the fairness rule). */
  #passedOver = 0;
  #seq = 0;
  #timer: ClockTimer | undefined;
  #timerDueAt = Infinity;

  /** `onDue` runs when the timer {@link DelayQueue.arm} set fires (the earliest key is due). */
  constructor(clock: Clock, onDue: () => void, options: DelayQueueOptions = {}) {
    this.#clock = clock;
    this.#onDue = onDue;
    this.#passOverLimit = options.passOverLimit ?? 9;
    this.#byPriority.set(0, this.#base);
    this.#levels.push(this.#base);
  }

  /** How many keys wait (held keys included). */
  get size(): number {
    return this.#entries.size;
  }

  /** The due time of `key`'s request, or `undefined` when it has none. */
  dueAt(key: K): number | undefined {
    return this.#entries.get(key)?.dueAt;
  }

  /** The priority of `key`'s request, or `undefined` when it has none. */
  priorityOf(key: K): number | undefined {
    return this.#entries.get(key)?.priority;
  }

  /** Makes `key` due at `dueAt` with `priority` (default `0`) — earlier or later than a request it has — as a new request. */
  set(key: K, dueAt: number, priority = 0): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      const created: Entry<K> = { key, dueAt, priority, seq: this.#seq++, index: -1 };
      this.#entries.set(key, created);
      if (!this.#held.has(key)) this.#levelOf(priority).push(created);
      return;
    }
    if (entry.index === IN_LANE || (entry.index >= 0 && entry.priority !== priority)) {
      // Out of its place (a lane slot is left behind, skipped); a fresh entry is the key's request.
      this.#removeFrom(entry);
      this.#levelOf(priority).push(this.#replace(entry, dueAt, priority));
      return;
    }
    const later = dueAt >= entry.dueAt; // equal: a newer request, so after the others due then
    entry.dueAt = dueAt;
    entry.priority = priority;
    entry.seq = this.#seq++;
    if (entry.index >= 0) this.#levelOf(priority).resift(entry, later);
  }

  /**
   * Merges a request due at `dueAt` at `priority` (default `0`) with the key's: the earlier due time and
   * the higher priority win; true when the key's request changed.
   */
  setEarlier(key: K, dueAt: number, priority = 0): boolean {
    const old = this.#entries.get(key);
    if (old === undefined) {
      // A new key (the hot path: one lookup, not set's second).
      const created: Entry<K> = { key, dueAt, priority, seq: this.#seq++, index: -1 };
      this.#entries.set(key, created);
      if (!this.#held.has(key)) this.#levelOf(priority).push(created);
      return true;
    }
    if (old.dueAt <= dueAt && old.priority >= priority) return false;
    this.set(key, Math.min(old.dueAt, dueAt), Math.max(old.priority, priority));
    return true;
  }

  /** The earliest key not held (whatever its priority), without removing it. */
  peek(): DelayedKey<K> | undefined {
    if (this.#levels.length === 1) return this.#levels[0].peek();
    let first: Entry<K> | undefined;
    for (const level of this.#levels) {
      const top = level.peek();
      if (top !== undefined && (first === undefined || less(top, first))) first = top;
    }
    return first;
  }

  /** Removes and returns the earliest key not held (due or not, whatever its priority). */
  pop(): DelayedKey<K> | undefined {
    const first = this.peek();
    if (first === undefined) return undefined;
    return this.#take(this.#byPriority.get(first.priority)!);
  }

  /**
   * Removes and returns the key not held to hand out at `now` among those due: the highest priority's
   * earliest, or — by the fairness rule (see the class) — the key due the longest.
   */
  popDue(now: number): DelayedKey<K> | undefined {
    const levels = this.#levels;
    if (levels.length === 1) {
      // One priority: its earliest key, if due (the hot path).
      const top = levels[0].peek();
      return top === undefined || top.dueAt > now ? undefined : this.#take(levels[0]);
    }
    let best: Level<K> | undefined;
    let oldest: Level<K> | undefined;
    let oldestTop: Entry<K> | undefined;
    for (const level of levels) {
      const top = level.peek();
      if (top === undefined || top.dueAt > now) continue;
      best ??= level;
      if (oldestTop === undefined || less(top, oldestTop)) {
        oldest = level;
        oldestTop = top;
      }
    }
    if (best === undefined) return undefined;
    if (best === oldest) this.#passedOver = 0;
    else if (this.#passedOver >= this.#passOverLimit) {
      this.#passedOver = 0;
      best = oldest!;
    } else this.#passedOver++;
    return this.#take(best);
  }

  /**
   * Takes `key`'s request out, at once (a hold on the key stays: see {@link DelayQueue.release}); true
   * when it had one. The timer is left as it is: it may fire for nothing, and `arm` sets the next one.
   */
  delete(key: K): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    if (entry.index >= 0 || entry.index === IN_LANE) this.#removeFrom(entry);
    return true;
  }

  /** The keys with a request (held keys included), in no particular order. */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  /** Holds `key`: a request it has or gets waits (counted in `size`) until {@link DelayQueue.release}. */
  hold(key: K): void {
    this.#held.add(key);
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    if (entry.index >= 0) this.#removeFrom(entry);
    else if (entry.index === IN_LANE) {
      this.#removeFrom(entry);
      this.#replace(entry, entry.dueAt, entry.priority, entry.seq);
    }
  }

  /** Ends the hold on `key`: its request, if any, waits for its due time among the others again. */
  release(key: K): void {
    if (!this.#held.delete(key)) return;
    const entry = this.#entries.get(key);
    if (entry !== undefined) this.#levelOf(entry.priority).push(entry);
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
    for (const level of this.#levels) level.clear();
    this.#byPriority.clear();
    this.#byPriority.set(0, this.#base);
    this.#levels = [this.#base];
    this.#passedOver = 0;
    this.#entries.clear();
    this.#held.clear();
  }

  /** Pops `level`'s earliest entry, forgets its key, and drops the level when it emptied (but the base). */
  #take(level: Level<K>): Entry<K> | undefined {
    const entry = level.pop();
    if (entry === undefined) return undefined;
    this.#entries.delete(entry.key);
    if (level.size === 0) this.#dropIfEmpty(level);
    return entry;
  }

  /** Takes `entry` out of its level (see `Level.remove`). */
  #removeFrom(entry: Entry<K>): void {
    const level = this.#levelOf(entry.priority);
    level.remove(entry);
    if (level.size === 0) this.#dropIfEmpty(level);
  }

  /** Forgets an empty level (never the base one): fewer levels to look at on each pop. */
  #dropIfEmpty(level: Level<K>): void {
    if (level === this.#base || level.size > 0) return;
    level.clear();
    this.#byPriority.delete(level.priority);
    this.#levels = this.#levels.filter((l) => l !== level);
  }

  /** The level of `priority`, made (in its place among the others) when it has none. */
  #levelOf(priority: number): Level<K> {
    if (priority === 0) return this.#base;
    let level = this.#byPriority.get(priority);
    if (level === undefined) {
      level = new Level<K>(priority);
      this.#byPriority.set(priority, level);
      const at = this.#levels.findIndex((l) => l.priority < priority);
      if (at === -1) this.#levels.push(level);
      else this.#levels.splice(at, 0, level);
    }
    return level;
  }

  /** Makes a fresh entry the key's (its old one left behind in a lane slot or taken out), held or waiting to be pushed. */
  #replace(entry: Entry<K>, dueAt: number, priority: number, seq = this.#seq++): Entry<K> {
    entry.index = -1;
    const fresh: Entry<K> = { key: entry.key, dueAt, priority, seq, index: -1 };
    this.#entries.set(entry.key, fresh);
    return fresh;
  }
}
