// Contender ki-dist: kube-informer as a user's program builds it — imported by the package's name (its built dist/), default options, one handler.
//
// `import('kube-informer')` resolves through the package's own `exports` to `dist/index.js` (Node's
// self-reference: this file runs inside the repository); the phase runs `npm run build` first
// (bench/lib/build.ts `buildDist`). The types come from src/, which dist/ is compiled from.

import type * as KubeInformer from '../../src/index.js';
import { benchKubeConfig, runContender } from '../lib/contender.js';

// A variable specifier: the type-check does not need dist/ to exist.
const specifier = 'kube-informer';
const { SharedIndexInformer, newListWatch } = (await import(specifier)) as typeof KubeInformer;

await runContender((cfg, hooks) => {
  const informer = new SharedIndexInformer(newListWatch(benchKubeConfig(cfg), { group: '', version: 'v1', resource: 'pods' }));
  const registration = informer.addEventHandler({ onUpdate: () => hooks.modified(0) });
  informer.run(new AbortController().signal).catch((err: unknown) => hooks.error(err));
  return { synced: Promise.all([informer.whenSynced(), registration.whenSynced()]).then(() => undefined), size: () => informer.getStore().listKeys().length };
});
