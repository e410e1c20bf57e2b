// The shard ring on real Leases (LeaseRingStore) against kube-apiserver, on the real clock with short
// timings: three replicas split 16 slots, each slot owned by exactly one; a replica that leaves hands
// its slots over; a replica cut off from the server is fenced by its renew deadline and its slots are
// taken only after they expired.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseRingStore, ShardRing } from '../../src/sharding/index.js';
import { CuttableStore } from '../sharding/helpers.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

const SLOTS = 16;
const TIMING = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 400, stopGraceMs: 2_000 };

async function until(what: string, holds: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`not true after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the shard ring on kube-apiserver Leases', () => {
  let server: RealApiServer;
  let namespace: string;

  beforeAll(async () => {
    server = await startRealApiServer();
    namespace = await freshNamespace(server, 'ring');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('three replicas split the slots, one leaves, one is cut off: never two owners, every slot owned again', async () => {
    const replicas = ['a', 'b', 'c'].map((identity) => {
      const lease = new LeaseRingStore(server.kubeConfig, { namespace, ring: 'demo', leaseDurationSeconds: 3 });
      const store = new CuttableStore(lease);
      const ring = new ShardRing({ store, name: 'demo', identity, slots: SLOTS, ...TIMING, logger: false });
      const stop = new AbortController();
      return { identity, lease, store, ring, stop, running: ring.run(stop.signal) };
    });
    const overlaps: string[] = [];
    const watch = setInterval(() => {
      for (let slot = 0; slot < SLOTS; slot++) {
        const owners = replicas.filter((r) => !r.stop.signal.aborted && r.ring.owns(slot)).map((r) => r.identity);
        if (owners.length > 1) overlaps.push(`slot ${slot}: ${owners.join(',')}`);
      }
    }, 20);
    const ownedByOne = (live: typeof replicas): boolean =>
      Array.from({ length: SLOTS }, (_, s) => live.filter((r) => r.ring.owns(s)).length).every((n) => n === 1);
    try {
      await until('every slot owned by exactly one of three', () => ownedByOne(replicas));
      await until('balanced 5/5/6', () => replicas.every((r) => [5, 6].includes(r.ring.ownedSlots().length)));

      // A graceful leave: c's slots are released and taken by a and b.
      replicas[2].stop.abort();
      await replicas[2].running;
      await until('a and b own everything', () => ownedByOne(replicas.slice(0, 2)) && replicas.slice(0, 2).every((r) => r.ring.ownedSlots().length === 8));

      // b is cut off from the server: it fences itself within its renew deadline; a takes its slots
      // after they expired (a lease duration after it last saw them renewed).
      const bSlots = replicas[1].ring.ownedSlots();
      const cutAt = Date.now();
      replicas[1].store.cut = true;
      await until('b fenced', () => replicas[1].ring.ownedSlots().length === 0, 10_000);
      const fencedAfter = Date.now() - cutAt;
      await until('a owns all', () => replicas[0].ring.ownedSlots().length === SLOTS);
      const takenAfter = Date.now() - cutAt;
      expect(fencedAfter).toBeLessThan(TIMING.renewDeadlineMs + TIMING.retryPeriodMs + 500);
      // No sooner than a lease duration after the last renewal a saw (at most a period and a round trip before the cut).
      expect(takenAfter).toBeGreaterThanOrEqual(TIMING.leaseDurationMs - TIMING.retryPeriodMs - 300);
      expect(bSlots.length).toBe(8);
      expect(overlaps).toEqual([]);
    } finally {
      clearInterval(watch);
      for (const r of replicas) r.stop.abort();
      await Promise.all(replicas.map((r) => r.running));
      for (const r of replicas) r.lease.close();
    }
  }, 90_000);
});
