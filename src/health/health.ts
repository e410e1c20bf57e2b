// The health model: is the watch alive, are handlers keeping up, and the informer's counters.

import type { Clock } from '../core/clock.js';
import { formatDuration, formatWallTime } from '../core/log.js';
import type { ReflectorEvents } from '../reflector/events.js';
import type { ReflectorStats } from '../reflector/types.js';

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

/**
 * Lifecycle state of an informer. `absent`: running, but its resource is not served (a list answered
 * 404 under `onResourceMissing: 'absent'` — its CRD deleted, or not created yet): the cache is empty,
 * no watch is open, and it lists again when the resource is back; ready, with a `detail`.
 */
export type InformerState = 'new' | 'running' | 'absent' | 'stopped' | 'failed';

/** Why an informer is `absent`: see {@link InformerHealth.absent}. */
export interface AbsentResource {
  /** The 404 the last list got. */
  reason: string;
  /** How long the resource has been absent, in ms. */
  msAbsent: number;
  /** True when no list ever succeeded since the informer started: a CRD not created yet — or a misspelt resource. */
  neverServed: boolean;
}

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
  /**
   * Failures in a row since the last successful list or watch opening (a watch refused by its first
   * event, e.g. a 410, is no opening: the run goes on).
   */
  consecutiveErrors: number;
  /**
   * How long no watch has been open, while none is (`undefined` when one is open). A watch refused by
   * its first event does not reset it.
   */
  msDisconnected: number | undefined;
  /**
   * How the reflector lists: `streaming` (WatchList: a watch with `sendInitialEvents`) or `paged`
   * (`useWatchList: false`, or a server found not to serve streaming lists under `'auto'`, the
   * default); `undefined` before the informer runs. See `ReflectorStats.listMode`.
   */
  listMode: 'streaming' | 'paged' | undefined;
}

/**
 * Counters since the informer was created: the reflector's own (see `ReflectorStats`, one meaning
 * each, counted from its events) plus the handlers' failures.
 */
export interface InformerCounters {
  /** Lists completed and handed to the cache (classic or streamed), the first one included. */
  lists: number;
  /** Completed lists after the first. */
  relists: number;
  /** Watch streams opened (the server answered the watch request). */
  watches: number;
  /** Errors the reflector reported (every `onWatchError` call: failures, warnings, skipped events). */
  errors: number;
  /** ADDED/MODIFIED/DELETED events applied to the cache (bookmarks excluded). */
  events: number;
  /** Bookmarks received. */
  bookmarks: number;
  /** Events or lists whose resource version went backwards (from the reflector). */
  regressions: number;
  /** Handler callbacks that threw or rejected (all handlers). */
  handlerErrors: number;
}

/**
 * The cache is known stale: the reflector's cycle ended (a relist is due, or deferred by backoff) or a
 * watch was answered 410 (too old resource version). Until the next complete list, changes are missed.
 */
