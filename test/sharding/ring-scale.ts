// The shard ring at ten replicas, on the model world of ring-world.ts: a seeded schedule of joins,
// graceful leaves, SIGKILLs, renewal stalls (a frozen process) and clock skew (every replica's clock
// 2 % fast or slow), each event followed by quiescence, then a storm of events close together. At every
// quiescent point it measures the three claims of docs/sharding.md against `objects` objects hashed to
// the slots (each replica's load counted from the slots it owns): the largest load against 1.1/N of the
// objects, the slots that changed owner against the event's share (ceil(slots/N): 1/N of the slots,
// rounded up to whole slots), and every overlap seen after any timer. Shared by ring-scale.test.ts and
// bench/ring-scale.ts (which prints the table of docs/sharding.md).

import { InMemoryRingStore } from '../../src/sharding/store.js';
import { ShardRing } from '../../src/sharding/ring.js';
import { seededRandom } from '../../src/testing/random.js';
import { TIMING, World, type Replica } from './ring-world.js';

/** What one quiescent point measured. */
export interface Phase {
  /** `start`, `join`, `leave`, `kill`, `stall <s>s` or `storm`. */
  readonly event: string;
  /** Live replicas after the event. */
  readonly n: number;
  /** The most objects one live replica owns (by its slots). */
  readonly maxObjects: number;
  /** 1.1 × objects / n. */
  readonly loadBound: number;
  /** The most and fewest slots one live replica owns. */
  readonly maxSlots: number;
  readonly minSlots: number;
  /** Slots whose owner differs from the previous quiescent point; objects in them. */
  readonly movedSlots: number;
  readonly movedObjects: number;
  /** The bound on `movedSlots` (undefined for `start` and `storm`, which have none). */
  readonly moveBound: number | undefined;
  /** Slots not owned by exactly one live replica, or shares more than one apart. */
  readonly problems: readonly string[];
}

/** The result of one schedule. */
export interface ScaleRun {
  readonly seed: number;
  readonly slots: number;
  readonly objects: number;
  readonly phases: readonly Phase[];
  /** Every moment two replicas were engaged in one slot. */
  readonly overlaps: readonly string[];
  /** The most slots one replica owned at any checked instant after the start (transients included). */
  readonly peakSlots: number;
}

/** Objects per slot: `objects` random uids (seeded) hashed to `slots` slots as ShardRing.slotOf does. */
export function objectsPerSlot(slots: number, objects: number, seed = 1): number[] {
  const ring = new ShardRing({ store: new InMemoryRingStore(), name: 'count', identity: 'count', slots, logger: false });
  const random = seededRandom(seed);
  const hex = (n: number): string => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
  const counts = new Array<number>(slots).fill(0);
  for (let i = 0; i < objects; i++) {
    const uid = `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(random() * 4)]}${hex(3)}-${hex(12)}`;
    counts[ring.slotOf({ metadata: { uid } })]++;
  }
  return counts;
}

/**
 * How long the world runs after an event before it is measured: a handover (work drains in ≤ 3 s, a
 * release, a claim) settles within a few periods; a SIGKILL needs a lease duration and periods; a stall
 * its length on top. Generous: a phase not settled by then is a finding (`problems`), not a wait.
 */
const SETTLE_MS = { start: 40_000, handover: 25_000, expiry: TIMING.leaseDurationMs + 20_000 };
/** A stall this short cannot let another replica see a lease expire (a period and a slow store call spare). */
const SHORT_STALL_MS = TIMING.leaseDurationMs - TIMING.retryPeriodMs - 1_000;

/**
 * Runs one schedule: `replicas` replicas join and settle; `events` isolated events (the live count kept
 * within one of `replicas`), each followed by quiescence; a storm of four events 2–8 s apart; quiescence.
 */
