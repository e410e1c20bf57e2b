// A fleet sharded by object: replicas (two, then a third joins), each a MultiClusterController with `sharded: ring` of its own
// (one in-memory Lease store, one fake clock), all engaged on east and west (two fake API servers). Every
// object of every cluster is reconciled by the owner of its slot only; a slot handed over (a join, a
// leave) moves its objects in both clusters, and only after its reconciles in both clusters ended (the
// per-cluster Controllers all track their work on the one ring); no object, and no slot, is worked by
// two replicas at once. And `concurrencyGroups` cap each cluster of a fleet while `concurrency` caps
// them all; and the manager refuses shard by cluster beside shard by object.

import { describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { FakeClock, flushPromises, resources } from '../../../src/core/index.js';
import { Action } from '../../../src/controller/index.js';
import { SharedInformerFactory } from '../../../src/informer/index.js';
import { MultiClusterController, MultiClusterManager, shardedClusters, staticClusters, type ClusterHandle } from '../../../src/operations/index.js';
import { InMemoryRingStore, ShardRing } from '../../../src/sharding/index.js';
import { type FakeApiServer } from '../../../src/testing/index.js';
import { failOnUnhandledRejections } from '../../helpers/async.js';
import { settle } from '../../sharding/helpers.js';
import { useTwoClusters, until } from './clusters.js';

failOnUnhandledRejections();

let east: FakeApiServer;
let west: FakeApiServer;
let stop: AbortController;
const stops: Array<() => Promise<void>> = [];
useTwoClusters((c) => ({ east, west, stop } = c), stops);


const cm = (name: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } });

let epoch = 2000;
/** Engages `server` on `fleet` as the manager would: a factory of its own, started right after, stopped by `signal`. */
function engage(fleet: MultiClusterController<ConfigMap>, name: string, server: FakeApiServer, signal: AbortSignal): void {
  const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
  const handle: ClusterHandle = { name, epoch: ++epoch, kubeConfig: server.kubeConfig, factory, signal: new AbortController().signal };
  fleet.engage(handle);
  factory.start(signal);
}

