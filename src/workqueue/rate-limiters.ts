// Rate limiters for re-queueing failed items: per-item backoff, fast/slow, token bucket, combinators.

import { realClock, type Clock } from '../core/clock.js';
import { InvalidOptionError, validateOptions, type OptionSchema } from '../core/options.js';
import { FailureCounts, ItemBackoff } from '../runtime/backoff.js';
import { TokenBucket } from '../runtime/token-bucket.js';

/**
 * Decides how long an item waits before it is retried (client-go's `TypedRateLimiter`). Each `when` call
 * is one failure: it returns the delay in milliseconds and counts the failure.
 */
export interface RateLimiter<T> {
  /** The delay (ms) before `item` may be retried; counts one more failure for it. */
  when(item: T): number;
  /** Stops tracking `item` (call it when the item finally succeeded). */
  forget(item: T): void;
  /** How many failures are being tracked for `item`. */
  numRequeues(item: T): number;
}

/**
 * Checks a limiter's constructor arguments, by name, with the option validator; unlike options, none of
 * them may be left out. Throws {@link InvalidOptionError} naming `owner` and the argument.
 */
function checkArguments(owner: string, args: Record<string, unknown>, schema: OptionSchema): void {
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) throw new InvalidOptionError(`${owner}: ${name} is required`);
  }
  validateOptions(owner, args, schema);
}

/**
 * Exponential per-item backoff: the n-th failure of an item (counting from 0) waits `baseDelayMs × 2ⁿ`,
 * capped at `maxDelayMs`. Overflow-safe: however many failures, the delay never exceeds the cap. A base
 * of 0 always returns 0; a cap below the base always returns the cap.
 */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  readonly #backoff: ItemBackoff<T>;

  /**
   * `baseDelayMs`: the first delay; `maxDelayMs`: the cap. Both must be finite and ≥ 0, else
   * {@link InvalidOptionError}.
   */
  constructor(baseDelayMs: number, maxDelayMs: number) {
    const owner = 'ItemExponentialFailureRateLimiter';
    checkArguments(owner, { baseDelayMs, maxDelayMs }, { baseDelayMs: 'duration', maxDelayMs: 'duration' });
    this.#backoff = new ItemBackoff<T>({ baseMs: baseDelayMs, maxMs: maxDelayMs, factor: 2 }, owner);
  }

  /** `base × 2^failures(item)` capped at the maximum; then counts the failure. */
  when(item: T): number {
    return this.#backoff.next(item);
  }

  /** Forgets the item's failures. */
  forget(item: T): void {
    this.#backoff.forget(item);
  }

  /** The item's failure count. */
  numRequeues(item: T): number {
    return this.#backoff.failures(item);
  }
}

/**
 * Retries quickly a few times, then slowly: the first `maxFastAttempts` failures of an item wait
 * `fastDelayMs`, later ones `slowDelayMs`.
 */
export class ItemFastSlowRateLimiter<T> implements RateLimiter<T> {
  readonly #fastDelayMs: number;
  readonly #slowDelayMs: number;
  readonly #maxFastAttempts: number;
  readonly #failures = new FailureCounts<T>();

  /**
   * Delays in ms (finite, ≥ 0); `maxFastAttempts` (a whole number ≥ 0) is how many failures get the
   * fast delay. Anything else throws {@link InvalidOptionError}.
   */
  constructor(fastDelayMs: number, slowDelayMs: number, maxFastAttempts: number) {
    checkArguments(
      'ItemFastSlowRateLimiter',
      { fastDelayMs, slowDelayMs, maxFastAttempts },
      { fastDelayMs: 'duration', slowDelayMs: 'duration', maxFastAttempts: 'count' },
    );
    this.#fastDelayMs = fastDelayMs;
    this.#slowDelayMs = slowDelayMs;
    this.#maxFastAttempts = maxFastAttempts;
  }

  /** Counts the failure, then the fast delay while within `maxFastAttempts`, else the slow one. */
  when(item: T): number {
    const attempts = this.#failures.add(item);
    return attempts <= this.#maxFastAttempts ? this.#fastDelayMs : this.#slowDelayMs;
  }

  /** Forgets the item's failures. */
  forget(item: T): void {
    this.#failures.forget(item);
  }

  /** The item's failure count. */
  numRequeues(item: T): number {
    return this.#failures.get(item);
  }
}

/** Options of a {@link BucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /** The clock the bucket refills on. Default: `realClock`. */
  clock?: Clock;
}

