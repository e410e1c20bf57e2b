// The clock-rate assumption of the shard ring, checked from both sides. docs/sharding.md promises no
// slot with two owners as long as clock rates agree within (leaseDuration − renewDeadline) /
// leaseDuration — a third with 15 s / 10 s. Here one replica is cut off from the Lease store (it keeps
// owning until its renew deadline, by its own clock) while the other takes its slots once they expired
// (by its clock). Within the bound no cut time gives an overlap; past it, the checker sees one. This is
// the negative control the model test cannot build directly: `renewDeadlineMs ≥ leaseDurationMs` is
// refused by the constructor, and a slow clock is that same mistake in real time.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { InvalidOptionError } from '../../src/core/options.js';
import { InMemoryRingStore, ShardRing } from '../../src/sharding/index.js';
import { CuttableStore, ReplicaClock } from './helpers.js';

const SLOTS = 8;
const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

interface Outcome {
  /** The first moment (ms after the cut) two replicas owned one slot, if any. */
  overlapAfterCutMs: number | undefined;
  /** Slots A owned when it was cut off. */
  ownedAtCut: number;
  /** Slots B owned at the end. */
  ownedByBAtEnd: number;
}

/**
 * Two replicas, A at `rateA` and B at `rateB`; B joins after `joinAfterMs`, A is cut off from the store
 * `cutAfterMs` after that and stays cut. After every timer: does any slot have two owners?
 */
async function cutOff(rateA: number, rateB: number, joinAfterMs: number, cutAfterMs: number): Promise<Outcome> {
  const clock = new FakeClock(1_000_000);
  const shared = new InMemoryRingStore();
  const storeA = new CuttableStore(shared);
  const stop = new AbortController();
  const ring = (identity: string, store: CuttableStore | InMemoryRingStore, rate: number): ShardRing => {
    const r = new ShardRing({ store, name: 'skew', identity, slots: SLOTS, ...TIMING, clock: new ReplicaClock(clock, rate), logger: false });
    void r.run(stop.signal);
    return r;
  };
  let overlapAt: number | undefined;
  let cutAt = Number.POSITIVE_INFINITY;
  const rings: ShardRing[] = [];
  const runFor = async (ms: number): Promise<void> => {
    const end = clock.now() + ms;
    for (;;) {
      const delay = clock.nextTimerDelay();
      if (delay === undefined || clock.now() + delay > end) break;
      await clock.runNext();
      for (let slot = 0; slot < SLOTS && overlapAt === undefined; slot++) {
        if (rings.filter((r) => r.owns(slot)).length > 1) overlapAt = clock.now() - cutAt;
      }
    }
    await clock.advance(end - clock.now());
  };
  try {
    const a = ring('a', storeA, rateA);
    rings.push(a);
    await runFor(joinAfterMs);
    const b = ring('b', shared, rateB);
    rings.push(b);
    await runFor(cutAfterMs);
    const ownedAtCut = a.ownedSlots().length;
    storeA.cut = true;
    cutAt = clock.now();
    await runFor(45_000);
    return { overlapAfterCutMs: overlapAt, ownedAtCut, ownedByBAtEnd: b.ownedSlots().length };
  } finally {
    stop.abort();
  }
}

/** The same cut at 24 phases against the replicas' periods (join and cut times spread over 2 s and more). */
async function sweep(rateA: number, rateB: number): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (let k = 0; k < 24; k++) out.push(await cutOff(rateA, rateB, 5_000 + k * 83, 40_000 + k * 137));
  return out;
}

describe('the shard ring and clock-rate skew', () => {
  it('refuses renewDeadlineMs ≥ leaseDurationMs outright', () => {
    const store = new InMemoryRingStore();
    expect(() => new ShardRing({ store, name: 'x', identity: 'a', leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toThrow(InvalidOptionError);
    expect(() => new ShardRing({ store, name: 'x', identity: 'a', leaseDurationMs: 10_000, renewDeadlineMs: 12_000, retryPeriodMs: 2_000 })).toThrow(InvalidOptionError);
  });

  it('within the bound (rates within a third of each other): a cut-off replica is fenced before its slots are taken, at every phase', async () => {
    // The holder slow or the taker fast, each just inside 15/10: renewDeadline/rateA < leaseDuration/rateB.
    for (const [rateA, rateB] of [[1, 1], [0.98, 1.02], [0.7, 1], [1, 1.45]]) {
      for (const o of await sweep(rateA, rateB)) {
        expect(o.ownedAtCut, `A held a share before the cut (rates ${rateA}/${rateB})`).toBe(SLOTS / 2);
        expect(o.overlapAfterCutMs, `rates ${rateA}/${rateB}`).toBeUndefined();
        expect(o.ownedByBAtEnd, `B took every slot over (rates ${rateA}/${rateB})`).toBe(SLOTS);
      }
    }
  }, 60_000);

  it('past the bound the checker sees two owners: a holder clock at half speed, or a taker clock 1.8× fast', async () => {
    for (const [rateA, rateB] of [[0.5, 1], [1, 1.8]]) {
      // The taker claims at its first period after the expiry it observed: 16 s (8 periods) of its clock
      // after it saw the last renewal, which it saw within one of its periods. That is 16 s against the
      // holder's 20 s, and 8.9 s against 10 s, of real time: every phase overlaps.
      const outcomes = await sweep(rateA, rateB);
      for (const o of outcomes) {
        expect(o.overlapAfterCutMs, `rates ${rateA}/${rateB}`).toBeDefined();
        // Never before the taker could have seen the holder's last renewal (at most a period before the cut) expire.
        expect(o.overlapAfterCutMs!).toBeGreaterThanOrEqual(TIMING.leaseDurationMs / rateB - TIMING.retryPeriodMs / rateA);
      }
    }
  }, 60_000);
});
