// A sharded controller caches only its slots: its primary is listed and watched per owned slot (never
// whole), on a namespace ring its owned children too, and a slot's primaries are reconciled only once
// every cache of that slot synced (a reconcile never sees a slot's primary without its children). A
// slot cache that cannot sync makes `run` reject (incident 5: silence is a bug).

import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { Action, Controller, type Reconciler } from '../../src/controller/index.js';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { InMemoryRingStore, ShardRing, type ShardRingOptions } from '../../src/sharding/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { useCleanups } from '../listwatch/helpers.js';
import { memoryLog } from '../controller/fixture.js';
import { until } from '../examples/helpers.js';
import { settle } from './helpers.js';

const { cleanups } = useCleanups();
const TIMING = { slots: 8, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, logger: false } as const;

/** `namespaces` namespaces, each with one ConfigMap owning `children` Secrets. */
function seed(fake: FakeApiServer, namespaces: number, children: number): void {
  for (let n = 0; n < namespaces; n++) {
    const namespace = `ns-${n}`;
    const owner = fake.create(resources.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'parent', namespace } });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: (owner.metadata as unknown as { uid: string }).uid, controller: true };
    for (let c = 0; c < children; c++) {
      fake.create(resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `child-${c}`, namespace, ownerReferences: [ref] } });
    }
  }
}

interface Replica {
  readonly ring: ShardRing;
  readonly factory: SharedInformerFactory;
  readonly running: Promise<unknown>;
}

function replica(fake: FakeApiServer, clock: FakeClock, store: InMemoryRingStore, identity: string, field: ShardRingOptions['field'], reconcile: Reconciler<ConfigMap>): Replica {
  const ring = new ShardRing({ ...TIMING, store, name: 'parents', identity, field, clock });
  const factory = new SharedInformerFactory(fake.kubeConfig, { logger: false, informerOptions: { clock } });
  const controller = Controller.for(factory, resources.configmaps).owns(resources.secrets).build(reconcile, { name: identity, sharded: ring, logger: false, clock });
  const stop = new AbortController();
  factory.start(stop.signal);
  const running = Promise.allSettled([ring.run(stop.signal), controller.run(stop.signal)]);
  cleanups.push(async () => {
    stop.abort();
    await clock.advance(20_000);
    await running;
  });
  return { ring, factory, running };
}

// The lists of `resource`: paged lists and streaming lists (a watch with sendInitialEvents, the default).
const listsOf = (fake: FakeApiServer, resource: string) => fake.requests().filter((r) => (r.verb === 'list' || (r.verb === 'watch' && r.query.sendInitialEvents === 'true')) && r.resource === resource);

describe('a sharded controller caches only its slots', () => {
  it('on a namespace ring: primary and children per slot, never listed whole; each reconcile sees every child', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    const NAMESPACES = 40;
    const CHILDREN = 3;
    seed(fake, NAMESPACES, CHILDREN);
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const seen = new Map<string, number[]>(); // key → children seen by each reconcile
    const reconcile: Reconciler<ConfigMap> = async (key, ctx) => {
      (seen.get(key) ?? seen.set(key, []).get(key)!).push(ctx.children(resources.secrets).length);
      return Action.done();
    };
    const a = replica(fake, clock, store, 'a', 'namespace', reconcile);
    const b = replica(fake, clock, store, 'b', 'namespace', reconcile);
    await settle(clock, 'every parent reconciled', () => a.ring.ownedSlots().length === 4 && b.ring.ownedSlots().length === 4 && seen.size === NAMESPACES);

    // Neither factory holds a shared informer: nothing is watched whole.
    expect(Object.keys(a.factory.informers())).toEqual([]);
    expect(Object.keys(b.factory.informers())).toEqual([]);
    for (const resource of ['configmaps', 'secrets']) {
      const lists = listsOf(fake, resource);
      expect(lists.length).toBeGreaterThan(0);
      expect(lists.every((r) => typeof r.query.shardSelector === 'string' && r.query.shardSelector.startsWith('shardRange(object.metadata.namespace'))).toBe(true);
    }
    // A slot is reconciled only once its caches synced: no reconcile saw a parent without its children.
    for (const [key, counts] of seen) expect([key, counts.every((n) => n === CHILDREN)]).toEqual([key, true]);
  }, 60_000);

  it('on a uid ring: the primary per slot, owned children watched whole by the factory', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    seed(fake, 20, 1);
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const seen = new Set<string>();
    const a = replica(fake, clock, store, 'a', 'uid', async (key) => {
      seen.add(key);
      return Action.done();
    });
    await settle(clock, 'every parent reconciled', () => a.ring.ownedSlots().length === 8 && seen.size === 20);
    expect(Object.keys(a.factory.informers())).toEqual(['v1/secrets']);
    expect(listsOf(fake, 'configmaps').every((r) => String(r.query.shardSelector).startsWith('shardRange(object.metadata.uid'))).toBe(true);
    expect(listsOf(fake, 'secrets').every((r) => r.query.shardSelector === undefined)).toBe(true);
  }, 60_000);

  it('rejects run when a slot cache cannot sync (403 on its list)', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    seed(fake, 4, 0);
    for (let i = 0; i < 100; i++) fake.injectFault({ verb: ['list', 'watch'], resource: 'configmaps', type: 'status', code: 403, message: 'configmaps is forbidden' });
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const ring = new ShardRing({ ...TIMING, store, name: 'parents', identity: 'a', clock });
    const factory = new SharedInformerFactory(fake.kubeConfig, { logger: false, informerOptions: { clock } });
    const controller = Controller.for(factory, resources.configmaps).build(async () => Action.done(), { sharded: ring, logger: false, clock });
    const stop = new AbortController();
    cleanups.push(async () => {
      stop.abort();
      await clock.advance(20_000);
    });
    factory.start(stop.signal);
    void ring.run(stop.signal);
    const run = controller.run(stop.signal);
    let settled = false;
    const outcome = run.then(
      () => 'resolved',
      (err: unknown) => err,
    ).finally(() => (settled = true));
    await settle(clock, 'the ring owns its slots', () => ring.ownedSlots().length === 8);
    await settle(clock, 'run rejected', () => settled);
    expect(await outcome).toMatchObject({ code: 'API_STATUS', statusCode: 403 });
  }, 60_000);

  it('says so when its ring is not running (it would own no slot and reconcile nothing)', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    seed(fake, 2, 0);
    const log = memoryLog();
    const ring = new ShardRing({ ...TIMING, store: new InMemoryRingStore(), name: 'parents', identity: 'a', clock: new FakeClock() });
    const factory = new SharedInformerFactory(fake.kubeConfig, { logger: false });
    const controller = Controller.for(factory, resources.configmaps).build(async () => Action.done(), { name: 'parents', sharded: ring, logger: log.logger });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    await until(() => log.lines.some((l) => l.startsWith('warn: controller parents: its shard ring is not running')), 'the warning');
    stop.abort();
    await running;
  });
});
