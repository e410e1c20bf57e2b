// The house Controller engaged on many clusters: per engaged cluster a Controller on its factory (its own
// sources, caches, writes and clients), all on lanes of ONE shared scheduler whose keys carry the engagement.

import { AlreadyStartedError, toError } from '../../core/errors.js';
import { ChildAbort } from '../../core/abort.js';
import { errorFields, resolveLogger, withFields, type Logger } from '../../core/log.js';
import { InvalidOptionError, validateOptions } from '../../core/options.js';
import type { Permission } from '../../core/permissions.js';
import type { ResourceDescriptor } from '../../core/resources.js';
import type { PartialObjectMetadata } from '../../core/types.js';
import {
  Controller,
  CONTROLLER_OPTION_SCHEMA,
  ControllerBuilder,
  rateLimitMetricsOf,
  requestStream,
  SharedScheduler,
  type ControllerDescription,
  type ControllerMetricsProvider,
  type ControllerStats,
  type Lane,
  type RateLimitCause,
  type MetadataOnlyWatchOptions,
  type ReconcileRequest,
  type ScheduleRequest,
  type WatchOptions,
  describedPermissions,
} from '../../controller/index.js';
import { gvrKey, type SharedInformerFactory } from '../../informer/index.js';
import type { KubeConfigLike } from '../../listwatch/index.js';
import type { SettableGaugeMetric } from '../../observability/index.js';
import type { ShardRing } from '../../sharding/ring.js';

/** What the manager hands a {@link ClusterAware} component for one engaged cluster. */
export interface ClusterHandle {
  /** The cluster's name. */
  readonly name: string;
  /** This engagement's number, unique in the process: a re-engaged cluster gets a new one. */
  readonly epoch: number;
  /** How to reach its API server. */
  readonly kubeConfig: KubeConfigLike;
  /** Its factory (its own caches), started by the manager right after the engage. */
  readonly factory: SharedInformerFactory;
  /** Aborted when the cluster is disengaged. */
  readonly signal: AbortSignal;
}

/**
 * A component the manager engages on every cluster (multicluster-runtime's `Aware`): a
 * {@link MultiClusterController}, or your own.
 */
export interface ClusterAware {
  /** Its name, for logs. */
  readonly name: string;
  /** Starts work on `cluster` (non-blocking; the cluster's factory starts right after). */
  engage(cluster: ClusterHandle): void;
  /** Stops work on the cluster `name`; its queued work is dropped. */
  disengage(name: string): void;
  /** Runs until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
  /**
   * Why its work on the cluster `name` failed and stopped (`undefined` while it runs there): the
   * manager's `readiness()` names it among the cluster's problems and counts the cluster unready.
   * Optional.
   */
  failureOf?(name: string): Error | undefined;
  /**
   * What each target cluster must grant it, given the namespace of the clusters' factories (undefined:
   * every namespace): `MultiClusterManager.permissionReport({ cluster: 'target' })` reads it, and warns
   * about a component without it. Optional.
   */
  permissions?(options?: { namespace?: string }): Permission[];
}

/** The counts of a {@link MultiClusterController}: its clusters' Controllers summed (ended engagements' outcomes included), and its clusters. */
export interface MultiClusterControllerStats extends ControllerStats {
  /** The clusters engaged now (a cluster whose Controller failed is not among them). */
  readonly clusters: readonly string[];
  /** Keys that came due for an engagement already ended (a race with its disengage, which forgets its keys at once): not reconciled. */
  readonly dropped: number;
  /** Clusters whose Controller failed (an informer failed for good, its factory stopped): kept disengaged until engaged again. */
  readonly failedClusters: readonly string[];
}

interface Engagement<T> {
  readonly handle: ClusterHandle;
  readonly controller: Controller<T>;
  /** Ends its Controller's run: the disengage, or the fleet's stop. */
  readonly stop: AbortController;
  /** Its lane of the shared scheduler, made when its Controller runs. */
  readonly slot: { lane?: Lane };
  /** Its Controller's run, once started. */
  done: Promise<void> | undefined;
}

const OWNER = 'MultiClusterController';
/** The `sharded` ring of each MultiClusterController built with one (for the manager's check, {@link objectRingOf}). */
const objectRings = new WeakMap<object, ShardRing>();

/** The ring a {@link MultiClusterController} shards its objects on (option `sharded`); undefined for any other component. */
export function objectRingOf(component: ClusterAware): ShardRing | undefined {
  return objectRings.get(component);
}
const ZERO = { succeeded: 0, failed: 0, timedOut: 0, terminal: 0, stopped: 0, hookFailures: 0, tracingFaults: 0 };
type Counts = typeof ZERO;

