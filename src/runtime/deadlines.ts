// The one fixed-length deadline tracker: many entries, each due a fixed time after it was added, on one clock timer.

import type { Clock, ClockTimer } from '../core/clock.js';

/**
 * Entries that each expire `ms` after they were {@link Deadlines.add}ed unless {@link Deadlines.delete}d
 * first — a controller's reconciles under `reconcileTimeoutMs`. One clock timer serves them all: every
 * entry has the same length, so the order they were added in is the order they fall due in (on a
 * monotonic clock), and the timer is set for the oldest only. Deleting an entry does not touch the
 * timer (it was a `setTimeout` and a `clearTimeout` per reconcile, a sixth of a cold reconcile's CPU):
 * when the timer fires for an entry already gone, it moves on to the oldest left, or ends when none is
 * (so an idle tracker holds a timer for at most `ms`; {@link Deadlines.clear} takes it away at once).
 *
 * An expired entry is deleted, then handed to `onExpired` — after every entry due at that moment was
 * taken out, so a callback may add or delete entries.
 */
export class Deadlines<E> {
  readonly #clock: Clock;
  readonly #ms: number;
  readonly #onExpired: (entry: E) => void;
  /** Each entry's due time; insertion order is due order. */
  readonly #live = new Map<E, number>();
  #timer: ClockTimer | undefined;

  /** `ms` > 0: each entry's length; `onExpired` gets each entry still here at its due time. */
  constructor(clock: Clock, ms: number, onExpired: (entry: E) => void) {
    this.#clock = clock;
    this.#ms = ms;
    this.#onExpired = onExpired;
  }

  /** How many entries wait. */
  get size(): number {
    return this.#live.size;
  }

  /** Starts `entry`'s deadline now (an entry already here keeps its first one). */
  add(entry: E): void {
    if (this.#live.has(entry)) return;
    const dueAt = this.#clock.now() + this.#ms;
    this.#live.set(entry, dueAt);
    if (this.#timer === undefined) this.#arm(dueAt);
  }

  /** Ends `entry`'s deadline before it fell due; true when it was here. */
  delete(entry: E): boolean {
    return this.#live.delete(entry);
  }

  /** Forgets every entry and clears the timer. */
  clear(): void {
    this.#live.clear();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(dueAt: number): void {
    this.#timer = this.#clock.setTimeout(() => this.#fire(), dueAt - this.#clock.now());
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    const expired: E[] = [];
    for (const [entry, dueAt] of this.#live) {
      if (dueAt > now) {
        this.#arm(dueAt);
        break;
      }
      this.#live.delete(entry);
      expired.push(entry);
    }
    for (const entry of expired) this.#onExpired(entry);
  }
}
