// watch() and reflect(): kube-rs's watcher()/reflector() on the one Reflector — the initial-list boundary,
// a relist after a 410 as a fresh init, failures retrying will not fix thrown into the loop, and a store
// kept equal to the server's; every ending leaves no watch, timer or socket behind.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ApiStatusError } from '../../src/core/errors.js';
import { metaNamespaceKeyFunc } from '../../src/core/keys.js';
import type { KubeObject } from '../../src/core/index.js';
import { reflect, watch, type WatcherEvent } from '../../src/informer/index.js';
import type { ListerWatcher } from '../../src/listwatch/index.js';
import { newStore } from '../../src/store/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { leftoverHandles, openHandles } from '../helpers/handles.js';
import { failOnUnhandledRejections, pod, type Pod } from './helpers.js';

failOnUnhandledRejections();

/** `init`, `initApply a`, `apply b`, ...: an event as one short line. */
function line(e: WatcherEvent<Pod>): string {
  return e.type === 'init' || e.type === 'initDone' ? e.type : `${e.type} ${e.object.metadata.name}`;
}

async function take(it: AsyncIterator<WatcherEvent<Pod>>, n: number): Promise<string[]> {
  const out: string[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done === true) break;
    out.push(line(r.value));
  }
  return out;
}

describe('watch()', () => {
  it('yields the first list between init and initDone, then the watch as apply and delete; break closes the watch', async () => {
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    source.add(pod('b'));
    const events = watch(source);
    expect(await take(events, 4)).toEqual(['init', 'initApply a', 'initApply b', 'initDone']);
    source.add(pod('c'));
    source.modify(pod('a', { labels: { v: '2' } }));
    source.delete(pod('b'));
    expect(await take(events, 3)).toEqual(['apply c', 'apply a', 'delete b']);
    expect(source.openWatches()).toBe(1);
    await events.return?.();
    expect(source.openWatches()).toBe(0);
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it('relists after a 410 as a fresh init … initDone holding the whole collection (a deletion missed meanwhile is absent)', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    source.add(pod('b'));
    const store = newStore<Pod>(metaNamespaceKeyFunc);
    const events = reflect(store, watch(source, { reflector: { clock } }));
    expect(await take(events, 4)).toEqual(['init', 'initApply a', 'initApply b', 'initDone']);
    // The watch is cut and its history forgotten: the re-watch gets 410 Gone; meanwhile b went, c came.
    source.resetWatch();
    source.deleteDropWatch(pod('b'));
    source.addDropWatch(pod('c'));
    let relisted: string[] | undefined;
    const next = take(events, 4).then((lines) => (relisted = lines));
    for (let i = 0; i < 20 && relisted === undefined; i++) await clock.advance(1000); // the re-watch's backoff
    await next;
    expect(relisted).toEqual(['init', 'initApply a', 'initApply c', 'initDone']);
    expect(store.listKeys().sort()).toEqual(source.items().map((p) => metaNamespaceKeyFunc(p)).sort());
    await events.return();
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('throws a failure retrying will not fix (403) into the loop after syncFailureThreshold in a row, and stops', async () => {
    const clock = new FakeClock();
    let lists = 0;
    const forbidden: ListerWatcher<Pod> = {
      list: () => {
        lists++;
        return Promise.reject(new ApiStatusError(403, 'pods is forbidden: User "u" cannot list resource "pods"', { reason: 'Forbidden' }));
      },
      watch: () => Promise.reject(new Error('no watch without a list')),
    };
    const events = watch(forbidden, { syncFailureThreshold: 2, reflector: { clock } });
    const failed = events.next().then(
      () => undefined,
      (err: unknown) => err as ApiStatusError,
    );
    for (let i = 0; i < 10 && lists < 2; i++) await clock.advance(60_000);
    const err = await failed;
    expect(err?.code).toBe('API_STATUS');
    expect(err?.statusCode).toBe(403);
    expect(err?.message).toMatch(/2 list\/watch requests in a row failed with HTTP 403/);
    const after = lists;
    await clock.advance(600_000);
    expect(lists).toBe(after); // the reflector stopped
    expect(clock.pendingTimers()).toBe(0);
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it('throws an invalid selector into the loop at its first step; an abort ends the loop quietly; nothing is left open', async () => {
    const before = openHandles();
    const fake = await startFakeApiServer();
    const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
    fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } });
    const bad = watch<KubeObject>({ kubeConfig: fake.kubeConfig, resource: CONFIGMAPS, labelSelector: 'a in (' });
    await expect(bad.next()).rejects.toMatchObject({ code: 'INVALID_SELECTOR' });

    const ac = new AbortController();
    const seen: string[] = [];
    for await (const e of watch<KubeObject>({ kubeConfig: fake.kubeConfig, resource: CONFIGMAPS, namespace: 'default' }, { signal: ac.signal })) {
      seen.push(e.type);
      if (e.type === 'initDone') ac.abort();
    }
    expect(seen).toEqual(['init', 'initApply', 'initDone']);
    await fake.close();
    expect(await leftoverHandles(before)).toEqual([]);
  });
});