/**
 * The house {@link Controller} engaged on every cluster a `MultiClusterManager` engages
 * (multicluster-runtime's uniform reconciler). Describe it as one controller —
 * `MultiClusterController.for(primary).owns(...).watches(...).uses(...).build(reconcile, options)` — and
 * each engaged cluster gets a `Controller` of that description on the cluster's factory: its sources
 * (owns, watches, predicates), its caches, read-your-writes, `ctx.client` on the cluster's kubeconfig,
 * sharding, tracing, metrics. All of them share ONE scheduler (one `concurrency`, one rate limit, one
 * work queue under the controller's name) whose keys are `epoch|cluster|namespace/name`: a key of one
 * cluster never runs twice at once, keys of two clusters are independent. The reconcile is the house
 * one, `(key, ctx)` with `key` the object's `namespace/name` and `ctx.cluster` the request's cluster;
 * the `onError` policy and the loops of {@link MultiClusterController.requests} see the object key too.
 * `concurrencyGroups` are per cluster (one group name in two clusters is two groups).
 *
 * Disengage: the cluster's keys leave the scheduler at once (one in a backoff too), its running
 * reconciles' `ctx.signal` aborts, its Controller stops (handlers removed, clients closed); a re-engage
 * (same name, new epoch) is a new Controller, which reconciles every object of the cluster again.
 *
 * Failure isolation: a cluster's Controller that fails (an informer failed for good, its factory
 * stopped) is logged, counted (`stats().failedClusters`, {@link MultiClusterController.failureOf}) and
 * dropped — kept disengaged until the cluster is engaged again — while the others reconcile on. A
 * programming error in the reconcile (a misuse of the runtime, a result that is not an `Action`)
 * stops the whole controller: `run` rejects with it, as a `Controller`'s does.
 */
export class MultiClusterController<T> implements ClusterAware {
  /** Its name (option `name`; default the primary's `group/version/resource`). */
  readonly name: string;
  readonly #described: ControllerDescription<T>;
  readonly #shared: SharedScheduler;
  readonly #log: Logger;
  readonly #engaged = new Map<string, Engagement<T>>();
  /** Engagements disengaged whose Controller has not ended yet (their counts still live there). */
  readonly #ending = new Set<Engagement<T>>();
  readonly #failures = new Map<string, Error>();
  #past: Counts = { ...ZERO };
  #signal: AbortSignal | undefined;

  /**
   * Starts describing a controller of `primary` engaged on every cluster: chain `owns`, `watches` and
   * `uses` as for {@link Controller.for}, then `build(reconcile, options)`. With `metadataOnly: true`
   * the primary's caches (and `ctx.object`) hold `PartialObjectMetadata`.
   */
  static for(primary: ResourceDescriptor<unknown>, options: MetadataOnlyWatchOptions): ControllerBuilder<PartialObjectMetadata, never, MultiClusterController<PartialObjectMetadata>>;
  /** As above, the primary cached whole (typed by its descriptor). */
  static for<T>(primary: ResourceDescriptor<T>, options?: WatchOptions<NoInfer<T>>): ControllerBuilder<T, never, MultiClusterController<T>>;
  static for<T>(primary: ResourceDescriptor<T>, options: object = {}): ControllerBuilder<T, never, MultiClusterController<T>> {
    return new ControllerBuilder<T, never, MultiClusterController<T>>(primary, options, (described) => new MultiClusterController<T>(described), `${OWNER}.for`);
  }

