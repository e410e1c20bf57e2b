// The reflector as a state machine: every state, and the one pure step function with all transitions.
//
// A state names the request in flight (planOf). The driver (reflector.ts, driver.ts) sends it, feeds
// what happened back to step(), applies the store operations, then publishes the reports. Every
// recovery is decided by the transition that handles the result; error codes only describe.
//
// | state         | in flight       | result → next state (reports; store operations)                                           |
// | ------------- | --------------- | ------------------------------------------------------------------------------------------ |
// | listing       | first page      | page with a continue token → paging · last page → watchOpening (listed; replace), or, older |
// |               |                 |   than held, END (regression) · failed 410/too large at a version → listing at "" at once · |
// |               |                 |   failed, timedOut, storeFailed → END                                                      |
// | paging        | next page       | page → paging, or as listing's last page · failed 410 → refetching · otherwise as listing   |
// | refetching    | unpaged list    | page → as listing's last page · failed, timedOut, storeFailed → as listing                 |
// | streamOpening | streaming watch | opened → streaming · failed, timedOut → FALLBACK; under 'auto', refused as invalid (no     |
// |               |                 |   streaming lists on that server) → listing (watchListUnsupported, not an error)            |
// | streaming     | next event      | change → streaming (collected) · other bookmark, foreign → streaming · initial-events-end  |
// |               |                 |   bookmark → watching (listed; replace), or, older than held, FALLBACK (regression) ·      |
// |               |                 |   ERROR, invalid, closed, timedOut, failed, storeFailed → FALLBACK                          |
// | watchOpening  | watch           | opened → watching · failed refused/429, timedOut → REWATCH · failed 410 → EXPIRED ·      |
// |               |                 |   failed → END · resyncDue                                                                 |
// | watching      | next event      | change, bookmark → watching (add/update/delete, resourceVersion) · foreign → watching ·     |
// |               |                 |   regressed → END · invalid, ERROR 429 → REWATCH · ERROR 410 → EXPIRED · ERROR → END ·     |
// |               |                 |   (an ERROR as the watch's first event: also watchRefused) · closed → watchOpening, or END |
// |               |                 |   when very short · timedOut → watchOpening · failed decode/429/network → REWATCH · failed |
// |               |                 |   410 → EXPIRED · failed → END · storeFailed → END · resyncDue                             |
// | waiting       | backoff sleep   | slept → start of a cycle (then = cycle) or watchOpening (then = watch) · resyncDue (watch)  |
// | absent        | backoff sleep   | slept → listing (a classic list: is it served again?) · relistDue → listing at ""          |
// | stopped       | nothing         | nothing leaves it                                                                          |
//
// END = the cycle ends: an error reported with action `relist`, then waiting(then = cycle), or stopped
// with that error under `oneCycle`. REWATCH = error reported with action `rewatch`, then waiting(then =
// watch). FALLBACK = error reported with action `fallback`, then listing at once. EXPIRED = a 410 (too
// old resource version) from a server that answers: not a failure, so no backoff — error reported with
// action `relist`, then the start of a cycle at once (remembered as `expiredRelist`); but END instead
// when the last relist was such a one and no watch carried an event, or lasted until it closed, since
// (a server answering 410 forever backs off). Every "→
// watchOpening" first checks the watch can resume: held "" or "0" after unadopted events is END
// (UnresumableWatchError). resyncDue = a resync operation, the state stays. relistDue (asked for, the
// watch dropped) → listing at "" from streamOpening, streaming, watchOpening, watching and absent. aborted →
// stopped from anywhere. Any other (state, result) pair changes nothing: step returns the given state itself.
//
// ABSENT (only under `onResourceMissing: 'absent'`, and never in `oneCycle`): a list (listing, paging,
// refetching) failed 404 — the resource is not served (its CRD deleted, or not created yet). The first
// time: `replace` with no items at the held version (every cached object leaves as a delete), the
// `absent` report, then absent (the next list asks ""); again while absent: absent, nothing else. A
// watch request answered 404 (watchOpening, or a streaming list's in streamOpening) under that option
// lists at "" at once, unreported (no fallback): the list decides. Absent waits with the backoff (then = recheck) and lists again; a relist asked for (the
// Manager's CRD watch saw it Established) ends the wait at once. The next complete list leaves it.

