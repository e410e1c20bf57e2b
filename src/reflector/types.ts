// The reflector's public shapes: the store it feeds, its options, its error context and its stats.

import type { Clock } from '../core/clock.js';
import type { BackoffOptions } from '../runtime/backoff.js';
import type { RegressionInfo } from './errors.js';

/**
 * What the reflector writes to. The store room's `Store<T>` and the `DeltaFIFO` satisfy it structurally.
 * A method that throws ends the current list/watch cycle; the reflector reports the error, backs off and
 * relists (so a dropped event is repaired by the next `replace`, not silently lost).
 */
export interface ReflectorStore<T> {
  /** An ADDED watch event. */
  add(obj: T): void;
  /** A MODIFIED watch event. */
  update(obj: T): void;
  /** A DELETED watch event, with the object's final state as the server sent it. */
  delete(obj: T): void;
  /** A complete list (all pages, or the streamed initial state) at `resourceVersion`. */
  replace(items: T[], resourceVersion: string): void;
  /** Re-deliver the cached objects (the resync timer); never talks to the server. */
  resync(): void;
  /** Optional: told every time the reflector's resource version advances during a watch. */
  updateResourceVersion?(resourceVersion: string): void;
}

/**
 * Internal (not exported by the package): `store[STAGE_LIST_PAGE](items, first)` is offered each page of
 * a paged list while the next page is on its way — `first` for a list's first page, `undefined` items
 * when the list in progress was abandoned. A store may prepare what its `replace` will need (the
 * `DeltaFIFO` computes the items' keys) and must not change what it holds or shows: the list may still
 * fail. The `replace` that ends the list gets the same item objects, pages in order.
 */
export const STAGE_LIST_PAGE: unique symbol = Symbol('kube-informer.stageListPage');

/** A store that stages list pages (see {@link STAGE_LIST_PAGE}). */
export interface StagingStore<T> {
  [STAGE_LIST_PAGE]?(items: readonly T[] | undefined, first: boolean): void;
}

/**
 * Read access to the objects already cached, so ADDED/MODIFIED older than the cached copy are rejected.
 * Read only while the held version does not prove a change newer (a watch from `""`/`"0"`): the
 * reflector's own writes are never newer than the version it holds.
 */
export interface KnownObjectsGetter<T> {
  /** The cached object with this key, or `undefined`. */
  getByKey(key: string): T | undefined;
}

/**
 * Where in its cycle the reflector was when something went wrong: a `list` request, a `watch` request
 * or stream, the `watch-list` (streaming list) request or stream, a bad or foreign `event`, the
 * `resync` timer's store call, another `store` call, the resource-version `guard`, or a throwing `hook`.
 */
export type ReflectorPhase = 'list' | 'watch' | 'watch-list' | 'event' | 'resync' | 'store' | 'guard' | 'hook';

/**
 * What the reflector does about a reported error: `relist` (the cycle ended; it backs off and lists
 * again), `rewatch` (re-opens the watch from the last resource version, no relist), `skip` (the event
 * was dropped, the watch goes on), `fallback` (streaming list failed; a normal list follows), `warn`
 * (nothing to retry).
 */
export type ReflectorAction = 'relist' | 'rewatch' | 'skip' | 'fallback' | 'warn';

/** Passed to `onError` with every reported error. */
export interface ReflectorErrorContext {
  /** The reflector's name. */
  readonly name: string;
  /** Where it happened. */
  readonly phase: ReflectorPhase;
  /** What the reflector does next. */
  readonly action: ReflectorAction;
}

