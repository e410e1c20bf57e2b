// LIST and the start of WATCH: resourceVersion semantics, paging, selectors, metadata-only answers.

import type { ServerResponse } from 'node:http';
import { isComparableResourceVersion } from '../../core/resource-version.js';
import { ApiStatusError } from '../../core/errors.js';
import { ShardSelectorError, formatShardSelector, parseShardSelector, shardMatcher, type ShardSelector } from '../../core/shard-selector.js';
import { expiredError, statusError, tooLargeError, type ResourceState, type StoredEntry } from '../resource-state.js';
import { entryMatcher, fieldSelectorLabels } from '../selectors.js';
import { decodeContinue, encodeContinue } from '../state-paging.js';
import { partialContentType, statusBody, writeParts } from './http-util.js';
import type { ResourceInfo } from './paths.js';
import { isBuiltInResource } from './registry.js';
import type { WatchPlan } from './watch.js';
import { checkFieldLabels, type CustomResourceVersion } from './custom-resources.js';

/** The parts of a request the list and watch handlers read. */
export interface CollectionRequest {
  /** The resource. */
  ri: ResourceInfo;
  /** Namespace from the path, if any. */
  namespace?: string;
  /** Object name from the path (a single-object watch), if any. */
  name?: string;
  /** The query parameters. */
  query: URLSearchParams;
  /** The client asked for PartialObjectMetadata. */
  metadataOnly: boolean;
  /** `shardSelector` is honoured (the `ShardedListAndWatch` gate is on); otherwise it is ignored. */
  sharding?: boolean;
  /** The CRD version a custom resource is served from: a field selector may use only its field labels. Undefined: any dotted path. */
  cr?: CustomResourceVersion;
}

/** Server-wide switches the list handler honours. */
export interface ListBehaviour {
  /** Serve `resourceVersion=0` lists from a "watch cache" that ignores `limit`. */
  watchCache: boolean;
}

const badRequest = (message: string): Error => statusError(400, 'BadRequest', message);

/** kube-apiserver v1.37.2's answer to `sendInitialEvents` on a watch with the `WatchList` gate off (measured). */
function watchListForbidden(): Error {
  const cause = 'Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled';
  const message = `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: ${cause}`;
  const status = {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Invalid',
    details: { group: 'meta.k8s.io', kind: 'ListOptions', causes: [{ reason: 'FieldValueForbidden', message: cause, field: 'sendInitialEvents' }] },
    code: 422,
  };
  return new ApiStatusError(422, message, { reason: 'Invalid', status });
}

function parseRv(text: string, current: number): number {
  if (!isComparableResourceVersion(text)) throw badRequest(`invalid resource version: ${JSON.stringify(text)}`);
  if (text.length > 15 || Number(text) > current) throw tooLargeError(text, current);
  return Number(text);
}

/** A request's shard selector as the server holds it: the ranges to match, and the text it echoes. */
export interface RequestShard {
  /** The parsed ranges (sorted and merged: the same objects match). */
  readonly selector: ShardSelector;
  /**
   * `metadata.shardInfo.selector`: the server's `String()` of what it parsed — every range as
   * written, in order, repeats kept, each in the canonical `shardRange(field, 'start', 'end')` form.
   */
  readonly echo: string;
}

/**
 * The shard selector of a request when the server honours it, or undefined (no parameter, an empty
 * one, or the gate off: then kube-apiserver ignores it, even a malformed one). Parsed with the server's
 * rules; a malformed one fails the request as kube-apiserver v1.37 does: a 500 whose Status message
 * starts "invalid shard selector: " and has no reason (the parse error reaches the handler unwrapped).
 */
export function requestShard(cr: CollectionRequest): RequestShard | undefined {
  const text = cr.query.get('shardSelector') ?? '';
  if (cr.sharding !== true || text === '') return undefined;
  try {
    const selector = parseShardSelector(text);
    // Our parser accepts only shardRange terms joined by `||` (no `||` inside a term), so each term
    // parses alone; formatting them one by one keeps the server's order and repeats.
    const echo = text
      .split('||')
      .map((term) => formatShardSelector(parseShardSelector(term)))
      .join(' || ');
    return { selector, echo };
  } catch (err) {
    const message = `invalid shard selector: ${err instanceof ShardSelectorError ? err.reason : String(err)}`;
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 };
    throw new ApiStatusError(500, message, { status });
  }
}