import { ErrorCodes, InvalidResourceVersionError, toError } from '../core/errors.js';
import type { ListOptions } from '../listwatch/types.js';
import { ListTimeoutError, ResourceVersionRegressionError, UnresumableWatchError, VeryShortWatchError,
  WatchListIncompleteError, WatchStalledError, isConnectionRefused, isExpired, isNetworkError, isTooLargeResourceVersion, isTooManyRequests,
  isWatchListRefused, statusCodeOf } from './errors.js';
import { retryAfterMs } from '../core/api-errors.js';
import type { RegressionInfo } from './errors.js';
import { Effects as EffectsOf, VERY_SHORT_WATCH_MS, chain, chainValues } from './machine-types.js';
import type { Chain, MachineEnv, Plan, Report, Result, Session, StoreOp } from './machine-types.js';
import { listRequest, nextPageRequest, refetchRequest, streamRequest, watchRequest } from './requests.js';
import type { Memory } from './requests.js';
import type { ReflectorPhase } from './types.js';
import { NO_VERSIONS, advance, compare, newest, observe, reset } from './versions.js';
import type { Versions } from './versions.js';
import { inspectWatchEvent } from './watch-event.js';
import type { EventVerdict } from './watch-event.js';

/** The effects collector of this machine's transitions. */
class Effects<T> extends EffectsOf<T, State<T>> {}

/** The reflector's state: what is in flight, plus the {@link Memory} kept across cycles and runs. */
export type State<T> =
  | { readonly kind: 'listing'; readonly mem: Memory; readonly request: ListOptions }
  | { readonly kind: 'paging'; readonly mem: Memory; readonly request: ListOptions; readonly resourceVersion: string;
      readonly pages: Chain<readonly T[]>; readonly next: ListOptions }
  | { readonly kind: 'refetching'; readonly mem: Memory; readonly request: ListOptions; readonly options: ListOptions }
  | { readonly kind: 'streamOpening'; readonly mem: Memory; readonly options: ListOptions }
  | { readonly kind: 'streaming'; readonly mem: Memory; readonly initial: Chain<readonly [string, T | undefined]> | undefined }
  | { readonly kind: 'watchOpening'; readonly mem: Memory; readonly options: ListOptions }
  | { readonly kind: 'watching'; readonly mem: Memory; readonly session: Session }
  | { readonly kind: 'waiting'; readonly mem: Memory; readonly then: 'cycle' | 'watch'; readonly atLeastMs: number }
  | { readonly kind: 'absent'; readonly mem: Memory }
  | { readonly kind: 'stopped'; readonly mem: Memory; readonly error: Error | undefined };

/** Every state kind, for exhaustive tests. */
export const STATE_KINDS = [
  'listing', 'paging', 'refetching', 'streamOpening', 'streaming', 'watchOpening', 'watching', 'waiting', 'absent', 'stopped',
] as const satisfies readonly State<unknown>['kind'][];

/** The answer of {@link step}: the next state, the store operations to apply, then the reports. */
export interface Transition<T> {
  /** The next state: the given state itself when the result changed nothing. */
  readonly state: State<T>;
  /** Store operations, in order. */
  readonly ops: readonly StoreOp<T>[];
  /** Reports, in order, published once the operations succeeded. */
  readonly reports: readonly Report[];
}

/** The memory of a reflector that has never listed. */
export const INITIAL_MEMORY: Memory = { versions: NO_VERSIONS, consistent: false, pagedCache: false, repair: false, expiredRelist: false, absent: false };

/** True when a cycle starts with a streaming list: `useWatchList` true, or `'auto'` and not refused by the server. */
export function streamsLists<T>(env: MachineEnv<T>): boolean {
  return env.useWatchList === true || (env.useWatchList === 'auto' && env.watchListVerdict?.() !== 'unsupported');
}

