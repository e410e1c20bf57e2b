// Shard by cluster: shardedClusters(provider, ring) engages a cluster only on the replica whose ring owns
// the cluster's slot. Two (three) replicas on one fake clock and one in-memory Lease store: every
// cluster engaged by exactly one replica, never two at once, a leave or a join moving clusters over.

import { describe, expect, it } from 'vitest';
import { FakeClock, InvalidOptionError } from '../../../src/core/index.js';
import type { KubeConfigLike } from '../../../src/listwatch/index.js';
import { shardedClusters, type ClusterProvider, type ClusterSink } from '../../../src/operations/index.js';
import { InMemoryRingStore, ShardRing } from '../../../src/sharding/index.js';
import { memoryLog } from '../../controller/fixture.js';
import { CuttableStore } from '../../sharding/helpers.js';
import { handProvider } from './clusters.js';

const TIMING = { slots: 8, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, logger: false } as const;
const kc = (name: string): KubeConfigLike => ({ getCurrentCluster: () => ({ name, server: `https://${name}` }) }) as unknown as KubeConfigLike;
const CLUSTERS = Array.from({ length: 12 }, (_, i) => `cluster-${i}`);


/** A sink that records what is engaged (as the manager does: another source for an engaged name throws). */
class RecordingSink implements ClusterSink {
  readonly engaged = new Map<string, string>();
  readonly log: string[] = [];
  readonly refused: string[] = [];
  /** Problems `check` found at a disengage (e.g. the slot already released to others). */
  readonly problems: string[] = [];
  constructor(readonly check: (name: string) => string | undefined = () => undefined) {}
  engage(name: string, _kc: KubeConfigLike, source?: string): void {
    const old = this.engaged.get(name);
    if (old !== undefined && old !== source) throw new InvalidOptionError(`cluster ${name} is engaged from ${old}; ${source} names it too`);
    this.engaged.set(name, source ?? '');
    this.log.push(`engage ${name}`);
  }
  disengage(name: string, reason?: string): void {
    const problem = this.check(name);
    if (problem !== undefined) this.problems.push(problem);
    if (this.engaged.delete(name)) this.log.push(`disengage ${name}: ${reason}`);
  }
  refuse(name: string | undefined, error: Error): void {
    this.refused.push(`${name}: ${error.message}`);
  }
}

interface Replica {
  readonly ring: ShardRing;
  readonly inner: ReturnType<typeof handProvider>;
  readonly sink: RecordingSink;
  readonly stop: AbortController;
  readonly running: Promise<void>;
}

function replica(store: InMemoryRingStore, clock: FakeClock, identity: string, logger: false | ReturnType<typeof memoryLog>['logger'] = false): Replica {
  const ring = new ShardRing({ ...TIMING, store, name: 'clusters', identity, clock });
  const inner = handProvider();
  // A cluster handed over is disengaged while this replica still holds its slot's Lease (ring.track):
  // the next owner cannot claim the slot before the old one let go of the cluster.
  const sink = new RecordingSink((name) => {
    const lease = `clusters-slot-${ring.slotOfName(name)}`;
    const holder = store.holder(lease);
    return holder === identity || !ring.running ? undefined : `${identity} disengaged ${name} after ${lease} went to '${holder}'`;
  });
  const stop = new AbortController();
  const running = shardedClusters(inner, ring, { logger }).run(stop.signal, sink);
  for (const name of CLUSTERS) inner.sink?.engage(name, kc(name), `secret fleet/${name}`);
  return { ring, inner, sink, stop, running };
}

/** Advances the clock in periods, checking after each that no cluster is engaged on two replicas. */
async function advance(clock: FakeClock, replicas: readonly Replica[], ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    await clock.advance(100);
    for (const name of CLUSTERS) {
      const on = replicas.filter((r) => r.sink.engaged.has(name)).map((r) => r.ring.identity);
      expect(on.length, `${name} engaged on ${on.join(', ')}`).toBeLessThanOrEqual(1);
    }
  }
}

const owners = (replicas: readonly Replica[]): Record<string, string[]> =>
  Object.fromEntries(CLUSTERS.map((name) => [name, replicas.filter((r) => r.sink.engaged.has(name)).map((r) => r.ring.identity)]));

