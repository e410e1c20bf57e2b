// Shard by cluster: replicas of a multi-cluster manager split the clusters between them over a shard
// ring. A wrapper around any provider: a cluster it reports is engaged on this replica only while the
// ring gives this replica the cluster's slot; every other cluster is held, ready for when the slot comes.

import { ChildAbort } from '../../core/abort.js';
import { AlreadyStartedError } from '../../core/errors.js';
import { errorFields, resolveLogger, withFields, type Logger, type LoggerOption } from '../../core/log.js';
import { InvalidOptionError, describeValue, validateOptions } from '../../core/options.js';
import { hasPermissions, type HasPermissions, type Permission } from '../../core/permissions.js';
import type { InformerHealth } from '../../informer/index.js';
import type { KubeConfigLike } from '../../listwatch/index.js';
import type { ShardRing } from '../../sharding/ring.js';
import type { ClusterProvider, ClusterSink } from './provider.js';

/** Options of {@link shardedClusters}. */
export interface ShardedClustersOptions {
  /** Where clusters held, engaged and handed over are logged. Default: the library's default logger. */
  logger?: LoggerOption;
}

/** Which clusters a {@link ShardedClusterProvider} knows, by where they are. */
export interface ShardedClustersState {
  /** Clusters engaged on this replica (the ring gives it their slots), sorted. */
  readonly engaged: readonly string[];
  /** Clusters the provider reported whose slots another replica owns (or none yet), sorted. */
  readonly held: readonly string[];
}

interface Known {
  readonly kubeConfig: KubeConfigLike;
  readonly source: string | undefined;
  readonly slot: number;
}

const OWNER = 'shardedClusters';

/**
 * A {@link ClusterProvider} that shards the clusters of another one across replicas with a
 * {@link ShardRing} (see {@link shardedClusters}).
 */
export class ShardedClusterProvider implements ClusterProvider, HasPermissions {
  readonly #provider: ClusterProvider;
  readonly #ring: ShardRing;
  readonly #log: Logger;
  readonly #known = new Map<string, Known>();
  /** Clusters engaged here, each with the release of the work it holds on its slot (`ring.track`). */
  readonly #engaged = new Map<string, () => void>();
  #sink: ClusterSink | undefined;
  #running = false;
  /**
   * The wrapped provider's `health()` (its management cluster's Secrets, say), so they gate the
   * manager's readiness as they would unwrapped; absent when that provider has none.
   */
  readonly health?: () => Record<string, InformerHealth>;

  /** Use {@link shardedClusters}. */
  constructor(provider: ClusterProvider, ring: ShardRing, options: ShardedClustersOptions = {}) {
    validateOptions(OWNER, options, { logger: 'logger' });
    if (typeof provider?.run !== 'function' || typeof provider.name !== 'string') {
      throw new InvalidOptionError(`${OWNER}: provider must be a ClusterProvider (a name and a run(signal, sink)), got ${describeValue(provider)}`);
    }
    if (typeof ring?.subscribe !== 'function' || typeof ring.slotOfName !== 'function' || typeof ring.run !== 'function') {
      throw new InvalidOptionError(`${OWNER}: ring must be a ShardRing (it has no subscribe(), slotOfName() or run())`);
    }
    this.#provider = provider;
    this.#ring = ring;
    if (provider.health !== undefined) this.health = provider.health.bind(provider);
    this.#log = withFields(resolveLogger(options.logger), { component: 'sharded-clusters', provider: provider.name });
  }

  /** `sharded(<the provider's name>)`. */
  get name(): string {
    return `sharded(${this.#provider.name})`;
  }