export interface StaleCache {
  /** Why: the error that ended the cycle (e.g. `too old resource version: 12 (40)`). */
  reason: string;
  /** How long the cache has been known stale, in ms. */
  msStale: number;
  /**
   * When the relist is deferred by backoff: in how many ms it comes. `undefined` while it is under way
   * (a relist after a 410 from a server that answers is taken at once).
   */
  relistInMs: number | undefined;
  /** When the deferred relist comes, clock time in ms (`undefined` while it is under way). */
  relistAt: number | undefined;
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
   * Readiness: live, running, synced, the cache not known stale (see {@link InformerHealth.stale}), the
   * watch not stalled (`watchStallMs`), not disconnected for longer than `watchDisconnectedMs`, and no
   * slow handler. Never true before the first sync; a never-synced informer with failing requests names
   * the last error in `problems`.
   */
  ready: boolean;
  /** `live && ready`: no problem found. */
  healthy: boolean;
  /** Human-readable problems, empty when healthy. Each names what a person should look at. */
  problems: string[];
  /**
   * What a person should know that does not make the informer unready: set while it is `absent`
   * (naming the resource, since when, and whether it was ever served). `undefined` otherwise.
   */
  detail: string | undefined;
  /** Set while the informer is `absent` (see {@link InformerState}). */
  absent: AbsentResource | undefined;
  /** The watch. */
  watch: WatchHealth;
  /** Set while a synced informer's cache is known stale (then `ready` is false); see {@link StaleCache}. */
  stale: StaleCache | undefined;
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

/** What the informer saw of its watch, from the reflector's events (see {@link SourceHealth}). */
export interface SourceState {
  /** A watch stream is open now. */
  connected: boolean;
  /**
   * Last sign of a live watch: a watch opening, an event (bookmarks included), or the moment a watch
   * closed (it was live until then); starts at `start()`. Lists do not count: they are not a watch.
   */
  lastActivityAt: number;
  /** Last watch event of any type, bookmarks included. */
  lastEventAt: number | undefined;
  /** Last BOOKMARK event. */
  lastBookmarkAt: number | undefined;
  /** Since when no watch has been open (from `start()` or the last close), or `undefined` while one is. */
  disconnectedSince: number | undefined;
  /** Request failures (`requestFailed` errors) since the last completed list or opened watch. */
  consecutiveErrors: number;
  /** The most recent request failure. */
  lastError: Error | undefined;
  /** Since when the cache is known stale (a cycle ended: a relist is due; or a 410), until the next list. */
  staleSince: number | undefined;
  /** The error that made it stale. */
  staleReason: string | undefined;
  /** When the deferred relist comes (clock time), while the backoff lasts; cleared by the next list. */
  relistAt: number | undefined;
  /** Since when the resource is not served (the reflector's `absent`), until the next list. */
  absentSince: number | undefined;
  /** The 404 that made it absent. */
  absentReason: string | undefined;
  /** No list had succeeded when it turned absent. */
  absentNeverListed: boolean;
}

/**
 * Follows a reflector's events for `health()`: whether a watch is open, when it last showed life, and
 * the run of list/watch failures. It counts nothing the reflector counts (counters come from its stats).
 */
export class SourceHealth {
  readonly #clock: Clock;
  #state: SourceState;
  /** What the last `watchOpened` replaced, put back if that watch turns out refused. */
  #beforeOpen: Pick<SourceState, 'disconnectedSince' | 'lastActivityAt' | 'consecutiveErrors'> | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
    const now = clock.now();
    this.#state = {
      connected: false,
      lastActivityAt: now,
      lastEventAt: undefined,
      lastBookmarkAt: undefined,
      disconnectedSince: now,
      consecutiveErrors: 0,
      lastError: undefined,
      staleSince: undefined,
      staleReason: undefined,
      relistAt: undefined,
      absentSince: undefined,
      absentReason: undefined,
      absentNeverListed: false,
    };
  }

  /** Marks "now" as the start of the observation (the informer started running). */
  start(): void {
    const s = this.#state;
    s.lastActivityAt = this.#clock.now();
    if (!s.connected) s.disconnectedSince = s.lastActivityAt;
  }

  /** True while the resource is not served (an `absent` event, until the next list). */
  isAbsent(): boolean {
    return this.#state.absentSince !== undefined;
  }

  /** A copy of what was seen. */
  snapshot(): SourceState {
    return { ...this.#state };
  }

  /** Follows `events`. */
  subscribe(events: ReflectorEvents): void {
    const s = this.#state;
    const now = (): number => this.#clock.now();
    events.on('watchOpened', () => {
      this.#beforeOpen = { disconnectedSince: s.disconnectedSince, lastActivityAt: s.lastActivityAt, consecutiveErrors: s.consecutiveErrors };
      s.connected = true;
      s.disconnectedSince = undefined;
      s.lastActivityAt = now();
      s.consecutiveErrors = 0;
    });
    events.on('watchEnded', (e) => {
      if (!s.connected) return;
      s.connected = false;
      const before = this.#beforeOpen;
      if (e.refused && before !== undefined) {
        // Refused by the server that answered (e.g. 410): it never opened, so nothing it reset was reset.
        s.disconnectedSince = before.disconnectedSince ?? before.lastActivityAt;
        s.lastActivityAt = before.lastActivityAt;
        s.consecutiveErrors = before.consecutiveErrors;
        return;
      }
      s.lastActivityAt = now();
      s.disconnectedSince = s.lastActivityAt;
    });
    events.on('listed', () => {
      s.consecutiveErrors = 0;
      s.staleSince = s.staleReason = s.relistAt = undefined;
      if (s.absentSince !== undefined) {
        // Back from absent: the watch's clocks start again now, not at the deletion.
        s.absentSince = s.absentReason = undefined;
        s.lastActivityAt = now();
        if (!s.connected) s.disconnectedSince = s.lastActivityAt;
      }
    });
    events.on('absent', (e) => {
      s.absentSince = now();
      s.absentReason = e.error.message;
      s.absentNeverListed = e.neverListed;
      s.consecutiveErrors = 0;
      s.staleSince = s.staleReason = s.relistAt = undefined;
    });
    events.on('backoff', (e) => {
      if (e.then === 'relist') s.relistAt = e.until;
    });
    events.on('event', () => {
      s.lastEventAt = s.lastActivityAt = now();
    });
    events.on('bookmark', () => {
      s.lastEventAt = s.lastBookmarkAt = s.lastActivityAt = now();
    });
    events.on('error', (e) => {
      if (e.action === 'relist') {
        // The cycle ended (or a 410 answered): the cache misses changes until the next list.
        s.staleSince ??= now();
        s.staleReason = e.error.message;
        s.relistAt = undefined;
      }
      if (!e.requestFailed) return;
      s.consecutiveErrors++;
      s.lastError = e.error;
    });
  }
}

