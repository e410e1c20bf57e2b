// NamespaceSetInformer against a plain model, through seeded random schedules on the fake API server:
// objects created and deleted in random namespaces, namespaces added to and removed from the set. After
// each step settles, the cache holds exactly the objects of the namespaces in the set, and a handler that
// applies its adds and deletes to a map of its own holds the same — so a removed namespace left as deletes.

import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { NamespaceSetInformer, SharedIndexInformer } from '../../src/informer/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { seededRandom } from '../../src/testing/random.js';
import { until } from '../examples/helpers.js';
import { useCleanups } from '../listwatch/helpers.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const NAMESPACES = ['n0', 'n1', 'n2', 'n3'];
const { cleanups } = useCleanups();
const keyOf = (o: KubeObject): string => `${o.metadata?.namespace}/${o.metadata?.name}`;

async function schedule(seed: number, steps: number): Promise<void> {
  const random = seededRandom(seed);
  const pick = <V>(xs: readonly V[]): V => xs[Math.floor(random() * xs.length)];
  const fake = await startFakeApiServer();
  cleanups.push(() => fake.close());
  const informer = new NamespaceSetInformer<KubeObject>({
    namespaces: ['n0', 'n1'],
    logger: false,
    informerFor: (namespace) => new SharedIndexInformer(newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { namespace, logger: false }), { logger: false }),
  });
  const seen = new Set<string>();
  informer.addEventHandler({
    onAdd: (o) => void seen.add(keyOf(o as KubeObject)),
    onDelete: (o) => void seen.delete(keyOf(o as KubeObject)),
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await running;
  });
  const onServer = new Set<string>();
  let n = 0;
  const want = (): string[] => [...onServer].filter((k) => informer.namespaces().includes(k.split('/')[0])).sort();
  for (let step = 0; step < steps; step++) {
    const r = random();
    if (r < 0.5) {
      const ns = pick(NAMESPACES);
      fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${n++}`, namespace: ns } });
      onServer.add(`${ns}/cm-${n - 1}`);
    } else if (r < 0.7 && onServer.size > 0) {
      const key = pick([...onServer].sort());
      const [ns, name] = key.split('/');
      fake.delete(CONFIGMAPS, name, ns);
      onServer.delete(key);
    } else if (r < 0.85) {
      const outside = NAMESPACES.filter((ns) => !informer.namespaces().includes(ns));
      if (outside.length > 0) informer.addNamespace(pick(outside));
    } else if (informer.namespaces().length > 0) {
      informer.removeNamespace(pick(informer.namespaces()));
    }
    const what = `seed ${seed} step ${step}: the cache and the handler hold the set's objects`;
    await until(() => informer.hasSynced() && informer.getIndexer().listKeys().sort().join() === want().join() && [...seen].sort().join() === want().join(), what);
  }
  expect([...seen].sort()).toEqual(want());
}

describe('NamespaceSetInformer against a model', () => {
  it('holds exactly the objects of the namespaces in the set, in the cache and in a handler (seeds 1-20, 100 steps each)', async () => {
    for (let seed = 1; seed <= 20; seed++) await schedule(seed, 100);
  }, 60_000);
});
