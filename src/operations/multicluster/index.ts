// The multi-cluster manager: one controller engaged on many clusters, clusters reported by providers.
export type { ClusterProvider, ClusterSink } from './provider.js';
export { staticClusters } from './static.js';
export { MultiClusterController } from './controller.js';
export type { ClusterAware, ClusterHandle, MultiClusterControllerStats } from './controller.js';
export { MultiClusterManager } from './manager.js';
export type { ClusterVerdict, MultiClusterManagerOptions, MultiClusterManagerStats, MultiClusterReport, ProviderVerdict } from './manager.js';
export { kubeconfigSecrets, clusterApiKubeconfigSecrets, KubeconfigSecretsProvider, KUBECONFIG_SECRET_LABEL } from './kubeconfig-secrets.js';
export type { KubeconfigSecretsOptions, KubeconfigSecretsStats } from './kubeconfig-secrets.js';
export { shardedClusters, ShardedClusterProvider } from './sharded.js';
export type { ShardedClustersOptions, ShardedClustersState } from './sharded.js';
export type { FleetCluster, FleetPermissionOptions } from './permissions.js';