/** The first state of a cycle: a streaming list with `useWatchList` (see {@link streamsLists}), else a list. */
export function start<T>(mem: Memory, env: MachineEnv<T>): State<T> {
  if (streamsLists(env)) return { kind: 'streamOpening', mem, options: streamRequest(mem) };
  return { kind: 'listing', mem, request: listRequest(mem, env.pageSize) };
}

/** The plan of the reading states: one object for every event, as it carries nothing. */
const READ: Plan = Object.freeze({ kind: 'read' });

/** The plan of the absent state: a backoff sleep, then a list (a relist asked for ends it at once). */
const RECHECK: Plan = Object.freeze({ kind: 'sleep', atLeastMs: 0, then: 'recheck' });

/** The request in flight in `state`. */
export function planOf<T>(state: State<T>): Plan {
  switch (state.kind) {
    case 'listing': return { kind: 'list', options: state.request };
    case 'paging': return { kind: 'list', options: state.next };
    case 'refetching': return { kind: 'list', options: state.options };
    case 'streamOpening': return { kind: 'watch', options: state.options, streaming: true };
    case 'watchOpening': return { kind: 'watch', options: state.options, streaming: false };
    case 'streaming':
    case 'watching': return READ;
    case 'waiting': return { kind: 'sleep', atLeastMs: state.atLeastMs, then: state.then === 'cycle' ? 'relist' : 'rewatch' };
    case 'absent': return RECHECK;
    case 'stopped': return { kind: 'stop', error: state.error };
  }
}

/** True in the states that read an open watch stream (the driver closes it when leaving them). */
export function readsStream<T>(state: State<T>): boolean {
  return state.kind === 'streaming' || state.kind === 'watching';
}

/** True in the watch phase of a cycle, where the resync timer runs (restarted by each list). */
export function resyncArmed<T>(state: State<T>): boolean {
  return state.kind === 'watchOpening' || state.kind === 'watching' || (state.kind === 'waiting' && state.then === 'watch');
}

