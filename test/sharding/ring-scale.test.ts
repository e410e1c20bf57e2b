// The shard ring at ten replicas and 300 000 objects, on the model world (ring-world.ts, as
// ring-model.test.ts): seeded schedules of joins, graceful leaves, SIGKILLs, renewal stalls and clock
// skew (ring-scale.ts), each event followed by quiescence and a storm of four events at the end. The
// three claims of docs/sharding.md, at every quiescent point with N live replicas (9–11): the largest
// replica holds ≤ 1.1/N of the objects; a join, leave or SIGKILL moves ≤ ceil(slots/N) slots (1/N of the
// slots, rounded up to a whole slot; a stall past the lease is a leave and a rejoin: twice that); and no
// slot ever has two replicas engaged in it. bench/ring-scale.ts prints the table of docs/sharding.md.

import { describe, expect, it } from 'vitest';
import { claimFailures, objectsPerSlot, scaleSchedule, type ScaleRun } from './ring-scale.js';

const OBJECTS = 300_000;
// Hashed once into 128 slots; slot i of 64 is slots 2i and 2i + 1 of 128 (the top bits of the same hash).
const PER_SLOT_128 = objectsPerSlot(128, OBJECTS);
const PER_SLOT_64 = Array.from({ length: 64 }, (_, i) => PER_SLOT_128[2 * i] + PER_SLOT_128[2 * i + 1]);

let default64: Promise<ScaleRun> | undefined;
/** One schedule at the default 64 slots, shared by the two tests that read it. */
const run64 = (): Promise<ScaleRun> => (default64 ??= scaleSchedule(2, PER_SLOT_64, 10, 3));

describe('the shard ring at ten replicas and 300 000 objects (model)', () => {
  it('128 slots, seeds 1–3: load ≤ 1.1/N, a join, leave or kill moves ≤ ceil(128/N) slots, never two replicas in one slot', async () => {
    const failures: string[] = [];
    const events = new Set<string>();
    for (const seed of [1, 2, 3]) {
      const run = await scaleSchedule(seed, PER_SLOT_128, 10, 3);
      for (const p of run.phases) events.add(p.event.split(' ')[0]);
      expect(run.objects).toBe(OBJECTS);
      expect(run.phases.map((p) => p.n).every((n) => n >= 9 && n <= 11)).toBe(true);
      const f = claimFailures(run);
      failures.push(...f.load, ...f.moves, ...f.overlaps, ...f.settled);
    }
    expect(failures).toEqual([]);
    expect([...events].sort()).toEqual(['join', 'kill', 'leave', 'stall', 'start', 'storm']);
  }, 30_000);

  it('64 slots (the default): moves and overlaps hold', async () => {
    const f = claimFailures(await run64());
    expect([...f.moves, ...f.overlaps, ...f.settled]).toEqual([]);
  }, 20_000);

  // A finding, kept as an expected failure (it turns red once the claim holds, so it cannot pass
  // silently): with the default 64 slots the balance within one slot is not within 1.1/N. At N = 9
  // ceil(64/9) = 8 slots are 12.5 % of the slots against 1.1/9 = 12.2 %, whatever the hash; at N = 10,
  // 7 slots are 10.94 % of the slots, and the uneven fill of 300 000 uids takes one replica over 33 000
  // (33 050 here). The claim needs ceil(slots/N) ≤ 1.1 × slots/N with room for the hash: slots ≥ 10·N
  // (128 for N ≤ 11 holds above). The schedule and seed are those of the test before.
  it.fails('64 slots (the default): load ≤ 1.1/N — FAILS (finding, issue 51)', async () => {
    const f = claimFailures(await run64());
    expect(f.load).toEqual([]);
  }, 20_000);
});
