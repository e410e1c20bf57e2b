// Contender (c): kube-informer's SharedIndexInformer over newListWatch, with `handlers` no-op handlers.
//
// Variants by config: `metadataOnly` (PartialObjectMetadata), `strip` (the stripManagedFields
// transform), `watchList` (streaming list). In mode `watch` the first list is made at exactly
// `listRv` (a thin wrapper over the ListerWatcher), so the watch replays the server's recorded burst.

import { newListWatch, type ListerWatcher } from '../../src/listwatch/index.js';
import { SharedIndexInformer, stripManagedFields } from '../../src/informer/index.js';
import type { KubeObject } from '../../src/core/index.js';
import { benchKubeConfig, runContender } from '../lib/contender.js';

await runContender((cfg, hooks) => {
  const lw = newListWatch<KubeObject>(benchKubeConfig(cfg), { group: '', version: 'v1', resource: 'pods' }, { metadataOnly: cfg.metadataOnly, namespace: cfg.namespace });
  let source: ListerWatcher<KubeObject> = lw;
  if (cfg.listRv !== undefined) {
    const rv = cfg.listRv;
    let first = true;
    source = {
      list(options, signal) {
        if (!first || options.continue !== undefined) return lw.list(options, signal);
        first = false;
        return lw.list({ ...options, resourceVersion: rv, resourceVersionMatch: 'Exact' }, signal);
      },
      watch: (options, signal) => lw.watch(options, signal),
    };
  }
  const informer = new SharedIndexInformer<KubeObject>(source, {
    name: cfg.id,
    transform: cfg.strip ? stripManagedFields : undefined,
    onWatchError: (err) => hooks.error(err),
    reflector: cfg.watchList ? { useWatchList: true } : undefined,
  });
  const registrations = [];
  for (let h = 0; h < cfg.handlers; h++) {
    registrations.push(informer.addEventHandler({ onAdd() {}, onUpdate: () => hooks.modified(h), onDelete() {} }));
  }
  const controller = new AbortController();
  informer.run(controller.signal).catch((err: unknown) => hooks.error(err));
  const synced = Promise.all([informer.whenSynced(), ...registrations.map((r) => r.whenSynced())]).then(() => undefined);
  return { synced, size: () => informer.getStore().listKeys().length };
});
