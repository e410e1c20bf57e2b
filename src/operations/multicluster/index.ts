// The multi-cluster manager: one controller engaged on many clusters, clusters reported by providers.
export type { ClusterProvider, ClusterSink } from './provider.js';
export { kubeconfigSecrets, clusterApiKubeconfigSecrets, KubeconfigSecretsProvider, KUBECONFIG_SECRET_LABEL } from './kubeconfig-secrets.js';
export type { KubeconfigSecretsOptions, KubeconfigSecretsStats } from './kubeconfig-secrets.js';
