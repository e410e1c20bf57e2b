// The one token bucket: the overall rate limiter of the work queues and the Event recorder's spam filter.

/**
 * A token bucket on clock times the caller passes: it holds up to `burst` tokens (it starts full) and
 * refills continuously at `tokens` tokens every `perMs` ms. {@link TokenBucket.tryTake} takes a token
 * when there is one (client-go's passive spam filter); {@link TokenBucket.reserve} always takes one
 * and says how long until it exists (client-go's `rate.Limiter.Reserve`), so the bucket can go into
 * debt. A clock that goes back refills nothing.
 */
export class TokenBucket {
  readonly #burst: number;
  readonly #tokensPer: number;
  readonly #perMs: number;
  #tokens: number;
  #at: number;

  /** A full bucket of `burst` tokens at clock time `now`, refilling `tokens` every `perMs` ms. */
  constructor(burst: number, tokens: number, perMs: number, now: number) {
    this.#burst = burst;
    this.#tokensPer = tokens;
    this.#perMs = perMs;
    this.#tokens = burst;
    this.#at = now;
  }

  /** Takes one token at `now` when one is there; false (taking nothing) when not. */
  tryTake(now: number): boolean {
    this.#refill(now);
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Takes one token at `now`, in debt if need be; returns the wait (ms) until that token exists (0 when it does). */
  reserve(now: number): number {
    this.#refill(now);
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#tokensPer) * this.#perMs;
  }

  /** The tokens the bucket holds at `now`, taking none: below 0 while reservations are in debt. */
  tokens(now: number): number {
    this.#refill(now);
    return this.#tokens;
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#at);
    this.#at = Math.max(this.#at, now);
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed * this.#tokensPer) / this.#perMs);
  }
}