  /**
   * What the MANAGEMENT cluster must grant: the wrapped provider's permissions (none when it has no
   * `permissions()`) and the ring's (its Leases, for a `LeaseRingStore`).
   */
  permissions(): Permission[] {
    return [...(hasPermissions(this.#provider) ? this.#provider.permissions() : []), ...this.#ring.permissions()];
  }

  /** The clusters engaged here and the ones held for another replica, now. */
  clusters(): ShardedClustersState {
    const engaged = [...this.#engaged.keys()].sort();
    return { engaged, held: [...this.#known.keys()].filter((n) => !this.#engaged.has(n)).sort() };
  }

  /**
   * Runs the ring and the wrapped provider until `signal` aborts. The ring leaves then: each slot's
   * clusters are disengaged before the slot is released to another replica. A failure of either (a ring
   * already running: `ALREADY_STARTED`) stops the other, and `run` rejects with it.
   */
  async run(signal: AbortSignal, sink: ClusterSink): Promise<void> {
    if (this.#running) throw new AlreadyStartedError(this.name);
    this.#running = true;
    this.#sink = sink;
    const stop = new ChildAbort(signal);
    // A ring listener must not throw: a sink that throws on a disengage is logged, not the ring's problem.
    const unsubscribe = this.#ring.subscribe(() => {
      try {
        this.#follow();
      } catch (err) {
        this.#log.error(`following the shard ring failed: ${err instanceof Error ? err.message : String(err)}`, errorFields(err));
      }
    });
    const inner: ClusterSink = {
      engage: (name, kubeConfig, source) => this.#engage(name, kubeConfig, source),
      disengage: (name, reason) => {
        this.#known.delete(name);
        this.#drop(name, reason);
      },
      refuse: (name, error, source) => sink.refuse(name, error, source),
    };
    const failed = (err: unknown): never => {
      stop.controller.abort(err);
      throw err;
    };
    try {
      const results = await Promise.allSettled([this.#ring.run(stop.signal).catch(failed), this.#provider.run(stop.signal, inner).catch(failed)]);
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure !== undefined) throw failure.reason;
    } finally {
      unsubscribe();
      for (const name of [...this.#engaged.keys()]) this.#drop(name, `${this.name} stopped`);
      this.#known.clear();
      stop.dispose();
      this.#running = false;
    }
  }

  /** The provider reports a cluster: engaged here if its slot is ours, else held. */
  #engage(name: string, kubeConfig: KubeConfigLike, source: string | undefined): void {
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError(`${OWNER}: a cluster's name must be a non-empty string, got ${String(name)}`);
    const old = this.#known.get(name);
    if (old !== undefined && old.source !== source) {
      // As the manager's sink does, also for a cluster held here (the manager never sees it).
      throw new InvalidOptionError(`${OWNER}: cluster ${name} comes from ${old.source ?? 'an unnamed source'}; ${source ?? 'an unnamed source'} names it too (one source per cluster name)`);
    }
    const known: Known = { kubeConfig, source, slot: this.#ring.slotOfName(name) };
    this.#known.set(name, known);
    if (this.#engaged.has(name)) {
      (this.#sink as ClusterSink).engage(name, kubeConfig, source); // a re-engage: the manager replaces it
    } else if (this.#ring.owns(known.slot)) {
      try {
        this.#engageHere(name, known);
      } catch (err) {
        if (old === undefined) this.#known.delete(name);
        else this.#known.set(name, old);
        throw err;
      }
    } else {
      this.#log.debug(`cluster ${name} held: its shard slot ${known.slot} is not owned by ${this.#ring.identity}`, { cluster: name, slot: known.slot });
    }
  }

  /** The owned slots changed: engage what became ours, disengage what is no longer. */
  #follow(): void {
    for (const [name, known] of this.#known) {
      const ours = this.#ring.owns(known.slot);
      if (ours && !this.#engaged.has(name)) {
        try {
          this.#engageHere(name, known);
        } catch (err) {
          (this.#sink as ClusterSink).refuse(name, err instanceof Error ? err : new Error(String(err)), known.source);
        }
      } else if (!ours && this.#engaged.has(name)) {
        this.#drop(name, `shard slot ${known.slot} is no longer owned by ${this.#ring.identity}`);
      }
    }
  }

  /** Engages on the sink and holds the slot (`ring.track`) until the cluster is disengaged here. */
  #engageHere(name: string, known: Known): void {
    (this.#sink as ClusterSink).engage(name, known.kubeConfig, known.source);
    let release = (): void => {};
    void this.#ring.track(known.slot, new Promise<void>((resolve) => (release = resolve)));
    this.#engaged.set(name, release);
    this.#log.info(`cluster ${name} engaged on ${this.#ring.identity}: its shard slot ${known.slot} is ours`, { cluster: name, slot: known.slot });
  }

  /** Disengages a cluster engaged here; its slot may then be handed over. */
  #drop(name: string, reason: string | undefined): void {
    const release = this.#engaged.get(name);
    if (release === undefined) return;
    this.#engaged.delete(name);
    try {
      (this.#sink as ClusterSink).disengage(name, reason);
    } finally {
      release();
    }
  }
}

/**
 * Shards the clusters of `provider` across the replicas of a multi-cluster manager: each cluster is
 * engaged on the one replica whose `ring` owns the cluster's slot (`ring.slotOfName(name)`), and held
 * (not refused) on every other. When a slot moves (a replica joins, leaves or is cut off), its clusters
 * are disengaged on the old owner before the slot is released, and engaged on the new one once it owns
 * it; a replica that loses a slot without a handover (its renewals fail) disengages at its renew
 * deadline. Its `run` runs the ring too: do not run the ring elsewhere (give it to `probeHandler`'s
 * `rings` for `/readyz`). The sink's `disengage` returns before the cluster's running reconciles
 * finish: the manager drains them as it does for any disengage.
 *
 * Throws `INVALID_OPTION` for a provider that is not one, a ring that is not one, or an unknown option.
 *
 * @example
 * ```ts
 * declare const store: import('kube-informer/sharding').RingStore;
 * declare const secrets: import('kube-informer/operations').ClusterProvider;
 * const ring = new ShardRing({ store, name: 'fleet', identity: process.env.POD_NAME ?? 'local' });
 * const manager = new MultiClusterManager({ providers: [shardedClusters(secrets, ring)] });
 * ```
 */
export function shardedClusters(provider: ClusterProvider, ring: ShardRing, options?: ShardedClustersOptions): ShardedClusterProvider {
  return new ShardedClusterProvider(provider, ring, options);
}
