// Racing a lock operation against an AbortSignal, for transports that cannot cancel a request.

import { ABORTED, raceAbort as raceOrAborted } from '../core/abort.js';
import { AbortedError } from '../core/errors.js';

/**
 * Settles like `promise`, or rejects with an {@link AbortedError} as soon as `signal` aborts (also when
 * it already has). A late outcome of `promise` is dropped (its rejection is handled, never unhandled),
 * and no listener is left on `signal`. Internal to the leaderelection room.
 */
export async function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  const result = await raceOrAborted(promise, signal);
  if (result === ABORTED) throw new AbortedError();
  return result;
}
