// Waiting for the cache as a whole: "has it applied everything up to resource version X?", and "has the relist I asked for landed?".

import { AbortedError } from '../core/errors.js';
import { compareResourceVersion } from '../core/resource-version.js';

interface Waiter {
  /** The version to reach; `undefined` for a relist waiter. */
  readonly rv: string | undefined;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  readonly cleanup: () => void;
}

/** What the informer tells {@link CatchUpWaiters} at each check. */
export interface CatchUpState {
  /** The reflector's resource version: the last list, bookmark or accepted event (`""` before a list). */
  readonly resourceVersion: string;
  /** True when the queue between reflector and cache is empty: the cache has applied all it received. */
  readonly drained: boolean;
}

/**
 * The waiters of one informer's `awaitResourceVersion` and `relist`. A version waiter resolves once
 * the reflector's version is at least its own (every change up to it arrived — an event, a bookmark
 * or a list that new) and the queue is drained (every change that arrived is in the cache). A relist
 * waiter resolves at the next consistent list. The informer calls {@link CatchUpWaiters.check} when
 * either can have changed: after the reflector's events and after each change applied to the cache.
 *
 * Cost: with no waiter, `check` returns at once.
 */
export class CatchUpWaiters {
  readonly #versions = new Set<Waiter>();
  readonly #relists = new Set<Waiter>();
  readonly #state: () => CatchUpState;

  constructor(state: () => CatchUpState) {
    this.#state = state;
  }

  /** Resolves once the cache has applied every change up to `rv` (see the class). */
  waitForVersion(rv: string, what: string, signal: AbortSignal | undefined): Promise<void> {
    if (this.#reached(rv, this.#state())) return Promise.resolve();
    return this.#add(this.#versions, rv, what, signal);
  }

  /** Resolves at the next consistent list's `listed`. */
  waitForRelist(what: string, signal: AbortSignal | undefined): Promise<void> {
    return this.#add(this.#relists, undefined, what, signal);
  }

  /** Settles the version waiters whose version the cache has reached. */
  check(): void {
    if (this.#versions.size === 0) return;
    const state = this.#state();
    if (!state.drained) return;
    for (const w of this.#versions) {
      if (w.rv !== undefined && !this.#reached(w.rv, state)) continue;
      this.#versions.delete(w);
      w.cleanup();
      w.resolve();
    }
  }

  /**
   * A list at `rv` was handed to the queue; `consistent` when it was read from etcd (`""`). Then the
   * relist waiters wait for that list to be in the cache.
   */
  listed(consistent: boolean, rv: string): void {
    if (consistent && this.#relists.size > 0) {
      const moved = [...this.#relists];
      this.#relists.clear();
      for (const w of moved) this.#versions.add({ ...w, rv: rv === '' ? undefined : rv });
    }
    this.check();
  }

  /** Rejects every waiter with `err` (the informer stopped). */
  failAll(err: Error): void {
    this.#settle(this.#versions, err);
    this.#settle(this.#relists, err);
  }

  #reached(rv: string, state: CatchUpState): boolean {
    return state.drained && state.resourceVersion !== '' && compareResourceVersion(state.resourceVersion, rv) >= 0;
  }

  #settle(set: Set<Waiter>, err: Error | undefined): void {
    const all = [...set];
    set.clear();
    for (const w of all) {
      w.cleanup();
      if (err === undefined) w.resolve();
      else w.reject(err);
    }
  }

  #add(set: Set<Waiter>, rv: string | undefined, what: string, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(new AbortedError(`stopped waiting for ${what}: the signal was aborted`, { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        set.delete(waiter);
        reject(new AbortedError(`stopped waiting for ${what}: the signal was aborted`, { cause: signal?.reason }));
      };
      const waiter: Waiter = { rv, resolve, reject, cleanup: () => signal?.removeEventListener('abort', onAbort) };
      set.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
