// The simplest cluster provider: a fixed list of clusters, engaged at the start and kept until the stop.

import { InvalidOptionError } from '../../core/options.js';
import type { KubeConfigLike } from '../../listwatch/index.js';
import type { HasPermissions } from '../../core/permissions.js';
import type { ClusterProvider, ClusterSink } from './provider.js';

/**
 * A {@link ClusterProvider} of a fixed set of clusters (name → KubeConfig): each is engaged when the
 * manager starts (source `static`) and stays until it stops. Throws `INVALID_OPTION` for an empty set,
 * an empty name or a value that is not a KubeConfig.
 *
 * @example
 * ```ts
 * const provider = staticClusters({ east: eastKubeConfig, west: westKubeConfig });
 * ```
 */
export function staticClusters(clusters: Readonly<Record<string, KubeConfigLike>>): ClusterProvider & HasPermissions {
  const entries = Object.entries(clusters ?? {});
  if (entries.length === 0) throw new InvalidOptionError('staticClusters: name at least one cluster');
  for (const [name, kc] of entries) {
    if (name === '') throw new InvalidOptionError('staticClusters: a cluster name is empty');
    if (kc === null || typeof kc !== 'object' || typeof kc.getCurrentCluster !== 'function') {
      throw new InvalidOptionError(`staticClusters: cluster ${name} is not a KubeConfig (it has no getCurrentCluster())`);
    }
  }
  return {
    name: 'static',
    permissions: () => [],
    run: async (signal: AbortSignal, sink: ClusterSink): Promise<void> => {
      if (signal.aborted) return;
      for (const [name, kc] of entries) sink.engage(name, kc, `static ${name}`);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}