/** The reflector's counters that `health()` shows (a subset of `ReflectorStats`). */
export type SourceCounters = Pick<ReflectorStats, 'lists' | 'relists' | 'watches' | 'errors' | 'events' | 'bookmarks' | 'regressions'>;

/** Everything {@link computeHealth} needs (internal). */
export interface HealthInputs {
  /** The informer's name. */
  name: string;
  /** The clock's current time. */
  now: number;
  /** The wall-clock time at `now`, ms since the Unix epoch (`wallTime(clock)`), for the dates of messages. Default `now`. */
  wallNow?: number;
  /** Lifecycle state. */
  state: InformerState;
  /** Whether the cache has synced. */
  synced: boolean;
  /** The reflector's resource version. */
  lastSyncResourceVersion: string;
  /** What the informer saw of its watch. */
  source: SourceState;
  /** The reflector's counters; `undefined` (zeros) before it exists. */
  counters: SourceCounters | undefined;
  /** How the reflector lists (`ReflectorStats.listMode`); undefined before it exists. */
  listMode?: 'streaming' | 'paged';
  /** Each handler: its name, whether it synced, and its listener's statistics. */
  handlers: HandlerInput[];
  /** Thresholds; missing ones take their defaults. */
  thresholds: HealthThresholds;
  /** The fatal error, if any. */
  failure: Error | undefined;
}

