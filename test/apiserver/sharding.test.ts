// Server-side sharded list and watch (KEP-5866) on the real kube-apiserver, started by the harness with
// the ShardedListAndWatch gate (scripts/apiserver/start.sh adds it from 1.36 on): the server's filter
// and our client-side hash agree on every object, even shards partition the collection, and a sharded
// informer caches exactly its share through list and watch.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { evenShard, formatShardSelector, shardMatcher } from '../../src/core/shard-selector.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, SharedInformerFactory, type ResourceClient } from '../../src/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const COUNT = 300;
const signal = (): AbortSignal => new AbortController().signal;
const keyOf = (o: { readonly metadata?: { readonly namespace?: string; readonly name?: string } }): string => `${o.metadata?.namespace}/${o.metadata?.name}`;

describe('sharded list and watch on the real kube-apiserver', () => {
  let server: RealApiServer;
  let configMaps: ResourceClient<KubeObject>;
  let namespace: string;

  beforeAll(async () => {
    server = await startRealApiServer();
    namespace = await freshNamespace(server, 'shard');
    configMaps = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'test-user' });
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < COUNT; i++) writes.push(configMaps.create({ metadata: { name: `cm-${i}`, namespace } }));
    await Promise.all(writes);
  }, 120_000);
  afterAll(async () => {
    configMaps?.close();
    await server?.stop();
  });

  it('four even shards partition the namespace; each list echoes its selector; our hash agrees with the server on every object', async () => {
    const all = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
    expect(all).toHaveLength(COUNT);
    const owners = new Map<string, number>();
    for (let i = 0; i < 4; i++) {
      const shard = evenShard(i, 4);
      const lw = newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace, shard, logger: false });
      // Both the watch cache (resourceVersion=0) and etcd (a consistent list, paged) apply it.
      for (const options of [{ resourceVersion: '0' }, { limit: 40 }]) {
        let list = await lw.list(options, signal());
        expect(list.metadata.shardInfo).toEqual({ selector: formatShardSelector(shard) });
        let items = list.items;
        while (list.metadata.continue) {
          list = await lw.list({ limit: 40, continue: list.metadata.continue }, signal());
          expect(list.metadata.shardInfo).toEqual({ selector: formatShardSelector(shard) });
          items = items.concat(list.items);
        }
        if (options.resourceVersion === '0') for (const o of items) owners.set(keyOf(o), (owners.get(keyOf(o)) ?? 0) + 1);
        // What the server sent is exactly what our hash puts in the shard.
        expect(items.map(keyOf).sort()).toEqual(all.filter(shardMatcher(shard)).map(keyOf).sort());
      }
      lw.close();
    }
    expect(owners.size).toBe(COUNT);
    expect([...owners.values()].every((n) => n === 1)).toBe(true);
  });

  it('a sharded informer caches exactly its share, and its watch delivers only its share', async () => {
    const shard = evenShard(1, 3);
    const inShard = shardMatcher(shard);
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace, shard, logger: false });
    const informer = factory.forResource<KubeObject>(CONFIGMAPS);
    const added: string[] = [];
    informer.addEventHandler({ onAdd: (o) => void added.push(keyOf(o)), onUpdate() {}, onDelete() {} });
    const ac = new AbortController();
    const running = factory.start(ac.signal);
    try {
      await informer.whenSynced();
      const all = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
      expect(informer.getStore().listKeys().sort()).toEqual(all.filter(inShard).map(keyOf).sort());

      const created = await Promise.all(Array.from({ length: 60 }, (_, i) => configMaps.create({ metadata: { name: `late-${i}`, namespace } })));
      const expected = created.filter(inShard).map(keyOf);
      expect(expected.length).toBeGreaterThan(5);
      const deadline = Date.now() + 30_000;
      while (!expected.every((k) => informer.getStore().getByKey(k) !== undefined) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // A bookmark-free check that nothing outside arrived: the store holds exactly the shard.
      const now = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
      expect(informer.getStore().listKeys().sort()).toEqual(now.filter(inShard).map(keyOf).sort());
      expect(added.every((k) => inShard(now.find((o) => keyOf(o) === k)))).toBe(true);
    } finally {
      ac.abort();
      await running;
    }
  });
});
