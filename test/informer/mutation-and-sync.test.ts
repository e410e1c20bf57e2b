// Mutation detection through the informer, and "never synced" always coming with a why.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ApiStatusError } from '../../src/core/errors.js';
import { SharedIndexInformer, SingleFileTracker, AsyncTracker, waitForCacheSyncWithOptions, waitForCacheSync } from '../../src/informer/index.js';
import { SyncCondition } from '../../src/health/sync-track.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { pod, failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

describe('mutation detection', () => {
  it('rejects run() with CACHE_MUTATED naming the key and the field path when a handler mutates an object', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a', { labels: { team: 'blue' } }));
    const informer = new SharedIndexInformer<Pod>(source, { clock, detectMutations: true, mutationDetection: { periodMs: 1000 } });
    informer.addEventHandler({
      onAdd: (obj) => {
        (obj.metadata.labels as Record<string, string>).team = 'red';
      },
    });
    const done = informer.run(new AbortController().signal).catch((e: unknown) => e);
    await informer.whenSynced();
    await clock.advance(1000);
    const err = (await done) as Error & { code: string };
    expect(err.code).toBe('CACHE_MUTATED');
    expect(err.message).toContain('default/a');
    expect(err.message).toContain('metadata.labels.team');
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    expect(informer.health().state).toBe('failed');
  });

  it('rejects run() with CACHE_MUTATED after 1 second with the default detector options', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a', { labels: { team: 'blue' } }));
    const informer = new SharedIndexInformer<Pod>(source, { clock, detectMutations: true });
    informer.addEventHandler({
      onAdd: (obj) => {
        (obj.metadata.labels as Record<string, string>).team = 'red';
      },
    });
    let settled = false;
    const done = informer.run(new AbortController().signal).catch((e: unknown) => e).finally(() => (settled = true));
    await informer.whenSynced();
    await clock.advance(999);
    expect(settled).toBe(false);
    await clock.advance(1);
    await until(() => settled, 'run() to settle');
    const err = (await done) as Error & { code: string };
    expect(err.code).toBe('CACHE_MUTATED');
    expect(err.message).toContain('default/a');
    expect(err.message).toContain('metadata.labels.team');
  });

  it('rejects run() with CACHE_MUTATED when a handler mutates an object just before the signal aborts', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a', { labels: { team: 'blue' } }));
    const informer = new SharedIndexInformer<Pod>(source, { clock, detectMutations: true });
    let mutated = false;
    informer.addEventHandler({
      onAdd: (obj) => {
        (obj.metadata.labels as Record<string, string>).team = 'red';
        mutated = true;
      },
    });
    const ac = new AbortController();
    const done = informer.run(ac.signal).catch((e: unknown) => e);
    await until(() => mutated, 'the handler to mutate the pod');
    expect(clock.now()).toBe(0);
    ac.abort();
    const err = (await done) as Error & { code: string; key: string; paths: string[] };
    expect(err.code).toBe('CACHE_MUTATED');
    expect(err.key).toBe('default/a');
    expect(err.paths).toEqual(['metadata.labels.team']);
    expect(err.message).toContain('default/a');
    expect(err.message).toContain('metadata.labels.team');
    expect(clock.now()).toBe(0);
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    expect(informer.health().state).toBe('failed');
  });

  it('catches a mutation made through the lister, with detection switched on by KUBE_CACHE_MUTATION_DETECTOR', async () => {
    const previous = process.env.KUBE_CACHE_MUTATION_DETECTOR;
    process.env.KUBE_CACHE_MUTATION_DETECTOR = 'true';
    try {
      const clock = new FakeClock();
      const source = new FakeControllerSource<Pod>();
      source.add(pod('a'));
      const informer = new SharedIndexInformer<Pod>(source, { clock, mutationDetection: { periodMs: 1000 } });
      const done = informer.run(new AbortController().signal).catch((e: unknown) => e);
      await informer.whenSynced();
      const cached = informer.lister().namespace('default').get('a') as unknown as Pod;
      cached.spec = { nodeName: 'mutated' };
      await clock.advance(1000);
      const err = (await done) as Error & { code: string };
      expect(err.code).toBe('CACHE_MUTATED');
      expect(err.message).toMatch(/spec/);
    } finally {
      if (previous === undefined) delete process.env.KUBE_CACHE_MUTATION_DETECTOR;
      else process.env.KUBE_CACHE_MUTATION_DETECTOR = previous;
    }
  });

  it('stays quiet and adds no timer when detection is off', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, { clock, detectMutations: false });
    // A deliberate write to the cache's object, past the read-only types.
    informer.addEventHandler({ onAdd: (obj) => void ((obj as Pod).metadata.labels = { changed: 'yes' }) });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    await clock.advance(20_000);
    ac.abort();
    await done;
  });
});

