// SharedInformerFactory: one informer per resource, started and synced together, shared fate on failure.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ApiStatusError } from '../../src/core/errors.js';
import type { GroupVersionResource } from '../../src/core/types.js';
import { gvrKey, SharedInformerFactory } from '../../src/informer/index.js';
import type { ListerWatcher } from '../../src/listwatch/types.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { pod, failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

const PODS: GroupVersionResource = { group: '', version: 'v1', resource: 'pods' };
const POLICIES: GroupVersionResource = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies' };

function fixture(): { clock: FakeClock; sources: Map<string, FakeControllerSource<Pod>>; factory: SharedInformerFactory; errors: Array<[string, Error]> } {
  const clock = new FakeClock();
  const sources = new Map<string, FakeControllerSource<Pod>>();
  const errors: Array<[string, Error]> = [];
  const factory = new SharedInformerFactory(undefined, {
    resyncPeriodMs: 30_000,
    customResync: { [gvrKey(POLICIES)]: 60_000 },
    informerOptions: { clock },
    onError: (resource, err) => void errors.push([resource, err]),
    listWatchFor: (gvr) => {
      const source = new FakeControllerSource<Pod>();
      sources.set(gvrKey(gvr), source);
      return source as unknown as ListerWatcher<unknown>;
    },
  });
  return { clock, sources, factory, errors };
}

