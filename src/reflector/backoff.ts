// The reflector's jittered exponential backoff, shared by relists and watch retries.

import type { Clock } from '../core/clock.js';
import { InvalidOptionError, validateOptions, type OptionSchemaFor } from '../core/options.js';

/** Backoff between failed attempts. Defaults are client-go's reflector backoff. */
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

/** The rules of {@link BackoffOptions} (`factor` is checked to be ≥ 1 besides). */
export const BACKOFF_OPTION_SCHEMA = {
  initialMs: 'duration',
  maxMs: 'duration',
  factor: 'duration',
  jitter: 'duration',
  resetAfterMs: 'duration',
} as const satisfies OptionSchemaFor<BackoffOptions>;

/** {@link BackoffOptions} with every default filled in. */
export type ResolvedBackoffOptions = Required<BackoffOptions>;

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
 * A jittered exponential backoff on a {@link Clock}: `next()` returns the delay to wait before the next
 * attempt. The un-jittered delay doubles (by `factor`) from `initialMs` up to `maxMs`; jitter adds a
 * uniform `[0, jitter*d)` on top, using the injected `random`.
 *
 * Differs from client-go on purpose in one detail: client-go resets its delay every 2 minutes measured
 * from the previous reset, even while failing; this backoff resets only after `resetAfterMs` **without a
 * failure**, so a server that keeps failing keeps getting the capped delay.
 */
export class Backoff {
  readonly #options: ResolvedBackoffOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  #current: number;
  /** When the last delay ends (clock time), or undefined before the first failure. */
  #lastDelayEndsAt: number | undefined;

  constructor(options: ResolvedBackoffOptions, clock: Clock, random: () => number) {
    this.#options = options;
    this.#clock = clock;
    this.#random = random;
    this.#current = options.initialMs;
  }

  /** The delay before the next attempt, in ms; call once per failure. */
  next(): number {
    const now = this.#clock.now();
    if (this.#lastDelayEndsAt !== undefined && now - this.#lastDelayEndsAt >= this.#options.resetAfterMs) {
      this.reset();
    }
    const base = Math.min(this.#current, this.#options.maxMs);
    const r = Math.min(Math.max(this.#random(), 0), 1);
    const delay = Math.round(base + r * this.#options.jitter * base);
    this.#current = Math.min(this.#current * this.#options.factor, this.#options.maxMs);
    this.#lastDelayEndsAt = now + delay;
    return delay;
  }

  /** Starts over at `initialMs`. */
  reset(): void {
    this.#current = this.#options.initialMs;
    this.#lastDelayEndsAt = undefined;
  }

  /** The un-jittered delay the next failure would start from (before any reset), in ms. */
  peekBase(): number {
    return Math.min(this.#current, this.#options.maxMs);
  }
}
