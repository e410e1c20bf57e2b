// The multi-cluster manager: one controller engaged on many clusters, clusters reported by providers.
export type { ClusterProvider, ClusterSink } from './provider.js';
