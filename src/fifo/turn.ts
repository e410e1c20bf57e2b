// The turn of a DeltaFIFO's consumers: one `pop` processes at a time and the others wait in line, first
// come first served; one consumer may park instead, to be woken (or handed a change) when there is work.

import { AbortedError } from '../core/errors.js';
import type { ChangeProcessFunc, PopProcessFunc } from './types.js';

/** A consumer parked in `DeltaFIFO.park`. */
export interface Parked<T> {
  readonly process: PopProcessFunc<T>;
  /** Takes a single change handed over, when given (see `DeltaFIFO.park`). */
  readonly change: ChangeProcessFunc<T> | undefined;
  /** Ends the park: resolves, or rejects with the failure's error. */
  readonly settle: (failure: { error: unknown } | undefined) => void;
}

/** Who may process a DeltaFIFO's next key: the holder of the turn, the `pop`s in line, the parked consumer. */
export class Turn<T> {
  /** True while a `pop` holds the turn (it is processing, or it was woken and is about to). */
  #busy = false;
  /** Resolvers of `pop` calls waiting for the turn, oldest first. */
  readonly #waiters: Array<() => void> = [];
  /** The consumer parked in `DeltaFIFO.park`, while it waits. */
  #parked: Parked<T> | undefined;

  /** True while someone holds the turn. */
  get busy(): boolean {
    return this.#busy;
  }

  /** True while someone holds the turn or waits in line for it. */
  get taken(): boolean {
    return this.#busy || this.#waiters.length > 0;
  }

  /** The parked consumer, while one waits. */
  get parked(): Parked<T> | undefined {
    return this.#parked;
  }

  /** True when a change may go to the parked consumer at once: one is parked, and nobody holds or waits for the turn. */
  get parkedAlone(): boolean {
    return this.#parked !== undefined && !this.#busy && this.#waiters.length === 0;
  }

  /** Takes the turn (the caller checked that nobody holds it or waits for it). */
  hold(): void {
    this.#busy = true;
  }

  /** Lets go of the turn without passing it on (it was held for nothing). */
  letGo(): void {
    this.#busy = false;
  }

  /** Waits in line until {@link Turn.passOn} gives this caller the turn; an abort before that leaves the line and rejects. */
  wait(signal: AbortSignal | undefined): Promise<void> {
    if (signal === undefined) return new Promise<void>((resolve) => this.#waiters.push(resolve));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.#waiters.indexOf(waiter);
        if (at < 0) return; // already handed the turn: this pop goes on
        this.#waiters.splice(at, 1);
        reject(abortedPop(signal));
      };
      const waiter = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Gives the free turn to the oldest `pop` in line; false when the turn is held or nobody waits. */
  passOn(): boolean {
    if (this.#busy || this.#waiters.length === 0) return false;
    this.#busy = true;
    (this.#waiters.shift() as () => void)();
    return true;
  }

  /** Ends a `pop`'s turn, passing it on when there is something to do (`work`: an item, or the close). */
  release(work: boolean): void {
    this.#busy = false;
    if (work && !this.passOn()) this.unpark(undefined);
  }

  /** Parks a consumer (the caller checked that none is parked). */
  park(parked: Parked<T>): void {
    this.#parked = parked;
  }

  /** The parked consumer leaves the park without being woken: it waits for a change it was handed. */
  leave(): void {
    this.#parked = undefined;
  }

  /** Wakes the parked consumer: with nothing (look again), or with the failure of its `process`. */
  unpark(failure: { error: unknown } | undefined): void {
    const parked = this.#parked;
    if (parked === undefined) return;
    this.#parked = undefined;
    parked.settle(failure);
  }
}

/** The rejection of a `pop` whose signal aborted before it took anything. */
export function abortedPop(signal: AbortSignal): AbortedError {
  return new AbortedError('DeltaFIFO.pop stopped waiting: the signal was aborted', { cause: signal.reason });
}