describe('shardedClusters', () => {
  it('engages each cluster on exactly one replica; a leave moves its clusters over, a join takes its share back', async () => {
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const a = replica(store, clock, 'a');
    const b = replica(store, clock, 'b');
    const all = [a, b];
    try {
      await advance(clock, all, 3_000);
      // Each cluster on the owner of its slot, and only there.
      for (const name of CLUSTERS) {
        const owner = all.filter((r) => r.ring.owns(r.ring.slotOfName(name)));
        expect(owner).toHaveLength(1);
        expect(owners(all)[name]).toEqual([owner[0].ring.identity]);
      }
      expect(a.sink.engaged.size).toBeGreaterThan(0);
      expect(b.sink.engaged.size).toBeGreaterThan(0);
      expect(a.sink.engaged.get(CLUSTERS[0]) ?? b.sink.engaged.get(CLUSTERS[0])).toBe('secret fleet/cluster-0'); // the source passes through

      // b leaves gracefully: its clusters are disengaged there, then engaged on a.
      const fromB = [...b.sink.engaged.keys()];
      b.stop.abort();
      await advance(clock, all, 3_000);
      await b.running;
      expect(b.sink.engaged.size).toBe(0);
      expect(b.sink.log.filter((l) => l.startsWith('disengage')).sort()).toEqual(fromB.map((n) => `disengage ${n}: shard slot ${b.ring.slotOfName(n)} is no longer owned by b`).sort());
      expect([...a.sink.engaged.keys()].sort()).toEqual([...CLUSTERS].sort());

      // c joins: it takes its share, each moved cluster disengaged on a before c engages it.
      const c = replica(store, clock, 'c');
      all.push(c);
      await advance(clock, all, 4_000);
      expect(c.sink.engaged.size).toBeGreaterThan(0);
      expect(a.sink.engaged.size + c.sink.engaged.size).toBe(CLUSTERS.length);
      for (const name of CLUSTERS) expect(owners(all)[name]).toHaveLength(1);

      // The provider removes a cluster: disengaged where it was, engaged nowhere.
      const gone = CLUSTERS[3];
      for (const r of [a, c]) r.inner.sink?.disengage(gone, 'secret deleted');
      expect(owners(all)[gone]).toEqual([]);
      const onA = a.sink.log.includes(`disengage ${gone}: secret deleted`) || c.sink.log.includes(`disengage ${gone}: secret deleted`);
      expect(onA).toBe(true);
      for (const r of [a, c]) r.inner.sink?.engage(gone, kc(gone), `secret fleet/${gone}`);
      expect(owners(all)[gone]).toHaveLength(1);
    } finally {
      for (const r of all) r.stop.abort();
      await clock.advance(30_000);
      await Promise.all(all.map((r) => r.running));
    }
    for (const r of all) expect(r.sink.engaged.size).toBe(0); // leaving hands every cluster over
    for (const r of all) expect(r.sink.problems).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a replica whose ring is cut off disengages at its renew deadline, before another takes the slots', async () => {
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const cuttable = new CuttableStore(store);
    const a = replica(store, clock, 'a');
    const ringB = new ShardRing({ ...TIMING, store: cuttable, name: 'clusters', identity: 'b', clock });
    const inner = handProvider();
    const sinkB = new RecordingSink();
    const stopB = new AbortController();
    const runningB = shardedClusters(inner, ringB, { logger: false }).run(stopB.signal, sinkB);
    for (const name of CLUSTERS) inner.sink?.engage(name, kc(name), `secret fleet/${name}`);
    const b: Replica = { ring: ringB, inner, sink: sinkB, stop: stopB, running: runningB };
    try {
      await advance(clock, [a, b], 3_000);
      expect(b.sink.engaged.size).toBeGreaterThan(0);
      cuttable.cut = true; // b can no longer renew (a partition): fenced at its renew deadline, its clusters disengaged
      await advance(clock, [a, b], 6_000); // the no-two-engaged check runs through the takeover
      expect(b.sink.engaged.size).toBe(0);
      expect(a.sink.engaged.size).toBe(CLUSTERS.length);
      expect(b.sink.log.some((l) => /^disengage cluster-\d+: shard slot \d+ is no longer owned by b$/.test(l))).toBe(true);
    } finally {
      a.stop.abort();
      b.stop.abort();
      await clock.advance(30_000);
      await Promise.all([a.running, b.running]);
    }
  });

  it('holds a cluster it does not own (never refused), checks one source per name even then, and passes refusals through', async () => {
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const log = memoryLog();
    const a = replica(store, clock, 'a', log.logger);
    const b = replica(store, clock, 'b');
    try {
      await advance(clock, [a, b], 3_000);
      const held = CLUSTERS.find((n) => !a.sink.engaged.has(n)) as string;
      const mine = CLUSTERS.find((n) => a.sink.engaged.has(n)) as string;
      expect(a.sink.refused).toEqual([]);
      // Another source naming a cluster this replica holds (or engages) throws, as the manager's sink does.
      expect(() => a.inner.sink?.engage(held, kc(held), 'static')).toThrow(/cluster-\d+ .*secret fleet\/cluster-\d+.*static/);
      expect(() => a.inner.sink?.engage(mine, kc(mine), 'static')).toThrow(InvalidOptionError);
      a.inner.sink?.refuse('broken', new Error('no key value'), 'secret fleet/broken');
      expect(a.sink.refused).toEqual(['broken: no key value']);
      expect(log.lines.some((l) => l.startsWith(`debug: cluster ${held} held: its shard slot`))).toBe(true);
    } finally {
      for (const r of [a, b]) r.stop.abort();
      await clock.advance(30_000);
      await Promise.all([a.running, b.running]);
    }
  });

  it('rejects with ALREADY_STARTED for a ring that runs elsewhere (it runs the ring itself), and stops the provider', async () => {
    const clock = new FakeClock();
    const ring = new ShardRing({ ...TIMING, store: new InMemoryRingStore(), name: 'clusters', identity: 'a', clock });
    const stop = new AbortController();
    const elsewhere = ring.run(stop.signal);
    const inner = handProvider();
    const sink = new RecordingSink();
    await expect(shardedClusters(inner, ring, { logger: false }).run(new AbortController().signal, sink)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
    stop.abort();
    await clock.advance(30_000);
    await elsewhere;
    expect(sink.engaged.size).toBe(0);
  });

  it('validates its arguments', () => {
    const ring = new ShardRing({ ...TIMING, store: new InMemoryRingStore(), name: 'clusters', identity: 'a' });
    expect(() => shardedClusters(undefined as unknown as ClusterProvider, ring)).toThrow(/shardedClusters: provider must be a ClusterProvider/);
    expect(() => shardedClusters(handProvider(), {} as ShardRing)).toThrow(/shardedClusters: ring must be a ShardRing/);
  });
});
