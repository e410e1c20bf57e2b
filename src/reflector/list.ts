// LIST: the resource-version choice, pagination with the 410 fallback, and the hand-off to the store.

import type { ListOptions } from '../listwatch/types.js';
import type { ReflectorContext } from './context.js';
import { tagPhase } from './context.js';
import { ListTimeoutError, ResourceVersionRegressionError, isExpired, isTooLargeResourceVersion } from './errors.js';
import type { RegressionInfo } from './errors.js';
import type { ObjectList } from '../listwatch/types.js';
import { ABORTED, TIMED_OUT, callWithTimeout } from '../core/abort.js';
import { InvalidResourceVersionError } from '../core/errors.js';

/** The page size used when none is configured, as client-go's pager. */
export const DEFAULT_PAGE_SIZE = 500;

/** A list gathered from all its pages. */
export interface ListResult<T> {
  /** Items of every page, in order. */
  readonly items: T[];
  /** The resource version of the first page (or of the full list after a 410 fallback). */
  readonly resourceVersion: string;
  /** True when the server answered with more than one page. */
  readonly paginated: boolean;
}

/**
 * The options of the next list's first page. The resource version, as client-go (and documented on
 * {@link Reflector}):
 *
 * - `""` after a LIST was refused with 410 Expired or "too large resource version" (a consistent read);
 * - `"0"` when nothing was ever synced (any version: served from the watch cache, `limit` ignored there);
 * - otherwise the held version (or, when newer, the newest version of an event applied from a watch that
 *   started at `"0"`: see `ResourceVersionGuard.observed`) (the server answers "not older than" it, so the cache never goes back in
 *   time); after a rejected regression `resourceVersionMatch: "NotOlderThan"` is sent explicitly.
 *
 * `limit`: the configured `pageSize` when set (0 = none); else 500 when the version is `"0"`/`""` or a
 * `"0"` list once came back paginated; else none (unpaginated lists at a concrete version are served
 * from the watch cache, paginated ones go to etcd).
 */
export function planList<T>(ctx: ReflectorContext<T>): ListOptions {
  const held = ctx.guard.newest();
  const options: ListOptions = {};
  if (ctx.state.rvUnavailable) options.resourceVersion = '';
  else if (held === '' || held === '0') options.resourceVersion = '0';
  else {
    options.resourceVersion = held;
    if (ctx.state.repairPending) options.resourceVersionMatch = 'NotOlderThan';
  }
  const rv = options.resourceVersion;
  let limit: number;
  if (ctx.pageSize !== undefined) limit = ctx.pageSize;
  else if (ctx.state.paginatedResult || rv === '' || rv === '0') limit = DEFAULT_PAGE_SIZE;
  else limit = 0;
  if (limit > 0) options.limit = limit;
  return options;
}

/** One list request, abandoned after `listTimeoutMs` (throws {@link ListTimeoutError}). */
async function listPage<T>(ctx: ReflectorContext<T>, options: ListOptions, signal: AbortSignal): Promise<ObjectList<T> | typeof ABORTED> {
  const page = await callWithTimeout(ctx.clock, ctx.listTimeoutMs, signal, (s) => ctx.lw.list({ ...options }, s));
  if (page === TIMED_OUT) throw new ListTimeoutError(ctx.name, ctx.listTimeoutMs);
  return page;
}

/**
 * Lists every page: the first with `first`, the next ones with only `limit` and `continue` (the server
 * refuses a resource version together with a continue token). A 410 on a continue page means the
 * token's snapshot was compacted: one unpaginated list follows, at "not older than" the first page's
 * version (client-go re-sends the original version, which may be older than the page already seen;
 * a `""` list stays `""`).
 * A 410 on the first page is thrown. Resolves {@link ABORTED} when `signal` aborts.
 */
