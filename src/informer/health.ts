// The health model: is the watch alive, are handlers keeping up, and the informer's counters.

import type { ListenerStats } from './listener.js';
import type { WatchMonitorState } from './watch-monitor.js';

/** Thresholds of `health()`. */
export interface HealthThresholds {
  /**
   * A running informer whose watch has shown no sign of life (event, bookmark, watch opening) for
   * longer than this — connected but silent, or not connected at all — is flagged `stalled`. Default: 300 000 (5 min; the API
   * server sends bookmarks about once a minute).
   */
  watchStallMs?: number;
  /**
   * A handler whose oldest undelivered notification, or whose running callback, is older than this is
   * flagged `slow` (not ready); one whose running callback alone is older than this is also `wedged`
   * (not live). Default: 30 000.
   */
  slowHandlerMs?: number;
  /**
   * A synced informer whose watch has been closed for longer than this — the reflector keeps failing
   * to re-open it — is not ready: its cache is going stale. Default: 60 000.
   */
  watchDisconnectedMs?: number;
}

/** Lifecycle state of an informer. */
export type InformerState = 'new' | 'running' | 'stopped' | 'failed';

/** One handler's delivery state. */
export interface HandlerHealth {
  /** The registration's name. */
  name: string;
  /** Notifications buffered and not yet delivered. */
  backlog: number;
  /** The largest backlog seen. */
  maxBacklog: number;
  /** Age of the oldest undelivered notification, when there is one. */
  oldestPendingAgeMs: number | undefined;
  /** How long the callback running now has been running, when one is. */
  inFlightMs: number | undefined;
  /** Notifications delivered (failed ones included). */
  delivered: number;
  /** Callbacks that threw or rejected. */
  failures: number;
  /** The registration's `hasSynced()`. */
  synced: boolean;
  /** Older than `slowHandlerMs`: oldest pending notification or running callback. */
  slow: boolean;
  /** The running callback alone is older than `slowHandlerMs`: the handler looks stuck. */
  wedged: boolean;
}

/** The watch connection as seen by the informer. */
export interface WatchHealth {
  /** A watch stream is open now. */
  connected: boolean;
  /** Time since the last watch event (bookmarks included), when there was one. */
  msSinceLastEvent: number | undefined;
  /** Time since the last bookmark, when there was one. */
  msSinceLastBookmark: number | undefined;
  /** Time since the watch last showed life: an event, an opening, or being open (see `watchStallMs`). */
  msSinceLastActivity: number;
  /** Running, and no sign of life for longer than `watchStallMs`. */
  stalled: boolean;
  /** The most recent list/watch failure, if any. */
  lastError: Error | undefined;
  /** Failures in a row since the last successful list or watch opening. */
  consecutiveErrors: number;
  /** How long no watch has been open, while none is (`undefined` when one is open). */
  msDisconnected: number | undefined;
}

/** Counters since the informer was created. */
export interface InformerCounters {
  /** Lists started (first pages). */
  lists: number;
  /** Lists after the first one. */
  relists: number;
  /** Watches opened or attempted. */
  watches: number;
  /** List/watch failures, broken streams, ERROR events. */
  errors: number;
  /** Watch events received, bookmarks included. */
  events: number;
  /** Bookmarks received. */
  bookmarks: number;
  /** Watch events rejected because their resource version went backwards (from the reflector). */
  regressions: number;
  /** Handler callbacks that threw or rejected (all handlers). */
  handlerErrors: number;
}

/** A snapshot returned by `SharedIndexInformer.health()`. */
export interface InformerHealth {
  /** The informer's name. */
  name: string;
  /** Lifecycle state. */
  state: InformerState;
  /** The cache has been filled by a full list. */
  synced: boolean;
  /** The reflector's last synced resource version. */
  lastSyncResourceVersion: string;
  /**
   * Liveness: nothing is wedged — the informer has not failed or stopped, and no handler callback
   * has been running for longer than `slowHandlerMs`. A liveness probe restarts the process when false.
   */
  live: boolean;
  /**
   * Readiness: live, running, synced, the watch not stalled (`watchStallMs`), not disconnected for
   * longer than `watchDisconnectedMs`, and no slow handler. Never true before the first sync; a
   * never-synced informer with failing requests names the last error in `problems`.
   */
  ready: boolean;
  /** `live && ready`: no problem found. */
  healthy: boolean;
  /** Human-readable problems, empty when healthy. Each names what a person should look at. */
  problems: string[];
  /** The watch. */
  watch: WatchHealth;
  /** One entry per registered handler, in registration order. */
  handlers: HandlerHealth[];
  /** Counters. */
  counters: InformerCounters;
  /** The fatal error, when `state` is `failed`. */
  failure: Error | undefined;
}

/** Default of {@link HealthThresholds.watchStallMs}. */
export const DEFAULT_WATCH_STALL_MS = 300_000;
/** Default of {@link HealthThresholds.slowHandlerMs}. */
export const DEFAULT_SLOW_HANDLER_MS = 30_000;
/** Default of {@link HealthThresholds.watchDisconnectedMs}. */
export const DEFAULT_WATCH_DISCONNECTED_MS = 60_000;

