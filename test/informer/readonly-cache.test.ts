// Issue 24: cached objects are read-only wherever they are handed out — getIndexer()/getStore() are read-only views.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { informerIndexer, SharedIndexInformer } from '../../src/informer/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { failOnUnhandledRejections, pod, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

describe("an informer's cache as handed out", () => {
  it('getIndexer() and getStore() read through to the cache and have no way to write, from TypeScript or JavaScript', async () => {
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a', { labels: { app: 'web' } }));
    const informer = new SharedIndexInformer<Pod>(source, { clock: new FakeClock(), logger: false, indexers: { app: (p) => [p.metadata.labels?.app ?? ''] } });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    const indexer = informer.getIndexer();
    const store = informer.getStore();
    expect(indexer.listKeys()).toEqual(['default/a']);
    expect(indexer.byIndex('app', 'web').map((p) => p.metadata.name)).toEqual(['a']);
    expect(store.getByKey('default/a')?.metadata.name).toBe('a');

    // @ts-expect-error -- the view has no add
    expect(indexer.add).toBeUndefined();
    // @ts-expect-error -- nor delete
    expect(store.delete).toBeUndefined();
    for (const write of ['add', 'update', 'delete', 'replace', 'resync', 'addIndexers']) {
      expect((indexer as unknown as Record<string, unknown>)[write], write).toBeUndefined();
      expect((store as unknown as Record<string, unknown>)[write], write).toBeUndefined();
    }
    expect(Object.isFrozen(indexer)).toBe(true);
    const rename = (cached: NonNullable<ReturnType<typeof indexer.getByKey>>): void => {
      // @ts-expect-error -- cached objects are typed read-only
      cached.metadata.name = 'b';
    };
    expect(typeof rename).toBe('function'); // a compile-time check only: never called

    // the view follows the cache
    source.add(pod('c'));
    await until(() => indexer.listKeys().length === 2, 'the view sees the new pod');
    expect(store.list().map((p) => p.metadata.name).sort()).toEqual(['a', 'c']);
    ac.abort();
    await done;
  });

  it('informerIndexer (kube-informer/cache) is the writable cache itself, for hand-built pipelines and tests', () => {
    const informer = new SharedIndexInformer<Pod>(new FakeControllerSource<Pod>(), { logger: false });
    informerIndexer(informer).add(pod('x'));
    expect(informer.getIndexer().listKeys()).toEqual(['default/x']);
    expect(() => informerIndexer({} as SharedIndexInformer<Pod>)).toThrow(TypeError);
  });
});
