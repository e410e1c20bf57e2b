// SharedInformerFactory: one informer per resource, started and synced together, shared fate on failure.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ApiStatusError } from '../../src/core/errors.js';
import type { GroupVersionResource } from '../../src/core/types.js';
import { gvrKey, SharedInformerFactory } from '../../src/informer/index.js';
import type { ListerWatcher } from '../../src/listwatch/types.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { pod, trackUnhandledRejections, until, type Pod } from './helpers.js';

let unhandled: ReturnType<typeof trackUnhandledRejections>;
beforeEach(() => {
  unhandled = trackUnhandledRejections();
});
afterEach(() => {
  unhandled.dispose();
  expect(unhandled.rejections).toEqual([]);
});

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

  it('starts informers, reports per-resource sync, and starts later informers on a second start', async () => {
    const { factory, sources, clock } = fixture();
    const pods = factory.forResource<Pod>(PODS);
    sources.get('v1/pods')?.add(pod('a', {}, 'ns1'));
    const ac = new AbortController();
    factory.start(ac.signal);
    expect(await factory.waitForCacheSync(ac.signal)).toEqual({ 'v1/pods': true });
    expect(pods.getIndexer().byIndex('namespace', 'ns1')).toHaveLength(1);
    const policies = factory.forResource<Pod>(POLICIES);
    expect(policies.isStarted()).toBe(false);
    factory.start(ac.signal);
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
    expect(await factory.waitForCacheSync(new AbortController().signal)).toEqual({
      'v1/pods': true,
      'networking.k8s.io/v1/networkpolicies': true,
    });
  });

  it('keeps waiting for an informer that is forbidden for now, and says false when the wait is aborted', async () => {
    const { factory, sources, clock } = fixture();
    factory.forResource<Pod>(PODS);
    const source = sources.get('v1/pods') as FakeControllerSource<Pod>;
    source.listError = new ApiStatusError(403, 'forbidden', { reason: 'Forbidden' });
    const ac = new AbortController();
    factory.start(ac.signal);
    const waitAc = new AbortController();
    let result: Record<string, boolean> | undefined;
    const waiting = factory.waitForCacheSync(waitAc.signal).then((r) => {
      result = r;
    });
    for (let i = 0; i < 30; i++) await clock.advance(1000);
    expect(result).toBeUndefined();
    waitAc.abort();
    await waiting;
    expect(result).toEqual({ 'v1/pods': false });
    ac.abort();
    await factory.shutdown();
  });
});
