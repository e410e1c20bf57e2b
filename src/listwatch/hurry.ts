// Hurry: whether anyone waits on a cache for what its watch has not delivered yet. A watch that gathers
// its reads (watchCoalesceMs) holds none while anyone does, and ends the hold in progress when a wait begins.

import type { ListerWatcher } from './types.js';

/**
 * Internal (not exported by the package): `iterable[WATCH_HURRY](hurry)` hands a watch the informer's
 * {@link Hurry}; `decodeWatchStream`'s iterables take it (a coalescing watch then holds no read while
 * anyone waits on the informer's cache). Any other iterable lacks it and is read as it is.
 */
export const WATCH_HURRY: unique symbol = Symbol('kube-informer.watchHurry');

/** A watch that takes a {@link Hurry} (see {@link WATCH_HURRY}). */
interface Hurriable {
  [WATCH_HURRY]?(hurry: Hurry): void;
}

/**
 * The count of waits on one informer's cache (`awaitObserved`, `awaitDeleted`, `awaitResourceVersion`,
 * `relist`, and so a controller's read-your-writes): while it is above zero a coalescing watch holds
 * no read, and the first wait ends every hold in progress, so a wait costs no gathering window.
 *
 * Cost: nothing per event; a counter and, on the first wait, a call per open watch.
 */
export class Hurry {
  #waiting = 0;
  readonly #listeners = new Set<() => void>();

  /** True while anyone waits. */
  get urgent(): boolean {
    return this.#waiting > 0;
  }

  /** A wait began: the first one ends every hold in progress. */
  begin(): void {
    this.#waiting++;
    if (this.#waiting !== 1) return;
    for (const listener of this.#listeners) listener();
  }

  /** A wait ended (settled, aborted or failed). */
  readonly end = (): void => {
    if (this.#waiting > 0) this.#waiting--;
  };

  /** Calls `listener` whenever waiting begins with nobody waiting before; returns its removal. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `wait` counted as a wait for as long as it is pending. */
  track<R>(wait: Promise<R>): Promise<R> {
    this.begin();
    return wait.finally(this.end);
  }
}

/**
 * `lw` with each watch it opens told of `hurry` (when the watch takes it: see {@link WATCH_HURRY}).
 * Lists and watches are `lw`'s own.
 */
export function hurriedBy<T>(lw: ListerWatcher<T>, hurry: Hurry): ListerWatcher<T> {
  return {
    get serverIdentity() {
      return lw.serverIdentity;
    },
    list: (options, signal) => lw.list(options, signal),
    watch: async (options, signal) => {
      const watch = await lw.watch(options, signal);
      (watch as Hurriable)[WATCH_HURRY]?.(hurry);
      return watch;
    },
  };
}
