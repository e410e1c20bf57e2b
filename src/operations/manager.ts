// The manager: one call that starts the informers, waits for them, runs the controllers (under leader election if asked), serves probes, and stops it all in order.

import { realClock, type Clock } from '../core/clock.js';
import { resources } from '../core/resources.js';
import { AlreadyStartedError } from '../core/errors.js';
import { errorFields, resolveLogger, withFields, type Logger, type LoggerOption } from '../core/log.js';
import { describeValue, InvalidOptionError, validateOptions } from '../core/options.js';
import { RUN_WHILE_LEADING_OPTION_SCHEMA, runWhileLeading, type RunWhileLeadingOptions } from '../controller/leader.js';
import { ensureCustomResourceDefinitions, type CrdSource, type CustomResourceDefinitionClient, type EnsureCustomResourceDefinitionsOptions } from '../crd/ensure.js';
import { newResourceClient } from '../listwatch/index.js';
import type { SharedInformerFactory } from '../informer/factory.js';
import { RunGroup, type Runnable } from '../runtime/run-group.js';
import { syncingSet, waitForCaches } from './cache-sync.js';
import { followCustomResources } from './follow-crds.js';
import type { Permission } from '../core/permissions.js';
import { managerPermissionReport, type PermissionReport } from './permissions.js';
import { startProbeServer, type HasReadiness, type MetricsRegistryLike, type ProbeServer, type ProbeServerOptions } from './probes.js';
import { handTracerProvider, tracerOf, type TracerProviderLike } from '../observability/index.js';

/** How a {@link Manager} installs its `crds` (see `ensureCustomResourceDefinitions`). */
export interface ManagerCrdInstallOptions extends Pick<EnsureCustomResourceDefinitionsOptions, 'fieldManager' | 'force' | 'timeoutMs' | 'pollIntervalMs'> {
  /**
   * The client that applies and reads the CRDs. Default: `newResourceClient` on the factory's
   * kubeConfig (closed after the install; needs RBAC to get and patch `customresourcedefinitions`,
   * cluster-wide).
   */
  client?: CustomResourceDefinitionClient;
}

