// One controller engaged on many clusters: one scheduler whose keys carry the cluster's name, per cluster
// its informer, its read-your-writes record and its clients; a disengaged cluster's keys are dropped.

import { realClock, type Clock } from '../../core/clock.js';
import { deletionHandlingMetaNamespaceKeyFunc, splitMetaNamespaceKey } from '../../core/keys.js';
import { errorFields, resolveLogger, withFields, type Logger, type LoggerOption } from '../../core/log.js';
import { validateOptions } from '../../core/options.js';
import type { ResourceDescriptor } from '../../core/resources.js';
import type { DeepReadonly } from '../../core/types.js';
import { Action, ObservedWrites, ReconcileClient, ReconcileScheduler, type ReconcileErrorPolicy, type SourceInformer } from '../../controller/index.js';
import type { SharedInformerFactory, SharedIndexInformer, SharedInformerRegistration } from '../../informer/index.js';
import { newResourceClient, type KubeConfigLike, type ResourceClient } from '../../listwatch/index.js';

/** What a multi-cluster reconcile receives: the request's cluster and object, and clients addressing that cluster. */
export interface MultiClusterReconcileContext<T> {
  /** The name of the cluster the request came from (as its provider engaged it). */
  readonly cluster: string;
  /** The primary's key in that cluster: `namespace/name`, or `name` for a cluster-scoped resource. */
  readonly key: string;
  /** The primary's namespace (`''` for a cluster-scoped resource). */
  readonly namespace: string;
  /** The primary's name. */
  readonly name: string;
  /** The primary as that cluster's cache holds it when the reconcile started; `undefined` once deleted. */
  readonly object: DeepReadonly<T> | undefined;
  /** Aborts when the controller stops or the cluster is disengaged. Pass it to every request. */
  readonly signal: AbortSignal;
  /** How many reconciles of this key failed in a row before this one. */
  readonly attempt: number;
  /** The controller's logger with `controller`, `cluster` and `key` in every line. */
  readonly logger: Logger;
  /**
   * A client for `resource` on the request's cluster, bound to this reconcile: requests carry
   * `signal`, writes of the controller's resource are recorded for read-your-writes (see `wrote`).
   */
  client<R>(resource: ResourceDescriptor<R>): ReconcileClient<R>;
  /**
   * Records a write this reconcile made on the request's cluster (the server's answer): the key's
   * next reconcile waits until that cluster's cache holds it, at most `observeTimeoutMs`.
   */
  wrote(result: unknown): void;
}

/** The reconcile function of a {@link MultiClusterController}; `undefined` means `Action.done()`. */
export type MultiClusterReconcile<T> = (ctx: MultiClusterReconcileContext<T>) => Promise<Action | undefined>;

/** Options of a {@link MultiClusterController}. */
export interface MultiClusterControllerOptions {
  /** The controller's name, in logs and the scheduler's metrics. Required. */
  name: string;
  /** Reconciles at once, over all clusters. Default `1`. */
  concurrency?: number;
  /** What follows a failed reconcile. Default: the scheduler's exponential backoff. */
  onError?: ReconcileErrorPolicy;
  /** How long a reconcile waits for the cache to observe the key's previous writes, in ms. Default `10_000`. */
  observeTimeoutMs?: number;
  /** The clock of the scheduler and the waits. Default `realClock`. */
  clock?: Clock;
  /** Where it logs. Default: the library's default logger. */
  logger?: LoggerOption;
}

/** The running counts of a {@link MultiClusterController}. */
export interface MultiClusterControllerStats {
  /** Keys waiting in the one scheduler (all clusters). */
  readonly queued: number;
  /** Reconciles running now. */
  readonly running: number;
  /** Keys that came due after their cluster was disengaged (or before its cache synced): dropped, not reconciled. */
  readonly dropped: number;
  /** The clusters engaged now. */
  readonly clusters: readonly string[];
}

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
}

