// The model world of the shard ring, shared by its model tests (ring-model.test.ts: 3–7 replicas and
// 16 slots; ring-scale.test.ts: ten replicas, 64 or 128 slots) and bench/ring-scale.ts: replicas on one
// fake clock (each replica's clock may run up to 2 % fast or slow) and one in-memory Lease store
// answering each call in 0–400 ms; joins, graceful leaves, crashes (no release) and freezes (a paused
// process: its timers wait, time goes on). After every single timer, for every slot, at most one
// replica is *engaged* in it: owns it, or has work of it running (started while it owned the slot, not
// finished, not aborted, not frozen).

import { FakeClock, type Clock } from '../../src/core/clock.js';
import { seededRandom } from '../../src/testing/random.js';
import { ShardRing } from '../../src/sharding/ring.js';
import { InMemoryRingStore, type RingLease, type RingStore } from '../../src/sharding/store.js';
import { ReplicaClock } from './helpers.js';

/** The ring timing of every model world (the store answers within 400 ms, far inside these). */
export const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, stopGraceMs: 8_000 };

/** The shared store as one replica reaches it: each call takes a random 0–400 ms on its clock. */
class SlowStore implements RingStore {
  constructor(
    readonly inner: RingStore,
    readonly clock: Clock,
    readonly random: () => number,
  ) {}
  #later<V>(op: () => Promise<V>): Promise<V> {
    return new Promise<V>((resolve, reject) => this.clock.setTimeout(() => void op().then(resolve, reject), this.random() * 400));
  }
  list(): Promise<RingLease[]> {
    // The read happens at the end of the delay: what it returns is that moment's state.
    return this.#later(() => this.inner.list());
  }
  write(name: string, holder: string, version: string | undefined): Promise<void> {
    return this.#later(() => this.inner.write(name, holder, version));
  }
}

/** The broken variant for the negative control: it reads every slot Lease as free. */
class LyingStore extends SlowStore {
  override list(): Promise<RingLease[]> {
    return super.list().then((ls) => ls.map((l) => (l.name.includes('-slot-') ? { ...l, holder: '' } : l)));
  }
}

interface Work {
  slot: number;
  done: boolean;
  aborted: boolean;
}

/** One replica of the world. */
export interface Replica {
  id: string;
  ring: ShardRing;
  clock: ReplicaClock;
  stop: AbortController;
  running: Promise<void>;
  /** Its work not yet finished or aborted (finished work is dropped at its next worker turn). */
  work: Work[];
  state: 'live' | 'left' | 'crashed';
}

/** Options of {@link World}. */
export interface WorldOptions {
  /** Slots of the ring; default 16. */
  readonly slots?: number;
}

/** The world: a shared fake clock, one Lease store, the replicas, and the overlaps seen so far. */
export class World {
  readonly clock = new FakeClock(1_000_000);
  readonly store = new InMemoryRingStore();
  readonly random: () => number;
  readonly replicas: Replica[] = [];
  /** Every moment two replicas were engaged in one slot. */
  readonly violations: string[] = [];
  readonly slots: number;
  /** The most slots one replica owned at any checked instant. */
  peakOwned = 0;
  #next = 0;

  constructor(seed: number, options: WorldOptions = {}) {
    this.random = seededRandom(seed);
    this.slots = options.slots ?? 16;
  }

  /** Starts a replica; a `liar` reads every slot Lease as free (the negative control). */
  join(liar = false): Replica {
    const id = `r${this.#next++}`;
    const clock = new ReplicaClock(this.clock, 0.98 + this.random() * 0.04);
    const store = liar ? new LyingStore(this.store, clock, this.random) : new SlowStore(this.store, clock, this.random);
    const ring = new ShardRing({ store, name: 'ring', identity: id, slots: this.slots, ...TIMING, clock, logger: false });
    const stop = new AbortController();
    const replica: Replica = { id, ring, clock, stop, running: ring.run(stop.signal), work: [], state: 'live' };
    this.replicas.push(replica);
    this.#worker(replica);
    return replica;
  }

  /** The live replicas. */
  live(): Replica[] {
    return this.replicas.filter((r) => r.state === 'live');
  }

