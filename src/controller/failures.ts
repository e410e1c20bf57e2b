// What follows a controller's failed reconcile: the lines it logs and the action its error policy picks.

import { toError } from '../core/errors.js';
import { errorFields, formatDuration, type LogFields, type Logger } from '../core/log.js';
import { ReconcileTimeoutError } from './errors.js';
import { isTerminal } from './outcomes.js';
import { retryAfterOf } from './rate-limit.js';
import { Action as Actions, checkAction, type Action, type ReconcileErrorPolicy } from './scheduler.js';

/** The controller a failure belongs to, as {@link failureAction} needs it. */
export interface FailingController {
  /** Its name, for the log lines. */
  readonly name: string;
  readonly log: Logger;
  /** Its `onError` option (or the default). */
  readonly policy: ReconcileErrorPolicy;
  /** The policy used when `policy` throws or returns something that is not an action. */
  readonly fallback: ReconcileErrorPolicy;
}

/**
 * Logs a failed reconcile of `key` and returns what follows it: for a terminal failure (one line at
 * error) `awaitChange`; otherwise the error policy's action — the fallback's when the policy throws or
 * returns a non-action, said at error — with one line at warn naming the retry (its Retry-After when
 * that is longer). The stack goes to debug, once; a reconcile timeout logged its own line already.
 */
export function failureAction(c: FailingController, key: string, error: Error, attempt: number, fields: LogFields): { action: Action; terminal: boolean } {
  const timedOut = error instanceof ReconcileTimeoutError;
  if (!timedOut) c.log.debug(`controller ${c.name}: reconcile of ${key} failed (attempt ${attempt}): ${error.stack ?? String(error)}`, fields);
  if (isTerminal(error)) {
    c.log.error(`controller ${c.name}: reconcile of ${key} failed terminally (attempt ${attempt}): ${error.message}; not retrying until the next change`, fields);
    return { action: Actions.awaitChange(), terminal: true };
  }
  let action: Action;
  try {
    action = checkAction(c.policy(key, error, attempt));
  } catch (policyError) {
    // The one fallback for a broken policy (a bare ReconcileScheduler stops instead).
    c.log.error(`controller ${c.name}: the error policy failed for ${key} (${toError(policyError).message}); using the default backoff`, { ...fields, ...errorFields(policyError) });
    action = c.fallback(key, error, attempt);
  }
  if (!timedOut) {
    const next = action.kind === 'requeueAfter' ? `retrying in ${formatDuration(Math.max(action.ms, retryAfterOf(error)))}` : 'not retrying until the next change';
    c.log.warn(`controller ${c.name}: reconcile of ${key} failed (attempt ${attempt}): ${error.message}; ${next}`, fields);
  }
  return { action, terminal: false };
}