export async function scaleSchedule(seed: number, perSlot: readonly number[], replicas = 10, events = 6): Promise<ScaleRun> {
  const slots = perSlot.length;
  const total = perSlot.reduce((a, b) => a + b, 0);
  const world = new World(seed, { slots });
  const r = world.random;
  const phases: Phase[] = [];
  let before: string[] = new Array<string>(slots).fill('');
  const measure = (event: string, moveBound: number | undefined): void => {
    const live = world.live();
    const owners = world.owners();
    const counts = live.map((x) => x.ring.ownedSlots());
    const moved = owners.flatMap((o, slot) => (o !== before[slot] ? [slot] : []));
    phases.push({
      event,
      n: live.length,
      maxObjects: Math.max(...counts.map((c) => c.reduce((a, s) => a + perSlot[s], 0))),
      loadBound: (1.1 * total) / live.length,
      maxSlots: Math.max(...counts.map((c) => c.length)),
      minSlots: Math.min(...counts.map((c) => c.length)),
      movedSlots: moved.length,
      movedObjects: moved.reduce((a, s) => a + perSlot[s], 0),
      moveBound,
      problems: world.finalCheck(),
    });
    before = owners;
  };
  const pick = (): Replica => {
    const live = world.live();
    return live[Math.floor(r() * live.length)];
  };
  /** One event; returns its name, its bound on moved slots and how long it takes to settle. */
  const event = (): [string, number, number] => {
    const n = world.live().length;
    const dice = r();
    const kind = n <= replicas - 1 ? 'join' : n >= replicas + 1 ? (dice < 0.5 ? 'leave' : 'kill') : dice < 0.25 ? 'join' : dice < 0.5 ? 'leave' : dice < 0.75 ? 'kill' : 'stall';
    if (kind === 'join') {
      world.join();
      return ['join', Math.ceil(slots / (n + 1)), SETTLE_MS.handover];
    }
    const victim = pick();
    if (kind === 'leave') world.leave(victim);
    if (kind === 'kill') world.crash(victim);
    if (kind !== 'stall') return [kind, Math.ceil(slots / n), kind === 'kill' ? SETTLE_MS.expiry : SETTLE_MS.handover];
    const ms = 3_000 + Math.floor(r() * 27_000);
    world.freeze(victim, ms);
    // A short stall moves nothing; a long one is a leave and a rejoin of the same replica.
    return [`stall ${(ms / 1000).toFixed(1)} s`, ms < SHORT_STALL_MS ? 0 : 2 * Math.ceil(slots / n), ms + SETTLE_MS.expiry];
  };
  try {
    for (let i = 0; i < replicas; i++) world.join();
    await world.run(SETTLE_MS.start);
    measure('start', undefined);
    world.peakOwned = 0; // the start's transient (the first replica alone claims every slot) is no peak
    for (let i = 0; i < events; i++) {
      const [name, bound, settle] = event();
      await world.run(settle);
      measure(name, bound);
    }
    for (let i = 0; i < 4; i++) {
      event();
      await world.run(2_000 + r() * 6_000);
    }
    await world.run(30_000 + SETTLE_MS.expiry);
    measure('storm', undefined);
    return { seed, slots, objects: total, phases, overlaps: world.violations, peakSlots: world.peakOwned };
  } finally {
    world.stopAll();
  }
}

/** Each claim's failures in one run, as lines naming the seed and the phase (empty: all three hold). */
export function claimFailures(run: ScaleRun): { load: string[]; moves: string[]; overlaps: string[]; settled: string[] } {
  const at = (p: Phase, i: number): string => `seed ${run.seed}, ${run.slots} slots, phase ${i} (${p.event}, N=${p.n})`;
  return {
    load: run.phases.flatMap((p, i) => (p.maxObjects > p.loadBound ? [`${at(p, i)}: ${p.maxObjects} objects on one replica > ${Math.floor(p.loadBound)} (1.1/N)`] : [])),
    moves: run.phases.flatMap((p, i) => (p.moveBound !== undefined && p.movedSlots > p.moveBound ? [`${at(p, i)}: ${p.movedSlots} slots moved > ${p.moveBound}`] : [])),
    overlaps: run.overlaps.slice(0, 3).map((o) => `seed ${run.seed}, ${run.slots} slots: ${o}`),
    settled: run.phases.flatMap((p, i) => p.problems.map((x) => `${at(p, i)}: ${x}`)),
  };
}