/** The one transition function: from `state` and what happened, the next state and its effects. */
export function step<T>(state: State<T>, result: Result<T>, env: MachineEnv<T>): Transition<T> {
  const fx = new Effects<T>(env);
  if (state.kind === 'stopped') return fx.to(state);
  if (result.kind === 'aborted') return fx.to({ kind: 'stopped', mem: state.mem, error: undefined });
  const { mem } = state;
  const r = result;
  if (r.kind === 'relistDue') return onRelistDue(fx, state);
  switch (state.kind) {
    case 'listing':
      if (r.kind === 'page') {
        const rv = r.page.metadata?.resourceVersion ?? '';
        if (rv === '') {
          const message = `${env.name}: the list answer carried no metadata.resourceVersion; the next watch starts from "" and the server re-sends every object`;
          fx.error(new InvalidResourceVersionError('', message), 'list', 'warn', false);
        }
        const items = r.page.items ?? [];
        const token = r.page.metadata?.continue;
        if (token === undefined || token === '') return finishList(fx, mem, state.request, [items], rv, false);
        return fx.to({ kind: 'paging', mem, request: state.request, resourceVersion: rv, pages: chain(undefined, items), next: nextPageRequest(state.request, token) });
      }
      return onListFailure(fx, state, r);
    case 'paging':
      if (r.kind === 'page') {
        const pages = chain(state.pages, r.page.items ?? []);
        const token = r.page.metadata?.continue;
        if (token === undefined || token === '') return finishList(fx, mem, state.request, chainValues(pages), state.resourceVersion, true);
        return fx.to({ ...state, pages, next: nextPageRequest(state.request, token) });
      }
      if (r.kind === 'failed' && isExpired(r.error)) {
        // The continue token's snapshot was compacted: one unpaginated list, not older than page one.
        return fx.to({ kind: 'refetching', mem, request: state.request, options: refetchRequest(state.request, state.resourceVersion) });
      }
      return onListFailure(fx, state, r);
    case 'refetching':
      if (r.kind === 'page') return finishList(fx, mem, state.request, [r.page.items ?? []], r.page.metadata?.resourceVersion ?? '', true);
      return onListFailure(fx, state, r);
    case 'streamOpening':
      if (r.kind === 'opened') return fx.to({ kind: 'streaming', mem, initial: undefined });
      if (r.kind === 'failed' && notServed(env, r.error)) return fx.to(consistentList(mem, env)); // not served: the list decides
      if (r.kind === 'failed') {
        if (env.useWatchList === 'auto' && isWatchListRefused(r.error)) {
          // 'auto' on a server without streaming lists: no failure; paged lists from now on.
          fx.report({ kind: 'watchListUnsupported', error: toError(r.error) });
          return fx.to({ kind: 'listing', mem, request: listRequest(mem, env.pageSize) });
        }
        return fallback(fx, mem, r.error, 'watch-list', true);
      }
      if (r.kind === 'timedOut') return fallback(fx, mem, new WatchStalledError(env.name, r.afterMs), 'watch-list', true);
      return fx.to(state);
    case 'streaming':
      switch (r.kind) {
        case 'event': return onStreamedEvent(fx, state, inspectWatchEvent(env, r.event));
        case 'closed': return fallback(fx, mem, new WatchListIncompleteError(env.name, 'closed'), 'watch-list', false);
        case 'timedOut': return fallback(fx, mem, new WatchListIncompleteError(env.name, 'stalled'), 'watch-list', false);
        case 'failed': return fallback(fx, mem, r.error, 'watch-list', true);
        case 'storeFailed': return fallback(fx, mem, r.error, 'store', false);
        case 'page': case 'opened': case 'slept': case 'resyncDue': return fx.to(state);
      }
    case 'watchOpening':
      switch (r.kind) {
        case 'opened': {
          const from = state.options.resourceVersion ?? '';
          return fx.to({ kind: 'watching', mem, session: { fromStart: from !== '' && from !== '0', sawNonAdded: false, delivered: false } });
        }
        case 'failed':
          if (notServed(env, r.error)) return fx.to(consistentList(mem, env));
          if (isConnectionRefused(r.error) || isTooManyRequests(r.error)) return rewatchLater(fx, mem, r.error, 'watch', true);
          if (isExpired(r.error)) return relistExpired(fx, mem, r.error);
          return endCycle(fx, mem, r.error, 'watch', true);
        case 'timedOut': return rewatchLater(fx, mem, new WatchStalledError(env.name, r.afterMs), 'watch', true);
        case 'page': case 'event': case 'closed': case 'slept': case 'resyncDue': case 'storeFailed': return onResync(fx, state, r);
      }
    case 'watching':
      switch (r.kind) {
        case 'event': return onWatchedEvent(fx, state, inspectWatchEvent(env, r.event));
        case 'closed': {
          // A quiet watch the server ends at its own requested timeout is normal, however short that was.
          const early = r.requestedTimeoutMs === 0 || r.lastedMs < r.requestedTimeoutMs / 2;
          if (r.received === 0 && r.lastedMs < VERY_SHORT_WATCH_MS && early) {
            return endCycle(fx, mem, new VeryShortWatchError(env.name, r.lastedMs), 'watch', false);
          }
          // A watch that lasted served the relist it followed: the next 410 relists at once again.
          return resume(fx, mem.expiredRelist ? { ...mem, expiredRelist: false } : mem);
        }
        case 'timedOut':
          fx.error(new WatchStalledError(env.name, r.afterMs), 'watch', 'rewatch', false);
          return resume(fx, mem);
        case 'failed': {
          const decode = (r.error as { code?: unknown } | null)?.code === ErrorCodes.WATCH_DECODE;
          const transient = decode || isTooManyRequests(r.error) || isNetworkError(r.error);
          if (isExpired(r.error)) return relistExpired(fx, mem, r.error);
          if (transient) return rewatchLater(fx, mem, r.error, 'watch', true);
          return endCycle(fx, mem, r.error, 'watch', true);
        }
        case 'page': case 'opened': case 'slept': case 'resyncDue': case 'storeFailed': return onResync(fx, state, r);
      }
    case 'waiting':
      if (r.kind === 'slept') return state.then === 'cycle' ? fx.to(start(mem, env)) : resume(fx, mem);
      return state.then === 'watch' ? onResync(fx, state, r) : fx.to(state);
    case 'absent':
      // A classic list asks whether it is served again (a streaming list's 404 would only fall back to it).
      return r.kind === 'slept' ? fx.to({ kind: 'listing', mem, request: listRequest(mem, env.pageSize) }) : fx.to(state);
  }
}

