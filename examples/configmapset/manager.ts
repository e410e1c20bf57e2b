// The in-cluster configmapset operator's Manager, for `kube-informer rbac`: built as in-cluster.ts builds it, on a placeholder KubeConfig (nothing connects).
//
//   POD_NAMESPACE=configmapset-system npx tsx src/cli/bin.ts rbac examples/configmapset/manager.ts \
//       --name configmapset-operator --namespace configmapset-system --service-account configmapset-operator
// The environment says how it is deployed, as its flags do in the pod: WATCH_NAMESPACE (in-cluster.ts's
// --watch-namespace; default every namespace: a ClusterRole), LEADER_ELECT=false (default true: Leases
// in POD_NAMESPACE, default `configmapset-system`, a Role there).

import { KubeConfig } from '@kubernetes/client-node';
import type { Manager } from '../../src/operations/index.js';
import { inClusterOperator } from './in-cluster.js';
import { DirectoryRegistry } from './registry.js';

/** A KubeConfig whose cluster is never reached: the Manager is only asked what it needs. */
function placeholderKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: 'https://kubernetes.default.svc', skipTLSVerify: false }],
    users: [{ name: 'service-account' }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'service-account' }],
    currentContext: 'in-cluster',
  });
  return kubeConfig;
}

/** The Manager of the in-cluster operator deployed as the environment says (see the file's header). */
export function configMapSetManager(env: Readonly<Record<string, string | undefined>> = process.env): Manager {
  return inClusterOperator(placeholderKubeConfig(), {
    registry: new DirectoryRegistry('/var/lib/configmapset/registry'),
    watchNamespace: env.WATCH_NAMESPACE || undefined,
    podNamespace: env.POD_NAMESPACE || 'configmapset-system',
    leaderElect: env.LEADER_ELECT !== 'false',
    logger: false,
  }).manager;
}

/** What `kube-informer rbac` reads. */
export default configMapSetManager();
