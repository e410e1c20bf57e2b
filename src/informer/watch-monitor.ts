// Instruments a ListerWatcher: counts lists, watches and errors, and tracks watch liveness for health().

import type { Clock } from '../core/clock.js';
import type { ListOptions, ListerWatcher, ObjectList, WatchEvent } from '../listwatch/types.js';
import { isAbortError } from '../reflector/errors.js';

/** What the monitor has observed so far. Times are clock times (ms). */
export interface WatchMonitorState {
  /** LIST requests that started a list (first pages). */
  lists: number;
  /** LIST requests including continuation pages. */
  listPages: number;
  /** Lists after the first successful one (relists). */
  relists: number;
  /** WATCH requests. */
  watches: number;
  /** Failed list or watch requests, broken streams and in-stream ERROR events (aborts excluded). */
  errors: number;
  /** Watch events received, bookmarks included. */
  events: number;
  /** BOOKMARK events received. */
  bookmarks: number;
  /** Watches open now. */
  openWatches: number;
  /**
   * Last sign of a live watch: a watch opening, an event, or the moment a watch closed (it was live
   * until then); starts at `reset()`. Successful lists do not count: they are not a watch.
   */
  lastActivityAt: number;
  /** Last watch event, bookmarks included. */
  lastEventAt: number | undefined;
  /** Last BOOKMARK event. */
  lastBookmarkAt: number | undefined;
  /** The most recent failure. */
  lastError: Error | undefined;
  /** Failures in a row since the last successful list or watch opening. */
  consecutiveErrors: number;
  /** Since when no watch has been open (from `reset()` or the last close), or `undefined` while one is. */
  disconnectedSince: number | undefined;
}

/** Called with every non-abort failure of a list, a watch request or a watch stream. */
export type MonitorErrorHook = (err: unknown, state: Readonly<WatchMonitorState>) => void;

/** Called after a list succeeded or a watch opened; `failuresBefore` is the run of failures it ended. */
export type MonitorSuccessHook = (what: 'list' | 'watch', failuresBefore: number) => void;

/**
 * Wraps a ListerWatcher so every request and event is observed. The wrapper forwards everything
 * unchanged, including `return()` on the watch iterator (so closing it closes the stream at once).
 */
export class WatchMonitor<T> {
  readonly #lw: ListerWatcher<T>;
  readonly #clock: Clock;
  readonly #onError: MonitorErrorHook;
  readonly #onSuccess: MonitorSuccessHook | undefined;
  #state: WatchMonitorState;
  #listedOnce = false;

  /** `onError` sees each failure after it was counted; `onSuccess` each successful list or watch opening. */
  constructor(lw: ListerWatcher<T>, clock: Clock, onError: MonitorErrorHook, onSuccess?: MonitorSuccessHook) {
    this.#lw = lw;
    this.#clock = clock;
    this.#onError = onError;
    this.#onSuccess = onSuccess;
    this.#state = {
      lists: 0,
      listPages: 0,
      relists: 0,
      watches: 0,
      errors: 0,
      events: 0,
      bookmarks: 0,
      openWatches: 0,
      lastActivityAt: clock.now(),
      lastEventAt: undefined,
      lastBookmarkAt: undefined,
      lastError: undefined,
      consecutiveErrors: 0,
      disconnectedSince: clock.now(),
    };
  }

  /** A copy of the counters and times. */
  state(): WatchMonitorState {
    return { ...this.#state };
  }

  /** Marks "now" as the start of the observation (called when the informer starts running). */
  reset(): void {
    this.#state.lastActivityAt = this.#clock.now();
    if (this.#state.openWatches === 0) this.#state.disconnectedSince = this.#state.lastActivityAt;
  }

  /** The instrumented ListerWatcher to hand to the reflector. */
  listerWatcher(): ListerWatcher<T> {
    return {
      list: (options, signal) => this.#list(options, signal),
      watch: (options, signal) => this.#watch(options, signal),
    };
  }

  async #list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    const s = this.#state;
    s.listPages++;
    if (!options.continue) {
      s.lists++;
      if (this.#listedOnce) s.relists++;
    }
    try {
      const result = await this.#lw.list(options, signal);
      this.#listedOnce = true;
      this.#succeeded('list');
      return result;
    } catch (err) {
      this.#failed(err, signal);
      throw err;
    }
  }

  async #watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    this.#state.watches++;
    let iterable: AsyncIterable<WatchEvent<T>>;
    try {
      iterable = await this.#lw.watch(options, signal);
    } catch (err) {
      this.#failed(err, signal);
      throw err;
    }
    this.#state.lastActivityAt = this.#clock.now();
    this.#succeeded('watch');
    return { [Symbol.asyncIterator]: () => this.#iterate(iterable, signal) };
  }

  #iterate(iterable: AsyncIterable<WatchEvent<T>>, signal: AbortSignal): AsyncIterator<WatchEvent<T>> {
    const inner = iterable[Symbol.asyncIterator]();
    const s = this.#state;
    s.openWatches++;
    s.disconnectedSince = undefined;
    let open = true;
    const close = (): void => {
      if (!open) return;
      open = false;
      s.openWatches--;
      s.lastActivityAt = this.#clock.now();
      if (s.openWatches === 0) s.disconnectedSince = s.lastActivityAt;
    };
    return {
      next: async () => {
        let r: IteratorResult<WatchEvent<T>>;
        try {
          r = await inner.next();
        } catch (err) {
          close();
          this.#failed(err, signal);
          throw err;
        }
        if (r.done) {
          close();
          return r;
        }
        const now = this.#clock.now();
        s.events++;
        s.lastEventAt = now;
        s.lastActivityAt = now;
        const type = (r.value as { type?: unknown } | undefined)?.type;
        if (type === 'BOOKMARK') {
          s.bookmarks++;
          s.lastBookmarkAt = now;
        } else if (type === 'ERROR') {
          this.#failed((r.value as { object?: unknown }).object, signal);
        }
        return r;
      },
      return: async (value?: unknown) => {
        close();
        if (inner.return) return inner.return(value);
        return { done: true, value: undefined };
      },
      throw: async (err?: unknown) => {
        close();
        if (inner.throw) return inner.throw(err);
        throw err;
      },
    };
  }

  #succeeded(what: 'list' | 'watch'): void {
    const before = this.#state.consecutiveErrors;
    this.#state.consecutiveErrors = 0;
    this.#onSuccess?.(what, before);
  }

  #failed(err: unknown, signal: AbortSignal): void {
    if (signal.aborted || isAbortError(err)) return;
    const s = this.#state;
    s.errors++;
    s.consecutiveErrors++;
    s.lastError = err instanceof Error ? err : new Error(describeStatus(err), { cause: err });
    this.#onError(err, s);
  }
}

function describeStatus(value: unknown): string {
  const status = value as { message?: unknown; reason?: unknown; code?: unknown } | undefined;
  if (status && typeof status === 'object') {
    return `watch ERROR event: ${String(status.reason ?? 'Unknown')} (${String(status.code ?? '?')}): ${String(status.message ?? '')}`;
  }
  return `watch failure: ${String(value)}`;
}

/** The HTTP status of an error from a list or watch (`statusCode`, or a numeric `code`), if any. */
export function statusCodeOf(err: unknown): number | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const e = err as { statusCode?: unknown; code?: unknown };
  if (typeof e.statusCode === 'number') return e.statusCode;
  if (typeof e.code === 'number') return e.code;
  return undefined;
}