/** A 404 that means the resource is not served, under `onResourceMissing: 'absent'` (never in one cycle). */
function notServed<T>(env: MachineEnv<T>, error: unknown): boolean {
  return env.onResourceMissing === 'absent' && !env.oneCycle && statusCodeOf(error) === 404;
}

/** A consistent list (from `""`), at once. */
function consistentList<T>(mem: Memory, env: MachineEnv<T>): State<T> {
  const next: Memory = { ...mem, consistent: true };
  return { kind: 'listing', mem: next, request: listRequest(next, env.pageSize) };
}

/**
 * ABSENT: a list answered 404, the resource is not served. The first time the cache is emptied (an
 * empty `replace`: deletes for what it held) and reported; then the state waits and checks again.
 */
function goAbsent<T>(fx: Effects<T>, mem: Memory, error: unknown): Transition<T> {
  if (mem.absent) return fx.to({ kind: 'absent', mem });
  fx.op({ kind: 'replace', items: [], resourceVersion: mem.versions.held });
  fx.report({ kind: 'absent', payload: { error: toError(error), neverListed: mem.versions.held === '' } });
  return fx.to({ kind: 'absent', mem: { ...mem, consistent: true, absent: true } });
}

/** A list request's failure, time-out or refused `replace`, in listing, paging or refetching. */
function onListFailure<T>(fx: Effects<T>, state: Extract<State<T>, { kind: 'listing' | 'paging' | 'refetching' }>, r: Result<T>): Transition<T> {
  const { mem, request } = state;
  if (r.kind === 'timedOut') return endCycle(fx, mem, new ListTimeoutError(fx.env.name, r.afterMs), 'list', true);
  if (r.kind === 'storeFailed') return endCycle(fx, mem, r.error, 'store', false);
  if (r.kind !== 'failed') return fx.to(state);
  if (notServed(fx.env, r.error)) return goAbsent(fx, mem, r.error);
  if ((isExpired(r.error) || isTooLargeResourceVersion(r.error)) && request.resourceVersion !== '') {
    // The server no longer has (or does not have yet) that version: ask again at once for "".
    fx.error(r.error, 'list', 'relist', true);
    const next: Memory = { ...mem, consistent: true };
    return fx.to({ kind: 'listing', mem: next, request: listRequest(next, fx.env.pageSize) });
  }
  return endCycle(fx, mem, r.error, 'list', true);
}

/**
 * A complete list: refused when older than the newest version seen (unless it was a consistent read:
 * then the server's history went back and the list is adopted), else one `replace`, then a watch.
 */
function finishList<T>(fx: Effects<T>, mem: Memory, request: ListOptions, pages: readonly (readonly T[])[], rv: string, paginated: boolean): Transition<T> {
  const held = newest(mem.versions);
  const check = compare(mem.versions, rv, held);
  let versions = fx.versions(check);
  const consistent = request.resourceVersion === '';
  if (check.order === 'older') {
    const info = regression(fx, '', 'LIST', held, rv, 'held', consistent ? { accepted: true } : {});
    if (!consistent) return endCycle(fx, { ...mem, versions, consistent: true }, new ResourceVersionRegressionError(info), 'guard', false);
  }
  const items: T[] = [];
  for (const page of pages) for (const item of page) items.push(item);
  fx.op({ kind: 'replace', items, resourceVersion: rv });
  versions = fx.versions(check.order === 'older' ? reset(versions, rv) : advance(versions, rv));
  const pagedCache = mem.pagedCache || (request.resourceVersion === '0' && paginated);
  fx.report({ kind: 'listed', payload: { resourceVersion: rv, items: items.length, streamed: false, consistent } });
  return resume(fx, { versions, consistent: false, pagedCache, repair: false, expiredRelist: mem.expiredRelist, absent: false });
}