/** A point-in-time view of a handler's listener (its buffer and delivery loop), as `health()` reads it. */
export interface ListenerStats {
  /** Notifications buffered, not yet delivered. */
  backlog: number;
  /** Clock time the oldest undelivered notification was enqueued, when there is one. */
  oldestPendingAt: number | undefined;
  /** Clock time the callback running now started, when one is running. */
  inFlightSince: number | undefined;
  /** Notifications delivered (failed ones included). */
  delivered: number;
  /** Callbacks that threw or rejected. */
  failures: number;
  /** The largest backlog seen. */
  maxBacklog: number;
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

const NO_COUNTERS: SourceCounters = { lists: 0, relists: 0, watches: 0, errors: 0, events: 0, bookmarks: 0, regressions: 0 };

/** Builds a health snapshot from raw state (pure, for testability). */
export function computeHealth(input: HealthInputs): InformerHealth {
  const { now, source: m } = input;
  const c = input.counters ?? NO_COUNTERS;
  const stallMs = input.thresholds.watchStallMs ?? DEFAULT_WATCH_STALL_MS;
  const slowMs = input.thresholds.slowHandlerMs ?? DEFAULT_SLOW_HANDLER_MS;
  const disconnectedLimit = input.thresholds.watchDisconnectedMs ?? DEFAULT_WATCH_DISCONNECTED_MS;
  const running = input.state === 'running';
  const absent = input.state === 'absent';
  const lastError = m.lastError === undefined ? '' : ` (last error: ${m.lastError.message})`;
  const deadProblems: string[] = [];
  const notReady: string[] = [];
  if (input.state === 'failed') deadProblems.push(`informer failed: ${input.failure?.message ?? 'unknown error'}`);
  if (input.state === 'stopped') deadProblems.push('informer is stopped');
  if (input.state === 'new') notReady.push('informer has not been started');
  const sinceActivity = now - m.lastActivityAt;
  const msDisconnected = m.disconnectedSince === undefined || m.connected ? undefined : now - m.disconnectedSince;
  if (running && !input.synced) {
    const failing = m.consecutiveErrors > 0 ? `: ${m.consecutiveErrors} list/watch failure${m.consecutiveErrors === 1 ? '' : 's'} in a row${lastError}` : '';
    notReady.push(`cache not synced yet${failing}`);
  }
  const stalled = running && sinceActivity > stallMs;
  if (stalled) {
    const why = m.connected ? 'watch connected but silent' : `watch not connected${lastError}`;
    notReady.push(`watch stalled: no activity for ${formatDuration(sinceActivity)}, ${why}`);
  } else if (running && input.synced && msDisconnected !== undefined && msDisconnected > disconnectedLimit) {
    notReady.push(`watch disconnected for ${formatDuration(msDisconnected)}, the cache is going stale${lastError}`);
  }
  let stale: StaleCache | undefined;
  if (running && input.synced && m.staleSince !== undefined) {
    const relistInMs = m.relistAt !== undefined && m.relistAt > now ? m.relistAt - now : undefined;
    stale = { reason: m.staleReason ?? 'a relist is due', msStale: now - m.staleSince, relistInMs, relistAt: relistInMs === undefined ? undefined : m.relistAt };
    const when = relistInMs === undefined ? 'relisting now' : `relist deferred by backoff until ${formatWallTime((input.wallNow ?? now) + relistInMs)} (in ${formatDuration(relistInMs)})`;
    notReady.push(`cache is stale for ${formatDuration(stale.msStale)} (${stale.reason}); ${when}`);
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
        `handler ${name} is ${wedged ? 'stuck' : 'slow'}: backlog ${stats.backlog}, oldest pending ${formatDuration(oldestPendingAgeMs ?? 0)}, current callback ${formatDuration(inFlightMs ?? 0)}`,
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
  // Absent is ready: the resource is not served, so an empty cache is the truth (the detail says so).
  const ready = live && (running || absent) && notReady.length === 0;
  const absentInfo: AbsentResource | undefined =
    absent && m.absentSince !== undefined ? { reason: m.absentReason ?? 'not found', msAbsent: now - m.absentSince, neverServed: m.absentNeverListed } : undefined;
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
    detail: absentInfo === undefined ? undefined : absentDetail(input.name, absentInfo),
    absent: absentInfo,
    watch: {
      connected: m.connected,
      msSinceLastEvent: m.lastEventAt === undefined ? undefined : now - m.lastEventAt,
      msSinceLastBookmark: m.lastBookmarkAt === undefined ? undefined : now - m.lastBookmarkAt,
      msSinceLastActivity: sinceActivity,
      stalled,
      lastError: m.lastError,
      consecutiveErrors: m.consecutiveErrors,
      msDisconnected,
      listMode: input.listMode,
    },
    stale,
    handlers,
    counters: {
      lists: c.lists,
      relists: c.relists,
      watches: c.watches,
      errors: c.errors,
      events: c.events,
      bookmarks: c.bookmarks,
      regressions: c.regressions,
      handlerErrors,
    },
    failure: input.failure,
  };
}

/** The detail line of an absent informer: its resource, since when, and what to check when it should exist. */
function absentDetail(name: string, a: AbsentResource): string {
  const what = `informer ${name}: its resource is not served (${a.reason})`;
  if (a.neverServed) {
    return `${what}, not once since it started ${formatDuration(a.msAbsent)} ago; its cache is empty and it lists again when the resource is served — if it should exist now, check its group, version and plural (a misspelt resource is absent too)`;
  }
  return `${what} for ${formatDuration(a.msAbsent)} (its CRD deleted?); its objects were delivered as deletes, and it lists again when the resource is served`;
}
