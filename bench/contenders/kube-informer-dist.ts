// Contender ki-dist: kube-informer as a user's program builds it — imported by the package's name (its built dist/), default options, one handler.
//
// `import('kube-informer')` resolves through the package's own `exports` to `dist/index.js` (Node's
// self-reference: this file runs inside the repository); the phase runs `npm run build` first
// (bench/lib/build.ts `buildDist`). The types come from src/, which dist/ is compiled from.

import type * as KubeInformer from '../../src/index.js';
import { runContender, urlTokenKubeConfig } from '../lib/contender.js';

// A variable specifier: the type-check does not need dist/ to exist.
const specifier = 'kube-informer';
const { SharedIndexInformer, loadKubeConfig, newListWatch } = (await import(specifier)) as typeof KubeInformer;

await runContender((cfg, hooks) => {
  // As a user's program reads its kubeconfig without client-node; the URL + token servers: three methods.
  const kc = cfg.kubeconfig !== undefined ? loadKubeConfig({ kubeconfig: cfg.kubeconfig, lean: true }) : urlTokenKubeConfig(cfg);
  const informer = new SharedIndexInformer(newListWatch(kc, { group: '', version: 'v1', resource: 'pods' }));
  const registration = informer.addEventHandler({ onUpdate: () => hooks.modified(0) });
  informer.run(new AbortController().signal).catch((err: unknown) => hooks.error(err));
  return { synced: Promise.all([informer.whenSynced(), registration.whenSynced()]).then(() => undefined), size: () => informer.getStore().listKeys().length };
});