/** One event of a streaming list's initial state. */
function onStreamedEvent<T>(fx: Effects<T>, state: Extract<State<T>, { kind: 'streaming' }>, v: EventVerdict<T>): Transition<T> {
  const { mem } = state;
  switch (v.kind) {
    case 'status':
      fx.seen(v, 'dropped');
      return fallback(fx, mem, v.error, 'watch-list', true);
    case 'invalid':
      fx.seen(v, 'dropped');
      return fallback(fx, mem, v.error, 'event', false);
    case 'foreign':
      fx.seen(v, 'dropped');
      fx.error(v.error, 'event', 'skip', false);
      return fx.to(state);
    case 'change': {
      fx.seen(v, 'collected');
      // An object the cache holds at this very version: its cached copy is kept, the decoded one dropped.
      const kept = v.type === 'DELETED' ? undefined : (fx.env.unchanged?.(v.key, v.resourceVersion) ?? v.object);
      return fx.to({ ...state, initial: chain(state.initial, [v.key, kept] as const) });
    }
    case 'bookmark': {
      fx.report({ kind: 'bookmark', payload: { resourceVersion: v.resourceVersion, initialEventsEnd: v.initialEventsEnd } });
      if (!v.initialEventsEnd) return fx.to(state);
      const held = mem.versions.held;
      const check = compare(mem.versions, v.resourceVersion, held);
      const versions = fx.versions(check);
      if (check.order === 'older') {
        const info = regression(fx, '', 'BOOKMARK', held, v.resourceVersion, 'held');
        return fallback(fx, { ...mem, versions, repair: true }, new ResourceVersionRegressionError(info), 'guard', false);
      }
      const collected = new Map<string, T>();
      for (const [key, obj] of chainValues(state.initial)) {
        if (obj === undefined) collected.delete(key);
        else collected.set(key, obj);
      }
      fx.op({ kind: 'replace', items: [...collected.values()], resourceVersion: v.resourceVersion });
      const next: Memory = { ...mem, versions: fx.versions(advance(versions, v.resourceVersion)), consistent: false, repair: false };
      fx.report({ kind: 'listed', payload: { resourceVersion: v.resourceVersion, items: collected.size, streamed: true, consistent: false } });
      return fx.to({ kind: 'watching', mem: next, session: { fromStart: true, sawNonAdded: false, delivered: true } });
    }
  }
}

