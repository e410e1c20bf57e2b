// Abort helpers shared by the rooms: race a promise against a signal, child signals that leave no listener behind, timeouts.

import type { Clock } from './clock.js';
import { AbortedError } from './errors.js';

/** What {@link raceAbort} resolves with when the signal aborted first. */
export const ABORTED: unique symbol = Symbol('aborted');

/**
 * Settles like `promise`, or resolves {@link ABORTED} as soon as `signal` aborts, whichever comes first.
 * A ListerWatcher that ignores its signal can therefore never hang the reflector. A late rejection of
 * `promise` is observed (no unhandled rejection) and dropped; the abort listener is always removed.
 * The one race against a signal: {@link abortableWait} is the same race for callers that want the
 * abort as a rejection (`ABORTED`) instead of a value.
 */
export function raceAbort<V>(promise: Promise<V>, signal: AbortSignal): Promise<V | typeof ABORTED> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise<V | typeof ABORTED>((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * Settles like `promise`, or rejects with an {@link AbortedError} (code `ABORTED`, `message`, the
 * signal's reason as `cause`) as soon as `signal` aborts — the shape of every "stop waiting" in the
 * library. Only the wait is abandoned, not the work behind `promise` (whose late rejection is dropped).
 * Without a signal, returns `promise`. Leaves no listener behind.
 */
export async function abortableWait<V>(promise: Promise<V>, signal: AbortSignal | undefined, message: string): Promise<V> {
  if (signal === undefined) return promise;
  const result = await raceAbort(promise, signal);
  if (result === ABORTED) throw new AbortedError(message, { cause: signal.reason });
  return result;
}

/**
 * An AbortController that also aborts when `parent` does. Call {@link ChildAbort.dispose} when done so
 * the listener on `parent` is removed (a reflector opens thousands of watches over its life).
 */
export class ChildAbort {
  /** The child controller; abort it to end only the child's work. */
  readonly controller = new AbortController();
  readonly #parent: AbortSignal;
  readonly #onParentAbort = (): void => this.controller.abort(this.#parent.reason);

  constructor(parent: AbortSignal) {
    this.#parent = parent;
    if (parent.aborted) this.controller.abort(parent.reason);
    else parent.addEventListener('abort', this.#onParentAbort, { once: true });
  }

  /** The child signal. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Detaches from the parent without aborting the child: a later parent abort no longer reaches it. */
  detach(): void {
    this.#parent.removeEventListener('abort', this.#onParentAbort);
  }

  /**
   * Aborts the child (if not already) and detaches from the parent. Without `reason`, the child's
   * reason is one shared `AbortError`: a dispose ends work that is over as a rule (a list page, a
   * request), and a fresh `DOMException` per call captured a stack each time.
   */
  dispose(reason: unknown = DISPOSED): void {
    this.detach();
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }
}

/** The reason of a {@link ChildAbort} disposed without one. */
const DISPOSED = new DOMException('the operation was disposed', 'AbortError');

/** What {@link callWithTimeout} resolves with when the time ran out first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Calls `call` with a child signal of `parent` that also aborts after `timeoutMs` on `clock`. Resolves
 * the call's value, {@link ABORTED} when `parent` aborted, or {@link TIMED_OUT} when the time ran out
 * (the call's own signal is then aborted, so a well-behaved call frees its socket). The timer and the
 * child signal are always released.
 */
export async function callWithTimeout<V>(
  clock: Clock,
  timeoutMs: number,
  parent: AbortSignal,
  call: (signal: AbortSignal) => Promise<V>,
): Promise<V | typeof ABORTED | typeof TIMED_OUT> {
  const child = new ChildAbort(parent);
  let timedOut = false;
  const timer = clock.setTimeout(() => {
    timedOut = true;
    child.controller.abort();
  }, timeoutMs);
  try {
    const result = await raceAbort(call(child.signal), child.signal);
    if (result === ABORTED) return timedOut && !parent.aborted ? TIMED_OUT : ABORTED;
    return result;
  } catch (err) {
    if (timedOut && !parent.aborted) return TIMED_OUT;
    throw err;
  } finally {
    clock.clearTimeout(timer);
    child.dispose();
  }
}
