// Request dispatch of the fake API server: logging, auth, faults, then list/watch/get/write handlers.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../core/clock.js';
import { statusError, type ResourceState } from '../resource-state.js';
import { streamSteps, type FakeApiVerb, type FaultQueue } from './faults.js';
import { readBody, REASONS, sendError, sendJson, statusBody, wantsPartialMetadata } from './http-util.js';
import { planWatch, requestMatcher, serveList, type CollectionRequest } from './list.js';
import { parsePath, type ResourceInfo } from './paths.js';
import { isBuiltInResource, notFoundIn, notServedError, type ResourceRegistry } from './registry.js';
import { checkAccept, checkBodyType, checkDeleteOptions, notModelled } from './not-modelled.js';
import { WatchConnection } from './watch.js';
import { serveCreate, serveDelete, serveGet, servePatch, serveUpdate, type ObjectRequest } from './writes.js';
import { serveScale } from './scale.js';
import { isApplyPatch, serveApply } from './apply.js';
import { useKey, type PermissionUse } from '../../core/permissions.js';

/** One request the fake server received, as {@link FakeApiServer.requests} reports it. */
export interface RequestRecord {
  /** HTTP method. */
  method: string;
  /** Path without the query. */
  path: string;
  /** Query parameters (the last value of each). */
  query: Record<string, string>;
  /** The verb, when the path addressed a resource. */
  verb?: FakeApiVerb;
  /** The plural resource name, when the path addressed a resource. */
  resource?: string;
  /** The API group (`''` = core), when the path addressed a resource. */
  group?: string;
  /** Namespace from the path. */
  namespace?: string;
  /** Object name from the path. */
  name?: string;
  /** The `Accept` header. */
  accept?: string;
  /** The `Content-Type` header. */
  contentType?: string;
  /** The `Authorization` header. */
  authorization?: string;
}

/** Everything the dispatcher needs from the server. */
export interface RouteContext {
  /** The shared object state. */
  state: ResourceState;
  /** Known resources. */
  registry: ResourceRegistry;
  /** Scripted faults. */
  faults: FaultQueue;
  /** Clock for watch timeouts and periodic bookmarks. */
  clock: Clock;
  /** "Now" for creationTimestamp. */
  now: () => Date;
  /** `resourceVersion=0` lists ignore `limit`. */
  watchCache: boolean;
  /** `shardSelector` is honoured (the `ShardedListAndWatch` gate is on). */
  sharding: boolean;
  /** `sendInitialEvents` is served (the `WatchList` gate is on); otherwise refused 422. */
  watchList: boolean;
  /** Periodic bookmark interval, if any. */
  bookmarkIntervalMs?: number;
  /** When set, requests must carry `Authorization: Bearer <token>` (one of these tokens). */
  requiredToken?: string | readonly string[];
  /** The request log (appended to). */
  log: RequestRecord[] | undefined;
  /** The uses recorded (see `FakeApiServer.usedPermissions`), by token and use, each once. */
  uses: UseLog;
  /** Open watches (the dispatcher adds; each removes itself on close). */
  watches: Set<WatchConnection>;
  /** Stalled responses (held open by a `stall` fault). */
  stalled: Set<ServerResponse>;
}

/** What each bearer token used: token → use key → use. */
export type UseLog = Map<string, Map<string, PermissionUse>>;

function recordUse(ctx: RouteContext, authorization: string | undefined, use: PermissionUse): void {
  const token = authorization?.startsWith('Bearer ') === true ? authorization.slice(7) : '';
  let uses = ctx.uses.get(token);
  if (uses === undefined) ctx.uses.set(token, (uses = new Map<string, PermissionUse>()));
  uses.set(useKey(use), use);
}

/** The request as kube-apiserver's authorizer sees it. */
function useOf(verb: FakeApiVerb, parsed: { group: string; resource: string; subresource?: string; namespace?: string; name?: string }): PermissionUse {
  const use: PermissionUse = { verb, group: parsed.group, resource: parsed.resource };
  if (parsed.subresource !== undefined) use.subresource = parsed.subresource;
  if (parsed.namespace !== undefined) use.namespace = parsed.namespace;
  if (parsed.name !== undefined) use.name = parsed.name;
  return use;
}

/**
 * The name a list or watch is authorized for, as kube-apiserver's RequestInfo sets it: a field selector
 * requiring `metadata.name` to equal a valid name (so `resourceNames` can grant a watch of one object).
 */
function selectedName(verb: FakeApiVerb, fieldSelector: string | null): string | undefined {
  if ((verb !== 'list' && verb !== 'watch') || fieldSelector === null) return undefined;
  for (const term of fieldSelector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*([^=!\s]+)\s*$/.exec(term);
    const name = m?.[1];
    if (name !== undefined && name !== '.' && name !== '..' && !/[/%]/.test(name)) return name; // IsPathSegmentName
  }
  return undefined;
}

function verbOf(method: string, hasName: boolean, watch: boolean): FakeApiVerb | undefined {
  switch (method) {
    case 'GET':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return hasName ? undefined : 'create';
    case 'PUT':
      return hasName ? 'update' : undefined;
    case 'PATCH':
      return hasName ? 'patch' : undefined;
    case 'DELETE':
      return hasName ? 'delete' : undefined;
    default:
      return undefined;
  }
}

