// The multi-cluster manager: the sink its providers report clusters to; per engaged cluster a factory of its
// own, every controller engaged on it; a report per cluster for /readyz and metrics.

import { AlreadyStartedError, ClusterRefusedError } from '../../core/errors.js';
import { ChildAbort } from '../../core/abort.js';
import { errorFields, resolveLogger, type Logger, type LoggerOption } from '../../core/log.js';
import { InvalidOptionError, validateOptions } from '../../core/options.js';
import { SharedInformerFactory, type SharedInformerFactoryOptions } from '../../informer/index.js';
import type { InformerHealth } from '../../informer/index.js';
import type { KubeConfigLike } from '../../listwatch/index.js';
import type { HasFactoryHealth } from '../informer-metrics.js';
import { objectRingOf, type ClusterAware, type ClusterHandle } from './controller.js';
import type { PermissionReport } from '../permissions.js';
import { fleetPermissionReport, type FleetPermissionOptions } from './permissions.js';
import type { ClusterProvider, ClusterSink } from './provider.js';
import { ShardedClusterProvider } from './sharded.js';

/** Options of a {@link MultiClusterManager}. */
export interface MultiClusterManagerOptions {
  /** Where clusters come from (`staticClusters`, `kubeconfigSecrets`, ...). Required, at least one. */
  providers: readonly ClusterProvider[];
  /** The controllers (`MultiClusterController`, or any {@link ClusterAware}) engaged on every cluster. Default: none. */
  controllers?: readonly ClusterAware[];
  /** The options of each cluster's factory (`logger`, `namespace`, `informerOptions`, ...). Default: the factory's. */
  factoryOptions?: SharedInformerFactoryOptions;
  /** Where the manager logs engages, disengages and refusals. Default: the library's default logger. */
  logger?: LoggerOption;
}

/** One cluster in a {@link MultiClusterReport}. */
export interface ClusterVerdict {
  /** The cluster's name. */
  readonly name: string;
  /** Where it came from (the provider's `source`, or the provider's name). */
  readonly source: string;
  /** Every informer of its factory is ready (synced, its watch up). */
  readonly ready: boolean;
  /** What is wrong, one sentence each (an unreachable server names its error here). */
  readonly problems: readonly string[];
}

/** One provider in a {@link MultiClusterReport}. */
export interface ProviderVerdict {
  /** The provider's name. */
  readonly name: string;
  /**
   * Every informer of its `health()` is ready (the management cluster's Secrets listed and watched);
   * true for a provider without `health` (`staticClusters`); false while its `health()` is empty.
   */
  readonly ready: boolean;
  /** What is wrong, one sentence each, naming the informer (a 403 listing the Secrets names it here). */
  readonly problems: readonly string[];
}

/**
 * The manager's readiness: ok while it runs and every provider is ready, whatever one cluster's state;
 * each cluster in `clusters`, each provider in `providers`.
 */
export interface MultiClusterReport {
  /**
   * Running, not stopping, and every provider ready: a provider that cannot watch its source (the
   * management cluster's Secrets) makes it false — no cluster could come or go. A cluster that is not
   * ready does not make it false.
   */
  readonly ok: boolean;
  /** Every engaged cluster's verdict. */
  readonly clusters: readonly ClusterVerdict[];
  /** Every provider's verdict, in the order of the option `providers`. */
  readonly providers: readonly ProviderVerdict[];
  /** Inputs the providers refused, counted since the start. */
  readonly refused: number;
}

/** Counts of a {@link MultiClusterManager}, for metrics. */
export interface MultiClusterManagerStats {
  /** Clusters engaged now. */
  readonly engaged: number;
  /** Engaged clusters whose caches are not ready (unreachable, refused credentials, not synced yet). */
  readonly unready: number;
  /** Engages since the start (re-engages included). */
  readonly engages: number;
  /** Disengages since the start (re-engages included). */
  readonly disengages: number;
  /** Inputs the providers refused since the start. */
  readonly refused: number;
  /** The same refusals by reason: a `ClusterRefusedError`'s `reason` (`missing-key`, `unauthorized`, ...), `other` for any other error. */
  readonly refusedByReason: Readonly<Record<string, number>>;
}