describe('MultiClusterController with sharded: ring (shard by object within each cluster)', () => {
  it('replicas on east and west: each object reconciled by its slot’s owner only, a join or leave moves both clusters’ objects after their reconciles ended, never two at once', async () => {
    const servers = { east, west };
    const clock = new FakeClock();
    const store = new InMemoryRingStore(); // the ring's Leases: in a management cluster in production (a LeaseRingStore on its kubeconfig)
    // 40 objects per cluster, more until each of the 8 slots has objects of both clusters (uids are random).
    const all: string[] = [];
    const place = new ShardRing({ store, name: 'fleet', identity: 'placing', slots: 8, clock, logger: false });
    for (const [name, server] of Object.entries(servers)) {
      const slots = new Set<number>();
      for (let i = 0; i < 40 || slots.size < 8; i++) {
        slots.add(place.slotOf(server.create(resources.configmaps, cm(`cm-${i}`))));
        all.push(`${name} ns/cm-${i}`);
      }
    }
    const running = new Map<string, string>(); // `cluster ns/name` → the replica reconciling it now
    const overlaps: string[] = [];
    const reconciledBy = new Map<string, Set<string>>();
    const slotBusy = new Map<number, Map<string, number>>(); // slot → replica → its reconciles of the slot running now
    const slotOverlaps: string[] = [];
    const hold: Record<string, Promise<void> | undefined> = {}; // a replica's reconciles wait for it
    const held: string[] = [];

    const replica = (identity: string) => {
      const ring = new ShardRing({ store, name: 'fleet', identity, slots: 8, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: false });
      const fleet = MultiClusterController.for(resources.configmaps).build(
        async (key, ctx) => {
          const id = `${ctx.cluster} ${key}`;
          const other = running.get(id);
          if (other !== undefined) overlaps.push(`${id}: ${other} and ${identity}`);
          running.set(id, identity);
          const slot = ring.slotOf({ metadata: { uid: uidOf(id) } });
          const busy = slotBusy.get(slot) ?? slotBusy.set(slot, new Map()).get(slot)!;
          for (const [who, n] of busy) if (who !== identity && n > 0) slotOverlaps.push(`slot ${slot}: ${who} and ${identity} (${id})`);
          busy.set(identity, (busy.get(identity) ?? 0) + 1);
          if (hold[identity] !== undefined) {
            held.push(id);
            await hold[identity];
          }
          await new Promise((resolve) => setImmediate(resolve));
          busy.set(identity, busy.get(identity)! - 1);
          running.delete(id);
          (reconciledBy.get(id) ?? reconciledBy.set(id, new Set()).get(id)!).add(identity);
          return Action.done();
        },
        { name: `fleet-${identity}`, sharded: ring, concurrency: 100, logger: false },
      );
      const own = new AbortController();
      const signal = AbortSignal.any([own.signal, stop.signal]);
      for (const [name, server] of Object.entries(servers)) engage(fleet, name, server, signal);
      const done = Promise.all([ring.run(signal), fleet.run(signal)]);
      const leave = async (): Promise<void> => {
        own.abort();
        await clock.advance(20_000);
        await done;
      };
      stops.push(leave);
      return { identity, ring, fleet, leave };
    };
    type Replica = ReturnType<typeof replica>;
    const uidOf = (id: string): string | undefined => {
      const [cluster, key] = id.split(' ');
      return servers[cluster as keyof typeof servers].get(resources.configmaps, key.split('/')[1], 'ns')?.metadata?.uid;
    };
    const ownerOf = (rs: Replica[], id: string): string | undefined => rs.find((r) => r.ring.owns(r.ring.slotOf({ metadata: { uid: uidOf(id) } })))?.identity;

    const a = replica('a');
    const b = replica('b');
    await settle(clock, 'a and b own 4 slots each and every object of both clusters was reconciled', () => a.ring.ownedSlots().length === 4 && b.ring.ownedSlots().length === 4 && reconciledBy.size === all.length);
    await settle(clock, 'quiet', () => running.size === 0);
    // Every object of both clusters was reconciled by its slot's owner (and maybe, before the split, by the
    // replica that held every slot first: one after the other — see `overlaps`).
    expect([...reconciledBy.keys()].sort()).toEqual([...all].sort());
    for (const [id, who] of reconciledBy) expect([id, who.has(ownerOf([a, b], id)!)]).toEqual([id, true]);
    // Both replicas have work in both clusters (the slots are by uid, the objects spread over them).
    const clustersOf = (r: Replica): string[] => [...new Set(all.filter((id) => ownerOf([a, b], id) === r.identity).map((id) => id.split(' ')[0]))].sort();
    expect(clustersOf(a)).toEqual(['east', 'west']);
    expect(clustersOf(b)).toEqual(['east', 'west']);
    // Asked for every object on both replicas: each replica reconciles its own slots' objects only.
    reconciledBy.clear();
    a.fleet.reconcileAll();
    b.fleet.reconcileAll();
    await settle(clock, 'every object reconciled again', () => reconciledBy.size === all.length && running.size === 0);
    await until(() => a.fleet.stats().queued + b.fleet.stats().queued === 0 && running.size === 0, 'the queues empty');
    for (const id of all) expect([id, [...reconciledBy.get(id)!]]).toEqual([id, [ownerOf([a, b], id)]]);

    // c joins while every reconcile of b (both clusters) is running, held: each of a and b must give c a
    // slot (3, 3, 2 of 8); a slot b hands over waits for its reconciles in BOTH clusters, and c starts
    // none of that slot's objects before they ended.
    const bKeys = all.filter((id) => ownerOf([a, b], id) === 'b');
    let release!: () => void;
    hold.b = new Promise<void>((resolve) => (release = resolve));
    stops.push(async () => release()); // a failure below must not leave b's reconciles held
    b.fleet.reconcileAll();
    await until(() => held.length === bKeys.length, 'every reconcile of b running, held');
    reconciledBy.clear();
    const c = replica('c');
    const bSlots = b.ring.ownedSlots();
    await settle(clock, 'b draining a slot for c (or c owning one)', () => b.ring.health().pendingHandovers.length > 0 || bSlots.some((slot) => c.ring.owns(slot)));
    expect(bSlots.filter((slot) => c.ring.owns(slot))).toEqual([]);
    const draining = b.ring.health().pendingHandovers;
    const heldClusters = (slot: number): string[] => [...new Set(held.filter((id) => b.ring.slotOf({ metadata: { uid: uidOf(id) } }) === slot).map((id) => id.split(' ')[0]))].sort();
    expect(draining.map(heldClusters)).toContainEqual(['east', 'west']); // not vacuous: work of both clusters in flight
    for (let i = 0; i < 20; i++) await clock.advance(500);
    expect(b.ring.health().pendingHandovers).toEqual(draining); // still draining: its work holds it
    expect(draining.filter((slot) => c.ring.owns(slot))).toEqual([]);
    hold.b = undefined;
    release();
    await settle(clock, 'c owns its share and reconciled its slots’ objects', () => {
      const cKeys = all.filter((id) => ownerOf([a, b, c], id) === 'c');
      return [2, 3].includes(c.ring.ownedSlots().length) && b.ring.health().pendingHandovers.length === 0 && cKeys.length > 0 && cKeys.every((id) => reconciledBy.get(id)?.has('c'));
    });
    await settle(clock, 'quiet', () => running.size === 0);
    const moved = all.filter((id) => ownerOf([a, b, c], id) === 'c');
    expect(['east', 'west'].every((cluster) => moved.some((id) => id.startsWith(`${cluster} `)))).toBe(true);
    expect([...reconciledBy].filter(([, who]) => who.has('c')).map(([id]) => id).sort()).toEqual(moved.sort());

    // b leaves: its slots are handed to a and c (and the two may rebalance a slot between them): exactly
    // the objects of both clusters whose slot changed owner are reconciled, each by its new owner only.
    const before = new Map(all.map((id) => [id, ownerOf([a, b, c], id)]));
    const bHad = all.filter((id) => before.get(id) === 'b');
    reconciledBy.clear();
    await b.leave();
    await settle(clock, 'a and c own every slot and reconciled b’s objects', () => a.ring.ownedSlots().length + c.ring.ownedSlots().length === 8 && bHad.every((id) => reconciledBy.has(id)));
    await settle(clock, 'quiet', () => running.size === 0);
    const changed = all.filter((id) => ownerOf([a, c], id) !== before.get(id)).sort();
    expect(changed).toEqual(expect.arrayContaining(bHad));
    expect([...reconciledBy.keys()].sort()).toEqual(changed);
    for (const [id, who] of reconciledBy) expect([id, [...who]]).toEqual([id, [ownerOf([a, c], id)]]);
    expect(overlaps).toEqual([]);
    expect(slotOverlaps).toEqual([]);
    expect(a.fleet.stats()).toMatchObject({ clusters: ['east', 'west'], failed: 0 });
  }, 60_000);
});

