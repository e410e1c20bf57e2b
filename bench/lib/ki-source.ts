// The ListerWatcher of the kube-informer contenders (bench/contenders/kube-informer*.ts): pods through newListWatch.
//
// In mode `watch` the first list is made at exactly `listRv` (a thin wrapper over the ListerWatcher), so
// the watch replays the server's recorded burst. Kept apart from contender.ts, which the raw and
// client-node contenders import too: they do not load the library.

import { loadKubeConfig, newListWatch, type ListerWatcher } from '../../src/listwatch/index.js';
import type { KubeObject } from '../../src/core/index.js';
import { urlTokenKubeConfig } from './contender.js';
import type { ContenderConfig } from './protocol.js';

/** Pods of `cfg`'s server (its namespace, metadata-only when asked), first listed at `cfg.listRv` when given. */
export function podSource(cfg: ContenderConfig): ListerWatcher<KubeObject> {
  const lw = newListWatch<KubeObject>(cfg.kubeconfig !== undefined ? loadKubeConfig({ kubeconfig: cfg.kubeconfig, lean: true }) : urlTokenKubeConfig(cfg), { group: '', version: 'v1', resource: 'pods' }, { metadataOnly: cfg.metadataOnly, namespace: cfg.namespace, watchCoalesceMs: cfg.coalesceMs });
  if (cfg.listRv === undefined) return lw;
  const rv = cfg.listRv;
  let first = true;
  return {
    list(options, signal) {
      if (!first || options.continue !== undefined) return lw.list(options, signal);
      first = false;
      return lw.list({ ...options, resourceVersion: rv, resourceVersionMatch: 'Exact' }, signal);
    },
    watch: (options, signal) => lw.watch(options, signal),
  };
}