interface Cluster {
  readonly handle: ClusterHandle;
  readonly source: string;
  readonly stop: AbortController;
}

const OWNER = 'MultiClusterManager';

/** Ready when every informer is (and there is one); the problems prefixed with the informer's key. */
function verdictOf(health: Record<string, InformerHealth>): { ready: boolean; problems: string[] } {
  const entries = Object.entries(health);
  return { ready: entries.length > 0 && entries.every(([, h]) => h.ready), problems: entries.flatMap(([key, h]) => h.problems.map((p) => `${key}: ${p}`)) };
}

/**
 * Runs controllers on a changing set of clusters (multicluster-runtime's manager): it is the
 * {@link ClusterSink} its providers report to. Each engaged cluster gets a `SharedInformerFactory` of
 * its own (own caches, own connections) and every controller is engaged on it; a disengage stops that
 * factory and drops the cluster's keys. A cluster whose server cannot be reached stays engaged and
 * unready — named in {@link MultiClusterManager.readiness} and counted in `stats().unready` — while the
 * other clusters run on: one cluster never makes the manager unready.
 */
export class MultiClusterManager implements ClusterSink {
  readonly #providers: readonly ClusterProvider[];
  readonly #controllers: readonly ClusterAware[];
  readonly #factoryOptions: SharedInformerFactoryOptions;
  readonly #logger: Logger;
  readonly #clusters = new Map<string, Cluster>();
  /** The stops of disengaged clusters' factories not finished yet: `run` waits for them. */
  readonly #stopping = new Set<Promise<void>>();
  #signal: AbortSignal | undefined;
  #epoch = 0;
  #running = false;
  #engages = 0;
  #disengages = 0;
  #refused = 0;
  readonly #refusedByReason: Record<string, number> = {};

  /**
   * Throws `INVALID_OPTION` for an unknown option, no provider, or a `shardedClusters` provider beside a
   * `MultiClusterController` built with `sharded` (the two cannot divide the same replicas).
   */
  constructor(options: MultiClusterManagerOptions) {
    validateOptions(OWNER, options, { providers: 'any', controllers: 'any', factoryOptions: 'object', logger: 'any' });
    if (!Array.isArray(options.providers) || options.providers.length === 0) {
      throw new InvalidOptionError(`${OWNER}: option providers must name at least one ClusterProvider`);
    }
    this.#providers = options.providers;
    this.#controllers = options.controllers ?? [];
    const byCluster = this.#providers.find((p) => p instanceof ShardedClusterProvider);
    const byObject = this.#controllers.find((c) => objectRingOf(c) !== undefined);
    if (byCluster !== undefined && byObject !== undefined) {
      throw new InvalidOptionError(
        `${OWNER}: provider ${byCluster.name} shards the clusters across the replicas (shardedClusters) and controller ${byObject.name} shards the objects (option sharded): ` +
          `a cluster is engaged on one replica only, so its objects in the other replicas' slots would never be reconciled; shard by one of the two (docs/multicluster.md#with-the-shard-ring)`,
      );
    }
    this.#factoryOptions = options.factoryOptions ?? {};
    this.#logger = resolveLogger(options.logger);
  }

