// ShardedInformer driven by a ShardRing, on the fake API server: replicas cache disjoint slices whose
// union is the collection, and when a replica joins only the slots that moved are listed again.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { KubeObject } from '../../src/core/index.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { InMemoryRingStore, ShardRing, ShardedInformer } from '../../src/sharding/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { useCleanups } from '../listwatch/helpers.js';
import { settle } from './helpers.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const SLOTS = 8;
const { cleanups } = useCleanups();

/** A list request: a paged list, or a streaming list (a watch with sendInitialEvents, the default). */
const isList = (r: { verb?: string; query: Record<string, string> }): boolean => r.verb === 'list' || (r.verb === 'watch' && r.query.sendInitialEvents === 'true');

describe('ShardedInformer on a ShardRing', () => {
  it('caches disjoint slices that cover the collection; a join lists only the slots that moved', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    for (let i = 0; i < 200; i++) fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' } });
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const replica = (identity: string) => {
      const ring = new ShardRing({ store, name: 'cms', identity, slots: SLOTS, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: false });
      const informer = new ShardedInformer<KubeObject>({
        ring,
        informerFor: (shard) => new SharedIndexInformer(newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { shard, logger: false }), { logger: false, clock }),
      });
      const stop = new AbortController();
      const running = Promise.all([informer.run(stop.signal), ring.run(stop.signal)]);
      cleanups.push(async () => {
        stop.abort();
        await clock.advance(10_000);
        await running;
      });
      return { ring, informer };
    };
    const keys = (r: { informer: ShardedInformer<KubeObject> }): string[] => r.informer.list().map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`);
    const all = (await newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS).list({}, new AbortController().signal)).items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();

    const a = replica('a');
    const b = replica('b');
    const covered = (rs: Array<ReturnType<typeof replica>>): boolean => rs.every((r) => r.informer.hasSynced()) && rs.flatMap(keys).length === all.length;
    await settle(clock, 'a and b cover the collection', () => a.ring.ownedSlots().length === 4 && b.ring.ownedSlots().length === 4 && covered([a, b]));
    expect([...keys(a), ...keys(b)].sort()).toEqual(all); // disjoint (same length, same members) and complete

    const listsBefore = fake.requests().filter(isList).length;
    const before = { a: a.ring.ownedSlots(), b: b.ring.ownedSlots() };
    const c = replica('c');
    await settle(clock, 'three replicas cover the collection', () => [a, b, c].every((r) => [2, 3].includes(r.ring.ownedSlots().length)) && covered([a, b, c]));
    const moved = c.ring.ownedSlots();
    expect(moved.every((s) => before.a.includes(s) || before.b.includes(s))).toBe(true);
    expect(a.ring.ownedSlots().every((s) => before.a.includes(s))).toBe(true); // nothing moved between a and b
    expect(b.ring.ownedSlots().every((s) => before.b.includes(s))).toBe(true);
    const newLists = fake.requests().filter(isList).length - listsBefore;
    expect(newLists).toBe(moved.length); // one list per slot that moved, none for the others
    expect([...keys(a), ...keys(b), ...keys(c)].sort()).toEqual(all);
    expect(a.informer.get(keys(a)[0])).toBeDefined();
    expect(a.informer.get(keys(c)[0])).toBeUndefined();
  }, 60_000);
});

describe('ShardedInformer.events()', () => {
  it("streams every owned slot's objects through the informers' one events() function; a failure-free stop ends the loop", async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    for (let i = 0; i < 20; i++) fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' } });
    const clock = new FakeClock();
    const ring = new ShardRing({ store: new InMemoryRingStore(), name: 'cms', identity: 'a', slots: SLOTS, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: false });
    const informer = new ShardedInformer<KubeObject>({
      ring,
      informerFor: (shard) => new SharedIndexInformer(newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { shard, logger: false }), { logger: false, clock }),
    });
    const stop = new AbortController();
    const stream = informer.events(undefined, { name: 'stream' });
    const running = Promise.all([informer.run(stop.signal), ring.run(stop.signal)]);
    const names = new Set<string>();
    const loop = (async () => {
      for await (const e of stream) if (e.type === 'add') names.add((e.object as KubeObject).metadata?.name ?? '');
    })();
    await settle(clock, 'every object streamed', () => names.size === 20);
    stop.abort();
    await clock.advance(10_000);
    await running;
    await loop; // the stop ended it
  }, 60_000);
});