/** Options of a {@link Manager}. */
export interface ManagerOptions {
  /**
   * Custom resource definitions (definitions from `defineCustomResource`, or CRD objects) to install
   * at start, by server-side apply, before any informer starts: `run` waits until each is
   * `Established`, and rejects at once with the error (a `CustomResourceDefinitionError` naming the
   * server's field errors, a 403 for missing RBAC) when the server refuses one or it does not become
   * Established within `crdInstall.timeoutMs`. Default: none (install them with `kubectl apply`, Helm
   * or `ensureCustomResourceDefinitions`; the manager then waits for their caches as for any other).
   */
  crds?: readonly CrdSource[];
  /** How `crds` are installed: client, field manager, force, timeouts. Default: see {@link ManagerCrdInstallOptions} (force, field manager `'kube-informer'`, 60 s per CRD). */
  crdInstall?: ManagerCrdInstallOptions;
  /** What reconciles: controllers (or any {@link Runnable}) — run only while leading when `leaderElection` is set. Default: none. */
  controllers?: readonly Runnable[];
  /**
   * What runs in every replica, leading or not, once the caches synced (an `EventRecorder`, a drift
   * audit). They stop after the controllers drained, so a draining reconcile's last Event is written. Default: none.
   */
  runnables?: readonly Runnable[];
  /**
   * A webhook server (`WebhookServer` of kube-informer/webhook) run in every replica, leading or not: it
   * starts first and the informers start once it serves (a conversion webhook must answer before a cache
   * lists its resource); `/readyz` is not ready until it serves; it stops last, after the informers,
   * finishing its in-flight reviews; its failure (port taken, certificate unreadable) stops the manager
   * and rejects `run`. Default: none.
   */
  webhookServer?: ManagedWebhookServer;
  /**
   * Run `controllers` only while this process holds the lock (see `runWhileLeading`). Unlike the
   * elector's own default, `releaseOnCancel` defaults to `true` here: the stop releases the Lease once
   * the reconciles drained, so a waiting replica takes over at its next try (within `retryPeriodMs`,
   * 2 s by default, plus jitter) instead of a lease duration later. Default: no election, they always run.
   */
  leaderElection?: RunWhileLeadingOptions;
  /**
   * Serve `/livez` (and `/healthz`), `/readyz` and `/metrics` on a probe server of the manager's own
   * (port, host — loopback unless you set `host`: in a pod, `'0.0.0.0'` or the pod IP) for as long as it
   * runs — from before the caches sync (live, not ready) to after everything stopped. Default: no probe
   * server (mount `probeHandler` in yours instead).
   */
  probes?: Pick<ProbeServerOptions, 'port' | 'host'>;
  /** The registry served at `/metrics`. Default: none (404). */
  metrics?: MetricsRegistryLike;
  /** Shard rings reported by `/readyz` (see `ProbeOptions.rings`). Default: none. */
  rings?: ProbeServerOptions['rings'];
  /**
   * How long the manager keeps waiting for caches that cannot sync yet — an informer whose sync waits
   * reject: a custom resource whose CRD is not installed yet (404), missing RBAC (403), a server not
   * reachable — counted from the start of the wait, in ms. Meanwhile the informers keep retrying,
   * `/readyz` answers 503, and a warning every `cacheSyncWarningIntervalMs` names every informer not
   * synced with its reason; a cache that syncs in time (the CRD installed, the RBAC fixed) is used as
   * usual. Past it, `run` rejects with a `CacheSyncError` (code `CACHE_SYNC_FAILED`) naming every
   * informer that cannot sync, each with its reason. `0` gives up as soon as one cannot sync;
   * `Infinity` waits until the signal aborts. A slow but progressing sync never makes it give up.
   * Default `120_000` (controller-runtime's `CacheSyncTimeout`): a change fixed within two minutes is
   * picked up, and one that is not ends the process, so a pod restarts loudly (CrashLoopBackOff).
   */
  cacheSyncTimeoutMs?: number;
  /** How often, in ms, a warning names the informers not synced yet while the manager waits for them. Default `30_000`. */
  cacheSyncWarningIntervalMs?: number;
  /**
   * How long the whole stop may take, in ms, from the moment `run`'s signal aborted: the reconciles
   * drain, the Lease is released, the runnables, the informers and the webhook server stop, in that
   * order, within it; whatever still runs then is abandoned (named in a warning) and `run` resolves.
   * Keep it below the pod's `terminationGracePeriodSeconds` (30 s by default), after which the kubelet
   * sends SIGKILL. `Infinity` waits for everything. Default `30_000` (controller-runtime's
   * `GracefulShutdownTimeout`).
   */
  gracefulShutdownTimeoutMs?: number;
  /**
   * Follow the custom resources the factory caches (every informer whose resource is not built in):
   * their informers get `onResourceMissing: 'absent'`, so a deleted CRD (a 404 on list) makes its
   * informer `absent` — its objects delivered to the controllers as deletes, the watch stopped, one
   * warning logged — instead of unready: `/readyz` stays 200 with a detail line naming the resource, and
   * the manager keeps running. The manager watches each followed CRD by name (`list`/`watch` of
   * `customresourcedefinitions` with `resourceNames`, in `permissions()`) and, once it is Established
   * again, the informer lists at once (its backoff re-check is the fallback): the list's objects arrive
   * as adds, so the controllers reconcile every object again. Informers created or started after the
   * manager's `run` began keep their own `onResourceMissing`.
   *
   * Warning: a misspelt resource answers 404 too. Under this option it does not stop the process: it is
   * absent from the start, named in a warning at start and in `/readyz`'s detail ("not once since it
   * started") — read them. Default `false`: a deleted CRD makes its informer unready until it returns.
   */
  followCustomResources?: boolean;
  /**
   * Trace with OpenTelemetry (docs/tracing.md): handed to every controller of `controllers` and to the
   * `webhookServer` that has no `tracerProvider` of its own (theirs wins). `@opentelemetry/api` (an
   * optional peer dependency) is loaded only when this is given; a provider whose `getTracer` throws is
   * refused at construction (`INVALID_OPTION`). Default: none (nothing is traced unless a controller or
   * the webhook server has its own).
   */
  tracerProvider?: TracerProviderLike;
  /** The clock of the cache wait's timers and warnings. Default `realClock`. */
  clock?: Clock;
  /** Where the manager logs its steps; `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
}

/** A webhook server as the {@link Manager} runs it: a `WebhookServer` of kube-informer/webhook. */
export interface ManagedWebhookServer extends HasReadiness {
  /** Serves until `signal` aborts, then stops gracefully; rejects when it cannot serve. */
  run(signal: AbortSignal): Promise<void>;
  /** Resolves true once it serves, false when `run` ended first or `signal` aborted. */
  whenReady(signal: AbortSignal): Promise<boolean>;
}

/** How often an informer that cannot sync yet is asked again while the manager waits for it, in ms. */
const CACHE_SYNC_POLL_MS = 1_000;

/** Where a {@link Manager} is in its run. */
export type ManagerPhase = 'new' | 'syncing' | 'running' | 'stopping' | 'stopped';

/**
 * Runs a controller process the way controller-runtime's manager does, in one call. `run(signal)`:
 *
 * 1. starts the probe server when `probes` is set (live, not ready yet), then the `webhookServer` if
 *    given, and waits until it serves; installs the `crds`, if any, by server-side apply and waits until
 *    each is `Established` (a refusal rejects `run` at once);
 * 2. starts every informer of the factory and waits for them to sync; an informer that cannot sync
 *    yet (a CRD not installed, missing permissions, an unreachable server) is waited for up to
 *    `cacheSyncTimeoutMs`, with a warning every `cacheSyncWarningIntervalMs` and `/readyz` 503 —
 *    never a silent wait (incident 5) — then `run` rejects naming every informer that cannot sync;
 * 3. runs the `runnables`, and the `controllers` (under leader election when `leaderElection` is set);
 * 4. when `signal` aborts (`shutdownSignal()`: SIGTERM), stops in order, within
 *    `gracefulShutdownTimeoutMs` (30 s): `/readyz` answers 503 at once; no new reconcile starts and the
 *    running ones drain; the leader-election Lease is released (unless `leaderElection.releaseOnCancel`
 *    is `false`), so another replica leads at once; the runnables end; the informers stop; the webhook
 *    server stops (in-flight reviews finish, no new one is accepted; out of a cluster its configurations
 *    are removed per `onStop`); the probe server closes (incident 4: everything is released, in order,
 *    and `run` resolves only after).
 *
 * It rejects — after the same ordered stop — when something it cannot recover from happens: a CRD
 * of `crds` the server refuses or that is not `Established` in time (a `CustomResourceDefinitionError`), caches
 * that still cannot sync after `cacheSyncTimeoutMs` (a `CacheSyncError`), an informer that fails (a
 * handler threw: incident 1), a controller or runnable that rejects (the first failure; the rest are
 * logged). A reconcile that fails is not such a thing: the controller retries it. Everything it runs
 * is one `RunGroup` in four stages (webhooks, informers, runnables, controllers), stopped in reverse order.
 *
 * Recovery: a manager runs once; after it stopped, build a new factory and manager (or let the pod restart).
 *
 * Warning: with `cacheSyncTimeoutMs: Infinity`, a cache that can never sync (a selector the server
 * rejects) keeps the process waiting, not ready, for good: watch the warnings and `/readyz`.
 *
 * @example
 * ```ts
 * const manager = new Manager(factory, { controllers: [controller], leaderElection: { lock }, probes: { port: 8081 }, metrics: promClient.register });
 * await manager.run(abortOnSigterm);
 * ```
 */
export class Manager {
  readonly #factory: SharedInformerFactory;
  readonly #options: ManagerOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #syncTimeoutMs: number;
  readonly #graceMs: number;
  #phase: ManagerPhase = 'new';
  #leading = false;
  #probeServer: ProbeServer | undefined;