describe('whenSynced: never synced always comes with a why', () => {
  it('rejects with API_STATUS 403 after persistent forbidden lists, then resolves once access is granted', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    source.listError = new ApiStatusError(403, 'pods is forbidden: User "x" cannot list resource "pods"', { reason: 'Forbidden' });
    const informer = new SharedIndexInformer<Pod>(source, { clock, name: 'pods', syncFailureThreshold: 3 });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    const waiting = informer.whenSynced().catch((e: unknown) => e);
    for (let i = 0; i < 60 && informer.health().watch.consecutiveErrors < 3; i++) await clock.advance(1000);
    const err = (await waiting) as ApiStatusError;
    expect(err.code).toBe('API_STATUS');
    expect(err.statusCode).toBe(403);
    expect(err.message).toMatch(/informer pods cannot sync: 3 list\/watch requests in a row failed with HTTP 403: pods is forbidden/);
    await expect(informer.whenSynced()).rejects.toBe(err);
    expect(informer.isStopped()).toBe(false);
    source.listError = undefined;
    for (let i = 0; i < 120 && !informer.hasSynced(); i++) await clock.advance(1000);
    await informer.whenSynced();
    ac.abort();
    await done;
  });

  it('rejects with INFORMER_STOPPED when the informer is stopped before it synced', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.listError = new Error('connection refused');
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const reg = informer.addEventHandler({});
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    const waiting = informer.whenSynced().catch((e: unknown) => e);
    const regWaiting = reg.whenSynced().catch((e: unknown) => e);
    await until(() => source.calls().length > 0);
    ac.abort();
    await done;
    expect(await waiting).toMatchObject({ code: 'INFORMER_STOPPED', message: expect.stringMatching(/stopped before its cache synced/) });
    expect(await regWaiting).toMatchObject({ code: 'INFORMER_STOPPED' });
  });

  it('rejects with ABORTED when the caller gives up, leaving the informer running', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.listError = new Error('down');
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    const give = new AbortController();
    const waiting = informer.whenSynced(give.signal).catch((e: unknown) => e);
    give.abort();
    expect(await waiting).toMatchObject({ code: 'ABORTED' });
    expect(informer.isStopped()).toBe(false);
    ac.abort();
    await done;
  });
});

describe('waitForCacheSync and sync trackers', () => {
  it('checks at once, then polls on the clock until every function is true', async () => {
    const clock = new FakeClock();
    let a = false;
    let b = false;
    let result: boolean | undefined;
    const p = waitForCacheSyncWithOptions({ signal: new AbortController().signal, clock }, () => a, () => b).then((r) => {
      result = r;
    });
    a = true;
    await clock.advance(100);
    expect(result).toBeUndefined();
    b = true;
    await clock.advance(100);
    await p;
    expect(result).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
    await expect(waitForCacheSync(new AbortController().signal, () => true)).resolves.toBe(true);
  });

  it('resolves false when the signal aborts, leaving no timer', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const p = waitForCacheSyncWithOptions({ signal: ac.signal, clock }, () => false);
    await clock.advance(250);
    ac.abort();
    await expect(p).resolves.toBe(false);
    expect(clock.pendingTimers()).toBe(0);
    await expect(waitForCacheSync(AbortSignal.abort(), () => false)).resolves.toBe(false);
  });

  it('tracks in-flight initial items one file or by key', () => {
    let upstream = false;
    const single = new SingleFileTracker(() => upstream);
    single.start();
    upstream = true;
    expect(single.hasSynced()).toBe(false);
    single.finished();
    expect(single.hasSynced()).toBe(true);
    expect(() => single.finished()).toThrow();
    const byKey = new AsyncTracker<string>(() => upstream);
    byKey.start('a');
    byKey.start('b');
    byKey.finished('a');
    byKey.finished('zzz');
    expect(byKey.hasSynced()).toBe(false);
    byKey.finished('b');
    expect(byKey.hasSynced()).toBe(true);
  });

  it('settles waiters of a sync condition exactly once, with the first failure', async () => {
    let met = false;
    const c = new SyncCondition(() => met);
    const w1 = c.wait();
    c.rejectWaiters(new Error('transient'));
    await expect(w1).rejects.toThrow('transient');
    const w2 = c.wait();
    c.fail(new Error('first'));
    c.fail(new Error('second'));
    await expect(w2).rejects.toThrow('first');
    await expect(c.wait()).rejects.toThrow('first');
    met = true;
    await expect(c.wait()).resolves.toBeUndefined();
  });
});
