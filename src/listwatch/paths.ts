// URL building for list and watch requests: the resource path and the query string.

import { InvalidOptionError } from '../core/options.js';
import type { GroupVersionResource, ListOptions } from './types.js';

function segment(value: string, what: string): string {
  // A JavaScript caller (or a cast) can pass anything: `get(name, { namespace })` is a common slip.
  if (typeof value !== 'string') {
    throw new InvalidOptionError(`${what} must be a string (a path segment), got ${value === null ? 'null' : typeof value}${typeof value === 'object' ? ` ${JSON.stringify(value)}` : ''}`);
  }
  if (value === '' || value.includes('/')) {
    throw new InvalidOptionError(`${what} must be a non-empty path segment without '/', got ${JSON.stringify(value)}`);
  }
  return encodeURIComponent(value);
}

/**
 * The collection path of a resource, relative to the server's base URL:
 * - core group (`group: ''`): `/api/{version}[/namespaces/{namespace}]/{resource}`
 * - any other group, CRDs included: `/apis/{group}/{version}[/namespaces/{namespace}]/{resource}`
 *
 * An absent or empty `namespace` means all namespaces (or a cluster-scoped resource). Segments are
 * URL-encoded; one that is empty or holds a `/` throws (code `INVALID_OPTION`).
 */
export function resourcePath(gvr: GroupVersionResource, namespace?: string): string {
  const version = segment(gvr.version, 'gvr.version');
  const resource = segment(gvr.resource, 'gvr.resource');
  const prefix = gvr.group === '' ? `/api/${version}` : `/apis/${segment(gvr.group, 'gvr.group')}/${version}`;
  const ns = namespace === undefined || namespace === '' ? '' : `/namespaces/${segment(namespace, 'namespace')}`;
  return `${prefix}${ns}/${resource}`;
}

/**
 * Joins two selectors with `,` (both must hold, for label and field selectors alike). Either may be
 * absent or empty; the result is `undefined` when both are.
 */
export function combineSelectors(a: string | undefined, b: string | undefined): string | undefined {
  const left = a === undefined || a.trim() === '' ? undefined : a;
  const right = b === undefined || b.trim() === '' ? undefined : b;
  if (left === undefined) return right;
  if (right === undefined) return left;
  return `${left},${right}`;
}

/** Selectors fixed for every request of a ListerWatcher, ANDed with the per-call ones. */
export interface BaseSelectors {
  /** The label selector given to `newListWatch`; default none. */
  labelSelector?: string;
  /** The field selector given to `newListWatch`; default none. */
  fieldSelector?: string;
  /** The shard selector given to `newListWatch`, in its wire form; default none. */
  shardSelector?: string;
}

function appendShared(params: URLSearchParams, options: ListOptions, base: BaseSelectors): void {
  if (options.resourceVersion !== undefined && options.resourceVersion !== '') {
    params.set('resourceVersion', options.resourceVersion);
  }
  if (options.resourceVersionMatch !== undefined) params.set('resourceVersionMatch', options.resourceVersionMatch);
  const labelSelector = combineSelectors(base.labelSelector, options.labelSelector);
  if (labelSelector !== undefined) params.set('labelSelector', labelSelector);
  const fieldSelector = combineSelectors(base.fieldSelector, options.fieldSelector);
  if (fieldSelector !== undefined) params.set('fieldSelector', fieldSelector);
  if (base.shardSelector !== undefined) params.set('shardSelector', base.shardSelector);
  if (options.timeoutSeconds !== undefined) params.set('timeoutSeconds', String(Math.floor(options.timeoutSeconds)));
}

/**
 * The query string of a list request (without `?`): `resourceVersion` (omitted when `""`, which means
 * the same as absent), `resourceVersionMatch`, `limit` (when > 0), `continue` (when non-empty),
 * selectors (the ListerWatcher's ANDed with the call's) and `timeoutSeconds`. Watch-only fields are
 * ignored.
 */
export function listQuery(options: ListOptions, base: BaseSelectors = {}): string {
  const params = new URLSearchParams();
  appendShared(params, options, base);
  if (options.limit !== undefined && options.limit > 0) params.set('limit', String(Math.floor(options.limit)));
  if (options.continue !== undefined && options.continue !== '') params.set('continue', options.continue);
  return params.toString();
}

/**
 * The query string of a watch request (without `?`): always `watch=true`, then `resourceVersion`,
 * `resourceVersionMatch`, selectors, `timeoutSeconds`, `allowWatchBookmarks=true` when asked for, and
 * `sendInitialEvents` when given (true or false). `limit` and `continue` are ignored.
 */
export function watchQuery(options: ListOptions, base: BaseSelectors = {}): string {
  const params = new URLSearchParams();
  params.set('watch', 'true');
  appendShared(params, options, base);
  if (options.allowWatchBookmarks === true) params.set('allowWatchBookmarks', 'true');
  if (options.sendInitialEvents !== undefined) params.set('sendInitialEvents', String(options.sendInitialEvents));
  return params.toString();
}
