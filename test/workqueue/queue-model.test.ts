// Model-based randomized test of WorkQueue, and several async workers sharing one queue.

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises, sleep } from '../../src/core/clock.js';
import { WorkQueue, type WorkQueueGetResult } from '../../src/workqueue/queue.js';
import { driveUntil, seededRandom, track } from './helpers.js';

interface ModelWaiter {
  tracker: ReturnType<typeof track<WorkQueueGetResult<string>>>;
  expected: WorkQueueGetResult<string> | undefined;
}

/** The plain model: a FIFO array, a dirty set, a processing set, a flag and the pending get calls. */
class Model {
  queue: string[] = [];
  dirty = new Set<string>();
  processing = new Set<string>();
  shuttingDown = false;
  waiters: ModelWaiter[] = [];

  add(k: string): void {
    if (this.shuttingDown || this.dirty.has(k)) return;
    this.dirty.add(k);
    if (this.processing.has(k)) return;
    this.queue.push(k);
    this.handOut();
  }
  take(): string {
    const k = this.queue.shift() as string;
    this.processing.add(k);
    this.dirty.delete(k);
    return k;
  }
  handOut(): void {
    for (const w of this.waiters) {
      if (this.queue.length === 0) break;
      if (w.expected === undefined) w.expected = { item: this.take(), shutdown: false };
    }
  }
  done(k: string): void {
    if (!this.processing.delete(k)) return;
    if (this.dirty.has(k)) {
      this.queue.push(k);
      this.handOut();
    }
  }
  shutDown(): void {
    this.shuttingDown = true;
    for (const w of this.waiters) w.expected ??= { item: undefined, shutdown: true };
  }
}

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

describe('WorkQueue against a model', () => {
  it('matches a plain model over 10 000 random add/get/done/shutdown operations', async () => {
    const seed = Number(process.env.WORKQUEUE_SEED ?? 20240611);
    const rand = seededRandom(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    let q = new WorkQueue<string>();
    let m = new Model();
    let step = 0;
    try {
      for (; step < 10_000; step++) {
        const r = rand();
        if (r < 0.4) {
          const k = pick(KEYS);
          q.add(k);
          m.add(k);
        } else if (r < 0.7) {
          if (m.queue.length > 0) {
            const expected = { item: m.take(), shutdown: false };
            expect(await q.get()).toEqual(expected);
          } else if (m.shuttingDown) {
            expect(await q.get()).toEqual({ item: undefined, shutdown: true });
          } else if (m.waiters.length < 3) {
            m.waiters.push({ tracker: track(q.get()), expected: undefined });
          }
        } else if (r < 0.995) {
          // Mostly done for an item in flight; sometimes for one that is not (a no-op).
          const k = m.processing.size > 0 && rand() < 0.9 ? pick([...m.processing]) : pick(KEYS);
          q.done(k);
          m.done(k);
        } else {
          q.shutDown();
          m.shutDown();
        }
        await flushPromises(1);
        for (const w of m.waiters) {
          if (w.expected === undefined) expect(w.tracker.settled()).toBe(false);
          else expect(w.tracker.value()).toEqual(w.expected);
        }
        m.waiters = m.waiters.filter((w) => w.expected === undefined);
        expect(q.len()).toBe(m.queue.length);
        expect(q.shuttingDown()).toBe(m.shuttingDown);
        if (m.shuttingDown && m.queue.length === 0 && m.processing.size === 0) {
          q = new WorkQueue<string>();
          m = new Model();
        }
      }
    } catch (err) {
      throw new Error(`model test failed at step ${step} with seed ${seed} (rerun with WORKQUEUE_SEED=${seed})`, {
        cause: err,
      });
    }
  });
});

describe('WorkQueue with parallel workers', () => {
  it('never processes one item in two workers at once, and processes every last add', async () => {
    const clock = new FakeClock();
    const rand = seededRandom(7);
    const q = new WorkQueue<string>({ clock });
    const active = new Set<string>();
    const lastAdd = new Map<string, number>();
    const lastStart = new Map<string, number>();
    let overlaps = 0;
    let processed = 0;
    const workers = Array.from({ length: 6 }, async () => {
      for (;;) {
        const { item, shutdown } = await q.get();
        if (shutdown) return;
        if (active.has(item)) overlaps++;
        active.add(item);
        lastStart.set(item, clock.now());
        await sleep(clock, 1 + Math.floor(rand() * 5));
        active.delete(item);
        processed++;
        q.done(item);
      }
    });
    let producing = true;
    const producer = (async () => {
      for (let i = 0; i < 2000; i++) {
        const k = `key${Math.floor(rand() * 20)}`;
        q.add(k);
        lastAdd.set(k, clock.now());
        if (rand() < 0.5) await sleep(clock, 1);
      }
      producing = false;
    })();
    await driveUntil(clock, () => !producing);
    await producer;
    await driveUntil(clock, () => q.len() === 0 && active.size > 0);
    const inFlight = active.size;
    const drained = track(q.shutDownWithDrain());
    await flushPromises();
    expect(drained.settled()).toBe(false);
    await driveUntil(clock, () => drained.settled());
    expect(active.size).toBe(0);
    await Promise.all(workers);
    expect(inFlight).toBeGreaterThan(0);
    expect(overlaps).toBe(0);
    expect(processed).toBeGreaterThan(20);
    for (const [k, addedAt] of lastAdd) expect(lastStart.get(k)).toBeGreaterThanOrEqual(addedAt);
  });
});