/** One event of a classic watch (or of a streaming list past its initial state). */
function onWatchedEvent<T>(fx: Effects<T>, state: Extract<State<T>, { kind: 'watching' }>, v: EventVerdict<T>): Transition<T> {
  const { session } = state;
  // An event other than an ERROR: the watch works, and serves the relist it followed.
  const mem = v.kind === 'status' || !state.mem.expiredRelist ? state.mem : { ...state.mem, expiredRelist: false };
  const held = mem.versions.held;
  switch (v.kind) {
    case 'status':
      fx.seen(v, 'dropped');
      // An ERROR for first event: the server that answered refused the watch; it never opened.
      if (!session.delivered) fx.report({ kind: 'watchRefused' });
      if (isTooManyRequests(v.error)) return rewatchLater(fx, mem, v.error, 'watch', true);
      if (isExpired(v.error)) return relistExpired(fx, mem, v.error);
      return endCycle(fx, mem, v.error, 'watch', true);
    case 'invalid':
      fx.seen(v, 'dropped');
      return rewatchLater(fx, mem, v.error, 'event', false);
    case 'foreign':
      fx.seen(v, 'dropped');
      fx.error(v.error, 'event', 'skip', false);
      return fx.to(session.delivered ? state : { kind: 'watching', mem, session: { ...session, delivered: true } });
    case 'bookmark': {
      fx.report({ kind: 'bookmark', payload: { resourceVersion: v.resourceVersion, initialEventsEnd: v.initialEventsEnd } });
      const check = compare(mem.versions, v.resourceVersion, held);
      const versions = fx.versions(check);
      if (check.order === 'older') return reject(fx, { ...mem, versions }, regression(fx, '', 'BOOKMARK', held, v.resourceVersion, 'held'));
      const next = accept(fx, withVersions(mem, versions), v.resourceVersion);
      return fx.to({ kind: 'watching', mem: next, session: session.sawNonAdded && session.delivered ? session : { ...session, sawNonAdded: true, delivered: true } });
    }
    case 'change': {
      // A change on a watch that started at (or passed) the held version must be strictly newer: one
      // at the held version itself is stale (the 2017 DELETE bug), and resuming from it would replay it.
      const guarded = session.fromStart || session.sawNonAdded;
      let versions = mem.versions;
      let vouched = false;
      if (guarded) {
        const check = compare(versions, v.resourceVersion, held);
        versions = fx.versions(check);
        if (check.order === 'older' || check.order === 'same') {
          fx.seen(v, 'dropped');
          return reject(fx, { ...mem, versions }, regression(fx, v.key, v.type, held, v.resourceVersion, 'held'));
        }
        // Every version handed to the store is at most the newest of held and observed; when that is
        // held, a change newer than held is newer than any cached copy, whose read (a cold cache line
        // per event) is skipped.
        vouched = check.order === 'newer' && newest(versions) === versions.held;
      }
      if (!vouched && fx.env.storedVersion !== undefined && v.type !== 'DELETED') {
        const stored = fx.env.storedVersion(v.key);
        const check = compare(versions, v.resourceVersion, stored);
        versions = fx.versions(check);
        if (check.order === 'older') {
          fx.seen(v, 'dropped');
          const info = regression(fx, v.key, v.type, held, v.resourceVersion, 'stored', { storedResourceVersion: stored });
          return reject(fx, { ...mem, versions }, info);
        }
      }
      fx.op({ kind: v.type === 'ADDED' ? 'add' : v.type === 'MODIFIED' ? 'update' : 'delete', object: v.object });
      const sawNonAdded = session.sawNonAdded || v.type !== 'ADDED';
      let next = withVersions(mem, versions);
      if (guarded || sawNonAdded) next = accept(fx, next, v.resourceVersion);
      else next = withVersions(next, observe(next.versions, v.resourceVersion));
      fx.seen(v, 'applied');
      return fx.to({ kind: 'watching', mem: next, session: sawNonAdded === session.sawNonAdded && session.delivered ? session : { ...session, sawNonAdded, delivered: true } });
    }
  }
}

/** A relist asked for: in the watch phase (or a streamed list), a consistent list at once; elsewhere nothing. */
function onRelistDue<T>(fx: Effects<T>, state: State<T>): Transition<T> {
  switch (state.kind) {
    case 'streamOpening': case 'streaming': case 'watchOpening': case 'watching': case 'absent':
      return fx.to(consistentList(state.mem, fx.env));
    default: return fx.to(state);
  }
}

/** The resync timer and its failures, in the watch phase. */
function onResync<T>(fx: Effects<T>, state: State<T>, r: Result<T>): Transition<T> {
  if (r.kind === 'resyncDue') {
    fx.op({ kind: 'resync' });
    return fx.to(state);
  }
  if (r.kind === 'storeFailed') return endCycle(fx, state.mem, r.error, r.op === 'resync' ? 'resync' : 'store', false);
  return fx.to(state);
}

/** Adopts an accepted version and tells the store (`updateResourceVersion`). */
function accept<T>(fx: Effects<T>, mem: Memory, rv: string): Memory {
  if (rv === '') return mem;
  fx.op({ kind: 'resourceVersion', resourceVersion: rv });
  return withVersions(mem, fx.versions(advance(mem.versions, rv)));
}

