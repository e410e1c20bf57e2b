// The ConfigMapSet operator over many clusters: the operator's one controller description (reconciler.ts) built with MultiClusterController.for, engaged by a MultiClusterManager on every cluster.
//
// Not run on its own: test/apiserver/multicluster-fleet.test.ts runs it over two kube-apiservers whose
// kubeconfigs are Secrets in a management cluster. See examples/README.md.

import type { LoggerOption } from '../../src/index.js';
import type { ControllerOptions } from '../../src/controller.js';
import { EventRecorder, MultiClusterController, type ClusterAware, type ClusterHandle, type MultiClusterControllerStats } from '../../src/operations/index.js';
import { configMapSets, type ConfigMapSet } from './crd.js';
import { ConfigMapSetReconciler, configMapSetWatch, describeConfigMapSetController, type ConfigMapSetCounts } from './reconciler.js';
import { clusterRegistry, type ExternalRegistry } from './registry.js';

/** Options of a {@link ConfigMapSetFleet}. */
export interface ConfigMapSetFleetOptions {
  /**
   * The external system the sets of every cluster have a record in; each cluster's records are kept
   * under `<cluster>/<namespace>/<name>` (`clusterRegistry`). Required.
   */
  registry: ExternalRegistry;
  /** Sets reconciled at once, over all clusters. Default 2. */
  concurrency?: number;
  /** The controller's and the Event recorders' logger. Default `console`. */
  logger?: LoggerOption;
  /** Told about each thing the operator does, as one line starting with the cluster's name. Default: nothing. */
  onEvent?: (line: string) => void;
  /** Told when a reconcile of a set starts and ends, with its cluster. Default: nothing. */
  onReconcile?: (key: string, phase: 'start' | 'end', cluster: string | undefined) => void;
  /** More controller options (`clock`, `onError`, deadlines, `priority`, `rateLimit`). Default: the controller's. */
  controller?: Pick<ControllerOptions, 'clock' | 'onError' | 'observeTimeoutMs' | 'reconcileTimeoutMs' | 'debounceMs' | 'priority' | 'rateLimit'>;
  /** The field manager of every write. Default `'configmapset-operator'`. */
  fieldManager?: string;
}

/** Counters of a {@link ConfigMapSetFleet}: the controller's (summed over the clusters, with `clusters`) and the reconcile's. */
export interface ConfigMapSetFleetStats extends MultiClusterControllerStats, ConfigMapSetCounts {}

/**
 * The ConfigMapSet operator of operator.ts on every cluster a `MultiClusterManager` engages: the same
 * controller description and reconcile, built with `MultiClusterController.for` — one scheduler (one
 * `concurrency`) for all clusters, each cluster's sets and ConfigMaps in that cluster's caches, every
 * write through `ctx.client` to the request's cluster. Per cluster: its records in the shared
 * registry (under the cluster's name, so `ns/web` of two clusters are two records) and an Event
 * recorder writing to that cluster, both from the engage until the disengage. A disengaged cluster's
 * queued sets are dropped, never reconciled; its finalizers stay on its sets until it is engaged again.
 */
export class ConfigMapSetFleet implements ClusterAware {
  /** Its name, for logs: the controller's. */
  readonly name: string;
  /** The controller engaged on every cluster. */
  readonly controller: MultiClusterController<ConfigMapSet>;
  readonly #reconciler: ConfigMapSetReconciler;
  readonly #logger: LoggerOption | undefined;
  readonly #recorders = new Map<string, EventRecorder>();
  /** The Event recorders' runs not ended yet. */
  readonly #recording = new Set<Promise<void>>();
  #recorderFailure: { error: unknown } | undefined;
  #signal: AbortSignal | undefined;

  /** Builds the controller; nothing runs before the manager engages a cluster and runs it. */
  constructor(options: ConfigMapSetFleetOptions) {
    const { registry, onEvent, onReconcile } = options;
    this.#logger = options.logger;
    const views = new Map<string, ExternalRegistry>();
    const registryOf = (cluster: string | undefined): ExternalRegistry => {
      if (cluster === undefined) throw new Error('ConfigMapSetFleet: a reconcile without ctx.cluster');
      let view = views.get(cluster);
      if (view === undefined) views.set(cluster, (view = clusterRegistry(registry, cluster)));
      return view;
    };
    this.#reconciler = new ConfigMapSetReconciler({ registry: registryOf, events: (cluster) => (cluster === undefined ? undefined : this.#recorders.get(cluster)), onEvent, onReconcile });
    this.controller = describeConfigMapSetController(MultiClusterController.for(configMapSets, configMapSetWatch()))
      .build((_key, ctx) => this.#reconciler.reconcile(ctx), {
        name: 'configmapsets',
        concurrency: options.concurrency ?? 2,
        logger: options.logger,
        fieldManager: options.fieldManager ?? 'configmapset-operator',
        ...options.controller,
      });
    this.name = this.controller.name;
  }

  /** Engages the controller on `cluster` and starts its Event recorder (until the disengage or the stop). */
  engage(cluster: ClusterHandle): void {
    this.controller.engage(cluster);
    const recorder = new EventRecorder(cluster.kubeConfig, { reportingController: 'examples.kube-informer.dev/configmapset-operator', logger: this.#logger });
    this.#recorders.set(cluster.name, recorder);
    const until = this.#signal === undefined ? cluster.signal : AbortSignal.any([cluster.signal, this.#signal]);
    // A recorder fails only on a programming error: run rethrows the first at the stop.
    const recording: Promise<void> = recorder
      .run(until)
      .catch((error: unknown) => void (this.#recorderFailure ??= { error }))
      .finally(() => this.#recording.delete(recording));
    this.#recording.add(recording);
  }

  /** Disengages the controller from the cluster `name` (its queued sets dropped); its recorder stops. */
  disengage(name: string): void {
    this.controller.disengage(name);
    this.#recorders.delete(name);
  }

  /** Runs the controller until `signal` aborts, then waits for the Event recorders to flush; rejects when one failed. */
  async run(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    const ran = await this.controller.run(signal).then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    await Promise.all([...this.#recording]);
    if (ran !== undefined) throw ran.err;
    if (this.#recorderFailure !== undefined) throw this.#recorderFailure.error;
  }

  /** Why the controller of `cluster` failed (it stays disengaged until engaged again), for the manager's report; else `undefined`. */
  failureOf(cluster: string): Error | undefined {
    return this.controller.failureOf(cluster);
  }

  /** Counters so far. */
  stats(): ConfigMapSetFleetStats {
    return { ...this.controller.stats(), ...this.#reconciler.counts() };
  }
}