/**
 * An overall (not per-item) token bucket: it refills at `qps` tokens per second up to `burst` tokens.
 * Each `when` takes one token and returns how long until that token exists (0 while the burst lasts);
 * the token is consumed even if the caller never uses it. With 10 qps and burst 100, the first 100
 * calls return 0 and each further call returns 100 ms more than the previous one (minus elapsed time).
 * `numRequeues` is always 0 and `forget` does nothing.
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly #clock: Clock;
  /** `undefined` when `qps` is `Infinity` (no limit). */
  readonly #bucket: TokenBucket | undefined;

  /**
   * `qps` > 0 (`Infinity` = unlimited); `burst` a whole number ≥ 1 of tokens; `options.clock` a
   * `Clock`. Anything else throws {@link InvalidOptionError}.
   */
  constructor(qps: number, burst: number, options: BucketRateLimiterOptions = {}) {
    if (typeof qps !== 'number' || !(qps > 0)) {
      throw new InvalidOptionError(`BucketRateLimiter: qps must be a number > 0 (Infinity = unlimited), got ${String(qps)}`);
    }
    checkArguments('BucketRateLimiter', { burst }, { burst: 'positiveCount' });
    validateOptions('BucketRateLimiter', options, { clock: 'clock' });
    this.#clock = options.clock ?? realClock;
    this.#bucket = qps === Infinity ? undefined : new TokenBucket(burst, qps, 1000, this.#clock.now());
  }

  /** Reserves one token; returns the wait (ms) until it is available. */
  when(_item: T): number {
    return this.#bucket === undefined ? 0 : this.#bucket.reserve(this.#clock.now());
  }

  /** Does nothing: the bucket does not track items. */
  forget(_item: T): void {}

  /** Always 0: the bucket does not track items. */
  numRequeues(_item: T): number {
    return 0;
  }
}

/**
 * Combines limiters: `when` calls every one (so all of them count the failure) and returns the longest
 * delay; `numRequeues` is the largest count; `forget` forgets in all of them.
 */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  readonly #limiters: readonly RateLimiter<T>[];

  /** At least one limiter, else {@link InvalidOptionError}. */
  constructor(...limiters: RateLimiter<T>[]) {
    if (limiters.length === 0) throw new InvalidOptionError('MaxOfRateLimiter: needs at least one limiter');
    this.#limiters = limiters;
  }

  /** The longest delay of all limiters (each one is called). */
  when(item: T): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.when(item));
    return max;
  }

  /** Forgets the item in every limiter. */
  forget(item: T): void {
    for (const l of this.#limiters) l.forget(item);
  }

  /** The largest count of all limiters. */
  numRequeues(item: T): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/** Caps another limiter's delays at `maxDelayMs`; counting and forgetting are delegated. */
export class WithMaxWaitRateLimiter<T> implements RateLimiter<T> {
  readonly #limiter: RateLimiter<T>;
  readonly #maxDelayMs: number;

  /** Wraps `limiter`; `maxDelayMs` finite and ≥ 0, else {@link InvalidOptionError}. */
  constructor(limiter: RateLimiter<T>, maxDelayMs: number) {
    checkArguments('WithMaxWaitRateLimiter', { maxDelayMs }, { maxDelayMs: 'duration' });
    this.#limiter = limiter;
    this.#maxDelayMs = maxDelayMs;
  }

  /** The wrapped delay, at most `maxDelayMs`. */
  when(item: T): number {
    return Math.min(this.#limiter.when(item), this.#maxDelayMs);
  }

  /** Delegated. */
  forget(item: T): void {
    this.#limiter.forget(item);
  }

  /** Delegated. */
  numRequeues(item: T): number {
    return this.#limiter.numRequeues(item);
  }
}

/**
 * client-go's default for controllers: the longer of per-item exponential backoff (5 ms doubling up to
 * 1000 s) and an overall token bucket of 10 qps with a burst of 100. `numRequeues` is the per-item count.
 * `options.clock` (default `realClock`) drives the bucket.
 */
export function defaultControllerRateLimiter<T>(options: BucketRateLimiterOptions = {}): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1_000_000),
    new BucketRateLimiter<T>(10, 100, options),
  );
}

/** client-go's default per-item limiter: exponential backoff from 1 ms doubling up to 1000 s. */
export function defaultItemBasedRateLimiter<T>(): RateLimiter<T> {
  return new ItemExponentialFailureRateLimiter<T>(1, 1_000_000);
}
