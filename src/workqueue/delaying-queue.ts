// The delaying queue: a work queue whose items can be added after a delay, on one clock timer.

import { realClock, type Clock, type ClockTimer } from '../core/clock.js';
import { DelayHeap, type DelayEntry } from './heap.js';
import { WorkQueue, type WorkQueueOptions } from './queue.js';

/** Options of a {@link DelayingQueue}: those of {@link WorkQueueOptions}; `clock` also times the delays. */
export type DelayingQueueOptions<T> = WorkQueueOptions<T>;

/**
 * A {@link WorkQueue} with {@link DelayingQueue.addAfter} (client-go's `DelayingInterface`). Waiting
 * items sit in a min-heap by ready time; a single clock timer is armed for the earliest one, and items
 * that fall due are added in ready-time order (ties in the order they were requested).
 *
 * An item waits at most once: a second `addAfter` for an item already waiting keeps the **earlier** of
 * the two ready times. Shutting down clears the timer and drops every waiting item.
 */
export class DelayingQueue<T> extends WorkQueue<T> {
  readonly #clock: Clock;
  readonly #heap = new DelayHeap<T>();
  readonly #waiting = new Map<T, DelayEntry<T>>();
  #seq = 0;
  #timer: ClockTimer | undefined;
  #timerDueAt = Infinity;

  /**
   * Creates an empty delaying queue; see {@link WorkQueueOptions} for the options and their defaults.
   * The options are checked as the {@link WorkQueue} constructor checks them (an `InvalidOptionError`,
   * code `INVALID_OPTION`, naming `DelayingQueue` and the option), so a bad `clock` fails here and not
   * at the first {@link DelayingQueue.addAfter}.
   */
  constructor(options: DelayingQueueOptions<T> = {}) {
    super(options);
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Adds `item` once `delayMs` milliseconds have passed on the queue's clock; a delay of zero or less
   * adds it now. Ignored after shutdown. Every call counts as a retry in metrics. If the item is already
   * waiting, only an earlier ready time is kept (never a later one).
   */
  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown()) return;
    this.recordRetry(item);
    if (!(delayMs > 0)) {
      // NaN counts as "no delay" rather than "never".
      this.add(item);
      return;
    }
    const readyAt = this.#clock.now() + delayMs;
    const existing = this.#waiting.get(item);
    if (existing !== undefined) {
      if (readyAt < existing.readyAt) {
        this.#heap.moveEarlier(existing, readyAt);
        this.#arm();
      }
      return;
    }
    const entry: DelayEntry<T> = { item, readyAt, seq: this.#seq++, index: -1 };
    this.#waiting.set(item, entry);
    this.#heap.push(entry);
    this.#arm();
  }

  /** How many items are waiting for their delay (not yet in the queue). */
  delayedLen(): number {
    return this.#waiting.size;
  }

  /** Shuts down (see {@link WorkQueue.shutDown}), clears the delay timer and drops waiting items. */
  override shutDown(): void {
    this.#stopDelays();
    super.shutDown();
  }

  /** Shuts down with drain (see {@link WorkQueue.shutDownWithDrain}), dropping waiting items first. */
  override shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    this.#stopDelays();
    return super.shutDownWithDrain(signal);
  }

  /** Items waiting for their delay count against idleness. */
  protected override delayedCount(): number {
    return this.#waiting.size;
  }

  #stopDelays(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
    this.#heap.clear();
    this.#waiting.clear();
    this.checkStateWaiters();
  }

  /** Makes sure exactly one timer is set, for the earliest waiting item. */
  #arm(): void {
    const next = this.#heap.peek();
    const dueAt = next === undefined ? Infinity : next.readyAt;
    if (dueAt === this.#timerDueAt) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = dueAt;
    if (next === undefined) return;
    this.#timer = this.#clock.setTimeout(() => this.#fire(), dueAt - this.#clock.now());
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
    const now = this.#clock.now();
    for (;;) {
      const next = this.#heap.peek();
      if (next === undefined || next.readyAt > now) break;
      this.#heap.pop();
      this.#waiting.delete(next.item);
      this.add(next.item);
    }
    this.#arm();
    this.checkStateWaiters();
  }
}
