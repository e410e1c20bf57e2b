// shutdownSignal: an AbortSignal that SIGTERM or SIGINT aborts (the kubelet's stop); a second signal ends the process at once.

import { constants } from 'node:os';
import { AbortedError } from '../core/errors.js';
import { resolveLogger, withFields, type LoggerOption } from '../core/log.js';
import { describeValue, InvalidOptionError, validateOptions, type OptionSchemaFor } from '../core/options.js';

/** The part of `process` {@link shutdownSignal} uses (tests pass a fake one). */
export interface ShutdownProcess {
  /** Adds a signal listener (`process.on('SIGTERM', …)`). */
  on(event: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  /** Removes it. */
  off(event: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  /** Ends the process with this exit code. */
  exit(code: number): void;
}

/** Options of {@link shutdownSignal}. */
export interface ShutdownSignalOptions {
  /** The signals that stop the process. Default `['SIGTERM', 'SIGINT']` (the kubelet's stop; Ctrl-C). */
  signals?: readonly NodeJS.Signals[];
  /**
   * What a second signal does while the stop runs: `'exit'` ends the process at once with exit code
   * 128 + the signal's number (143 for SIGTERM, 130 for SIGINT), as a shell reports a process killed by
   * it — the graceful stop is abandoned (a Lease not released waits out its duration); `'ignore'`
   * logs it and keeps stopping. Default `'exit'`: Ctrl-C twice stops a development run that hangs.
   */
  secondSignal?: 'exit' | 'ignore';
  /** Where the signals received are logged; `false` for none. Default `console`. */
  logger?: LoggerOption;
  /** The process whose signals are listened to. Default `process`. */
  process?: ShutdownProcess;
}

const SCHEMA = {
  signals: 'any', // checked below
  secondSignal: ['exit', 'ignore'],
  logger: 'logger',
  process: 'object',
} as const satisfies OptionSchemaFor<ShutdownSignalOptions>;

/** The signal {@link shutdownSignal} returns: an `AbortSignal` whose listeners on the process can be removed. */
export interface ShutdownSignal extends AbortSignal {
  /** Removes the listeners from the process (what a test calls; a process that exits needs not). Idempotent. */
  dispose(): void;
  /** The same as `dispose()`, for `using signal = shutdownSignal()`. */
  [Symbol.dispose](): void;
}

/**
 * An `AbortSignal` that aborts at the first SIGTERM or SIGINT (with an `AbortedError` naming the
 * signal as its reason), for `manager.run(shutdownSignal())`: the kubelet sends SIGTERM when a pod
 * stops and SIGKILL `terminationGracePeriodSeconds` (default 30) later, so the process has that long
 * to stop in order (docs/operations.md, "Stopping"). The first signal is logged; what a second one does
 * is `secondSignal`'s choice. While the listeners are installed, these signals no longer end the
 * process by themselves: that is the point, and why the Manager's stop must be bounded
 * (`gracefulShutdownTimeoutMs`).
 *
 * Warning: each call adds its own listeners; call it once per process, or `dispose()` the signal
 * (tests), so no listener is left behind.
 *
 * @example
 * ```ts
 * import { Manager, shutdownSignal } from 'kube-informer/operations';
 * declare const manager: Manager;
 * await manager.run(shutdownSignal());
 * ```
 */
export function shutdownSignal(options: ShutdownSignalOptions = {}): ShutdownSignal {
  validateOptions('shutdownSignal', options, SCHEMA);
  const signals: readonly NodeJS.Signals[] = options.signals ?? ['SIGTERM', 'SIGINT'];
  const given: unknown = signals;
  if (!Array.isArray(given) || given.length === 0 || !given.every((s) => typeof s === 'string' && Object.hasOwn(constants.signals, s))) {
    throw new InvalidOptionError(`shutdownSignal: option signals must be a non-empty array of signal names (SIGTERM, SIGINT, …), got ${describeValue(given)}`);
  }
  const proc = options.process ?? process;
  const log = withFields(resolveLogger(options.logger), { component: 'shutdown' });
  const controller = new AbortController();
  const onSignal = (received: NodeJS.Signals): void => {
    if (!controller.signal.aborted) {
      const again = options.secondSignal === 'ignore' ? '' : `; ${received} again exits at once`;
      log.info(`received ${received}: stopping in order${again}`, { signal: received });
      controller.abort(new AbortedError(`stopped by ${received}`));
      return;
    }
    if (options.secondSignal === 'ignore') {
      log.warn(`received ${received} again: still stopping`, { signal: received });
      return;
    }
    const code = 128 + (constants.signals[received] ?? 0);
    log.warn(`received ${received} again: exiting now (code ${code}) without finishing the stop`, { signal: received });
    proc.exit(code);
  };
  for (const s of signals) proc.on(s, onSignal);
  let disposed = false;
  const dispose = (): void => {
    if (disposed) return;
    disposed = true;
    for (const s of signals) proc.off(s, onSignal);
  };
  return Object.assign(controller.signal, { dispose, [Symbol.dispose]: dispose });
}