describe('MultiClusterController: concurrencyGroups cap each cluster, concurrency caps the fleet', () => {
  it('a storm in east takes at most its group’s 2 runs: west’s keys run beside it up to the fleet’s 4', async () => {
    for (let i = 0; i < 20; i++) east.create(resources.configmaps, cm(`storm-${i}`));
    for (let i = 0; i < 3; i++) west.create(resources.configmaps, cm(`w-${i}`));
    const running = { east: 0, west: 0 };
    const most = { east: 0, west: 0, all: 0 };
    const release: Array<() => void> = [];
    const done: string[] = [];
    const fleet = MultiClusterController.for(resources.configmaps).build(
      async (key, ctx) => {
        const c = ctx.cluster as 'east' | 'west';
        running[c]++;
        most[c] = Math.max(most[c], running[c]);
        most.all = Math.max(most.all, running.east + running.west);
        await new Promise<void>((resolve) => release.push(resolve));
        running[c]--;
        done.push(`${c} ${key}`);
        return Action.done();
      },
      { name: 'capped', logger: false, concurrency: 4, concurrencyGroups: { keyOf: () => 'all', concurrency: 2 } },
    );
    // east is engaged (and its 20 keys queued) first: without the per-cluster group it would take all 4 runs.
    engage(fleet, 'east', east, stop.signal);
    const run = fleet.run(stop.signal);
    await until(() => running.east >= 2, 'east’s storm running');
    engage(fleet, 'west', west, stop.signal);
    await until(() => running.west >= 2, 'west running beside the storm');
    await flushPromises(50);
    expect(running).toEqual({ east: 2, west: 2 });
    // Release one at a time until all 23 ran: neither cluster ever ran more than 2, the fleet never more than 4.
    while (done.length < 23) {
      await until(() => release.length > 0, 'a run waiting');
      release.shift()!();
      await flushPromises(5);
    }
    expect(most).toEqual({ east: 2, west: 2, all: 4 });
    expect(new Set(done).size).toBe(23);
    stop.abort();
    await run;
  });
});

describe('shard by cluster and by object at once, on the same replicas', () => {
  // Tried first as a fleet (two replicas, shardedClusters on one ring, sharded: on another): 15 of 32
  // objects were never reconciled — a cluster is engaged on one replica only, and that replica's
  // Controller takes only its own object slots. The manager refuses the pair instead.
  it('is refused: the manager throws INVALID_OPTION naming the provider and the controller', () => {
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const timing = { slots: 8, clock, logger: false } as const;
    const clusters = new ShardRing({ ...timing, store, name: 'clusters', identity: 'a' });
    const objects = new ShardRing({ ...timing, store, name: 'objects', identity: 'a' });
    const provider = shardedClusters(staticClusters({ east: east.kubeConfig, west: west.kubeConfig }), clusters);
    const byObject = MultiClusterController.for(resources.configmaps).build(async () => Action.done(), { name: 'by-object', sharded: objects, logger: false });
    const plain = MultiClusterController.for(resources.configmaps).build(async () => Action.done(), { name: 'plain', logger: false });
    const quiet = { factoryOptions: { logger: false }, logger: false } as const;
    expect(() => new MultiClusterManager({ providers: [provider], controllers: [plain, byObject], ...quiet })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/provider sharded\(static\).*controller by-object.*never be reconciled/) }),
    );
    // Each alone is fine.
    expect(() => new MultiClusterManager({ providers: [provider], controllers: [plain], ...quiet })).not.toThrow();
    expect(() => new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig })], controllers: [byObject], ...quiet })).not.toThrow();
  });
});
