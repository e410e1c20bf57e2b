// awaitResourceVersion (the cache has applied everything up to a version) and relist (a consistent list replaces the cache), on the fake API server.

import { informerIndexer } from '../../src/informer/shared-index-informer.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { resources, SharedInformerFactory, type SharedIndexInformer } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';

let server: FakeApiServer;
let stop: AbortController;
let informer: SharedIndexInformer<KubeObject>;
beforeEach(async () => {
  server = await startFakeApiServer();
  stop = new AbortController();
  server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
  const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
  informer = factory.forResource<KubeObject>(resources.configmaps);
  factory.start(stop.signal);
  await factory.waitForCacheSync(stop.signal);
  await until(() => informer.health().watch.connected, 'the watch');
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

describe('awaitResourceVersion', () => {
  it('resolves at once for a version the cache has reached, and after the change or bookmark that reaches a later one', async () => {
    const listed = informer.lastSyncResourceVersion();
    await informer.awaitResourceVersion(listed);
    server.create('secrets', { metadata: { name: 'other', namespace: 'ns' } }); // moves the server, not this watch
    const later = server.resourceVersion();
    let done = false;
    const waiting = informer.awaitResourceVersion(later).then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    server.bookmark(); // a quiet resource moves only with bookmarks
    await waiting;
    const created = server.create<KubeObject>('configmaps', { metadata: { name: 'b', namespace: 'ns' } });
    await informer.awaitResourceVersion(created.metadata!.resourceVersion!);
    expect(informer.getIndexer().getByKey('ns/b')).toBeDefined(); // in the cache, not just received
  });

  it('rejects on abort, once the informer stopped, and for a version that is not comparable', async () => {
    const ahead = String(Number(server.resourceVersion()) + 100);
    const aborted = new AbortController();
    const waiting = informer.awaitResourceVersion(ahead, aborted.signal);
    aborted.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
    expect(() => informer.awaitResourceVersion('abc')).toThrow(expect.objectContaining({ code: 'INVALID_RESOURCE_VERSION' }));
    const pending = informer.awaitResourceVersion(ahead);
    stop.abort();
    await expect(pending).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
    await expect(informer.awaitResourceVersion(ahead)).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
  });
});

describe('relist', () => {
  it('drops the watch, lists from etcd ("") and replaces the cache: what the cache wrongly held is deleted, what it lacked is added', async () => {
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (o, initial) => void (initial ? undefined : seen.push(`add ${o.metadata?.name}`)),
      onDelete: (o) => void seen.push(`delete ${(o as { key?: string }).key ?? ''}`),
    });
    const indexer = informerIndexer(informer);
    indexer.delete(indexer.getByKey('ns/a')!);
    indexer.add({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ghost', namespace: 'ns', resourceVersion: '1' } });
    server.clearRequests();
    await informer.relist();
    expect(indexer.listKeys()).toEqual(['ns/a']);
    const lists = server.requests().filter((r) => r.resource === 'configmaps' && r.verb === 'list');
    expect(lists.map((r) => r.query.resourceVersion ?? '')).toEqual(['']);
    await until(() => seen.length === 2, 'the handler');
    expect(seen.sort()).toEqual(['add a', 'delete ns/ghost']);
    expect(informer.health().counters.relists).toBe(1);
    await until(() => informer.health().watch.connected, 'the new watch');
  });

  it('rejects on an informer that is not running', async () => {
    const idle = new SharedInformerFactory(server.kubeConfig, { logger: false }).forResource(resources.pods);
    await expect(idle.relist()).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
    stop.abort();
    await until(() => informer.isStopped(), 'the stop');
    await expect(informer.relist()).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
  });
});
