// The reflector's counters: one subscriber of its events, one meaning per counter.

import type { Clock } from '../core/clock.js';
import { WatchStalledError } from './errors.js';
import type { ReflectorEvents } from './events.js';
import type { ReflectorStats } from './types.js';

/**
 * Counts what a reflector's events say (see {@link ReflectorStats} for what each counter means). It
 * holds no other source: everything here was published on `reflector.events` first.
 */
export class ReflectorStatsRecorder {
  readonly #clock: Clock;
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

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Starts counting the events of `events`. */
  subscribe(events: ReflectorEvents): void {
    events.on('listed', () => {
      this.#lists++;
      this.#lastListAt = this.#clock.now();
    });
    events.on('watchOpened', () => {
      this.#watches++;
      this.#watchConnected = true;
    });
    events.on('watchEnded', () => {
      this.#watchConnected = false;
    });
    events.on('event', (e) => {
      this.#lastEventAt = this.#clock.now();
      if (e.outcome === 'applied') this.#events++;
    });
    events.on('bookmark', () => {
      this.#lastEventAt = this.#clock.now();
      this.#bookmarks++;
    });
    events.on('error', (e) => {
      this.#errors++;
      this.#lastError = e.error;
      if (e.error instanceof WatchStalledError) this.#stalls++;
    });
    events.on('regression', () => {
      this.#regressions++;
    });
  }

  /** A snapshot of the counters, completed with the reflector's resource-version state. */
  snapshot(lastSyncResourceVersion: string, guardEnabled: boolean, listMode: ReflectorStats['listMode']): ReflectorStats {
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
      listMode,
    };
  }
}
