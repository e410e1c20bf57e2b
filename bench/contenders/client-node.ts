// Contender (b): @kubernetes/client-node's makeInformer over listPodForAllNamespaces (listNamespacedPod with a namespace), one handler.

import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { runContender } from '../lib/contender.js';
import type { ContenderConfig } from '../lib/protocol.js';

/** client-node's KubeConfig for the benchmark server (the kubeconfig file when given, else URL + token). */
function benchKubeConfig(cfg: ContenderConfig): KubeConfig {
  const kc = new KubeConfig();
  if (cfg.kubeconfig !== undefined) {
    kc.loadFromFile(cfg.kubeconfig);
    return kc;
  }
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server: cfg.url, skipTLSVerify: true }],
    users: [{ name: 'bench', token: cfg.token }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  return kc;
}

await runContender((cfg, hooks) => {
  const kc = benchKubeConfig(cfg);
  const api = kc.makeApiClient(CoreV1Api);
  const exact = cfg.listRv === undefined ? {} : { resourceVersion: cfg.listRv, resourceVersionMatch: 'Exact' };
  const ns = cfg.namespace;
  const list = () => (ns === undefined ? api.listPodForAllNamespaces(exact) : api.listNamespacedPod({ namespace: ns, ...exact }));
  const informer = makeInformer<V1Pod>(kc, ns === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${ns}/pods`, list);
  for (let h = 0; h < cfg.handlers; h++) informer.on('update', () => hooks.modified(h));
  informer.on('error', (err) => hooks.error(err));
  return { synced: informer.start(), size: () => informer.list().length };
});