/** Options of a `Reflector` (from `kube-informer/cache`; the informers pass theirs through). Every field is optional. */
export interface ReflectorOptions<T> {
  /** Shown in errors and diagnostics. Default `'reflector'`, or `'reflector <expectedKind>'` when that is set. */
  name?: string;
  /** How often `store.resync()` runs during a watch, in ms. Default `0` (never). */
  resyncPeriodMs?: number;
  /** Asked before every resync; `false` skips that one. Default: always resync. */
  shouldResync?: () => boolean;
  /**
   * List page size. When unset (the default) the reflector pages by 500 only where paging is cheap, as
   * client-go does: lists at `"0"` or `""` are paged; lists at a concrete resource version are sent
   * unpaginated so the server can answer from its watch cache, unless an earlier `"0"` list came back
   * paginated. When set, every list is paged by this size; `0` = never paginate.
   */
  pageSize?: number;
  /**
   * The shortest server-side watch timeout, in ms. Each watch asks for a random `timeoutSeconds` in
   * `[min, 2*min)`. Default `300000` (5 minutes). Unlike client-go, values under 5 minutes are honoured.
   */
  minWatchTimeoutMs?: number;
  /**
   * Extra silence tolerated on a watch beyond its `timeoutSeconds` before the reflector decides the
   * connection is dead (half-open) and re-watches, reporting `WATCH_STALLED`. The same limit bounds how
   * long a watch may take to connect. Default `30000`.
   */
  watchIdleMarginMs?: number;
  /**
   * How long one list request (one page) may take before it is abandoned — its signal aborted, reported
   * as a `ListTimeoutError` (code `LIST_TIMEOUT`) — and retried after backoff: a stalled list must not
   * wedge the reflector. Default `300000` (5 minutes).
   */
  listTimeoutMs?: number;
  /**
   * Streaming lists (WatchList, KEP-3157): the initial state comes over a watch (`sendInitialEvents`,
   * ended by a bookmark) instead of a paged list, and that watch goes on as the informer's watch.
   *
   * - `'auto'` (the default): stream where the server supports it, page where not. What a server
   *   supports is learnt once per `ListerWatcher.serverIdentity` (server URL, user, API group version)
   *   and remembered by the process: a server that refuses the request as invalid (kube-apiserver with
   *   the `WatchList` feature gate off, or older than 1.27) gets paged lists from then on, reported by
   *   one `watchListUnsupported` event (the informer logs it once, at info) and `stats().listMode`;
   *   reflectors starting together wait for the first one's answer rather than each sending the
   *   request. A `ListerWatcher` without `serverIdentity` (your own, `FakeControllerSource`) gets
   *   paged lists. Any other failure of a streaming list falls back to a paged list for that cycle.
   * - `true`: always try a streaming list first (any failure falls back to a paged list, per cycle).
   * - `false`: paged lists only (client-go's `WatchListClient=false`).
   *
   * Warning: a server that neither serves nor refuses `sendInitialEvents` (a hand-written stub, a proxy
   * that drops the parameter) sends no initial-events-end bookmark: the streaming list then waits until
   * the watch closes (`timeoutSeconds`) and falls back. Pass `false` for such a server. kube-apiserver
   * and servers built on its library refuse the parameter when they do not serve it.
   */
  useWatchList?: boolean | 'auto';
  /**
   * What a list answered 404 does — the resource is not served: its CRD was deleted, or is not created
   * yet. `'retry'`: an error like any other, retried with backoff (and, before the first sync, sync waits
   * reject after `syncFailureThreshold` of them). `'absent'`: the store is handed an empty list (each
   * cached object leaves as a delete), the watch stops, an `absent` event is published once, and the
   * reflector lists again with the backoff — at once on `requestRelist` — until the resource is served
   * again; `listAndWatch` (one cycle) keeps `'retry'`. Default `'retry'`.
   */
  onResourceMissing?: 'retry' | 'absent';
  /** Backoff between failures (shared by relists and watch retries). Defaults: see {@link BackoffOptions}. */
  backoff?: BackoffOptions;
  /** Time and timers. Default `realClock`. */
  clock?: Clock;
  /** A uniform random number in `[0, 1)`, for jitter and watch timeouts. Default `Math.random`. */
  random?: () => number;
  /** The objects already cached (the informer's indexer): enables the per-object regression check. */
  knownObjects?: KnownObjectsGetter<T>;
  /** The key of an object. Default `metaNamespaceKeyFunc`. */
  keyFunc?: (obj: T) => string;
  /** Watch objects whose `kind` is set and differs from this are skipped and reported. Default: no check. */
  expectedKind?: string;
  /** Watch objects whose `apiVersion` is set and differs from this are skipped and reported. Default: no check. */
  expectedApiVersion?: string;
  /** Told about every error the reflector recovers from (and the one that ended a cycle). Default: none. */
  onError?: (error: Error, context: ReflectorErrorContext) => void;
  /** Told about every rejected, older-than-held event or list. Default: none. */
  onRegression?: (info: RegressionInfo) => void;
}

/**
 * Counters and state for health checks; a fresh snapshot on every `stats()` call. Every field is
 * counted from the reflector's own events (`reflector.events`), so each has exactly one meaning.
 */
export interface ReflectorStats {
  /** Lists completed and handed to the store (classic or streamed), the first one included: `listed` events. */
  readonly lists: number;
  /** Completed lists after the first (`lists - 1`, never negative). */
  readonly relists: number;
  /**
   * Watch streams opened (the server answered the watch request), streaming lists included:
   * `watchOpened` events. A watch refused by its first event (an ERROR) is counted too; its
   * `watchEnded` says `refused`.
   */
  readonly watches: number;
  /** ADDED/MODIFIED/DELETED events applied to the store (`event` events with outcome `applied`). Bookmarks excluded. */
  readonly events: number;
  /** BOOKMARK events received, accepted or not: `bookmark` events. */
  readonly bookmarks: number;
  /** Errors reported, warnings and skipped events included: `error` events (every `onError` call). */
  readonly errors: number;
  /** Events or lists whose resource version went backwards (rejected, or adopted with `accepted`): `regression` events. */
  readonly regressions: number;
  /** Watches given up for silence: silent past their idle limit, or not connected within it (code `WATCH_STALLED`). */
  readonly stalls: number;
  /** Clock time of the last watch event of any type (bookmarks, ERRORs and bad ones included), or `undefined`. */
  readonly lastEventAt: number | undefined;
  /** Clock time of the last completed list, or `undefined`. */
  readonly lastListAt: number | undefined;
  /** True while a watch stream is open (between `watchOpened` and `watchEnded`). */
  readonly watchConnected: boolean;
  /** The resource version the reflector holds. */
  readonly lastSyncResourceVersion: string;
  /** False once a non-integer resource version turned the guard off. */
  readonly resourceVersionGuard: boolean;
  /** The last error reported, warnings included, or `undefined`. */
  readonly lastError: Error | undefined;
  /**
   * How the next list is made: `streaming` (a watch with `sendInitialEvents`) or `paged` (`useWatchList:
   * false`, a `ListerWatcher` without `serverIdentity` under `'auto'`, or a server found not to support
   * streaming lists). Whether the last list streamed: the `listed` event's `streamed`.
   */
  readonly listMode: 'streaming' | 'paged';
}
