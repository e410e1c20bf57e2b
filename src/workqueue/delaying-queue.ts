// The delaying queue: a work queue whose items can be added after a delay, on one clock timer.

import { realClock, type Clock } from '../core/clock.js';
import { DelayQueue } from '../runtime/delay-queue.js';
import { WorkQueue, type WorkQueueOptions } from './queue.js';

/** Options of a {@link DelayingQueue}: those of {@link WorkQueueOptions}; `clock` also times the delays. */
export type DelayingQueueOptions<T> = WorkQueueOptions<T>;

/**
 * A {@link WorkQueue} with {@link DelayingQueue.addAfter} (client-go's `DelayingInterface`). Waiting
 * items sit in the reconcile scheduler's keyed delayed queue (`runtime/delay-queue.ts`): a min-heap by
 * ready time with a single clock timer armed for the earliest one; items that fall due are added in
 * ready-time order (ties in the order of the requests that set their ready times).
 *
 * An item waits at most once: a second `addAfter` for an item already waiting keeps the **earlier** of
 * the two ready times. Shutting down clears the timer and drops every waiting item.
 */
export class DelayingQueue<T> extends WorkQueue<T> {
  readonly #clock: Clock;
  readonly #waiting: DelayQueue<T>;

  /**
   * Creates an empty delaying queue; see {@link WorkQueueOptions} for the options and their defaults.
   * The options are checked as the {@link WorkQueue} constructor checks them (an `InvalidOptionError`,
   * code `INVALID_OPTION`, naming `DelayingQueue` and the option), so a bad `clock` fails here and not
   * at the first {@link DelayingQueue.addAfter}.
   */
  constructor(options: DelayingQueueOptions<T> = {}) {
    super(options);
    this.#clock = options.clock ?? realClock;
    this.#waiting = new DelayQueue<T>(this.#clock, () => this.#fire());
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
    if (this.#waiting.setEarlier(item, this.#clock.now() + delayMs)) this.#waiting.arm();
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
    this.#waiting.clear();
    this.checkStateWaiters();
  }

  /** The timer fired: adds every item now due, in due order, and arms the timer for the next one. */
  #fire(): void {
    const now = this.#clock.now();
    for (let next = this.#waiting.popDue(now); next !== undefined; next = this.#waiting.popDue(now)) this.add(next.key);
    this.#waiting.arm();
    this.checkStateWaiters();
  }
}