/** `mem` with other versions (itself when they are the same). */
function withVersions(mem: Memory, versions: Versions): Memory {
  return versions === mem.versions ? mem : { versions, consistent: mem.consistent, pagedCache: mem.pagedCache, repair: mem.repair, expiredRelist: mem.expiredRelist, absent: mem.absent };
}

/** A rejected event: reported, not applied; the cycle ends and the next list repairs the cache. */
function reject<T>(fx: Effects<T>, mem: Memory, info: RegressionInfo): Transition<T> {
  return endCycle(fx, { ...mem, repair: true }, new ResourceVersionRegressionError(info), 'guard', false);
}

/** Reports a regression and returns its info. */
function regression<T>(fx: Effects<T>, key: string, eventType: string, held: string, rv: string, reason: 'held' | 'stored', extra: Partial<RegressionInfo> = {}): RegressionInfo {
  const info: RegressionInfo = { name: fx.env.name, key, eventType, heldResourceVersion: held, eventResourceVersion: rv, reason, ...extra };
  fx.report({ kind: 'regression', payload: info });
  return info;
}

/** A watch from the held version, unless unadopted events of a watch from `""`/`"0"` forbid resuming. */
function resume<T>(fx: Effects<T>, mem: Memory): Transition<T> {
  const from = mem.versions.held;
  if ((from === '' || from === '0') && mem.versions.observed !== undefined) {
    return endCycle(fx, mem, new UnresumableWatchError(fx.env.name), 'watch', false);
  }
  return fx.to({ kind: 'watchOpening', mem, options: watchRequest(mem) });
}

/** END: the cycle ends with `error` (reported, action `relist`); back off and start a new cycle. */
function endCycle<T>(fx: Effects<T>, mem: Memory, error: unknown, phase: ReflectorPhase, requestFailed: boolean): Transition<T> {
  const err = toError(error);
  fx.error(err, phase, 'relist', requestFailed);
  if (fx.env.oneCycle) return fx.to({ kind: 'stopped', mem, error: err });
  return fx.to({ kind: 'waiting', mem, then: 'cycle', atLeastMs: retryAfterMs(error) });
}

/**
 * EXPIRED: a 410 (too old resource version) in the watch phase. The server answered: that is not a
 * failure, and the backoff grown by the failures before it (an outage) does not apply — start a cycle
 * at once (a list, or a streaming list, not older than the held version; a list refused 410 in turn
 * asks `""`). Once only: when the last relist was such a one and no watch has carried an event (past a
 * streamed list's initial state) or lasted until it closed since, the cycle ends with backoff (END), so
 * a server that answers 410 forever cannot make a hot loop. A relist that fails backs off as any failure.
 */
function relistExpired<T>(fx: Effects<T>, mem: Memory, error: unknown): Transition<T> {
  if (mem.expiredRelist || fx.env.oneCycle) return endCycle(fx, mem, error, 'watch', true);
  fx.error(error, 'watch', 'relist', true);
  return fx.to(start({ ...mem, expiredRelist: true }, fx.env));
}

/** REWATCH: reported with action `rewatch`; back off, then watch again from the held version. */
function rewatchLater<T>(fx: Effects<T>, mem: Memory, error: unknown, phase: ReflectorPhase, requestFailed: boolean): Transition<T> {
  fx.error(error, phase, 'rewatch', requestFailed);
  return fx.to({ kind: 'waiting', mem, then: 'watch', atLeastMs: retryAfterMs(error) });
}

/** FALLBACK: the streaming list failed (reported, action `fallback`); a normal list follows at once. */
function fallback<T>(fx: Effects<T>, mem: Memory, error: unknown, phase: ReflectorPhase, requestFailed: boolean): Transition<T> {
  fx.error(error, phase, 'fallback', requestFailed);
  return fx.to({ kind: 'listing', mem, request: listRequest(mem, fx.env.pageSize) });
}
