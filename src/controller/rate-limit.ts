// Limits at the queue: one token bucket over the retries of failed reconciles, and the server's Retry-After honoured.

import { isTooManyRequests, retryAfterMs } from '../core/api-errors.js';
import type { Clock } from '../core/clock.js';
import { describeValue, InvalidOptionError, validateOptions } from '../core/options.js';
import type { CounterMetric, SettableGaugeMetric } from '../observability/index.js';
import { TokenBucket } from '../runtime/token-bucket.js';

/**
 * The overall limit on retries of failed reconciles (`ControllerOptions.rateLimit`): a token bucket
 * that refills at `qps` tokens a second up to `burst` tokens and starts full. Each retry after a
 * failure takes a token and waits for it, in debt if need be — client-go's
 * `DefaultControllerRateLimiter` (`MaxOf(per-item exponential, bucket)`).
 */
export interface RateLimitOptions {
  /** Tokens added per second: retries of failures start at most this often once the burst is spent. A finite number > 0. Default `10`. */
  qps?: number;
  /** How many retries may start at once before `qps` paces them: the bucket's size. A whole number ≥ 1. Default `100`. */
  burst?: number;
}

/** The default {@link RateLimitOptions}: client-go's default controller rate limiter, 10 qps with a burst of 100. */
const DEFAULT_RATE_LIMIT: Readonly<Required<RateLimitOptions>> = Object.freeze({ qps: 10, burst: 100 });

/**
 * The longest `Retry-After` honoured, in ms (5 minutes). kube-apiserver asks for 1 s (max-in-flight),
 * 1 to 32 s (API Priority and Fairness, apiserver's `maxRetryAfter`) or 5 s (shutting down); a larger
 * value (a proxy's, or a bogus header) would park a key, and with a 429 every retry, for as long as
 * it says — it is cut to this.
 */
export const MAX_RETRY_AFTER_MS = 300_000;

/** Which limit decided when a retry starts, when it was not the error policy's own delay. */
export type RateLimitCause = 'bucket' | 'retry_after';

/** Where the limiter reports its state (each part optional); the Controller builds it from its `ControllerMetricsProvider`. */
export interface RateLimitMetrics {
  /** Set after each retry the bucket paced: the tokens it holds (below 0: retries already booked ahead of the refill). */
  readonly tokens?: SettableGaugeMetric;
  /** One per retry the limit held past the error policy's delay, by the {@link RateLimitCause} that decided it. */
  readonly delayed?: Readonly<Record<RateLimitCause, CounterMetric | undefined>>;
}

/**
 * Checks a `rateLimit` option where it is given: `false`, or {@link RateLimitOptions} with `qps` a
 * finite number > 0 and `burst` a whole number ≥ 1. Throws `INVALID_OPTION` naming `owner` and the field.
 */
export function checkRateLimit(owner: string, value: unknown): void {
  if (value === undefined || value === false) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionError(`${owner}: option rateLimit must be false or { qps, burst }, got ${describeValue(value)}`);
  }
  validateOptions(owner, { rateLimit: value }, { rateLimit: { qps: 'any', burst: 'positiveCount' } });
  const qps = (value as RateLimitOptions).qps;
  if (qps !== undefined && (typeof qps !== 'number' || !Number.isFinite(qps) || qps <= 0)) {
    throw new InvalidOptionError(`${owner}: option rateLimit.qps must be a finite number > 0 (rateLimit: false turns the limit off), got ${describeValue(qps)}`);
  }
}

/** The `Retry-After` a failure carries (on its `cause` chain too), in ms, cut to {@link MAX_RETRY_AFTER_MS}; 0 when none. */
export function retryAfterOf(error: unknown): number {
  return Math.min(retryAfterMs(error), MAX_RETRY_AFTER_MS);
}

/**
 * Decides when a failed key is retried: the longest of the error policy's delay, the wait for a token
 * of the bucket, and the `Retry-After` the failure carries (capped at {@link MAX_RETRY_AFTER_MS}). A
 * 429 with a `Retry-After` also pauses the bucket: no retry of any key starts before that time (the
 * API server's throttling is not per object). Successes, `requeueAfter` and new requests never come
 * here. With `rateLimit: false` there is no bucket and no pause; a failure's own `Retry-After` is
 * still honoured.
 */
export class RetryRateLimiter {
  readonly #clock: Clock;
  /** Undefined with `rateLimit: false`. */
  readonly #bucket: TokenBucket | undefined;
  readonly #metrics: RateLimitMetrics | undefined;
  /** Clock time before which no retry starts (a 429's Retry-After); 0 when none. */
  #pausedUntil = 0;

  /** Throws `INVALID_OPTION` (naming `owner`) for a bad `rateLimit`. */
  constructor(owner: string, rateLimit: RateLimitOptions | false | undefined, clock: Clock, metrics?: RateLimitMetrics) {
    checkRateLimit(owner, rateLimit);
    this.#clock = clock;
    this.#metrics = metrics;
    if (rateLimit === false) return;
    const qps = rateLimit?.qps ?? DEFAULT_RATE_LIMIT.qps;
    const burst = rateLimit?.burst ?? DEFAULT_RATE_LIMIT.burst;
    this.#bucket = new TokenBucket(burst, qps, 1000, clock.now());
    metrics?.tokens?.set(burst);
  }

  /**
   * A reconcile failed with `error`; the error policy asks for a retry in `policyMs` (undefined: no
   * retry). Returns when to retry, in ms from now (undefined: none), taking a token for a retry.
   */
  retryDelay(policyMs: number | undefined, error: unknown): number | undefined {
    const now = this.#clock.now();
    const askedMs = retryAfterOf(error);
    if (askedMs > 0 && this.#bucket !== undefined && isTooManyRequests(error)) this.#pausedUntil = Math.max(this.#pausedUntil, now + askedMs);
    if (policyMs === undefined) return undefined;
    let bucketMs = 0;
    if (this.#bucket !== undefined) {
      bucketMs = this.#bucket.reserve(now);
      this.#metrics?.tokens?.set(this.#bucket.tokens(now));
    }
    const serverMs = Math.max(askedMs, this.#pausedUntil - now);
    const delay = Math.max(policyMs, bucketMs, serverMs);
    if (delay > policyMs) this.#metrics?.delayed?.[serverMs >= bucketMs ? 'retry_after' : 'bucket']?.inc();
    return delay;
  }
}