describe('SharedInformerFactory', () => {
  it('keys resources like API paths', () => {
    expect(gvrKey(PODS)).toBe('v1/pods');
    expect(gvrKey(POLICIES)).toBe('networking.k8s.io/v1/networkpolicies');
  });

  it('hands every caller the same informer per resource, with the namespace index and its resync period', () => {
    const { factory } = fixture();
    const a = factory.forResource<Pod>(PODS);
    expect(factory.forResource<Pod>(PODS)).toBe(a);
    expect(factory.forResource<Pod>(POLICIES)).not.toBe(a);
    expect(Object.keys(a.getIndexer().getIndexers())).toEqual(['namespace']);
    expect(a.resyncCheckPeriodMs()).toBe(30_000);
    expect(factory.forResource<Pod>(POLICIES).resyncCheckPeriodMs()).toBe(60_000);
    expect(Object.keys(factory.informers()).sort()).toEqual(['networking.k8s.io/v1/networkpolicies', 'v1/pods']);
  });

  it('starts informers, reports per-resource sync, and starts an informer requested while running at once', async () => {
    const { factory, sources, clock } = fixture();
    const pods = factory.forResource<Pod>(PODS);
    sources.get('v1/pods')?.add(pod('a', {}, 'ns1'));
    const ac = new AbortController();
    factory.start(ac.signal);
    expect(await factory.waitForCacheSync(ac.signal)).toEqual({ 'v1/pods': true });
    expect(pods.getIndexer().byIndex('namespace', 'ns1')).toHaveLength(1);
    const policies = factory.forResource<Pod>(POLICIES);
    expect(policies.isStarted()).toBe(true); // requested while running: started at once
    factory.start(ac.signal); // harmless: nothing left to start
    expect(await factory.waitForCacheSync(ac.signal)).toEqual({ 'v1/pods': true, 'networking.k8s.io/v1/networkpolicies': true });
    expect(Object.keys(factory.health())).toHaveLength(2);
    ac.abort();
    await factory.shutdown();
    for (const s of sources.values()) expect(s.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('run() rejects with the first informer failure after stopping every informer (shared fate)', async () => {
    const { factory, sources, clock } = fixture();
    const pods = factory.forResource<Pod>(PODS);
    const policies = factory.forResource<Pod>(POLICIES);
    pods.addEventHandler({
      onAdd: () => {
        throw new Error('pod handler broke');
      },
    });
    const ac = new AbortController();
    const running = factory.run(ac.signal).catch((e: unknown) => e);
    await until(() => sources.size === 2);
    sources.get('v1/pods')?.add(pod('a'));
    const err = (await running) as Error & { code: string };
    expect(err.code).toBe('HANDLER_FAILED');
    expect(policies.isStopped()).toBe(true);
    for (const s of sources.values()) expect(s.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('passes a failure of a started informer to onError and stops the others', async () => {
    const { factory, sources, errors } = fixture();
    const pods = factory.forResource<Pod>(PODS);
    const policies = factory.forResource<Pod>(POLICIES);
    pods.addEventHandler({ onAdd: () => Promise.reject(new Error('async broke')) });
    factory.start(new AbortController().signal);
    sources.get('v1/pods')?.add(pod('a'));
    await until(() => errors.length === 1 && policies.isStopped());
    expect(errors[0][0]).toBe('v1/pods');
    expect((errors[0][1].cause as Error).message).toBe('async broke');
    await expect(factory.shutdown()).rejects.toMatchObject({ code: 'HANDLER_FAILED' });
    // A dead informer never reports synced: the wait says why instead of `true`.
    await expect(factory.waitForCacheSync(new AbortController().signal)).rejects.toMatchObject({ code: 'HANDLER_FAILED' });
  });

  it('rejects the wait with the reason when an informer is forbidden, and a later wait succeeds once access is granted', async () => {
    const { factory, sources, clock } = fixture();
    factory.forResource<Pod>(PODS);
    const source = sources.get('v1/pods') as FakeControllerSource<Pod>;
    source.listError = new ApiStatusError(403, 'pods is forbidden', { reason: 'Forbidden' });
    const ac = new AbortController();
    factory.start(ac.signal);
    const waiting = factory.waitForCacheSync(ac.signal).catch((e: unknown) => e);
    for (let i = 0; i < 10; i++) await clock.advance(1000);
    const err = (await waiting) as ApiStatusError;
    expect(err).toBeInstanceOf(ApiStatusError);
    expect(err.statusCode).toBe(403);
    expect(err.message).toMatch(/informer v1\/pods cannot sync: 3 list\/watch requests in a row failed with HTTP 403: pods is forbidden/);
    // While it cannot sync, a new wait rejects at once with the same reason rather than hang.
    await expect(factory.waitForCacheSync(ac.signal)).rejects.toMatchObject({ statusCode: 403, message: expect.stringMatching(/cannot sync/) });
    source.listError = undefined; // RBAC fixed: the informer, which kept retrying, syncs
    for (let i = 0; i < 60 && !factory.informers()['v1/pods'].hasSynced(); i++) await clock.advance(1000);
    expect(await factory.waitForCacheSync(ac.signal)).toEqual({ 'v1/pods': true });
    ac.abort();
    await factory.shutdown();
  });

  it('says false for unsynced informers when the wait itself is aborted (client-go)', async () => {
    const { factory, sources } = fixture();
    factory.forResource<Pod>(PODS);
    (sources.get('v1/pods') as FakeControllerSource<Pod>).listError = new ApiStatusError(500, 'etcd is slow');
    const ac = new AbortController();
    factory.start(ac.signal);
    const waitAc = new AbortController();
    const waiting = factory.waitForCacheSync(waitAc.signal);
    waitAc.abort();
    expect(await waiting).toEqual({ 'v1/pods': false });
    ac.abort();
    await factory.shutdown();
  });

  it('cannot lie about its lifecycle: run() on a stopped factory rejects, forResource on it throws', async () => {
    const { factory } = fixture();
    factory.forResource<Pod>(PODS);
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    ac.abort();
    await running;
    await expect(factory.run(new AbortController().signal)).rejects.toMatchObject({
      code: 'INFORMER_STOPPED',
      message: expect.stringMatching(/has stopped .*create a new factory/),
    });
    expect(() => factory.start(new AbortController().signal)).toThrow(/has stopped/);
    expect(() => factory.forResource<Pod>(POLICIES)).toThrow(/has stopped/);
    expect(factory.forResource<Pod>(PODS).hasSynced()).toBe(false);
    await expect(factory.waitForCacheSync(new AbortController().signal)).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
  });

  it('run() with no informers yet keeps running, and starts informers requested later at once', async () => {
    const { factory, sources } = fixture();
    const ac = new AbortController();
    let settled = false;
    const running = factory.run(ac.signal).finally(() => {
      settled = true;
    });
    await until(() => true);
    expect(settled).toBe(false);
    const pods = factory.forResource<Pod>(PODS);
    sources.get('v1/pods')?.add(pod('a'));
    await pods.whenSynced(ac.signal);
    await until(() => pods.lister().list().length === 1);
    ac.abort();
    await running;
    expect(settled).toBe(true);
  });

  it('validates its options and resources at construction', () => {
    const listWatchFor = (): ListerWatcher<unknown> => new FakeControllerSource<Pod>() as unknown as ListerWatcher<unknown>;
    for (const labelSelector of ['app in (web', 'app=we b', '!!']) {
      expect(() => new SharedInformerFactory(undefined, { labelSelector, listWatchFor })).toThrow(
        expect.objectContaining({ code: 'INVALID_SELECTOR', message: expect.stringMatching(/SharedInformerFactory option labelSelector/) }),
      );
    }
    expect(() => new SharedInformerFactory(undefined, { fieldSelector: 'spec.nodeName', listWatchFor })).toThrow(
      expect.objectContaining({ code: 'INVALID_SELECTOR' }),
    );
    expect(() => new SharedInformerFactory(undefined, { resyncPeriodMs: -1, listWatchFor })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/resyncPeriodMs must be a finite number/) }),
    );
    expect(() => new SharedInformerFactory(undefined, { customResync: { 'v1/pods': Number.NaN }, listWatchFor })).toThrow(/customResync/);
    const factory = new SharedInformerFactory(undefined, { listWatchFor });
    expect(() => factory.forResource({ group: '', version: 'v1', resource: 'Pod' })).toThrow(/lower-case plural/);
    expect(() => factory.forResource({ group: '', version: '', resource: 'pods' })).toThrow(/option version/);
    expect(() => factory.forResource({ group: 'apps', version: 'v1' } as GroupVersionResource)).toThrow(/option resource/);
  });
});