export async function listAllPages<T>(
  ctx: ReflectorContext<T>,
  first: ListOptions,
  signal: AbortSignal,
): Promise<ListResult<T> | typeof ABORTED> {
  const page1 = await listPage(ctx, first, signal);
  if (page1 === ABORTED) return ABORTED;
  const items: T[] = [];
  for (const item of page1.items ?? []) items.push(item);
  const resourceVersion = page1.metadata?.resourceVersion ?? '';
  if (resourceVersion === '') {
    // Not fatal: the watch then starts from "" and the server re-sends every object, which converges.
    ctx.recorder.error(
      new InvalidResourceVersionError('', `${ctx.name}: the list answer carried no metadata.resourceVersion; the next watch starts from "" and the server re-sends every object`),
      'list',
      'warn',
    );
  }
  let token = page1.metadata?.continue;
  let pages = 1;
  while (token !== undefined && token !== '') {
    let page;
    try {
      const next: ListOptions = { continue: token };
      if (first.limit !== undefined) next.limit = first.limit;
      page = await listPage(ctx, next, signal);
    } catch (err) {
      if (signal.aborted) return ABORTED;
      if (!isExpired(err)) throw err;
      const full: ListOptions = {};
      if (first.resourceVersion !== undefined && first.resourceVersion !== '' && resourceVersion !== '') {
        // Not older than the first page: that version was already seen (client-go re-asks the original).
        full.resourceVersion = resourceVersion;
        full.resourceVersionMatch = 'NotOlderThan';
      } else {
        if (first.resourceVersion !== undefined) full.resourceVersion = first.resourceVersion;
        if (first.resourceVersionMatch !== undefined) full.resourceVersionMatch = first.resourceVersionMatch;
      }
      const whole = await listPage(ctx, full, signal);
      if (whole === ABORTED) return ABORTED;
      return { items: whole.items ?? [], resourceVersion: whole.metadata?.resourceVersion ?? '', paginated: true };
    }
    if (page === ABORTED) return ABORTED;
    for (const item of page.items ?? []) items.push(item);
    token = page.metadata?.continue;
    pages++;
  }
  return { items, resourceVersion, paginated: pages > 1 };
}

/**
 * One complete list into the store: plan, list all pages (retrying once at `""` after a 410 or "too
 * large resource version" on a concrete version), check the answer is not older than the held version,
 * then ONE `store.replace(items, rv)`. Resolves false when `signal` aborted (nothing was replaced).
 *
 * A list older than the held version is refused (a regression, reported) and the next list asks `""`;
 * a consistent (`""`) list older than held is the server's truth after a restore: adopted, reported
 * with `accepted: true`.
 */
export async function listIntoStore<T>(ctx: ReflectorContext<T>, signal: AbortSignal): Promise<boolean> {
  let plan = planList(ctx);
  let result: ListResult<T> | typeof ABORTED;
  try {
    result = await listAllPages(ctx, plan, signal);
  } catch (err) {
    if (signal.aborted) return false;
    if (!((isExpired(err) || isTooLargeResourceVersion(err)) && plan.resourceVersion !== '')) throw tagPhase(err, 'list');
    ctx.recorder.error(err, 'list', 'relist');
    ctx.state.rvUnavailable = true;
    plan = planList(ctx);
    try {
      result = await listAllPages(ctx, plan, signal);
    } catch (again) {
      throw tagPhase(again, 'list');
    }
  }
  if (result === ABORTED || signal.aborted) return false;

  const rv = result.resourceVersion;
  const held = ctx.guard.newest();
  let adoptOlder = false;
  if (ctx.guard.compare(rv, held) === 'older') {
    const consistent = plan.resourceVersion === '';
    const info: RegressionInfo = {
      name: ctx.name, key: '', eventType: 'LIST', heldResourceVersion: held, eventResourceVersion: rv, reason: 'held',
      ...(consistent ? { accepted: true } : {}),
    };
    ctx.recorder.regression(info);
    if (!consistent) {
      ctx.state.rvUnavailable = true;
      throw tagPhase(new ResourceVersionRegressionError(info), 'guard');
    }
    adoptOlder = true;
  }
  try {
    ctx.store.replace(result.items, rv);
  } catch (err) {
    throw tagPhase(err, 'store');
  }
  if (plan.resourceVersion === '0' && result.paginated) ctx.state.paginatedResult = true;
  ctx.state.rvUnavailable = false;
  ctx.state.repairPending = false;
  if (adoptOlder) ctx.guard.reset(rv);
  else ctx.guard.advance(rv);
  ctx.recorder.listed(rv, result.items.length);
  return true;
}
