// The reflector's counters and the one place it reports errors and regressions (hooks and channels).

import type { Clock } from '../core/clock.js';
import { toError } from '../core/errors.js';
import { channels, publish } from '../observability/channels.js';
import { WatchStalledError } from './errors.js';
import type { RegressionInfo } from './errors.js';
import type { ReflectorAction, ReflectorErrorContext, ReflectorPhase, ReflectorStats } from './types.js';

/** Hooks a {@link ReflectorRecorder} calls. */
export interface RecorderHooks {
  /** See `ReflectorOptions.onError`. */
  onError?: (error: Error, context: ReflectorErrorContext) => void;
  /** See `ReflectorOptions.onRegression`. */
  onRegression?: (info: RegressionInfo) => void;
}

/**
 * Holds a reflector's counters and reports through its hooks and `diagnostics_channel`:
 * `reflectorError` `{ name, error, phase, action }`, `reflectorRegression` `{ name, key, eventType,
 * heldResourceVersion, eventResourceVersion, reason }`, `reflectorList` `{ name, resourceVersion, items }`,
 * `reflectorWatchStart` `{ name, resourceVersion }`, `reflectorWatchEnd` `{ name, reason }`.
 * A hook that throws is reported on `reflectorError` with phase `hook`; it never breaks the reflector.
 */
export class ReflectorRecorder {
  readonly #name: string;
  readonly #clock: Clock;
  readonly #hooks: RecorderHooks;
  #lists = 0;
  #watches = 0;
  #events = 0;
  #bookmarks = 0;
  #errors = 0;
  #regressions = 0;
  #stalls = 0;
  #lastEventAt: number | undefined;
  #lastListAt: number | undefined;
  #watchConnected = false;
  #lastError: Error | undefined;

  constructor(name: string, clock: Clock, hooks: RecorderHooks) {
    this.#name = name;
    this.#clock = clock;
    this.#hooks = hooks;
  }

  /** Reports an error: counter, `onError`, channel `reflectorError`. */
  error(error: unknown, phase: ReflectorPhase, action: ReflectorAction): void {
    const err = toError(error);
    this.#errors++;
    this.#lastError = err;
    if (err instanceof WatchStalledError) this.#stalls++;
    const context: ReflectorErrorContext = { name: this.#name, phase, action };
    this.#callHook(() => this.#hooks.onError?.(err, context));
    publish(channels.reflectorError, { name: this.#name, error: err, phase, action });
  }

  /** Reports a rejected event or list: counter, `onRegression`, channel `reflectorRegression`. */
  regression(info: RegressionInfo): void {
    this.#regressions++;
    this.#callHook(() => this.#hooks.onRegression?.(info));
    publish(channels.reflectorRegression, { ...info });
  }

  /** A list was handed to the store. */
  listed(resourceVersion: string, items: number): void {
    this.#lists++;
    this.#lastListAt = this.#clock.now();
    publish(channels.reflectorList, { name: this.#name, resourceVersion, items });
  }

  /** A watch stream opened. */
  watchStarted(resourceVersion: string): void {
    this.#watches++;
    this.#watchConnected = true;
    publish(channels.reflectorWatchStart, { name: this.#name, resourceVersion });
  }

  /** A watch stream ended, for `reason` (`closed`, `stalled`, `aborted`, `error`, `stopped`). */
  watchEnded(reason: string): void {
    this.#watchConnected = false;
    publish(channels.reflectorWatchEnd, { name: this.#name, reason });
  }

  /** Any watch event arrived (feeds the idle check and `lastEventAt`). */
  eventSeen(): void {
    this.#lastEventAt = this.#clock.now();
  }

  /** An ADDED/MODIFIED/DELETED event reached the store. */
  eventApplied(): void {
    this.#events++;
  }

  /** A bookmark arrived. */
  bookmarkSeen(): void {
    this.#bookmarks++;
  }

  /** A snapshot of the counters, completed with the reflector's resource-version state. */
  snapshot(lastSyncResourceVersion: string, guardEnabled: boolean): ReflectorStats {
    return {
      lists: this.#lists,
      relists: Math.max(0, this.#lists - 1),
      watches: this.#watches,
      events: this.#events,
      bookmarks: this.#bookmarks,
      errors: this.#errors,
      regressions: this.#regressions,
      stalls: this.#stalls,
      lastEventAt: this.#lastEventAt,
      lastListAt: this.#lastListAt,
      watchConnected: this.#watchConnected,
      lastSyncResourceVersion,
      resourceVersionGuard: guardEnabled,
      lastError: this.#lastError,
    };
  }

  #callHook(call: () => void): void {
    try {
      call();
    } catch (hookError) {
      publish(channels.reflectorError, { name: this.#name, error: toError(hookError), phase: 'hook', action: 'warn' });
    }
  }
}
