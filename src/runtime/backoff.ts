// The one backoff family: the random source, capped exponential delays, jitter, per-item failure counts.

import type { Clock } from '../core/clock.js';
import { InvalidOptionError, validateOptions, type OptionSchemaFor } from '../core/options.js';

/** A source of uniform random numbers in `[0, 1)`, injected wherever a delay is jittered. */
export type RandomSource = () => number;

/**
 * The default {@link RandomSource}: `Math.random`. The one place in `src/` that names it; everything
 * that jitters takes a `random` option and falls back to this.
 */
// eslint-disable-next-line no-restricted-properties -- the one default random source
export const defaultRandom: RandomSource = Math.random;

/**
 * `baseMs × factorⁿ` capped at `maxMs`, where `n` counts the failures before this one (0 for the first).
 * Overflow-safe: however large `n`, the result never exceeds the cap (a power that becomes `Infinity`
 * is absorbed by it). A base of 0 is always 0; a cap below the base is always the cap.
 */
export function exponentialDelay(baseMs: number, factor: number, n: number, maxMs: number): number {
  if (baseMs === 0) return 0;
  const delay = baseMs * factor ** n;
  return delay > maxMs ? maxMs : delay;
}

/**
 * `delayMs` stretched at random by up to `factor` of itself: uniform in `[d, d + factor × d)`
 * (client-go's `wait.Jitter`). A `random()` outside `[0, 1]` is clamped into it.
 */
export function jittered(delayMs: number, factor: number, random: RandomSource): number {
  const r = Math.min(Math.max(random(), 0), 1);
  return delayMs * (1 + factor * r);
}

/**
 * `delayMs` stretched or shrunk at random by up to `fraction` of itself: uniform in
 * `[d − fraction × d, d + fraction × d)`, so replicas started together drift apart.
 */
export function jitteredAround(delayMs: number, fraction: number, random: RandomSource): number {
  const r = Math.min(Math.max(random(), 0), 1);
  return delayMs * (1 + fraction * (2 * r - 1));
}

/**
 * Failures in a row, per item (items compared like `Map` keys). What a per-item backoff and a
 * reconcile scheduler count; an item that succeeded is forgotten, so the map holds failing items only.
 */
export class FailureCounts<K> {
  readonly #counts = new Map<K, number>();

  /** Counts one more failure of `item`; returns its count now (1 for the first). */
  add(item: K): number {
    const count = (this.#counts.get(item) ?? 0) + 1;
    this.#counts.set(item, count);
    return count;
  }

  /** How many failures in a row `item` has had (0 when none, or after {@link FailureCounts.forget}). */
  get(item: K): number {
    return this.#counts.get(item) ?? 0;
  }

  /** Forgets `item`'s failures (it succeeded). */
  forget(item: K): void {
    this.#counts.delete(item);
  }

  /** How many items have failures counted. */
  get size(): number {
    return this.#counts.size;
  }

  /** The items with failures counted. */
  keys(): IterableIterator<K> {
    return this.#counts.keys();
  }
}

/** Options of an {@link ItemBackoff}. */
export interface ItemBackoffOptions {
  /** The delay after an item's first failure, in ms. Default `5` (client-go's default controller rate limiter). */
  baseMs?: number;
  /** The cap, in ms. Default `1_000_000` (1000 s, as client-go). */
  maxMs?: number;
  /** Each failure multiplies the delay by this (≥ 1). Default `2`. */
  factor?: number;
  /** A delay `d` becomes a uniform value in `[d, d + jitter × d)`. Default `0` (no jitter, as client-go). */
  jitter?: number;
  /** The random source of the jitter. Default `Math.random`. */
  random?: RandomSource;
}

/**
 * Exponential per-item backoff: the n-th failure in a row of an item (counting from 0) waits
 * `baseMs × factorⁿ` capped at `maxMs` ({@link exponentialDelay}), jittered when `jitter` > 0; a
 * success ({@link ItemBackoff.forget}) starts the item over. client-go's
 * `ItemExponentialFailureRateLimiter` with its defaults (5 ms doubling to 1000 s).
 */
export class ItemBackoff<K> {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: RandomSource;
  readonly #failures = new FailureCounts<K>();

