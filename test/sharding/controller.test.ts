// A sharded controller: three replicas of one Controller, each with the `sharded` option on its own
// ShardRing (one in-memory Lease store, one fake clock), over the fake API server. Every primary is
// reconciled by the owner of its slot only; no key is ever reconciled by two replicas at once; when a
// replica joins, the primaries of the slots it gained are reconciled by it at once.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { Action, Controller } from '../../src/controller/index.js';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { InMemoryRingStore, ShardRing } from '../../src/sharding/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { useCleanups } from '../listwatch/helpers.js';
import { CuttableStore, settle } from './helpers.js';

const { cleanups } = useCleanups();

describe('Controller with the sharded option', () => {
  it('reconciles each primary on the owner of its slot only, never on two replicas at once', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    const N = 150;
    for (let i = 0; i < N; i++) fake.create(resources.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' } });
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const running = new Map<string, string>(); // key → replica reconciling it now
    const overlaps: string[] = [];
    const reconciledBy = new Map<string, Set<string>>();

    const replica = (identity: string) => {
      const ring = new ShardRing({ store, name: 'cms', identity, slots: 8, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: false });
      const factory = new SharedInformerFactory(fake.kubeConfig, { logger: false });
      const controller = Controller.for(factory, resources.configmaps).build(
        async (key) => {
          const other = running.get(key);
          if (other !== undefined) overlaps.push(`${key}: ${other} and ${identity}`);
          running.set(key, identity);
          await new Promise((resolve) => setImmediate(resolve));
          running.delete(key);
          (reconciledBy.get(key) ?? reconciledBy.set(key, new Set()).get(key)!).add(identity);
          return Action.done();
        },
        { name: `cms-${identity}`, sharded: ring, logger: false },
      );
      const stop = new AbortController();
      factory.start(stop.signal);
      const done = Promise.all([ring.run(stop.signal), controller.run(stop.signal)]);
      cleanups.push(async () => {
        stop.abort();
        await clock.advance(20_000);
        await done;
      });
      return { identity, ring };
    };
    const owner = (rs: Array<ReturnType<typeof replica>>, key: string): string | undefined =>
      rs.find((r) => r.ring.owns(r.ring.slotOf({ metadata: { uid: fake.get(resources.configmaps, key.split('/')[1], 'default')?.metadata?.uid } })))?.identity;

    const a = replica('a');
    const b = replica('b');
    await settle(clock, 'a and b own 4 slots each and every primary was reconciled', () => a.ring.ownedSlots().length === 4 && b.ring.ownedSlots().length === 4 && reconciledBy.size === N);
    // Each primary was reconciled by the owner of its slot (and, when a had every slot before b joined,
    // by a first: one after the other, never both at once — see `overlaps`).
    for (const [key, who] of reconciledBy) expect([key, who.has(owner([a, b], key)!)]).toEqual([key, true]);

    reconciledBy.clear();
    const c = replica('c');
    await settle(clock, 'c owns its share and reconciled its primaries', () => [2, 3].includes(c.ring.ownedSlots().length) && [...reconciledBy.values()].filter((s) => s.has('c')).length > 0);
    await settle(clock, 'quiet', () => running.size === 0);
    // What c reconciled is exactly the primaries of its slots (gained from a or b), none twice.
    const cKeys = [...reconciledBy].filter(([, who]) => who.has('c')).map(([k]) => k).sort();
    const expected = [...Array(N).keys()].map((i) => `default/cm-${i}`).filter((k) => owner([a, b, c], k) === 'c').sort();
    expect(cKeys).toEqual(expected);
    expect(overlaps).toEqual([]);
  }, 60_000);

  it('a reconcile whose slot is lost is interrupted, not failed: not logged as a failure, not counted, not retried', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    for (let i = 0; i < 8; i++) fake.create(resources.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' } });
    const clock = new FakeClock();
    const store = new CuttableStore(new InMemoryRingStore());
    const warnings: string[] = [];
    let started = 0;
    const ring = new ShardRing({ store, name: 'cms', identity: 'a', slots: 8, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: false });
    const factory = new SharedInformerFactory(fake.kubeConfig, { logger: false });
    const controller = Controller.for(factory, resources.configmaps).build(
      async (key, ctx) => {
        started++;
        // A write in flight: it rejects when the signal aborts (as a request does).
        await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error(`PUT ${key} was aborted`)), { once: true }));
        return Action.done();
      },
      { name: 'cms-a', sharded: ring, concurrency: 8, reconcileTimeoutMs: 0, clock, logger: { debug: () => {}, info: () => {}, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(m) } },
    );
    const stop = new AbortController();
    factory.start(stop.signal);
    const done = Promise.all([ring.run(stop.signal), controller.run(stop.signal)]);
    cleanups.push(async () => {
      stop.abort();
      await clock.advance(20_000);
      await done;
    });
    await settle(clock, 'a owns every slot and reconciles every primary', () => ring.ownedSlots().length === 8 && started === 8);
    store.cut = true;
    await settle(clock, 'a lost its slots', () => ring.ownedSlots().length === 0 && controller.stats().running === 0);
    expect(controller.stats()).toMatchObject({ failed: 0, stopped: 8, failing: 0 });
    expect(warnings).toEqual([]);
    await clock.advance(10_000);
    expect(started).toBe(8);
  }, 60_000);
});