  /**
   * Runs the providers and the controllers until `signal` aborts; then, once they all ended (the
   * running reconciles drained), disengages every cluster and waits for its caches to stop. A provider
   * or controller that rejects stops the manager the same way, and `run` rejects with that first
   * failure. Rejects with `ALREADY_STARTED` when called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#signal !== undefined) throw new AlreadyStartedError(OWNER);
    const stop = new ChildAbort(signal);
    this.#signal = stop.signal;
    this.#running = true;
    const failed = (what: string) => (err: unknown): never => {
      if (!stop.signal.aborted) this.#logger.error(`${what} failed: stopping the manager`, errorFields(err));
      stop.controller.abort(err);
      throw err;
    };
    // Every controller and provider ends before the clusters stop, even after a failure (the first one is rethrown).
    const results = await Promise.allSettled([
      ...this.#controllers.map((c) => c.run(stop.signal).catch(failed(`controller ${c.name}`))),
      ...this.#providers.map((p) => p.run(stop.signal, this).catch(failed(`cluster provider ${p.name}`))),
    ]);
    this.#running = false;
    stop.detach();
    for (const name of [...this.#clusters.keys()]) this.disengage(name, 'manager stopped');
    await Promise.all([...this.#stopping]);
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }

  /**
   * {@link ClusterSink.engage}: a factory of the cluster's own, every controller engaged on it. Throws
   * `INVALID_OPTION` for an empty name, a name engaged from another source (naming both), or a call
   * before `run`; after the stop it engages nothing (a debug line).
   */
  engage(name: string, kubeConfig: KubeConfigLike, source?: string): void {
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError(`${OWNER}.engage: a cluster's name must be a non-empty string, got ${String(name)}`);
    const from = source ?? 'unnamed source';
    const old = this.#clusters.get(name);
    if (old !== undefined && old.source !== from) {
      throw new InvalidOptionError(`${OWNER}.engage: cluster ${name} is engaged from ${old.source}; ${from} names it too (one source per cluster name)`);
    }
    if (this.#signal === undefined) throw new InvalidOptionError(`${OWNER}.engage: cluster ${name} (${from}): the manager has not started (a provider engages from its run)`);
    if (this.#signal.aborted) {
      this.#logger.debug('cluster not engaged: the manager is stopping', { cluster: name, source: from });
      return;
    }
    if (old !== undefined) this.disengage(name, `re-engaged from ${from}`);
    const stop = new AbortController();
    const factory = new SharedInformerFactory(kubeConfig, { ...this.#factoryOptions, cluster: name });
    const handle: ClusterHandle = { name, epoch: ++this.#epoch, kubeConfig, factory, signal: stop.signal };
    this.#clusters.set(name, { handle, source: from, stop });
    this.#engages++;
    for (const controller of this.#controllers) controller.engage(handle);
    factory.start(stop.signal);
    this.#logger.info('cluster engaged', { cluster: name, source: from });
  }

  /** {@link ClusterSink.disengage}: the controllers drop the cluster's keys, its factory stops. */
  disengage(name: string, reason?: string): void {
    const cluster = this.#clusters.get(name);
    if (cluster === undefined) return;
    this.#clusters.delete(name);
    this.#disengages++;
    for (const controller of this.#controllers) controller.disengage(name);
    cluster.stop.abort();
    const stopped = cluster.handle.factory.shutdown().catch((err: unknown) => this.#logger.warn('cluster caches stopped with a failure', { cluster: name, ...errorFields(err) }));
    this.#stopping.add(stopped);
    void stopped.finally(() => this.#stopping.delete(stopped));
    this.#logger.info('cluster disengaged', { cluster: name, source: cluster.source, reason: reason ?? 'unknown' });
  }

  /** {@link ClusterSink.refuse}: a warning naming the cluster, the source and the error; counted in `stats().refused` and `refusedByReason`. */
  refuse(name: string | undefined, error: Error, source?: string): void {
    this.#refused++;
    const reason = error instanceof ClusterRefusedError ? error.reason : 'other';
    this.#refusedByReason[reason] = (this.#refusedByReason[reason] ?? 0) + 1;
    this.#logger.warn('cluster refused', { cluster: name ?? '(unknown)', source: source ?? 'unnamed source', ...errorFields(error) });
  }

  /**
   * What the fleet needs from one kind of its clusters, for `kube-informer rbac --cluster` (docs/rbac.md,
   * "RBAC for a fleet"), with what the rules cannot cover. `{ cluster: 'target' }`: what EVERY engaged
   * cluster must grant the credentials of its kubeconfig — each controller's `permissions()` in
   * `factoryOptions.namespace` (a warning for a controller that declares no `uses` or has no
   * `permissions()`). `{ cluster: 'management' }`: what the cluster the providers read must grant this
   * process — each provider's `permissions()` (a warning for one without). Throws `INVALID_OPTION`
   * for another `cluster`.
   */
  permissionReport(options: FleetPermissionOptions): PermissionReport {
    return fleetPermissionReport(OWNER, options, this.#providers, this.#controllers, this.#factoryOptions.namespace);
  }

  /** The names of the clusters engaged now. */
  clusters(): string[] {
    return [...this.#clusters.keys()];
  }

  /** The factory of an engaged cluster (its caches), or `undefined`. */
  factoryOf(name: string): SharedInformerFactory | undefined {
    return this.#clusters.get(name)?.handle.factory;
  }

  /**
   * True while it runs and every provider is ready (see {@link MultiClusterReport.ok}): a cluster that
   * is not ready does not change it.
   */
  ready(): boolean {
    return this.readiness().ok;
  }

  /** Every cluster's and every provider's verdict, for `/readyz`'s detail. */
  readiness(): MultiClusterReport {
    const clusters = [...this.#clusters.entries()].map(([name, c]): ClusterVerdict => {
      const caches = verdictOf(c.handle.factory.health());
      const failed = this.#controllers.flatMap((ctl) => {
        const failure = ctl.failureOf?.(name);
        return failure === undefined ? [] : [`controller ${ctl.name} stopped on this cluster: ${failure.message}`];
      });
      return { name, source: c.source, ready: caches.ready && failed.length === 0, problems: [...failed, ...caches.problems] };
    });
    const providers = this.#providers.map((p): ProviderVerdict => {
      if (p.health === undefined) return { name: p.name, ready: true, problems: [] };
      const health = p.health();
      return Object.keys(health).length === 0 ? { name: p.name, ready: false, problems: ['it watches nothing yet (not started)'] } : { name: p.name, ...verdictOf(health) };
    });
    const ok = this.#running && this.#signal?.aborted === false && providers.every((p) => p.ready);
    return { ok, clusters, providers, refused: this.#refused };
  }

  /**
   * Every informer the manager reads, for `registerInformerMetrics`: each provider's (its `health()`)
   * keyed `provider <name>/<key>`, then each engaged cluster's keyed `cluster/resource`
   * (`east/v1/configmaps`; the informers' names carry the cluster too: the factory's option `cluster`).
   */
  health(): Record<string, InformerHealth> {
    const all = this.#providerHealth();
    for (const [name, c] of this.#clusters) {
      for (const [resource, h] of Object.entries(c.handle.factory.health())) all[`${name}/${resource}`] = h;
    }
    return all;
  }

  /**
   * What `/readyz` and `/livez` read (`probeHandler({ informers: manager.probeInformers() })`): the
   * informers of {@link MultiClusterManager.health}, except that one of a cluster that is not ready is
   * reported live and ready with a `detail` naming the cluster, its source and its problems — one
   * unreachable cluster neither restarts the process nor takes the others out of service. A provider's
   * informers are reported as they are: the management cluster's Secrets not ready fail `/readyz`.
   */
  probeInformers(): HasFactoryHealth {
    return {
      health: () => {
        const all = this.#providerHealth();
        const verdicts = new Map(this.readiness().clusters.map((v) => [v.name, v]));
        for (const [name, c] of this.#clusters) {
          const verdict = verdicts.get(name);
          const why = verdict === undefined || verdict.problems.length === 0 ? 'its caches have not synced yet' : verdict.problems.join('; ');
          for (const [resource, h] of Object.entries(c.handle.factory.health())) {
            all[`${name}/${resource}`] = verdict?.ready === true ? h : { ...h, live: true, ready: true, detail: `cluster ${name} (${c.source}) is not ready: ${why}` };
          }
        }
        return all;
      },
    };
  }

  #providerHealth(): Record<string, InformerHealth> {
    const all: Record<string, InformerHealth> = {};
    for (const p of this.#providers) for (const [key, h] of Object.entries(p.health?.() ?? {})) all[`provider ${p.name}/${key}`] = h;
    return all;
  }

  /** Counts for metrics. */
  stats(): MultiClusterManagerStats {
    const unready = this.readiness().clusters.filter((c) => !c.ready).length;
    return { engaged: this.#clusters.size, unready, engages: this.#engages, disengages: this.#disengages, refused: this.#refused, refusedByReason: { ...this.#refusedByReason } };
  }
}