/** The label/field/shard selector filter of a request, with a single-object name folded in. */
export function requestMatcher(cr: CollectionRequest): ((e: StoredEntry) => boolean) | undefined {
  const fieldSelector = cr.query.get('fieldSelector') ?? undefined;
  const selectors = entryMatcher(cr.query.get('labelSelector') ?? undefined, fieldSelector);
  if (cr.cr !== undefined) checkFieldLabels(cr.cr, fieldSelectorLabels(fieldSelector));
  const shard = requestShard(cr);
  const inShard = shard === undefined ? undefined : shardMatcher(shard.selector);
  const m = inShard === undefined ? selectors : (e: StoredEntry): boolean => inShard({ metadata: e.meta }) && (selectors === undefined || selectors(e));
  if (cr.name === undefined) return m;
  const name = cr.name;
  return (e) => e.name === name && (m === undefined || m(e));
}

/** Serves one LIST request (writes the whole answer, in chunks, honouring backpressure). */
export async function serveList(
  res: ServerResponse,
  state: ResourceState,
  cr: CollectionRequest,
  behaviour: ListBehaviour,
): Promise<void> {
  const q = cr.query;
  const { ri } = cr;
  const current = state.currentResourceVersion();
  const floor = state.replayFloor(ri.stateKey);
  const rv = q.get('resourceVersion') ?? '';
  const rvm = q.get('resourceVersionMatch') ?? '';
  let limit = Number.parseInt(q.get('limit') ?? '0', 10);
  if (!Number.isFinite(limit) || limit < 0) limit = 0;
  const token = q.get('continue') ?? '';
  let atRv: number | undefined;
  let after: string | undefined;
  if (token !== '') {
    if (rvm !== '') throw badRequest('resourceVersionMatch is forbidden when continue is provided');
    if (rv !== '' && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    const pos = decodeContinue(token);
    if (pos === undefined) throw badRequest('continue key is not valid: incorrect encoded start resourceVersion');
    if (pos.rv < floor) {
      const message =
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';
      throw Object.assign(expiredError(pos.rv, floor), { status: statusBody(410, message, 'Expired') });
    }
    ({ rv: atRv, after } = pos);
  } else if (rvm === 'Exact') {
    if (rv === '' || rv === '0') throw badRequest('resourceVersionMatch "Exact" requires a non-zero resourceVersion');
    atRv = parseRv(rv, current);
  } else if (rvm === 'NotOlderThan' || rvm === '') {
    if (rvm === 'NotOlderThan' && rv === '') throw badRequest('resourceVersionMatch "NotOlderThan" requires a resourceVersion');
    if (rv === '0') {
      if (behaviour.watchCache) limit = 0;
    } else if (rv !== '') {
      const n = parseRv(rv, current);
      if (rvm === '' && limit > 0) atRv = n; // legacy: a limited list at rv N is an Exact read
    }
  } else throw badRequest(`unsupported resourceVersionMatch: ${JSON.stringify(rvm)}`);
  if (atRv !== undefined && atRv < floor) throw expiredError(atRv, floor);

  const matcher = requestMatcher(cr);
  const page = state.page(ri.stateKey, { namespace: cr.namespace, atRv, after, limit, filter: matcher });
  const meta: Record<string, unknown> = { resourceVersion: String(page.rv) };
  const shard = requestShard(cr);
  // The server echoes the selector it applied (its own formatting of the parsed ranges) — on built-in
  // resources only: kube-apiserver v1.37 filters custom resources too, but their lists are unstructured,
  // which has no shardInfo to set, so the echo is missing.
  if (shard !== undefined && isBuiltInResource(ri)) meta.shardInfo = { selector: shard.echo };
  if (page.nextAfter !== undefined) {
    meta.continue = encodeContinue({ rv: page.rv, after: page.nextAfter });
    if (matcher === undefined) meta.remainingItemCount = page.remaining;
  }
  // Custom resources are listed unstructured: an empty continue is kept, and so are each item's apiVersion and kind.
  const unstructured = !isBuiltInResource(ri);
  if (unstructured && meta.continue === undefined) meta.continue = '';
  const head = cr.metadataOnly
    ? `{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadataList","metadata":${JSON.stringify(meta)},"items":[`
    : `{"apiVersion":${JSON.stringify(ri.apiVersion)},"kind":${JSON.stringify(ri.listKind)},"metadata":${JSON.stringify(meta)},"items":[`;
  res.writeHead(200, {
    'Content-Type': cr.metadataOnly ? partialContentType() : 'application/json',
    'Cache-Control': 'no-cache, private',
  });
  await writeParts(res, listParts(head, page.entries, ri, cr.metadataOnly, unstructured));
  if (!res.destroyed) res.end();
}

function* listParts(head: string, entries: StoredEntry[], ri: ResourceInfo, metadataOnly: boolean, unstructured: boolean): Generator<string> {
  yield head;
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) yield ',';
    yield metadataOnly
      ? `{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":${JSON.stringify(entries[i].meta)}}`
      : unstructured
        ? entries[i].json
        : itemJson(entries[i], ri);
  }
  yield ']}';
}

