// The fake Kubernetes API server: a loopback HTTP server over a ResourceState, with faults and a request log.

import { InvalidOptionError, validateOptions } from '../../core/options.js';
import type { PermissionUse } from '../../core/permissions.js';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { realClock, type Clock } from '../../core/clock.js';
import type { KubeObject } from '../../core/types.js';
import { ResourceState, type StoredEntry } from '../resource-state.js';
import { FaultQueue, type FaultSpec } from './faults.js';
import { deleteOrMark } from './finalizers.js';
import { normalizeObject, type ResourceDefinition, type ResourceInfo, type ResourceRef } from './paths.js';
import { withGeneration } from './generation.js';
import { CRD_STATE_KEY, ResourceRegistry } from './registry.js';
import { establish } from './crd-status.js';
import { handleRequest, type RequestRecord, type RouteContext } from './routes.js';
import type { WatchConnection } from './watch.js';
import { admitCustomResource } from './custom-resources.js';
import { followCustomResourceDefinitions } from './crd-lifecycle.js';
import { resolveLogger, type Logger, type LoggerOption } from '../../core/log.js';

/** Options of {@link startFakeApiServer}. */
export interface FakeApiServerOptions {
  /** Clock for watch `timeoutSeconds` and periodic bookmarks. Default `realClock`. */
  clock?: Clock;
  /** Send a BOOKMARK this often to watches that allow bookmarks. Default: never (use {@link FakeApiServer.bookmark}). */
  bookmarkIntervalMs?: number;
  /** Changes remembered per resource for watch replay and Exact/continued lists. Default 10 000. */
  historyLimit?: number;
  /** The bearer token in {@link FakeApiServer.kubeConfig}. Default `'fake-token'`. */
  token?: string;
  /** Reject requests without `Authorization: Bearer <token>` (401). Default false. */
  requireToken?: boolean;
  /** Serve `resourceVersion=0` lists from a "watch cache" that ignores `limit`, like kube-apiserver. Default true. */
  watchCache?: boolean;
  /**
   * Honour `shardSelector` on lists and watches and echo it in `metadata.shardInfo`, like kube-apiserver
   * 1.36+ with the `ShardedListAndWatch` feature gate on. `false` ignores the parameter, like a server
   * with the gate off (the default on a real server), so a client's fallback can be tested. Default true.
   */
  shardedListAndWatch?: boolean;
  /**
   * Serve streaming lists (a watch with `sendInitialEvents=true`: the current state as ADDED events,
   * then the initial-events-end bookmark), like kube-apiserver 1.34+ with its `WatchList` feature gate
   * on. `false` answers such a watch 422 Invalid ("sendInitialEvents is forbidden for watch unless the
   * WatchList feature gate is enabled"), as kube-apiserver v1.37.2 does with the gate off, so a
   * client's fallback to paged lists can be tested. Default true.
   */
  watchList?: boolean;
  /**
   * Permissive mode: serve a resource that is neither built in, declared, nor defined by a stored
   * CustomResourceDefinition by inferring it (kind from the plural — `widgets` → `Widget` — and
   * namespaced) instead of answering 404 NotFound as kube-apiserver does. Default false: a GVR typo
   * (`apps/v1 pods`, `v2 pods`, `Pod`) fails your test instead of syncing an empty list.
   */
  inferUnknownResources?: boolean;
  /**
   * Answer 404 for resources that are neither built in, declared nor from a CRD. Default true.
   *
   * @deprecated Use {@link FakeApiServerOptions.inferUnknownResources}: `strictResources: false` is
   * `inferUnknownResources: true`. Ignored when `inferUnknownResources` is set.
   */
  strictResources?: boolean;
  /**
   * Resources to declare up front (see {@link FakeApiServer.resource}), e.g. your CRD's
   * `{ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' }`. Default: none
   * beyond the built-in kinds.
   */
  resources?: ResourceDefinition[];
  /** "Now" for `metadata.creationTimestamp`. Default `() => new Date()`. */
  now?: () => Date;
  /** Keep a log of requests for {@link FakeApiServer.requests}. Default true. */
  recordRequests?: boolean;
  /** The port to listen on. Default 0 (a random free port). */
  port?: number;
  /**
   * Where the server reports what a test should know about: the warning that a deleted
   * CustomResourceDefinition took its objects with it, and the one that a CRD's CEL rules
   * (`x-kubernetes-validations`) are not evaluated. Default `console`; `false` for silence.
   */
  logger?: LoggerOption;
}

const SERVER_WRITE_OPTION_SCHEMA = { broadcast: 'boolean', expectResourceVersion: 'string' } as const;