/** Everything {@link computeHealth} needs (internal). */
export interface HealthInputs {
  /** The informer's name. */
  name: string;
  /** The clock's current time. */
  now: number;
  /** Lifecycle state. */
  state: InformerState;
  /** Whether the cache has synced. */
  synced: boolean;
  /** The reflector's resource version. */
  lastSyncResourceVersion: string;
  /** What the watch monitor observed. */
  monitor: WatchMonitorState;
  /** Rejected regressions, from the reflector. */
  regressions: number;
  /** Each handler: its name, whether it synced, and its listener's statistics. */
  handlers: HandlerInput[];
  /** Thresholds; missing ones take their defaults. */
  thresholds: HealthThresholds;
  /** The fatal error, if any. */
  failure: Error | undefined;
}

/** One handler's raw state for {@link computeHealth}. */
export interface HandlerInput {
  /** The registration's name. */
  name: string;
  /** The registration's `hasSynced()`. */
  synced: boolean;
  /** The listener's statistics. */
  stats: ListenerStats;
}

/** Builds a health snapshot from raw state (pure, for testability). */
export function computeHealth(input: HealthInputs): InformerHealth {
  const { now, monitor: m } = input;
  const stallMs = input.thresholds.watchStallMs ?? DEFAULT_WATCH_STALL_MS;
  const slowMs = input.thresholds.slowHandlerMs ?? DEFAULT_SLOW_HANDLER_MS;
  const disconnectedLimit = input.thresholds.watchDisconnectedMs ?? DEFAULT_WATCH_DISCONNECTED_MS;
  const running = input.state === 'running';
  const lastError = m.lastError === undefined ? '' : ` (last error: ${m.lastError.message})`;
  const deadProblems: string[] = [];
  const notReady: string[] = [];
  if (input.state === 'failed') deadProblems.push(`informer failed: ${input.failure?.message ?? 'unknown error'}`);
  if (input.state === 'stopped') deadProblems.push('informer is stopped');
  if (input.state === 'new') notReady.push('informer has not been started');
  const sinceActivity = now - m.lastActivityAt;
  const msDisconnected = m.disconnectedSince === undefined || m.openWatches > 0 ? undefined : now - m.disconnectedSince;
  if (running && !input.synced) {
    const failing = m.consecutiveErrors > 0 ? `: ${m.consecutiveErrors} list/watch failure${m.consecutiveErrors === 1 ? '' : 's'} in a row${lastError}` : '';
    notReady.push(`cache not synced yet${failing}`);
  }
  const stalled = running && sinceActivity > stallMs;
  if (stalled) {
    const why = m.openWatches > 0 ? 'watch connected but silent' : `watch not connected${lastError}`;
    notReady.push(`watch stalled: no activity for ${sinceActivity} ms, ${why}`);
  } else if (running && input.synced && msDisconnected !== undefined && msDisconnected > disconnectedLimit) {
    notReady.push(`watch disconnected for ${msDisconnected} ms, the cache is going stale${lastError}`);
  }
  let handlerErrors = 0;
  let wedgedAny = false;
  const handlers: HandlerHealth[] = input.handlers.map(({ name, synced, stats }) => {
    handlerErrors += stats.failures;
    const oldestPendingAgeMs = stats.oldestPendingAt === undefined ? undefined : now - stats.oldestPendingAt;
    const inFlightMs = stats.inFlightSince === undefined ? undefined : now - stats.inFlightSince;
    const wedged = (inFlightMs ?? 0) > slowMs;
    const slow = (oldestPendingAgeMs ?? 0) > slowMs || wedged;
    if (wedged) wedgedAny = true;
    if (slow) {
      (wedged ? deadProblems : notReady).push(
        `handler ${name} is ${wedged ? 'stuck' : 'slow'}: backlog ${stats.backlog}, oldest pending ${oldestPendingAgeMs ?? 0} ms, current callback ${inFlightMs ?? 0} ms`,
      );
    }
    return {
      name,
      backlog: stats.backlog,
      maxBacklog: stats.maxBacklog,
      oldestPendingAgeMs,
      inFlightMs,
      delivered: stats.delivered,
      failures: stats.failures,
      synced,
      slow,
      wedged,
    };
  });
  const live = input.state !== 'failed' && input.state !== 'stopped' && !wedgedAny;
  const ready = live && running && notReady.length === 0;
  const problems = [...deadProblems, ...notReady];
  return {
    name: input.name,
    state: input.state,
    synced: input.synced,
    lastSyncResourceVersion: input.lastSyncResourceVersion,
    live,
    ready,
    healthy: live && ready,
    problems,
    watch: {
      connected: m.openWatches > 0,
      msSinceLastEvent: m.lastEventAt === undefined ? undefined : now - m.lastEventAt,
      msSinceLastBookmark: m.lastBookmarkAt === undefined ? undefined : now - m.lastBookmarkAt,
      msSinceLastActivity: sinceActivity,
      stalled,
      lastError: m.lastError,
      consecutiveErrors: m.consecutiveErrors,
      msDisconnected,
    },
    handlers,
    counters: {
      lists: m.lists,
      relists: m.relists,
      watches: m.watches,
      errors: m.errors,
      events: m.events,
      bookmarks: m.bookmarks,
      regressions: input.regressions,
      handlerErrors,
    },
    failure: input.failure,
  };
}
