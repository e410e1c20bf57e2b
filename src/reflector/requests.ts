// The options of every request the reflector sends, built from its state (pure).

import type { ListOptions } from '../listwatch/types.js';
import { newest } from './versions.js';
import type { Versions } from './versions.js';

/** The page size used when none is configured, as client-go's pager. */
export const DEFAULT_PAGE_SIZE = 500;

/** What the reflector remembers across cycles and runs (part of every state of the machine). */
export interface Memory {
  /** The held and observed resource versions, and whether the guard is on. */
  readonly versions: Versions;
  /** A LIST refused the held version (410, too large) or answered older than it: the next list asks `""`. */
  readonly consistent: boolean;
  /** A `"0"` list came back paginated: the server has no watch cache for it, so relists keep paging. */
  readonly pagedCache: boolean;
  /** A regression was rejected: the next list asks not older than the held version, explicitly. */
  readonly repair: boolean;
  /**
   * A watch was answered 410 (too old resource version) and relisted at once, and no watch has carried
   * an event since: a 410 now backs off (a server that answers 410 forever cannot make a hot loop).
   */
  readonly expiredRelist: boolean;
  /**
   * The last list was answered 404 under `onResourceMissing: 'absent'` (the resource is not served):
   * the cache was emptied once; another 404 changes nothing until a list succeeds.
   */
  readonly absent: boolean;
}

/**
 * The first page of a list. The resource version, as client-go's:
 *
 * - `""` after a LIST was refused with 410 Expired or "too large resource version" (a consistent read);
 * - `"0"` when nothing was ever synced (any version: served from the watch cache);
 * - otherwise the held version (or, when newer, the newest version of an event applied from a watch
 *   opened at `"0"`), which the server answers "not older than"; after a rejected regression
 *   `resourceVersionMatch: "NotOlderThan"` is sent explicitly.
 *
 * `limit`: the configured `pageSize` when set (0 = none); else 500 when the version is `"0"`/`""` or a
 * `"0"` list once came back paginated; else none (an unpaginated list at a concrete version is served
 * from the watch cache, a paginated one goes to etcd).
 */
export function listRequest(mem: Memory, pageSize: number | undefined): ListOptions {
  const held = newest(mem.versions);
  const options: ListOptions = {};
  if (mem.consistent) options.resourceVersion = '';
  else if (held === '' || held === '0') options.resourceVersion = '0';
  else {
    options.resourceVersion = held;
    if (mem.repair) options.resourceVersionMatch = 'NotOlderThan';
  }
  const rv = options.resourceVersion;
  let limit: number;
  if (pageSize !== undefined) limit = pageSize;
  else if (mem.pagedCache || rv === '' || rv === '0') limit = DEFAULT_PAGE_SIZE;
  else limit = 0;
  if (limit > 0) options.limit = limit;
  return options;
}

/** A continuation page: only `continue` and `limit` (the server refuses a version with a token). */
export function nextPageRequest(first: ListOptions, token: string): ListOptions {
  const next: ListOptions = { continue: token };
  if (first.limit !== undefined) next.limit = first.limit;
  return next;
}

/**
 * The one unpaginated list that follows a continue token expired (410) mid-list: not older than the
 * first page's version, which was already seen (client-go re-asks the original version, which may be
 * older). A `""` list stays `""`.
 */
export function refetchRequest(first: ListOptions, firstPageVersion: string): ListOptions {
  const full: ListOptions = {};
  if (first.resourceVersion !== undefined && first.resourceVersion !== '' && firstPageVersion !== '') {
    full.resourceVersion = firstPageVersion;
    full.resourceVersionMatch = 'NotOlderThan';
  } else {
    if (first.resourceVersion !== undefined) full.resourceVersion = first.resourceVersion;
    if (first.resourceVersionMatch !== undefined) full.resourceVersionMatch = first.resourceVersionMatch;
  }
  return full;
}

/**
 * A streaming list (KEP-3157): a watch with the initial state, ended by a bookmark, not older than the
 * held version (`""` after a refused list). The driver adds `timeoutSeconds`.
 */
export function streamRequest(mem: Memory): ListOptions {
  return {
    resourceVersion: mem.consistent ? '' : mem.versions.held,
    resourceVersionMatch: 'NotOlderThan',
    sendInitialEvents: true,
    allowWatchBookmarks: true,
  };
}

/** A classic watch from the held version, with bookmarks. The driver adds `timeoutSeconds`. */
export function watchRequest(mem: Memory): ListOptions {
  return { resourceVersion: mem.versions.held, allowWatchBookmarks: true };
}

/** A random watch `timeoutSeconds` in `[min, 2*min)` (at least 1), from a uniform `r` in `[0, 1)`. */
export function watchTimeoutSeconds(minWatchTimeoutMs: number, r: number): number {
  const clamped = Math.min(Math.max(r, 0), 0.999_999);
  return Math.max(1, Math.floor((minWatchTimeoutMs + clamped * minWatchTimeoutMs) / 1000));
}