/** Options of a state operation of {@link FakeApiServer}. */
export interface ServerWriteOptions {
  /** Send the change to open watches. Default true; false = a missed event, seen only on relist or replay. */
  broadcast?: boolean;
  /** Precondition: fail with 409 Conflict unless the stored resourceVersion is this. Default: none. */
  expectResourceVersion?: string;
}

/**
 * A loopback Kubernetes API server for tests (see {@link startFakeApiServer}). Speaks list, watch,
 * get, create, update, patch and delete over real HTTP for the resources it serves — the built-in
 * kinds, declared ones ({@link FakeApiServer.resource}, the `resources` option) and those of stored
 * CustomResourceDefinitions; any other resource is 404 NotFound, as on kube-apiserver. Its state is
 * changed by tests directly (`create`/`update`/`delete`) or by clients through HTTP — both send
 * watch events.
 */
export class FakeApiServer {
  /** The state behind the server (shared by every resource; one global resourceVersion). */
  readonly state: ResourceState;
  #server: Server;
  #port = 0;
  #ctx: RouteContext;
  #registry: ResourceRegistry;
  #faults = new FaultQueue();
  #sockets = new Set<Socket>();
  #watches = new Set<WatchConnection>();
  #stalled = new Set<ServerResponse>();
  #options: FakeApiServerOptions;
  #kubeConfig: KubeConfig | undefined;
  #closed = false;
  #logger: Logger;
  #unfollowCrds: (() => void) | undefined;

