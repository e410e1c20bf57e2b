// Contender (b): @kubernetes/client-node's makeInformer over listPodForAllNamespaces, one handler.

import { CoreV1Api, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { benchKubeConfig, runContender } from '../lib/contender.js';

await runContender((cfg, hooks) => {
  const kc = benchKubeConfig(cfg);
  const api = kc.makeApiClient(CoreV1Api);
  const list = () =>
    cfg.listRv === undefined
      ? api.listPodForAllNamespaces()
      : api.listPodForAllNamespaces({ resourceVersion: cfg.listRv, resourceVersionMatch: 'Exact' });
  const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', list);
  for (let h = 0; h < cfg.handlers; h++) informer.on('update', () => hooks.modified(h));
  informer.on('error', (err) => hooks.error(err));
  return { synced: informer.start(), size: () => informer.list().length };
});