  /** A manager of `factory`'s informers and the given controllers. Throws `INVALID_OPTION` for a bad option. */
  constructor(factory: SharedInformerFactory, options: ManagerOptions = {}) {
    validateOptions('Manager', options, {
      crds: 'any', // checked below
      crdInstall: { client: 'object', fieldManager: 'string', force: 'boolean', timeoutMs: 'positiveDuration', pollIntervalMs: 'positiveDuration' },
      controllers: 'any', // checked below
      runnables: 'any',
      leaderElection: RUN_WHILE_LEADING_OPTION_SCHEMA,
      probes: { port: 'count', host: 'string' },
      metrics: 'object',
      rings: 'any',
      webhookServer: 'any', // checked below
      cacheSyncTimeoutMs: 'any', // checked below (Infinity is allowed)
      cacheSyncWarningIntervalMs: 'positiveDuration',
      gracefulShutdownTimeoutMs: 'any', // checked below (Infinity is allowed)
      followCustomResources: 'boolean',
      tracerProvider: 'object',
      clock: 'clock',
      logger: 'logger',
    });
    const timeout: unknown = options.cacheSyncTimeoutMs ?? 120_000;
    if (typeof timeout !== 'number' || !(timeout >= 0)) {
      throw new InvalidOptionError(`Manager: option cacheSyncTimeoutMs must be a number of milliseconds >= 0 (Infinity waits for good), got ${describeValue(timeout)}`);
    }
    this.#syncTimeoutMs = timeout;
    const grace: unknown = options.gracefulShutdownTimeoutMs ?? 30_000;
    if (typeof grace !== 'number' || !(grace >= 0)) {
      throw new InvalidOptionError(`Manager: option gracefulShutdownTimeoutMs must be a number of milliseconds >= 0 (Infinity waits for everything), got ${describeValue(grace)}`);
    }
    this.#graceMs = grace;
    for (const option of ['controllers', 'runnables'] as const) {
      const list: unknown = options[option] ?? [];
      const ok = Array.isArray(list) && list.every((r: unknown) => typeof (r as Runnable | null)?.run === 'function' && typeof (r as Runnable).name === 'string');
      if (!ok) throw new InvalidOptionError(`Manager: option ${option} must be an array of controllers or runnables (each with a name and run(signal)), got ${describeValue(list)}`);
    }
    const webhookServer = options.webhookServer as Partial<ManagedWebhookServer> | undefined;
    if (webhookServer !== undefined && !['run', 'ready', 'whenReady'].every((m) => typeof webhookServer?.[m as keyof ManagedWebhookServer] === 'function')) {
      throw new InvalidOptionError(`Manager: option webhookServer must be a WebhookServer (run, ready, whenReady), got ${describeValue(webhookServer)}`);
    }
    checkCrds(factory, options);
    const tracerProvider = options.tracerProvider;
    if (tracerProvider !== undefined) {
      tracerOf('Manager', tracerProvider);
      for (const target of [...(options.controllers ?? []), ...(webhookServer === undefined ? [] : [webhookServer])]) handTracerProvider(target, tracerProvider);
    }
    this.#factory = factory;
    this.#options = options;
    this.#log = withFields(resolveLogger(options.logger), { component: 'manager' });
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Everything the process needs from the API server (docs/rbac.md), merged, each with its reasons: the
   * factory's informers, each controller's (its informers and `uses`), the runnables', the shard rings',
   * the leader-election lock's, the webhook server's configurations and the `crds`. Turn them into
   * RBAC objects with `rbacManifests`, or run `kube-informer rbac`.
   */
  permissions(): Permission[] {
    return this.permissionReport().permissions;
  }

  /** {@link Manager.permissions} with what they cannot cover (a controller that declares no `uses`, a runnable without `permissions()`). */
  permissionReport(): PermissionReport {
    return managerPermissionReport(this.#factory, this.#options);
  }

  /** Where the run is. */
  get phase(): ManagerPhase {
    return this.#phase;
  }

  /** Whether the controllers run now: leading (or no election) and past the sync. */
  isLeading(): boolean {
    return this.#leading;
  }

  /** The probe server's URL while it runs (`probes` set), else `undefined`. */
  get probeUrl(): string | undefined {
    return this.#probeServer?.url;
  }

  /** Runs everything until `signal` aborts (see the class). Rejects with `ALREADY_STARTED` when called twice. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#phase !== 'new') throw new AlreadyStartedError('Manager');
    this.#phase = 'syncing';
    const o = this.#options;
    // Stopped in reverse: the controllers drain first, then the runnables (an Event a draining reconcile recorded is still written), then the informers.
    // The webhook server stops last: a conversion webhook answers the informers' lists until they stopped.
    const group = new RunGroup({ name: 'manager', signal, stages: ['webhooks', 'informers', 'runnables', 'controllers'], graceMs: this.#graceMs, clock: this.#clock, logger: o.logger });
    const onStop = (): void => {
      this.#phase = 'stopping'; // from the stop on, while the reconciles drain: /readyz says not ready
    };
    group.signal.addEventListener('abort', onStop, { once: true });
    try {
      if (o.probes !== undefined) {
        this.#probeServer = await startProbeServer({
          ...o.probes,
          informers: this.#factory,
          metrics: o.metrics,
          rings: o.rings,
          webhookServer: o.webhookServer,
          isLeader: o.leaderElection === undefined ? undefined : () => this.#leading,
          stopping: () => this.#phase === 'stopping' || this.#phase === 'stopped',
          logger: o.logger, // it logs the address it serves at
        });
      }
      const webhooks = o.webhookServer;
      if (webhooks !== undefined && !group.signal.aborted) {
        group.start({ name: 'webhook server', run: (s) => webhooks.run(s) }, 'webhooks');
        await webhooks.whenReady(group.signal); // false: it failed (the group stops) or the manager stops
      }
      await this.#installCrds(group.signal);
      // Before the informers start: they read onResourceMissing when they do.
      const follow = o.followCustomResources === true ? followCustomResources({ factory: this.#factory, clock: this.#clock, logger: o.logger, log: this.#log }) : undefined;
      // Stopped while the probe server, the webhook server or the CRDs started: its stages may have ended already, start nothing.
      if (!group.signal.aborted) group.start({ name: 'informers', run: (s) => this.#factory.run(s) }, 'informers');
      if (follow !== undefined && !group.signal.aborted) group.start({ name: 'crd follower', run: follow }, 'informers');
      await waitForCaches([...Object.values(this.#factory.informers()), ...Object.values(this.#factory.namespaceSets()).map(syncingSet)], group.signal, {
        timeoutMs: this.#syncTimeoutMs,
        warningIntervalMs: o.cacheSyncWarningIntervalMs ?? 30_000,
        pollMs: CACHE_SYNC_POLL_MS,
        clock: this.#clock,
        log: this.#log,
      });
      if (!group.signal.aborted) {
        this.#phase = 'running';
        this.#log.info(`manager: caches synced; running ${this.#names()}`);
        for (const runnable of o.runnables ?? []) group.start(runnable, 'runnables');
        for (const runnable of this.#controllers()) group.start(runnable, 'controllers');
      }
    } catch (error) {
      group.fail(error, 'manager');
    }
    let failure: { error: unknown } | undefined;
    try {
      await group.closed();
    } catch (error) {
      failure = { error };
    } finally {
      await this.#probeServer?.close();
      this.#probeServer = undefined;
      group.signal.removeEventListener('abort', onStop);
      this.#phase = 'stopped';
    }
    if (failure !== undefined) {
      this.#log.error(`manager stopped, and its informers with it: ${failure.error instanceof Error ? failure.error.message : String(failure.error)}`, errorFields(failure.error));
      throw failure.error;
    }
    this.#log.info('manager stopped');
  }

  /** Installs `crds` before the informers start (a stop while it waits ends it quietly; a refusal rejects). */
  async #installCrds(signal: AbortSignal): Promise<void> {
    const crds = this.#options.crds ?? [];
    if (crds.length === 0 || signal.aborted) return;
    const { client: given, ...install } = this.#options.crdInstall ?? {};
    const names = crds.map((c) => (('crd' in c ? c.crd : c) as { metadata?: { name?: string } }).metadata?.name ?? '').join(', ');
    this.#log.info(`manager: installing ${crds.length} CustomResourceDefinition${crds.length === 1 ? '' : 's'} (server-side apply): ${names}`);
    // checkCrds made sure there is a kubeConfig when no client is given.
    const own = given === undefined ? newResourceClient(this.#factory.kubeConfig!, resources.customresourcedefinitions) : undefined;
    try {
      await ensureCustomResourceDefinitions(given ?? own!, crds, { ...install, clock: this.#clock, signal });
      this.#log.info(`manager: CustomResourceDefinitions established: ${names}`);
    } catch (error) {
      if (!signal.aborted) throw error;
    } finally {
      own?.close();
    }
  }

  /** The controllers (under leader election when asked), with a marker that keeps {@link isLeading} true while they run. */
  #controllers(): Runnable[] {
    const controllers = this.#options.controllers ?? [];
    const marker: Runnable = {
      name: 'leading',
      run: (s) =>
        new Promise<void>((resolve) => {
          this.#leading = true;
          const end = (): void => {
            this.#leading = false;
            resolve();
          };
          if (s.aborted) end();
          else s.addEventListener('abort', end, { once: true });
        }),
    };
    const election = this.#options.leaderElection;
    if (election === undefined) return [marker, ...controllers];
    // The Lease is released at the stop unless told otherwise: the next leader starts at once, not a lease duration later.
    const options = { logger: this.#options.logger, ...election, releaseOnCancel: election.releaseOnCancel ?? true };
    return [{ name: 'leader election', run: (s) => runWhileLeading([marker, ...controllers], options, s) }];
  }

  #names(): string {
    const all = [...(this.#options.controllers ?? []), ...(this.#options.runnables ?? [])].map((r) => r.name);
    return all.length === 0 ? 'nothing (no controllers or runnables)' : all.join(', ');
  }
}

/** `crds` is a list of definitions or CRDs, installable: with `crdInstall.client` or the factory's kubeConfig. */
function checkCrds(factory: SharedInformerFactory, options: ManagerOptions): void {
  const crds: unknown = options.crds ?? [];
  const isCrd = (c: unknown): boolean => typeof c === 'object' && c !== null && ('crd' in c ? typeof c.crd === 'object' : 'spec' in c && typeof c.spec === 'object');
  if (!Array.isArray(crds) || !crds.every(isCrd)) {
    throw new InvalidOptionError(`Manager: option crds must be an array of definitions (defineCustomResource) or CustomResourceDefinition objects, got ${describeValue(crds)}`);
  }
  if (crds.length > 0 && options.crdInstall?.client === undefined && factory.kubeConfig === undefined) {
    throw new InvalidOptionError('Manager: option crds needs crdInstall.client: the factory was built without a kubeConfig (listWatchFor only)');
  }
}
