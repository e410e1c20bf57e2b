// The contract between a multi-cluster manager and the things that tell it which clusters exist.
//
// A provider (a static list, Secrets holding kubeconfigs, ...) runs until its signal aborts and reports
// what it sees to a sink: a cluster to engage, a cluster to disengage, an input it refused. The sink is
// the manager's side: it starts and stops the per-cluster caches and controllers. Providers never see
// the manager; the manager never sees where a cluster came from beyond the `source` text.

import type { InformerHealth } from '../../informer/index.js';
import type { KubeConfigLike } from '../../listwatch/index.js';
import type { Permission } from '../../core/permissions.js';

/**
 * Where a provider reports clusters: the manager implements it (tests use a recording fake).
 *
 * The calls are synchronous and cheap: the sink records the change and does the slow work (starting
 * informers, waiting for caches, stopping them) on its own. A provider calls them from any point of
 * its `run`, in the order it learned of the changes.
 */
export interface ClusterSink {
  /**
   * Engage a cluster: from now on the manager runs caches and controllers against it. Engaging a name
   * that is engaged from the same `source` replaces it (a re-engage: the old one is disengaged first,
   * its queued keys dropped). Engaging a name engaged from another source throws an
   * `InvalidOptionError` (code `INVALID_OPTION`) naming both sources, and changes nothing.
   * @param name the cluster's name: the `cluster` of every request reconciled against it; unique in the manager
   * @param kubeConfig how to reach its API server (a `KubeConfig` or `leanKubeConfig`)
   * @param source where the cluster came from, for errors and logs (e.g. `secret ns/name`, `static`)
   */
  engage(name: string, kubeConfig: KubeConfigLike, source?: string): void;
  /**
   * Disengage a cluster: its controllers stop taking work, its queued keys are dropped (never
   * reconciled against another cluster), its informers stop. A name that is not engaged is ignored.
   * @param name the cluster's name, as engaged
   * @param reason why, for the log (e.g. `secret deleted`)
   */
  disengage(name: string, reason?: string): void;
  /**
   * Report an input the provider could not turn into a cluster (a Secret without its key, a kubeconfig
   * that does not parse, credentials the server refuses): logged and counted by the sink, never thrown.
   * A cluster already engaged under `name` stays as it is.
   * @param name the cluster's name when the provider knows it, else `undefined`
   * @param error what is wrong, naming the field or rule
   * @param source where the input came from (e.g. `secret ns/name`)
   */
  refuse(name: string | undefined, error: Error, source?: string): void;
}

/**
 * Something that knows which clusters exist and tells a {@link ClusterSink} as that changes.
 *
 * `run` reports the clusters it knows, keeps watching for changes, and resolves once `signal` aborts
 * (after its own cleanup). It rejects only for a failure it cannot recover from; the manager then
 * reports the provider failed. A provider does not disengage its clusters when it stops: the manager
 * stops all clusters itself.
 */
export interface ClusterProvider {
  /** A short name for logs, metrics and errors (e.g. `static`, `kubeconfig-secrets`). */
  readonly name: string;
  /**
   * Report clusters to `sink` until `signal` aborts.
   * @param signal aborted when the manager stops
   * @param sink where to report clusters
   */
  run(signal: AbortSignal, sink: ClusterSink): Promise<void>;
  /**
   * The health of the informers the provider learns clusters from (a management cluster's Secrets), by
   * a key of its choosing. While one is not ready no cluster comes or goes, so the manager is not ready:
   * `readiness().ok` is false and `/readyz` fails, naming it. Optional: a provider with nothing to
   * watch (`staticClusters`) has none and never gates readiness.
   */
  health?(): Record<string, InformerHealth>;
  /**
   * What the provider needs from the MANAGEMENT cluster (the one it learns clusters from: `list` and
   * `watch` of its Secrets), for `kube-informer rbac --cluster management` (docs/rbac.md). Optional:
   * the manager's permission report warns about a provider without it; `staticClusters` returns none.
   */
  permissions?(): Permission[];
}