interface Engaged<T> {
  readonly handle: ClusterHandle;
  readonly informer: SharedIndexInformer<T>;
  readonly registration: SharedInformerRegistration;
  readonly writes: ObservedWrites;
  readonly clients: Map<ResourceDescriptor<unknown>, ResourceClient<unknown>>;
  /** Keys that came due before the cache synced: scheduled again once it has. */
  parked: Set<string> | undefined;
}

const OWNER = 'MultiClusterController';
/** Between the engagement's epoch, the cluster's name and the object's key in a scheduler key (object keys never hold it). */
const SEP = '|';

/** The scheduler key of `key` in one engagement of a cluster: `epoch|cluster|namespace/name`. */
function schedulerKeyOf(cluster: ClusterHandle, key: string): string {
  return `${cluster.epoch}${SEP}${cluster.name}${SEP}${key}`;
}

/**
 * A controller of one resource engaged on every cluster a `MultiClusterManager` engages
 * (multicluster-runtime's uniform reconciler): events of each cluster's informer are requests keyed
 * `epoch|cluster|namespace/name` in ONE scheduler (one `concurrency` for all clusters; one key of one
 * cluster never runs twice at once, keys of two clusters are independent). `ctx.cluster`,
 * `ctx.object` and `ctx.client` address the request's cluster. A key that comes due after its cluster
 * was disengaged is dropped — never reconciled, least of all against another cluster; a re-engage
 * (same name, new epoch) drops the old engagement's keys too, its initial list requests every object
 * again — and a running reconcile's signal aborts at the disengage.
 */
export class MultiClusterController<T> implements ClusterAware {
  readonly name: string;
  readonly #resource: ResourceDescriptor<T>;
  readonly #reconcile: MultiClusterReconcile<T>;
  readonly #scheduler: ReconcileScheduler;
  readonly #clock: Clock;
  readonly #observeTimeoutMs: number;
  readonly #logger: Logger;
  readonly #clusters = new Map<string, Engaged<T>>();
  #dropped = 0;