  /** Throws `INVALID_OPTION` (naming `owner`) for an option outside its documented range. */
  constructor(options: ItemBackoffOptions = {}, owner = 'ItemBackoff') {
    validateOptions(owner, options, { baseMs: 'duration', maxMs: 'duration', factor: 'duration', jitter: 'duration', random: 'function' });
    this.#baseMs = options.baseMs ?? 5;
    this.#maxMs = options.maxMs ?? 1_000_000;
    this.#factor = options.factor ?? 2;
    this.#jitter = options.jitter ?? 0;
    this.#random = options.random ?? defaultRandom;
    if (this.#factor < 1) throw new InvalidOptionError(`${owner}: option factor must be >= 1, got ${this.#factor}`);
  }

  /** The delay (ms) after one more failure of `item`, which it counts. */
  next(item: K): number {
    const delay = this.delayOf(this.#failures.add(item));
    return this.#jitter === 0 ? delay : jittered(delay, this.#jitter, this.#random);
  }

  /** The un-jittered delay after the `attempt`-th failure in a row (from 1); counts nothing. */
  delayOf(attempt: number): number {
    return exponentialDelay(this.#baseMs, this.#factor, Math.max(0, attempt - 1), this.#maxMs);
  }

  /** Forgets `item`'s failures: its next delay is the base again. */
  forget(item: K): void {
    this.#failures.forget(item);
  }

  /** How many failures in a row `item` has had. */
  failures(item: K): number {
    return this.#failures.get(item);
  }
}

/** Backoff between failed attempts of one thing (the reflector's lists and watches). Defaults are client-go's reflector backoff. */
export interface BackoffOptions {
  /** The first delay, in ms. Default `800`. */
  initialMs?: number;
  /** The cap on the un-jittered delay, in ms. Default `30000` (so jittered delays settle in [30 s, 60 s)). */
  maxMs?: number;
  /** Each failure multiplies the delay by this. Default `2`. */
  factor?: number;
  /** A delay `d` becomes a uniform value in `[d, d + jitter*d)`. Default `1.0`; `0` = no jitter. */
  jitter?: number;
  /**
   * After this long without a failure (measured from the end of the last delay), the next delay starts
   * again at `initialMs`. Default `120000` (2 minutes).
   */
  resetAfterMs?: number;
}

/** {@link BackoffOptions} with every default filled in. */
export type ResolvedBackoffOptions = Required<BackoffOptions>;

/** The rules of {@link BackoffOptions} (`factor` is checked to be ≥ 1 besides). */
export const BACKOFF_OPTION_SCHEMA = {
  initialMs: 'duration',
  maxMs: 'duration',
  factor: 'duration',
  jitter: 'duration',
  resetAfterMs: 'duration',
} as const satisfies OptionSchemaFor<BackoffOptions>;

/** Fills in the defaults of {@link BackoffOptions} and checks the ranges (throws code `INVALID_OPTION`). */
export function resolveBackoffOptions(options: BackoffOptions = {}): ResolvedBackoffOptions {
  validateOptions('Backoff', options, BACKOFF_OPTION_SCHEMA);
  const resolved = {
    initialMs: options.initialMs ?? 800,
    maxMs: options.maxMs ?? 30_000,
    factor: options.factor ?? 2,
    jitter: options.jitter ?? 1.0,
    resetAfterMs: options.resetAfterMs ?? 120_000,
  };
  validateOptions('Backoff', resolved, BACKOFF_OPTION_SCHEMA);
  if (resolved.factor < 1) throw new InvalidOptionError(`Backoff: option factor must be >= 1, got ${resolved.factor}`);
  return resolved;
}

/**
 * A jittered exponential backoff of one thing on a {@link Clock}: `next()` returns the delay to wait
 * before the next attempt, rounded to a whole ms. The un-jittered delay grows by `factor` from
 * `initialMs` up to `maxMs` ({@link exponentialDelay}); jitter adds a uniform `[0, jitter × d)` on top
 * ({@link jittered}), using the injected `random`.
 *
 * Differs from client-go on purpose in one detail: client-go resets its delay every 2 minutes measured
 * from the previous reset, even while failing; this backoff resets only after `resetAfterMs` **without a
 * failure**, so a server that keeps failing keeps getting the capped delay.
 */
export class Backoff {
  readonly #options: ResolvedBackoffOptions;
  readonly #clock: Clock;
  readonly #random: RandomSource;
  /** Failures since the last reset. */
  #failures = 0;
  /** When the last delay ends (clock time), or undefined before the first failure. */
  #lastDelayEndsAt: number | undefined;

  constructor(options: ResolvedBackoffOptions, clock: Clock, random: RandomSource = defaultRandom) {
    this.#options = options;
    this.#clock = clock;
    this.#random = random;
  }

  /** The delay before the next attempt, in ms; call once per failure. */
  next(): number {
    const now = this.#clock.now();
    if (this.#lastDelayEndsAt !== undefined && now - this.#lastDelayEndsAt >= this.#options.resetAfterMs) {
      this.reset();
    }
    const delay = Math.round(jittered(this.peekBase(), this.#options.jitter, this.#random));
    this.#failures++;
    this.#lastDelayEndsAt = now + delay;
    return delay;
  }

  /** Starts over at `initialMs`. */
  reset(): void {
    this.#failures = 0;
    this.#lastDelayEndsAt = undefined;
  }

  /** The un-jittered delay the next failure would start from (before any reset), in ms. */
  peekBase(): number {
    const { initialMs, factor, maxMs } = this.#options;
    return exponentialDelay(initialMs, factor, this.#failures, maxMs);
  }
}
