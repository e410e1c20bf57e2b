// Errors of the controller runtime.

import { ErrorCodes, KubeInformerError, type KubeInformerErrorOptions } from '../core/errors.js';
import { formatDuration } from '../core/log.js';

/**
 * A reconcile ran longer than the controller's `reconcileTimeoutMs` (code `RECONCILE_TIMEOUT`). It is
 * the reason its signal aborted with, and what the error policy receives: the run counts as failed and
 * the key is retried with backoff, whatever the reconcile returned afterwards.
 *
 * Recovery: make the reconcile honour its signal (pass it to every request), split long work into
 * steps that return `requeueAfter`, or raise `reconcileTimeoutMs`.
 */
export class ReconcileTimeoutError extends KubeInformerError {
  /** The key whose reconcile overran. */
  readonly key: string;
  /** The deadline it overran, in ms. */
  readonly timeoutMs: number;
  constructor(controller: string, key: string, timeoutMs: number) {
    super(
      ErrorCodes.RECONCILE_TIMEOUT,
      `controller ${controller}: the reconcile of ${key} ran past its deadline of ${formatDuration(timeoutMs)}; its signal was aborted and it counts as failed`,
    );
    this.name = 'ReconcileTimeoutError';
    this.key = key;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * `Controller.run` was called while an informer it reads from has not been started (code
 * `NOT_STARTED`): its cache would never sync and the controller would wait in silence.
 *
 * Recovery: start the factory first — `factory.start(signal)` — or run it with `factory.run(signal)`.
 */
export class NotStartedError extends KubeInformerError {
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.NOT_STARTED, message, options);
    this.name = 'NotStartedError';
  }
}

/**
 * An error a reconcile throws (or rejects with) to say retrying will not help — the primary's spec is
 * invalid, a dependency it names does not exist — as controller-runtime's `reconcile.TerminalError`
 * (code `RECONCILE_TERMINAL`). The controller logs it as an error, counts it in `stats().failed` and
 * `stats().terminal` and in `controller_runtime_terminal_reconcile_errors_total`, and does not retry
 * the key: it is reconciled again when something it watches changes (or a resync, a `schedule`). The
 * error policy is not asked. Found in the `cause` chain too, so a wrapped one counts.
 *
 * @example
 * ```ts
 * if (ctx.object.spec.replicas < 0) throw new TerminalError(`spec.replicas must be ≥ 0`);
 * ```
 */
export class TerminalError extends KubeInformerError {
  /** `message` says why retrying will not help; `options.cause` keeps the error behind it. */
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.RECONCILE_TERMINAL, message, options);
    this.name = 'TerminalError';
  }
}