  /** Throws `INVALID_OPTION` for an unknown or out-of-range option. */
  constructor(resource: ResourceDescriptor<T>, reconcile: MultiClusterReconcile<T>, options: MultiClusterControllerOptions) {
    validateOptions(OWNER, options, { name: 'string', concurrency: 'positiveCount', onError: 'function', observeTimeoutMs: 'duration', clock: 'clock', logger: 'any' });
    this.name = options.name;
    this.#resource = resource;
    this.#reconcile = reconcile;
    this.#clock = options.clock ?? realClock;
    this.#observeTimeoutMs = options.observeTimeoutMs ?? 10_000;
    this.#logger = withFields(resolveLogger(options.logger), { controller: this.name });
    this.#scheduler = new ReconcileScheduler({
      name: this.name,
      clock: this.#clock,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
    });
  }

  /** Counts of queued, running and dropped keys, and the engaged clusters. */
  stats(): MultiClusterControllerStats {
    const { queued, running } = this.#scheduler.stats();
    return { queued, running, dropped: this.#dropped, clusters: [...this.#clusters.keys()] };
  }

  /** Starts taking `cluster`'s events (its informer starts with its factory). The manager calls it. */
  engage(cluster: ClusterHandle): void {
    this.disengage(cluster.name);
    const informer = cluster.factory.forResource(this.#resource);
    const request = (obj: unknown): void => this.#scheduler.scheduleNow(schedulerKeyOf(cluster, deletionHandlingMetaNamespaceKeyFunc(obj)), 0);
    const registration = informer.addEventHandler({ onAdd: request, onUpdate: (_old, obj) => request(obj), onDelete: request });
    const engaged: Engaged<T> = { handle: cluster, informer, registration, writes: new ObservedWrites(this.name, [{ resource: this.#resource, informer: informer as unknown as SourceInformer }]), clients: new Map(), parked: new Set() };
    this.#clusters.set(cluster.name, engaged);
    registration.whenSynced(cluster.signal).then(
      () => this.#unpark(engaged),
      () => undefined,
    );
  }

  /** Stops taking `name`'s events; its queued keys are dropped when due. The manager calls it. */
  disengage(name: string): void {
    const engaged = this.#clusters.get(name);
    if (engaged === undefined) return;
    this.#clusters.delete(name);
    engaged.informer.removeEventHandler(engaged.registration);
    engaged.writes.clear();
    for (const client of engaged.clients.values()) client.close();
  }

  /** Runs the one scheduler until `signal` aborts (see `ReconcileScheduler.run`). */
  async run(signal: AbortSignal): Promise<void> {
    await this.#scheduler.run(signal, (key, s) => this.#run(key, s));
  }

  #unpark(engaged: Engaged<T>): void {
    const parked = engaged.parked;
    engaged.parked = undefined;
    if (this.#clusters.get(engaged.handle.name) !== engaged || parked === undefined) return;
    for (const key of parked) this.#scheduler.scheduleNow(key, 0);
  }

  async #run(schedulerKey: string, stop: AbortSignal): Promise<Action> {
    const first = schedulerKey.indexOf(SEP);
    const last = schedulerKey.lastIndexOf(SEP);
    const epoch = Number(schedulerKey.slice(0, first));
    const cluster = schedulerKey.slice(first + 1, last);
    const key = schedulerKey.slice(last + 1);
    const engaged = this.#clusters.get(cluster);
    if (engaged === undefined || engaged.handle.epoch !== epoch || engaged.handle.signal.aborted) {
      this.#dropped++;
      return Action.done();
    }
    if (engaged.parked !== undefined) {
      engaged.parked.add(schedulerKey);
      return Action.done();
    }
    const signal = AbortSignal.any([stop, engaged.handle.signal]);
    const logger = withFields(this.#logger, { cluster, key });
    await engaged.writes.settle(key, signal, this.#observeTimeoutMs, this.#clock, logger);
    const { namespace, name } = splitMetaNamespaceKey(key);
    const object = engaged.informer.getIndexer().getByKey(key);
    const recorder = {
      wrote: (resource: ResourceDescriptor<unknown>, answer: unknown) => {
        if (resource === this.#resource) engaged.writes.recordFor(key, resource, answer);
      },
      deleted: (resource: ResourceDescriptor<unknown>, n: string, ns: string | undefined, uid: string | undefined) => {
        if (resource === this.#resource) engaged.writes.recordDeletionFor(key, resource, n, ns, uid);
      },
    };
    const ctx: MultiClusterReconcileContext<T> = {
      cluster,
      key,
      namespace: namespace ?? '',
      name,
      object,
      signal,
      attempt: this.#scheduler.attempts(schedulerKey),
      logger,
      client: <R>(resource: ResourceDescriptor<R>): ReconcileClient<R> => new ReconcileClient(this.#clientOf(engaged, resource), resource, signal, recorder),
      wrote: (result) => engaged.writes.record(key, result),
    };
    try {
      return (await this.#reconcile(ctx)) ?? Action.done();
    } catch (err) {
      if (engaged.handle.signal.aborted && !stop.aborted) {
        // Disengaged while it ran: its failure is not retried against a cluster that is gone.
        this.#dropped++;
        logger.debug('reconcile ended by the disengage of its cluster', errorFields(err));
        return Action.done();
      }
      throw err;
    }
  }

  #clientOf<R>(engaged: Engaged<T>, resource: ResourceDescriptor<R>): ResourceClient<R> {
    let client = engaged.clients.get(resource) as ResourceClient<R> | undefined;
    if (client === undefined) {
      client = newResourceClient(engaged.handle.kubeConfig, resource);
      engaged.clients.set(resource, client as ResourceClient<unknown>);
    }
    return client;
  }
}
