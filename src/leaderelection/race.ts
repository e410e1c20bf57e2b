// Racing a lock operation against an AbortSignal, for transports that cannot cancel a request.

import { AbortedError } from '../core/errors.js';

/**
 * Settles like `promise`, or rejects with an {@link AbortedError} as soon as `signal` aborts (also when
 * it already has). A late outcome of `promise` is dropped (its rejection is handled, never unhandled),
 * and no listener is left on `signal`. Internal to the leaderelection room.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(new AbortedError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError());
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