  /** Every 300 ms (its clock), a replica may start work of an owned slot lasting 0–3 s, tracked, abortable. */
  #worker(r: Replica): void {
    const loop = (): void => {
      if (r.state !== 'live') return;
      r.work = r.work.filter((w) => !w.done && !w.aborted);
      const owned = r.ring.ownedSlots();
      if (owned.length > 0 && this.random() < 0.7) {
        const slot = owned[Math.floor(this.random() * owned.length)];
        const w: Work = { slot, done: false, aborted: false };
        r.work.push(w);
        const signal = r.ring.signalFor(slot);
        const finished = new Promise<void>((resolve) => {
          const onAbort = (): void => {
            r.clock.clearTimeout(timer);
            w.aborted = true;
            resolve();
          };
          const timer = r.clock.setTimeout(() => {
            signal.removeEventListener('abort', onAbort);
            w.done = true;
            resolve();
          }, this.random() * 3_000);
          signal.addEventListener('abort', onAbort, { once: true });
        });
        void r.ring.track(slot, finished);
      }
      r.clock.setTimeout(loop, 300);
    };
    r.clock.setTimeout(loop, 300);
  }

  /** At most one replica engaged per slot, right now. */
  check(): void {
    const active = this.replicas.filter((r) => r.state !== 'crashed' && !r.clock.frozen);
    const owned = active.map((r) => r.ring.ownedSlots());
    for (const o of owned) this.peakOwned = Math.max(this.peakOwned, o.length);
    const engaged = new Array<string[]>(this.slots);
    active.forEach((r, i) => {
      const slots = new Set(owned[i]);
      for (const w of r.work) if (!w.done && !w.aborted) slots.add(w.slot);
      for (const slot of slots) (engaged[slot] ??= []).push(r.id);
    });
    engaged.forEach((ids, slot) => {
      if (ids.length > 1) this.violations.push(`t=${this.clock.now()} slot ${slot}: ${ids.join(', ')}`);
    });
  }

  /** Runs the world for `ms`, checking after every timer. */
  async run(ms: number): Promise<void> {
    const end = this.clock.now() + ms;
    for (;;) {
      const delay = this.clock.nextTimerDelay();
      if (delay === undefined || this.clock.now() + delay > end) break;
      await this.clock.runNext();
      this.check();
    }
    await this.clock.advance(end - this.clock.now());
    this.check();
  }

  /** A graceful leave: the replica drains and releases its slots. */
  leave(r: Replica): void {
    r.state = 'left';
    r.stop.abort();
  }

  /** A SIGKILL: it stops renewing; its Leases stay as they were, its work dies with it. */
  crash(r: Replica): void {
    r.state = 'crashed';
    r.clock.frozen = true;
  }

  /** A pause of `ms` (a stalled process: no renewal, its timers wait); a crash during it is for good. */
  freeze(r: Replica, ms: number): void {
    r.clock.frozen = true;
    this.clock.setTimeout(() => {
      if (r.state !== 'crashed') r.clock.thaw();
    }, ms);
  }

  /** For each slot, the one live replica that owns it, `''` for none, `'*'` for more than one. */
  owners(): string[] {
    const live = this.live();
    return Array.from({ length: this.slots }, (_, slot) => {
      const ids = live.filter((r) => r.ring.owns(slot)).map((r) => r.id);
      return ids.length === 1 ? ids[0] : ids.length === 0 ? '' : '*';
    });
  }

  /** After quiescence: every slot owned by exactly one live replica, shares balanced within one. */
  finalCheck(): string[] {
    const live = this.live();
    const problems: string[] = [];
    const counts = live.map((r) => r.ring.ownedSlots().length);
    for (let slot = 0; slot < this.slots; slot++) {
      const owners = live.filter((r) => r.ring.owns(slot)).length;
      if (owners !== 1) problems.push(`slot ${slot} owned by ${owners} live replicas`);
    }
    if (live.length > 0 && Math.max(...counts) - Math.min(...counts) > 1) problems.push(`unbalanced: ${counts.join(',')}`);
    return problems;
  }

  /** Stops every replica (the end of a schedule). */
  stopAll(): void {
    for (const x of this.replicas) x.stop.abort();
  }
}
