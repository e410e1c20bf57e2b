// What a following elector does between its acquire tries: waits retryPeriodMs, or less when the lock's watch says the record changed hands.

import { sleep, type Clock } from '../core/clock.js';
import { raceAbort } from '../core/abort.js';
import { Backoff, resolveBackoffOptions, type RandomSource } from '../runtime/backoff.js';
import type { LeaderElectionRecord, ResourceLock } from './lock.js';

/** What the elector gives a {@link LockWatchWaker}. */
export interface LockWatchWakerOptions {
  /** The lock; nothing is watched when it has no `watch`. */
  lock: ResourceLock;
  /** Timers of the waits and of the backoff between watches. */
  clock: Clock;
  /** The jitter of that backoff. */
  random: RandomSource;
  /** Whether a record reported by the watch is worth an acquire try now. */
  wakesOn: (record: LeaderElectionRecord) => boolean;
  /** Told of a watch that failed (it is re-opened with backoff). */
  onWatchError: (err: unknown) => void;
}

/**
 * The waits of a following elector. {@link LockWatchWaker.wait} sleeps like `sleep` but ends early when
 * the lock's watch reports a record `wakesOn` accepts (a release, a new holder) — also one reported
 * while the elector was busy with a try, so no wake-up is lost. The watch is opened at the first wait,
 * re-opened with the house's {@link Backoff} (0.8 s doubling to 30 s, jittered) whenever it ends or
 * fails, and closed by {@link LockWatchWaker.close}; the waits never depend on it: each still ends
 * after its delay.
 */
export class LockWatchWaker {
  readonly #options: LockWatchWakerOptions;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #pending = false;
  #wake: (() => void) | undefined;

  constructor(options: LockWatchWakerOptions) {
    this.#options = options;
  }

  /**
   * Waits `delayMs`, or less when a wake-up came (or had come since the last wait). Resolves `false`
   * when `stop` aborts, `true` otherwise.
   */
  async wait(delayMs: number, stop: AbortSignal): Promise<boolean> {
    if (stop.aborted) return false;
    this.#open();
    if (this.#pending) {
      this.#pending = false;
      return true;
    }
    const woken = new AbortController();
    const end = (): void => woken.abort();
    stop.addEventListener('abort', end, { once: true });
    this.#wake = end;
    try {
      await sleep(this.#options.clock, delayMs, woken.signal);
    } finally {
      this.#wake = undefined;
      stop.removeEventListener('abort', end);
    }
    this.#pending = false;
    return !stop.aborted;
  }

  /** Closes the watch and waits until its loop ended (a watch that ignores its signal is abandoned). */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  #open(): void {
    if (this.#loop !== undefined || this.#options.lock.watch === undefined || this.#stop.signal.aborted) return;
    this.#loop = this.#watchLoop();
  }

  #onRecord(record: LeaderElectionRecord): void {
    if (this.#stop.signal.aborted || !this.#options.wakesOn(record)) return;
    if (this.#wake === undefined) this.#pending = true;
    else this.#wake();
  }

  async #watchLoop(): Promise<void> {
    const { lock, clock, random, onWatchError } = this.#options;
    const signal = this.#stop.signal;
    const backoff = new Backoff(resolveBackoffOptions(), clock, random);
    while (!signal.aborted) {
      try {
        const watching = Promise.resolve().then(() => lock.watch?.((record) => this.#onRecord(record), signal));
        await raceAbort(watching, signal);
      } catch (err) {
        if (!signal.aborted) onWatchError(err);
      }
      if (!(await sleep(clock, backoff.next(), signal))) return;
    }
  }
}
