// Paginated lists of hundreds of objects on the real kube-apiserver, through the Reflector and an informer.
//
// The watch cache answers a `resourceVersion=0` list (the reflector's first list, as client-go's) from
// memory and ignores `limit`, so against a default server the first list is never paginated. This
// file's server therefore runs with `--watch-cache-sizes=configmaps#0`: configmaps are served from etcd,
// which pages. Secrets keep their watch cache, and the last test shows the difference.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { SharedIndexInformer, newListWatch, type KubeObject } from '../../src/index.js';
import { Reflector, type ReflectorStore } from '../../src/cache.js';
import { EventRecorder, RecordingListerWatcher, runInformer, startRealApiServer, type RealApiServer } from './harness.js';

const COUNT = 300;
const PAGE = 25;

/** A ReflectorStore that only records what it was handed. */
class RecordingStore<T extends KubeObject> implements ReflectorStore<T> {
  readonly replaces = new EventRecorder<{ names: string[]; resourceVersion: string }>();
  readonly changes: string[] = [];
  add(obj: T): void {
    this.changes.push(`add ${obj.metadata?.name}`);
  }
  update(obj: T): void {
    this.changes.push(`update ${obj.metadata?.name}`);
  }
  delete(obj: T): void {
    this.changes.push(`delete ${obj.metadata?.name}`);
  }
  replace(items: T[], resourceVersion: string): void {
    this.replaces.record({ names: items.map((i) => i.metadata?.name ?? ''), resourceVersion });
  }
  resync(): void {}
}

/** Runs `tasks` with at most `width` in flight. */
async function inParallel(width: number, tasks: Array<() => Promise<unknown>>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: width }, worker));
}

describe('paginated lists against the real kube-apiserver', () => {
  let server: RealApiServer;
  let core: CoreV1Api;
  const namespace = `ki-page-${randomBytes(3).toString('hex')}`;
  const names = Array.from({ length: COUNT }, (_, i) => `cm-${String(i).padStart(3, '0')}`);

  beforeAll(async () => {
    server = await startRealApiServer({ apiServerArgs: ['--watch-cache-sizes=configmaps#0'] });
    core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await inParallel(
      8,
      names.map((name) => () => core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v: '1' } } })),
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(`lists ${COUNT} configmaps in pages of ${PAGE} and hands them to the store in one replace`, async () => {
    const lw = new RecordingListerWatcher(newListWatch<KubeObject>(server.kubeConfig, { group: '', version: 'v1', resource: 'configmaps' }, { namespace }));
    const store = new RecordingStore<KubeObject>();
    const reflector = new Reflector<KubeObject>(lw, store, { name: 'paged', pageSize: PAGE });
    const controller = new AbortController();
    const running = reflector.run(controller.signal);
    try {
      await store.replaces.until((r) => r.length === 1);
      const pages = lw.entries('list');
      expect(pages).toHaveLength(COUNT / PAGE);
      // The first page at "0" (any version); the next ones carry only the continue token and the limit.
      expect(pages[0]!.options).toEqual({ resourceVersion: '0', limit: PAGE });
      for (let i = 1; i < pages.length; i++) {
        expect(pages[i]!.options).toEqual({ continue: pages[i - 1]!.continue, limit: PAGE });
      }
      expect(pages.map((p) => p.items)).toEqual(pages.map(() => PAGE));
      expect(pages.at(-1)!.continue).toBe('');
      // Every page of one list is the same snapshot: the first page's resourceVersion.
      expect(new Set(pages.map((p) => p.resourceVersion)).size).toBe(1);

      const [replace] = store.replaces.events;
      expect(replace!.names).toEqual(names);
      expect(replace!.resourceVersion).toBe(pages[0]!.resourceVersion);
      expect(reflector.stats().lists).toBe(1);
      expect(store.changes).toEqual([]);
    } finally {
      controller.abort();
      await running;
      lw.close();
    }
  });

  it(`syncs an informer from ${COUNT / PAGE} pages and delivers every object once as an initial add`, async () => {
    const lw = new RecordingListerWatcher(newListWatch<KubeObject>(server.kubeConfig, { group: '', version: 'v1', resource: 'configmaps' }, { namespace }));
    const informer = new SharedIndexInformer<KubeObject>(lw, { name: 'paged-informer', reflector: { pageSize: PAGE } });
    const { seen, initial, stop } = await runInformer(informer);
    try {
      expect(lw.entries('list')).toHaveLength(COUNT / PAGE);
      await seen.until((events) => events.length === COUNT);
      expect(initial.sort()).toEqual(names);
      expect(informer.getStore().listKeys().sort()).toEqual(names.map((n) => `${namespace}/${n}`));

      // And the watch from the list's version goes on: one more object arrives as a live add.
      await core.createNamespacedConfigMap({ namespace: namespace, body: { metadata: { name: 'after-the-list' } } });
      await seen.until((events) => events.length === COUNT + 1);
      expect(seen.events.at(-1)).toBe('add after-the-list');
      expect(informer.health().counters.lists).toBe(1);
    } finally {
      await stop();
    }
  });

  it('gets a resourceVersion=0 list answered whole by the watch cache, whatever the page size', async () => {
    // Secrets are still cached on this server.
    const secrets = Array.from({ length: 60 }, (_, i) => `secret-${String(i).padStart(2, '0')}`);
    await inParallel(
      8,
      secrets.map((name) => () => core.createNamespacedSecret({ namespace, body: { metadata: { name }, stringData: { k: 'v' } } })),
    );
    const lw = new RecordingListerWatcher(newListWatch<KubeObject>(server.kubeConfig, { group: '', version: 'v1', resource: 'secrets' }, { namespace }));
    const store = new RecordingStore<KubeObject>();
    const reflector = new Reflector<KubeObject>(lw, store, { name: 'cached', pageSize: PAGE });
    const controller = new AbortController();
    const running = reflector.run(controller.signal);
    try {
      await store.replaces.until((r) => r.length === 1);
      expect(lw.entries('list').map((p) => [p.options, p.items, p.continue])).toEqual([[{ resourceVersion: '0', limit: PAGE }, 60, '']]);
      expect(store.replaces.events[0]!.names).toEqual(secrets);
    } finally {
      controller.abort();
      await running;
      lw.close();
    }
  });
});