function serveDiscovery(res: ServerResponse, ctx: RouteContext, path: string): boolean {
  const all = ctx.registry.all();
  const groupOf = (name: string): { name: string; versions: unknown[]; preferredVersion: unknown } => {
    const versions = [...new Set(all.filter((r) => r.group === name).map((r) => r.version))].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions, preferredVersion: versions[0] };
  };
  const resourcesOf = (group: string, version: string): unknown[] =>
    all
      .filter((r) => r.group === group && r.version === version)
      .map((r) => ({
        name: r.resource,
        singularName: r.kind.toLowerCase(),
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      }));
  if (path === '/version') {
    sendJson(res, 200, JSON.stringify({ major: '1', minor: '35', gitVersion: 'v1.35.0-fake', platform: 'linux/amd64' }));
  } else if (path === '/healthz' || path === '/readyz' || path === '/livez') {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 }).end('ok');
  } else if (path === '/api') {
    sendJson(res, 200, JSON.stringify({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] }));
  } else if (path === '/apis') {
    const groups = [...new Set(all.filter((r) => r.group !== '').map((r) => r.group))].map(groupOf);
    sendJson(res, 200, JSON.stringify({ kind: 'APIGroupList', apiVersion: 'v1', groups }));
  } else if (/^\/apis\/[^/]+\/?$/.test(path)) {
    const name = path.split('/')[2];
    if (!all.some((r) => r.group === name)) throw notFoundIn(name);
    sendJson(res, 200, JSON.stringify({ kind: 'APIGroup', apiVersion: 'v1', ...groupOf(name) }));
  } else {
    const m = /^\/(?:api\/(v[^/]+)|apis\/([^/]+)\/([^/]+))\/?$/.exec(path);
    if (m === null) return false;
    const group = m[1] !== undefined ? '' : m[2];
    const version = m[1] ?? m[3];
    // Like kube-apiserver, a group/version nothing is served at is 404 (permissive mode lists it empty).
    if (!ctx.registry.infersUnknown && !ctx.registry.servesGroupVersion(group, version)) throw notFoundIn(group);
    const groupVersion = group === '' ? version : `${group}/${version}`;
    sendJson(res, 200, JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: resourcesOf(group, version) }));
  }
  return true;
}

/** Handles one HTTP request. Never rejects: every failure becomes a Status answer (or a dropped socket). */
export async function handleRequest(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    await dispatch(ctx, req, res);
  } catch (err) {
    if (!res.headersSent) sendError(res, err);
    else res.destroy();
  }
}

