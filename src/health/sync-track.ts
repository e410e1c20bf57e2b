// Sync tracking: "upstream synced and every initial item processed", and awaitable sync conditions.

import { AbortedError, ErrorCodes, KubeInformerError } from '../core/errors.js';

/**
 * Waiters on a condition that may become true, or fail for good. `check()` is called whenever the
 * condition may have changed; `fail(err)` rejects every current and future waiter with `err`.
 * Waiting leaves no listener behind on the signal once the promise settles.
 */
export class SyncCondition {
  readonly #isMet: () => boolean;
  #failure: Error | undefined;
  #waiters = new Set<{ resolve: () => void; reject: (err: Error) => void }>();
  #failWaiters: Array<(err: Error) => void> = [];

  /** `isMet` is evaluated on `check()` and `wait()`. */
  constructor(isMet: () => boolean) {
    this.#isMet = isMet;
  }

  /** The failure given to {@link SyncCondition.fail}, if any. */
  failure(): Error | undefined {
    return this.#failure;
  }

  /** Resolves the waiters when the condition holds. */
  check(): void {
    if (this.#waiters.size === 0 || this.#failure !== undefined || !this.#isMet()) return;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w.resolve();
  }

  /** Rejects every current and future waiter with `err` (the first failure wins). */
  fail(err: Error): void {
    if (this.#failure !== undefined) return;
    this.#failure = err;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w.reject(err);
    const failWaiters = this.#failWaiters;
    this.#failWaiters = [];
    for (const resolve of failWaiters) resolve(err);
  }

  /** Resolves with the failure once {@link SyncCondition.fail} is called (at once when it was); never rejects. */
  failed(): Promise<Error> {
    if (this.#failure !== undefined) return Promise.resolve(this.#failure);
    return new Promise((resolve) => this.#failWaiters.push(resolve));
  }

  /** Rejects the current waiters with `err`, without failing for good (later waits may still succeed). */
  rejectWaiters(err: Error): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w.reject(err);
  }

  /**
   * Resolves once the condition holds (at once when it already does — met wins over a later
   * failure). Rejects with the failure, or with an `AbortedError` whose `cause` is the signal's reason.
   */
  wait(signal?: AbortSignal): Promise<void> {
    if (this.#isMet()) return Promise.resolve();
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (signal?.aborted) return Promise.reject(abortedWait(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(abortedWait(signal as AbortSignal));
      };
      const waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err: Error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function abortedWait(signal: AbortSignal): AbortedError {
  return new AbortedError('stopped waiting for the cache to sync: the signal was aborted', { cause: signal.reason });
}

/**
 * Counts items of an initial list that are in flight for one consumer (client-go's
 * `synctrack.SingleFileTracker`). Synced = upstream synced and nothing in flight.
 */
export class SingleFileTracker {
  readonly #upstreamHasSynced: () => boolean;
  #count = 0;

  /** `upstreamHasSynced` tells whether the source (the informer) has delivered its initial list. */
  constructor(upstreamHasSynced: () => boolean) {
    this.#upstreamHasSynced = upstreamHasSynced;
  }

  /** An initial-list item was handed to the consumer. */
  start(): void {
    this.#count++;
  }

  /** The consumer finished an item counted by {@link SingleFileTracker.start}. Throws on underflow. */
  finished(): void {
    if (this.#count === 0) {
      throw new KubeInformerError(ErrorCodes.INTERNAL, 'SingleFileTracker.finished() called more often than start()');
    }
    this.#count--;
  }

  /** How many initial items are in flight. */
  pending(): number {
    return this.#count;
  }

  /** True when the upstream has synced and every started item has finished. */
  hasSynced(): boolean {
    return this.#count === 0 && this.#upstreamHasSynced();
  }
}

/**
 * Tracks initial-list items by key for a consumer that processes them in parallel (client-go's
 * `synctrack.AsyncTracker`): `start(key)` when handed out, `finished(key)` when done. `finished` for a
 * key never started is harmless.
 */
export class AsyncTracker<K> {
  readonly #upstreamHasSynced: () => boolean;
  #waiting = new Set<K>();

  /** `upstreamHasSynced` tells whether the source has delivered its initial list. */
  constructor(upstreamHasSynced: () => boolean) {
    this.#upstreamHasSynced = upstreamHasSynced;
  }

  /** The item `key` was handed out. */
  start(key: K): void {
    this.#waiting.add(key);
  }

  /** The item `key` was processed. */
  finished(key: K): void {
    this.#waiting.delete(key);
  }

  /** True when the upstream has synced and no started key is outstanding. */
  hasSynced(): boolean {
    return this.#waiting.size === 0 && this.#upstreamHasSynced();
  }
}