  /**
   * Use {@link MultiClusterController.for}. Throws `INVALID_OPTION` for an option out of range, and for
   * `kubeConfig` (each cluster's `ctx.client` addresses that cluster).
   * @hidden
   */
  constructor(described: ControllerDescription<T>) {
    const o = described.options;
    validateOptions(OWNER, o, CONTROLLER_OPTION_SCHEMA);
    if (o.kubeConfig !== undefined) throw new InvalidOptionError(`${OWNER}: option kubeConfig cannot be given: ctx.client addresses each request's cluster (its engagement's kubeconfig)`);
    // Every cluster's Controller reports under the one name: its active-workers gauge is their sum.
    this.#described = o.metricsProvider === undefined ? described : { ...described, options: { ...o, metricsProvider: summedActiveWorkers(o.metricsProvider) } };
    this.name = o.name ?? gvrKey(described.primary);
    if (o.sharded !== undefined) objectRings.set(this, o.sharded);
    this.#log = withFields(resolveLogger(o.logger), { component: 'controller', controller: this.name });
    this.#shared = new SharedScheduler({
      concurrency: o.concurrency,
      debounceMs: o.debounceMs,
      clock: o.clock,
      name: this.name,
      metricsProvider: o.metricsProvider?.workQueue,
      rateLimit: o.rateLimit,
      rateLimitMetrics: rateLimitMetricsOf(o.metricsProvider, this.name),
      concurrencyGroups: o.concurrencyGroups,
    });
  }

  /** Starts a Controller on `cluster`'s factory (replacing one of an earlier engagement of the name); it runs once the fleet runs. The manager calls it. */
  engage(cluster: ClusterHandle): void {
    this.disengage(cluster.name);
    this.#failures.delete(cluster.name);
    const slot: { lane?: Lane } = {};
    const controller = new Controller<T>({
      ...this.#described,
      factory: cluster.factory,
      cluster: cluster.name,
      scheduler: (options) => (slot.lane = this.#shared.lane(String(cluster.epoch), cluster.name, options)),
    });
    const engagement: Engagement<T> = { handle: cluster, controller, stop: new AbortController(), slot, done: undefined };
    this.#engaged.set(cluster.name, engagement);
    if (this.#signal !== undefined) this.#start(engagement, this.#signal);
  }

  /** Stops `name`'s Controller: its keys leave the scheduler at once, its running reconciles' `ctx.signal` aborts (and a failure recorded for it is forgotten). The manager calls it. */
  disengage(name: string): void {
    this.#failures.delete(name); // a failed cluster's record goes with the cluster
    const engagement = this.#engaged.get(name);
    if (engagement === undefined) return;
    this.#end(engagement, new Error(`cluster ${name} disengaged`));
  }

  /**
   * Runs the shared scheduler and every engaged cluster's Controller until `signal` aborts; resolves once
   * they all ended. Rejects with a programming error a reconcile made (after the same stop), and with
   * `ALREADY_STARTED` when called a second time. A cluster's Controller failing does not end it.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#signal !== undefined) throw new AlreadyStartedError(OWNER);
    const stop = new ChildAbort(signal);
    this.#signal = stop.signal;
    for (const engagement of this.#engaged.values()) this.#start(engagement, stop.signal);
    let failure: unknown;
    try {
      await this.#shared.run(stop.signal);
    } catch (err) {
      failure = err;
      this.#log.error(`controller ${this.name} stopped: ${toError(err).message}`, errorFields(err));
    }
    stop.detach();
    stop.controller.abort(failure);
    for (const engagement of [...this.#engaged.values()]) this.#end(engagement, stop.signal.reason);
    await Promise.all([...this.#ending].flatMap((e) => (e.done === undefined ? [] : [e.done])));
    if (failure !== undefined) throw toError(failure);
  }

  /**
   * Requests a reconcile of `key` on `cluster` (see {@link Controller.schedule}); nothing when the cluster
   * is not engaged or its Controller not running yet (it reconciles every object when it starts).
   */
  schedule(cluster: string, key: string, request?: ScheduleRequest): void {
    this.#engaged.get(cluster)?.controller.schedule(key, request);
  }

  /** Requests a reconcile of every primary of every engaged cluster (see {@link Controller.reconcileAll}). */
  reconcileAll(): void {
    for (const engagement of this.#engaged.values()) engagement.controller.reconcileAll();
  }

  /**
   * The reconcile requests of every cluster, for a controller built without a reconcile function
   * (`build(options)`): see {@link Controller.requests}; `request.ctx.cluster` names each one's cluster.
   */
  requests(signal?: AbortSignal): AsyncIterableIterator<ReconcileRequest<T>> {
    return requestStream(this.#described.requests, this.name, signal);
  }

  /**
   * What each TARGET cluster must grant the credentials of its kubeconfig (docs/rbac.md, "RBAC for a
   * fleet"): what a single-cluster `Controller` of the same description on a factory of `namespace`
   * needs — `list` and `watch` of each source (`for`, `owns`, `watches`; option `namespaces` followed),
   * what the builder declared with `uses` — merged, each with its reason. A `sharded` ring's Leases are
   * not among them: they are where the ring's store points, and `MultiClusterManager.permissionReport`
   * lists them with the management cluster's needs (its providers').
   * @param options `namespace`: the namespace of each cluster's factory (the manager's
   *   `factoryOptions.namespace`); default every namespace
   */
  permissions(options: { namespace?: string } = {}): Permission[] {
    validateOptions(`${OWNER}.permissions`, options, { namespace: 'string' });
    return describedPermissions(this.name, this.#described, options.namespace === '' ? undefined : options.namespace, this.#log, false);
  }

  /** Whether the builder declared any `uses` (each cluster's `ctx.client` then refuses a request none covers; see `Controller.declaresUses`). */
  get declaresUses(): boolean {
    return this.#described.uses.length > 0;
  }

  /** Why the Controller of `cluster` failed, while the cluster stays disengaged after it; else `undefined`. */
  failureOf(cluster: string): Error | undefined {
    return this.#failures.get(cluster);
  }

  /** The shared scheduler's counts, the outcomes of every cluster's Controller summed, the clusters engaged and failed. */
  stats(): MultiClusterControllerStats {
    const counts = { ...this.#past };
    for (const engagement of [...this.#engaged.values(), ...this.#ending]) add(counts, engagement.controller.stats());
    return { active: this.#signal?.aborted === false, ...this.#shared.stats(), ...counts, clusters: [...this.#engaged.keys()], dropped: this.#shared.dropped, failedClusters: [...this.#failures.keys()] };
  }

  /** Runs `engagement`'s Controller once the manager started the cluster's factory (right after the engage). */
  #start(engagement: Engagement<T>, fleet: AbortSignal): void {
    const { handle, controller, stop } = engagement;
    const signal = AbortSignal.any([fleet, handle.signal, stop.signal]);
    engagement.done = Promise.resolve()
      .then(() => controller.run(signal))
      .then(
        () => undefined,
        (err: unknown) => {
          if (signal.aborted) return; // stopping anyway: not this cluster's failure
          const error = toError(err);
          this.#failures.set(handle.name, error);
          this.#log.error(`controller ${this.name} on cluster ${handle.name} failed: ${error.message}; the cluster stays disengaged from it until it is engaged again`, { cluster: handle.name, ...errorFields(err) });
          if (this.#engaged.get(handle.name) === engagement) this.#end(engagement, error);
        },
      )
      .finally(() => {
        this.#ending.delete(engagement);
        add(this.#past, controller.stats());
      });
  }

  /** Ends `engagement`: out of the engaged ones, its lane closed (keys forgotten at once), its Controller stopped. */
  #end(engagement: Engagement<T>, reason: unknown): void {
    if (this.#engaged.get(engagement.handle.name) === engagement) this.#engaged.delete(engagement.handle.name);
    if (engagement.done !== undefined) this.#ending.add(engagement);
    engagement.slot.lane?.close(reason);
    engagement.stop.abort(reason);
  }
}

/** Adds the outcome counts of `stats` to `into`. */
function add(into: Counts, stats: ControllerStats): void {
  for (const k of Object.keys(ZERO) as Array<keyof Counts>) into[k] += stats[k];
}

/**
 * `provider` with one change: each `newActiveWorkersMetric(name)` is a part of one gauge per name, set to
 * the sum of its parts (each cluster's Controller sets its own running count). The rest is `provider`'s.
 */
function summedActiveWorkers(provider: ControllerMetricsProvider): ControllerMetricsProvider {
  const gauges = new Map<string, { gauge: SettableGaugeMetric; parts: Map<object, number> }>();
  const p = provider;
  return {
    newReconcileTotalMetric: (c, r) => p.newReconcileTotalMetric(c, r),
    newReconcileErrorsMetric: (c) => p.newReconcileErrorsMetric(c),
    ...(p.newTerminalReconcileErrorsMetric === undefined ? {} : { newTerminalReconcileErrorsMetric: (c: string) => p.newTerminalReconcileErrorsMetric!(c) }),
    newReconcileTimeMetric: (c) => p.newReconcileTimeMetric(c),
    newMaxConcurrentReconcilesMetric: (c) => p.newMaxConcurrentReconcilesMetric(c),
    ...(p.newRateLimitTokensMetric === undefined ? {} : { newRateLimitTokensMetric: (c: string) => p.newRateLimitTokensMetric!(c) }),
    ...(p.newRateLimitedRetriesMetric === undefined ? {} : { newRateLimitedRetriesMetric: (c: string, cause: RateLimitCause) => p.newRateLimitedRetriesMetric!(c, cause) }),
    ...(p.workQueue === undefined ? {} : { workQueue: p.workQueue }),
    newActiveWorkersMetric: (name) => {
      let entry = gauges.get(name);
      if (entry === undefined) gauges.set(name, (entry = { gauge: p.newActiveWorkersMetric(name), parts: new Map() }));
      const { gauge, parts } = entry;
      const part = {};
      return {
        set: (value) => {
          if (value === 0) parts.delete(part);
          else parts.set(part, value);
          let sum = 0;
          for (const n of parts.values()) sum += n;
          gauge.set(sum);
        },
      };
    },
  };
}