  /** Use {@link startFakeApiServer}, which also starts listening. */
  constructor(options: FakeApiServerOptions = {}) {
    validateOptions('FakeApiServer', options, {
      clock: 'clock',
      bookmarkIntervalMs: 'duration',
      historyLimit: 'count',
      token: 'string',
      requireToken: 'boolean',
      watchCache: 'boolean',
      shardedListAndWatch: 'boolean',
      watchList: 'boolean',
      inferUnknownResources: 'boolean',
      strictResources: 'boolean',
      resources: 'any',
      now: 'function',
      recordRequests: 'boolean',
      port: 'count',
      logger: 'logger',
    });
    this.#options = options;
    this.#logger = resolveLogger(options.logger);
    this.state = new ResourceState({ historyLimit: options.historyLimit, initialResourceVersion: 1 });
    this.#registry = new ResourceRegistry({
      inferUnknown: options.inferUnknownResources ?? (options.strictResources === undefined ? false : !options.strictResources),
      customResourceDefinitions: () => (this.state.size(CRD_STATE_KEY) === 0 ? [] : this.state.entries(CRD_STATE_KEY)),
    });
    for (const def of options.resources ?? []) this.#registry.define(def);
    this.#ctx = {
      state: this.state,
      registry: this.#registry,
      faults: this.#faults,
      clock: options.clock ?? realClock,
      now: options.now ?? (() => new Date()),
      watchCache: options.watchCache ?? true,
      sharding: options.shardedListAndWatch ?? true,
      watchList: options.watchList ?? true,
      bookmarkIntervalMs: options.bookmarkIntervalMs,
      requiredToken: options.requireToken ? (options.token ?? 'fake-token') : undefined,
      log: options.recordRequests === false ? undefined : [],
      uses: new Map(),
      watches: this.#watches,
      stalled: this.#stalled,
    };
    this.#server = createServer((req, res) => void handleRequest(this.#ctx, req, res));
    // Long keep-alive, as kube-apiserver: a slow (loaded) client must not race the server closing an idle socket.
    this.#server.keepAliveTimeout = 120_000;
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Starts listening on 127.0.0.1 (the port from the options, or a random one). */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port || this.#options.port || 0, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const addr = this.#server.address();
    if (addr !== null && typeof addr === 'object') this.#port = addr.port;
    this.#closed = false;
    this.#unfollowCrds ??= followCustomResourceDefinitions({ state: this.state, registry: this.#registry, watches: this.#watches, logger: this.#logger });
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** The port the server listens on (kept across {@link restart}). */
  get port(): number {
    return this.#port;
  }

  /** A `@kubernetes/client-node` KubeConfig for this server (bearer-token auth, context `fake`). */
  get kubeConfig(): KubeConfig {
    if (this.#kubeConfig === undefined) {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
        users: [{ name: 'fake', token: this.#options.token ?? 'fake-token' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
        currentContext: 'fake',
      });
      this.#kubeConfig = kc;
    }
    return this.#kubeConfig;
  }

  /**
   * Declares a resource (group, version, plural, kind, namespaced) so it is served from now on, at
   * exactly that group and version. Redeclaring a resource (a built-in one too) replaces its kind and scope.
   */
  resource(def: ResourceDefinition): ResourceInfo {
    return this.#registry.define(def);
  }

  /**
   * Creates an object (namespace defaults to `default` for namespaced kinds). Returns it as stored:
   * your object (shallow copy) with the server's metadata (uid, resourceVersion, creationTimestamp).
   * A state operation is the test's own door into the state: it stores `status` as given, even for a
   * resource with a status subresource (HTTP writes follow kube-apiserver's rules). A
   * CustomResourceDefinition created without a `status` is then made `Established` (returned so).
   *
   * A custom resource whose CRD version has a schema is pruned, defaulted and validated as over HTTP
   * (throws kube-apiserver's 422 `ApiStatusError`, reason `Invalid`, with its causes).
   *
   * Warning: every state operation throws a 404 `ApiStatusError` naming the resource when `ref` is not
   * served (not built in, declared, or from a CRD), unless `inferUnknownResources`.
   */
  create<T extends KubeObject = KubeObject>(ref: ResourceRef, obj: T, options: ServerWriteOptions = {}): T {
    validateOptions('FakeApiServer.create', options, SERVER_WRITE_OPTION_SCHEMA);
    const ri = this.#registry.resolve(ref);
    const schemaChecked = admitCustomResource(this.#registry.customResource(ri), normalizeObject(ri, stripRv(obj), 'default', this.#ctx.now), undefined);
    const normalized = withGeneration(ri, undefined, schemaChecked);
    const entry = this.state.create(ri.stateKey, normalized, options);
    // A CRD given without a status becomes Established at once, as kube-apiserver makes it (a MODIFIED event follows the ADDED).
    if (ri.stateKey === CRD_STATE_KEY && (obj as { status?: unknown }).status === undefined) {
      return parse<T>(establish(this.state, ri.stateKey, entry, this.#ctx.now));
    }
    return stored<T>(normalized, entry);
  }

  /**
   * Replaces an object, keeping its uid and creationTimestamp. Unconditional unless
   * `expectResourceVersion` is given. Throws a 404 `ApiStatusError` when it does not exist.
   */
  update<T extends KubeObject = KubeObject>(ref: ResourceRef, obj: T, options: ServerWriteOptions = {}): T {
    validateOptions('FakeApiServer.update', options, SERVER_WRITE_OPTION_SCHEMA);
    const ri = this.#registry.resolve(ref);
    let normalized = normalizeObject(ri, stripRv(obj), 'default', this.#ctx.now);
    const prev = this.state.get(ri.stateKey, normalized.metadata?.namespace ?? '', normalized.metadata?.name ?? '');
    if (prev !== undefined) {
      normalized.metadata = { ...normalized.metadata, uid: prev.meta.uid, creationTimestamp: prev.meta.creationTimestamp };
    }
    const before = prev === undefined ? undefined : (JSON.parse(prev.json) as KubeObject);
    normalized = withGeneration(ri, before, admitCustomResource(this.#registry.customResource(ri), normalized, before));
    return stored<T>(normalized, this.state.update(ri.stateKey, normalized, options));
  }

  /**
   * Deletes an object; returns its final state. An object with finalizers is only marked
   * (`deletionTimestamp`, as kube-apiserver) and returned as it now is. Throws a 404 `ApiStatusError`
   * when it does not exist.
   */
  delete<T extends KubeObject = KubeObject>(ref: ResourceRef, name: string, namespace?: string, options: ServerWriteOptions = {}): T {
    validateOptions('FakeApiServer.delete', options, SERVER_WRITE_OPTION_SCHEMA);
    const ri = this.#registry.resolve(ref);
    return parse<T>(deleteOrMark(this.state, ri.stateKey, ri.namespaced ? (namespace ?? 'default') : '', name, this.#ctx.now, options));
  }

  /** A copy of one object, or undefined. */
  get<T extends KubeObject = KubeObject>(ref: ResourceRef, name: string, namespace?: string): T | undefined {
    const ri = this.#registry.resolve(ref);
    const e = this.state.get(ri.stateKey, ri.namespaced ? (namespace ?? 'default') : '', name);
    return e === undefined ? undefined : parse<T>(e);
  }

  /** Copies of every object of a resource (in `namespace` when given), in key order. */
  list<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace?: string): T[] {
    const ri = this.#registry.resolve(ref);
    return this.state.entries(ri.stateKey, namespace).map((e) => parse<T>(e));
  }

  /** The current (global) resourceVersion. */
  resourceVersion(): string {
    return String(this.state.currentResourceVersion());
  }

  /** Forgets history up to `resourceVersion` (default: now): older watches, Exact lists and continues get 410. */
  compact(resourceVersion?: string): void {
    this.state.compact(resourceVersion === undefined ? undefined : Number(resourceVersion));
  }

  /** Sends a BOOKMARK at the current resourceVersion to every open watch that allowed bookmarks. */
  bookmark(): void {
    for (const w of [...this.#watches]) w.bookmark();
  }

  /** Ends every open watch cleanly (as a server-side timeout would). */
  endWatches(): void {
    for (const w of [...this.#watches]) w.end();
  }

  /** How many watches are open. */
  openWatches(): number {
    return this.#watches.size;
  }

  /** Scripts a fault; the first request it matches consumes it. See {@link FaultSpec}. */
  injectFault(fault: FaultSpec): void {
    this.#faults.add(fault);
  }

  /** Faults scripted and not consumed yet. */
  pendingFaults(): FaultSpec[] {
    return this.#faults.pending();
  }

  /** Throws a `KubeInformerError` with code `PENDING_FAULTS` when a scripted fault was never consumed. */
  assertNoPendingFaults(): void {
    this.#faults.assertNone();
  }

  /**
   * From now on accept only these bearer tokens (a token rotation: both the old and the new one while
   * the old is still bound, then the new one alone, as kube-apiserver once the old token's binding
   * object is deleted); a request with another token is answered 401 Unauthorized. Turns the check on
   * as `requireToken` does. Open watches are not cut. Call it with no token to accept any request again.
   */
  acceptTokens(...tokens: string[]): void {
    this.#ctx.requiredToken = tokens.length === 0 ? undefined : tokens;
  }

  /** Every request received so far (oldest first). */
  requests(): RequestRecord[] {
    return (this.#ctx.log ?? []).map((r) => ({ ...r, query: { ...r.query } }));
  }

  /**
   * What the requests served so far needed, as kube-apiserver's RBAC authorizer names it — one
   * {@link PermissionUse} per distinct verb, group, resource, subresource, namespace and name (a
   * server-side apply that created its object counts as `patch` and `create`) — in a stable order.
   * Recorded whatever the answer (an authorizer decides before the handler runs), and kept even when
   * `recordRequests` is false. With `token`, only the requests that carried `Authorization: Bearer
   * <token>`: give the code under test a KubeConfig with a token of its own (`kubeConfigFor(token)`)
   * to tell its requests from the test's. Cross-check them with `uncoveredUses(used, permissions)`.
   */
  usedPermissions(options: { token?: string } = {}): PermissionUse[] {
    validateOptions('FakeApiServer.usedPermissions', options, { token: 'string' });
    const tokens = options.token === undefined ? [...this.#ctx.uses.keys()] : [options.token];
    const all = new Map<string, PermissionUse>();
    for (const t of tokens) for (const [k, u] of this.#ctx.uses.get(t) ?? []) all.set(k, { ...u });
    return [...all.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, u]) => u);
  }

  /**
   * A KubeConfig for this server whose user sends `token` (see {@link FakeApiServer.usedPermissions}).
   * With `requireToken`, the server still accepts only its own token.
   */
  kubeConfigFor(token: string): KubeConfig {
    if (typeof token !== 'string' || token === '') throw new InvalidOptionError(`FakeApiServer.kubeConfigFor: token must be a non-empty string, got ${JSON.stringify(token)}`);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'fake', token }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** Empties the request log and the recorded uses ({@link FakeApiServer.usedPermissions}). */
  clearRequests(): void {
    if (this.#ctx.log !== undefined) this.#ctx.log.length = 0;
    this.#ctx.uses.clear();
  }

  /** Drops every connection (watches end abruptly) and listens again on the same port; state is kept. */
  async restart(): Promise<void> {
    await this.#shutdown();
    await this.listen();
  }

  /** Destroys every socket, clears every timer and stops listening; resolves once all of that is done. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#shutdown();
  }

  async #shutdown(): Promise<void> {
    this.#closed = true;
    this.#unfollowCrds?.();
    this.#unfollowCrds = undefined;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const w of [...this.#watches]) w.destroy();
    for (const r of [...this.#stalled]) r.destroy();
    const sockets = [...this.#sockets];
    for (const s of sockets) s.destroy();
    await Promise.all(sockets.filter((s) => !s.closed).map((s) => new Promise((r) => s.once('close', r))));
    await closed;
    // net.Server emits 'close' before libuv has released its handle; two turns let that finish.
    for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function stripRv<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.resourceVersion === undefined) return obj;
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

/** What create/update return: the caller's object with the stored metadata (cheaper than parsing the stored JSON). */
function stored<T>(normalized: KubeObject, entry: StoredEntry): T {
  return { ...normalized, metadata: structuredClone(entry.meta) } as T;
}

function parse<T>(entry: StoredEntry): T {
  return JSON.parse(entry.json) as T;
}

/**
 * Starts a {@link FakeApiServer} on 127.0.0.1 at a random port. Close it with `await server.close()`.
 *
 * Warning: state ops (`create`/`update`/`delete`) are synchronous and send watch events at once;
 * HTTP clients see them after the next I/O turn.
 */
export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const server = new FakeApiServer(options);
  await server.listen();
  return server;
}
