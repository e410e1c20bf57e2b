// The rate-limiting queue: a delaying queue that asks a rate limiter how long a failed item should wait.

import { DelayingQueue, type DelayingQueueOptions } from './delaying-queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.js';

/** Options of a {@link RateLimitingQueue}: those of {@link DelayingQueueOptions}. */
export type RateLimitingQueueOptions<T> = DelayingQueueOptions<T>;

/**
 * A {@link DelayingQueue} that re-queues failed items after a delay chosen by a {@link RateLimiter}
 * (client-go's `RateLimitingInterface`). The usual worker loop:
 *
 * ```ts
 * const { item, shutdown } = await queue.get();
 * if (shutdown) return;
 * try {
 *   await reconcile(item);
 *   queue.forget(item);          // success: reset its backoff
 * } catch {
 *   queue.addRateLimited(item);  // failure: retry later, backing off
 * } finally {
 *   queue.done(item);
 * }
 * ```
 */
export class RateLimitingQueue<T> extends DelayingQueue<T> {
  readonly #limiter: RateLimiter<T>;

  /**
   * `rateLimiter` defaults to {@link defaultControllerRateLimiter} on the queue's clock; see
   * {@link WorkQueueOptions} for the options and their defaults.
   */
  constructor(rateLimiter?: RateLimiter<T>, options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.#limiter = rateLimiter ?? defaultControllerRateLimiter<T>({ clock: options.clock });
  }

  /** The limiter this queue consults. */
  get rateLimiter(): RateLimiter<T> {
    return this.#limiter;
  }

  /** Adds `item` after the delay the limiter chooses (counting one failure). Ignored after shutdown. */
  addRateLimited(item: T): void {
    if (this.shuttingDown()) return;
    this.addAfter(item, this.#limiter.when(item));
  }

  /** Tells the limiter the item succeeded: its failures are forgotten. The queue itself is unchanged. */
  forget(item: T): void {
    this.#limiter.forget(item);
  }

  /** How many times the item was rate-limited since it was last forgotten. */
  numRequeues(item: T): number {
    return this.#limiter.numRequeues(item);
  }
}