async function dispatch(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake');
  const method = (req.method ?? 'GET').toUpperCase();
  const query = url.searchParams;
  const record: RequestRecord = {
    method,
    path: url.pathname,
    query: Object.fromEntries(query.entries()),
    accept: req.headers.accept,
    contentType: req.headers['content-type'],
    authorization: req.headers.authorization,
  };
  ctx.log?.push(record);
  if (ctx.requiredToken !== undefined && ![ctx.requiredToken].flat().some((t) => req.headers.authorization === `Bearer ${t}`)) {
    sendJson(res, 401, JSON.stringify(statusBody(401, 'Unauthorized')));
    return;
  }
  const legacyWatch = /^\/(?:api\/[^/]+|apis\/[^/]+\/[^/]+)\/watch\//.exec(url.pathname);
  if (legacyWatch !== null) throw notModelled(`the deprecated watch path ${legacyWatch[0]}… (use ?watch=true)`);
  const parsed = parsePath(url.pathname);
  if (parsed === undefined) {
    if (method === 'GET' && serveDiscovery(res, ctx, url.pathname)) return;
    const m = /^\/(?:(api)\/|apis\/([^/]+)\/)/.exec(url.pathname);
    throw m === null ? notFoundIn('-') : notFoundIn(m[1] !== undefined ? '' : m[2]);
  }
  const watch = query.get('watch') === 'true' || query.get('watch') === '1';
  const verb = verbOf(method, parsed.name !== undefined, watch);
  Object.assign(record, { verb, resource: parsed.resource, group: parsed.group, namespace: parsed.namespace, name: parsed.name });
  // Only what is served (built in, declared, from a CRD) is found: a GVR typo is 404, as on kube-apiserver.
  const ri: ResourceInfo = ctx.registry.lookup(parsed.group, parsed.version, parsed.resource);
  if (!ri.namespaced && parsed.namespace !== undefined) throw notFoundIn(ri.group); // a CRD's group falls through to the plain-text 404, as for any path it does not serve
  if (parsed.subresource !== undefined) checkSubresource(ri, parsed.subresource, parsed.name ?? '', method);
  if (method === 'DELETE' && parsed.name === undefined) throw notModelled(`deletecollection (DELETE ${url.pathname})`);
  if (verb === undefined) throw statusError(405, 'MethodNotAllowed', `${method} is not supported on ${url.pathname}`);
  const use = useOf(verb, { ...parsed, name: parsed.name ?? selectedName(verb, query.get('fieldSelector')) });
  recordUse(ctx, req.headers.authorization, use);
  checkAccept(req.headers.accept);
  checkBodyType(method, req.headers['content-type']);

  const fault = ctx.faults.take({ verb, resource: ri.resource, namespace: parsed.namespace, path: url.pathname });
  if (fault?.type === 'status') {
    const reason = fault.reason ?? REASONS[fault.code] ?? 'Unknown';
    const details = fault.retryAfterSeconds !== undefined ? { retryAfterSeconds: fault.retryAfterSeconds } : undefined;
    const headers: Record<string, string> =
      fault.retryAfterSeconds !== undefined ? { 'Retry-After': String(fault.retryAfterSeconds) } : {};
    const body = statusBody(fault.code, fault.message ?? `injected fault: ${reason}`, reason, details);
    sendJson(res, fault.code, JSON.stringify(body), headers);
    return;
  }
  if (fault?.type === 'stall') {
    ctx.stalled.add(res);
    res.on('close', () => ctx.stalled.delete(res));
    if (fault.sendHeaders) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
    }
    return;
  }

  const metadataOnly = wantsPartialMetadata(req.headers.accept);
  if (verb === 'list' || verb === 'watch') {
    const cr: CollectionRequest = { ri, namespace: parsed.namespace, name: parsed.name, query, metadataOnly, sharding: ctx.sharding, cr: ctx.registry.customResource(ri) };
    if (verb === 'list') {
      await serveList(res, ctx.state, cr, { watchCache: ctx.watchCache });
      return;
    }
    const { plan, startRv } = planWatch(ctx.state, cr, ctx.watchList);
    const timeout = Number.parseInt(query.get('timeoutSeconds') ?? '', 10);
    const conn = new WatchConnection(res, {
      ri,
      state: ctx.state,
      clock: ctx.clock,
      matcher: requestMatcher(cr),
      namespace: parsed.namespace,
      metadataOnly,
      allowBookmarks: query.get('allowWatchBookmarks') === 'true',
      timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout * 1000 : undefined,
      bookmarkIntervalMs: ctx.bookmarkIntervalMs,
      steps: fault !== undefined ? streamSteps(fault) : [],
      startRv,
      onClose: (c) => ctx.watches.delete(c),
    });
    ctx.watches.add(conn);
    conn.start(plan);
    return;
  }

  const body = method === 'GET' ? '' : await readBody(req);
  const r: ObjectRequest = {
    ri,
    namespace: parsed.namespace ?? '',
    name: parsed.name,
    subresource: parsed.subresource,
    body,
    contentType: req.headers['content-type'] ?? 'application/json',
    metadataOnly,
    now: ctx.now,
    dryRun: query.get('dryRun') === 'All',
    fieldManager: query.get('fieldManager') ?? undefined,
    force: query.get('force') === 'true',
    cr: ctx.registry.customResource(ri),
  };
  if (query.has('dryRun') && query.get('dryRun') !== 'All') {
    throw statusError(400, 'BadRequest', `dryRun: Unsupported value: ${JSON.stringify(query.get('dryRun'))}: supported values: "All"`);
  }
  if (parsed.subresource === 'scale') return serveScale(res, ctx.state, r, verb);
  if (verb === 'delete') checkDeleteOptions(query, body);
  switch (verb) {
    case 'get':
      return serveGet(res, ctx.state, r);
    case 'create':
      return serveCreate(res, ctx.state, r);
    case 'update':
      return serveUpdate(res, ctx.state, r);
    case 'patch':
      if (isApplyPatch(r.contentType)) {
        serveApply(res, ctx.state, r);
        // An apply that created the object was authorized as a create too (kube-apiserver's patch handler).
        if (res.statusCode === 201) recordUse(ctx, req.headers.authorization, { ...use, verb: 'create' });
        return;
      }
      return servePatch(res, ctx.state, r);
    case 'delete':
      return serveDelete(res, ctx.state, r);
  }
}

/**
 * A subresource the request addresses: `status` where the resource has one, `scale` of the built-in
 * workloads (served); one kube-apiserver serves that the fake does not model (a pod's `log`, a CRD's
 * `scale`, ...) is 501; any other is 404 as kube-apiserver answers it (a custom resource names the
 * object). A DELETE of `/status` is 405.
 */
function checkSubresource(ri: ResourceInfo, subresource: string, name: string, method: string): void {
  const modelled = (subresource === 'status' && ri.statusSubresource) || (subresource === 'scale' && isBuiltInResource(ri) && ri.subresources.includes('scale'));
  if (modelled) {
    if (method === 'DELETE' || method === 'POST') throw statusError(405, 'MethodNotAllowed', `${method} is not supported on the ${subresource} subresource`);
    return;
  }
  if (ri.subresources.includes(subresource)) throw notModelled(`the ${ri.resource}/${subresource} subresource`);
  if (isBuiltInResource(ri)) throw notServedError();
  throw statusError(404, 'NotFound', `${ri.stateKey} "${name}" not found`, ri.stateKey, name);
}