/** A stored object as an item of a built-in list: without `apiVersion` and `kind`, like kube-apiserver's typed lists. */
export function itemJson(entry: StoredEntry, ri: ResourceInfo): string {
  if (entry.json.startsWith(ri.jsonPrefix)) return `{${entry.json.slice(ri.jsonPrefix.length)}`;
  const { apiVersion: _a, kind: _k, ...rest } = JSON.parse(entry.json) as Record<string, unknown>;
  return JSON.stringify(rest);
}

/**
 * Decides how a WATCH starts: synthetic ADDED events (`""`/`"0"`), initial events plus the
 * initial-events-end bookmark (`sendInitialEvents=true`), a replay from a resourceVersion, or an
 * in-stream 410 when that version is too old. Throws 400/422/504 errors that are answered before
 * streaming: without `watchList` (the `WatchList` gate off), `sendInitialEvents` is refused 422 as
 * kube-apiserver v1.37.2 refuses it.
 */
export function planWatch(state: ResourceState, cr: CollectionRequest, watchList = true): { plan: WatchPlan; startRv: number } {
  const q = cr.query;
  const { ri } = cr;
  const current = state.currentResourceVersion();
  const rv = q.get('resourceVersion') ?? '';
  const rvm = q.get('resourceVersionMatch') ?? '';
  const sie = q.get('sendInitialEvents');
  const snapshot = (): StoredEntry[] => state.page(ri.stateKey, { namespace: cr.namespace, filter: requestMatcher(cr) }).entries;
  if (sie !== null && !watchList) throw watchListForbidden();
  if (sie === 'true') {
    if (rvm !== 'NotOlderThan') throw badRequest('sendInitialEvents requires resourceVersionMatch=NotOlderThan');
    // Without allowWatchBookmarks kube-apiserver v1.37.2 still streams the initial events, with no end bookmark.
    if (rv !== '' && rv !== '0') parseRv(rv, current);
    return { plan: { initial: snapshot(), initialEnd: true }, startRv: current };
  }
  if (rvm !== '' && rvm !== 'NotOlderThan') throw badRequest(`resourceVersionMatch ${JSON.stringify(rvm)} is not allowed for watch`);
  if (rv === '' || rv === '0') {
    return { plan: sie === 'false' ? {} : { initial: snapshot() }, startRv: current };
  }
  const n = parseRv(rv, current);
  const replay = state.changesSince(ri.stateKey, n);
  if (replay === undefined) {
    const floor = state.replayFloor(ri.stateKey);
    return { plan: { error: statusBody(410, `too old resource version: ${n} (${floor})`, 'Expired') }, startRv: n };
  }
  return { plan: { replay }, startRv: n };
}
