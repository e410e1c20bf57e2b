// Contender (c): kube-informer's SharedIndexInformer over newListWatch, with `handlers` no-op handlers.
//
// Variants by config: `metadataOnly` (PartialObjectMetadata), `strip` (the stripManagedFields
// transform), `watchList` (streaming list). The requests are bench/lib/ki-source.ts's.

import { SharedIndexInformer, stripManagedFields } from '../../src/informer/index.js';
import type { KubeObject } from '../../src/core/index.js';
import { runContender } from '../lib/contender.js';
import { podSource } from '../lib/ki-source.js';

await runContender((cfg, hooks) => {
  const source = podSource(cfg);
  const informer = new SharedIndexInformer<KubeObject>(source, {
    name: cfg.id,
    transform: cfg.strip ? stripManagedFields : undefined,
    onWatchError: (err) => hooks.error(err),
    shareUnchanged: cfg.noShare === true ? false : undefined,
    // Paged lists unless the contender is ki-watchlist: the figures stay those of the paged list they always were.
    reflector: { useWatchList: cfg.watchList },
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
