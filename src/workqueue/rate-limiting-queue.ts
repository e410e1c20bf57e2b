// The rate-limiting queue: a delaying queue that asks a rate limiter how long a failed item should wait.

import { InvalidOptionError, validateOptions } from '../core/options.js';
import { checkMethods } from './check-methods.js';
import { WORK_QUEUE_OPTION_SCHEMA } from './queue.js';
import { DelayingQueue, type DelayingQueueOptions } from './delaying-queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.js';

/**
 * Options of a {@link RateLimitingQueue}: those of {@link DelayingQueueOptions} (see
 * {@link WorkQueueOptions} for them and their defaults) plus the rate limiter.
 */
export type RateLimitingQueueOptions<T> = DelayingQueueOptions<T> & {
  /**
   * Decides how long a failed item waits before it is retried (see {@link RateLimitingQueue.addRateLimited}):
   * an object with `when`, `forget` and `numRequeues` methods. Default: a new
   * {@link defaultControllerRateLimiter} on the queue's `clock` (client-go's default for controllers).
   */
  rateLimiter?: RateLimiter<T>;
};

const OWNER = 'RateLimitingQueue';
const HOW_TO_CALL =
  'the rate limiter is now an option: call new RateLimitingQueue({ rateLimiter }) ' +
  "(with the queue's other options in the same object, e.g. new RateLimitingQueue({ rateLimiter, name: 'pods' })) " +
  'instead of new RateLimitingQueue(rateLimiter, options)';

/**
 * A {@link DelayingQueue} that re-queues failed items after a delay chosen by a {@link RateLimiter}
 * (client-go's `RateLimitingInterface`). Created with one options object:
 * `new RateLimitingQueue<string>({ name: 'pods' })`, or `new RateLimitingQueue<string>({ rateLimiter })`
 * for another limiter. The usual worker loop:
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
   * Creates an empty rate-limiting queue; see {@link RateLimitingQueueOptions} for the options and
   * their defaults (`rateLimiter` defaults to {@link defaultControllerRateLimiter} on the queue's clock).
   *
   * Throws {@link InvalidOptionError} (code `INVALID_OPTION`) at construction for options that are not
   * an object, an option of the wrong type (naming it), a `rateLimiter` without `when`, `forget` and
   * `numRequeues` functions, and for the removed two-argument form `new RateLimitingQueue(rateLimiter,
   * options)` — its message says to call `new RateLimitingQueue({ rateLimiter })`.
   */
  constructor(options: RateLimitingQueueOptions<T> = {}) {
    // `arguments` sees a second argument that the one-parameter signature hides from JavaScript callers
    // of the old two-argument form; a rest parameter would put it back into the public signature.
    // eslint-disable-next-line prefer-rest-params -- see above
    super(checkRateLimitingQueueOptions(options, arguments.length > 1 ? arguments[1] : undefined));
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter<T>({ clock: options.clock });
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

/**
 * Rejects the old `(rateLimiter, options)` call with a message saying how to call the queue now, then
 * checks the options (the work-queue options are checked again, by the same rules, in `WorkQueue`).
 * Returns `options` for the `super` call.
 */
function checkRateLimitingQueueOptions<T>(options: RateLimitingQueueOptions<T>, second: unknown): RateLimitingQueueOptions<T> {
  if (second !== undefined || looksLikeRateLimiter(options)) {
    throw new InvalidOptionError(`${OWNER}: takes one options object; ${HOW_TO_CALL}`);
  }
  validateOptions(OWNER, options, { ...WORK_QUEUE_OPTION_SCHEMA, rateLimiter: 'object' });
  checkMethods(OWNER, 'rateLimiter', options?.rateLimiter, 'RateLimiter', ['when', 'forget', 'numRequeues']);
  if (options === undefined || options === null) return options;
  const { rateLimiter: _limiter, ...queueOptions } = options;
  return queueOptions;
}

/** Whether `value` is a rate limiter rather than an options object (options have no `when`). */
function looksLikeRateLimiter(value: unknown): boolean {
  return value !== null && typeof value === 'object' && typeof (value as { when?: unknown }).when === 'function';
}
