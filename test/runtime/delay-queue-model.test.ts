// Model-based randomized test of the keyed delayed queue: random requests, holds, pops, deletes and clock moves against a plain map.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { DelayQueue } from '../../src/runtime/delay-queue.js';
import { seededRandom } from '../../src/testing/random.js';

/** The plain model: each key's due time and request order, and the held keys. */
class Model {
  entries = new Map<string, { dueAt: number; seq: number }>();
  held = new Set<string>();
  #seq = 0;

  set(key: string, dueAt: number): void {
    this.entries.set(key, { dueAt, seq: this.#seq++ });
  }
  setEarlier(key: string, dueAt: number): boolean {
    const old = this.entries.get(key);
    if (old !== undefined && old.dueAt <= dueAt) return false;
    this.set(key, dueAt);
    return true;
  }
  /** The earliest key not held (ties: the earlier request). */
  first(): { key: string; dueAt: number } | undefined {
    let best: [string, { dueAt: number; seq: number }] | undefined;
    for (const entry of this.entries) {
      if (this.held.has(entry[0])) continue;
      if (best === undefined || entry[1].dueAt < best[1].dueAt || (entry[1].dueAt === best[1].dueAt && entry[1].seq < best[1].seq)) best = entry;
    }
    return best === undefined ? undefined : { key: best[0], dueAt: best[1].dueAt };
  }
}

const KEYS = Array.from({ length: 40 }, (_, i) => `k${i}`);

describe('DelayQueue against a model', () => {
  it('hands out the earliest key not held after every one of 10 000 random operations, and keeps one timer for it', async () => {
    const seed = Number(process.env.DELAY_QUEUE_SEED ?? 20261126);
    const rand = seededRandom(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const clock = new FakeClock();
    let fired = 0;
    const queue = new DelayQueue<string>(clock, () => fired++);
    const model = new Model();
    let step = 0;
    try {
      for (; step < 10_000; step++) {
        const r = rand();
        const key = pick(KEYS);
        const dueAt = clock.now() + Math.floor(rand() * 12) - 2; // a narrow range: many ties
        if (r < 0.25) {
          queue.set(key, dueAt);
          model.set(key, dueAt);
        } else if (r < 0.5) {
          expect(queue.setEarlier(key, dueAt)).toBe(model.setEarlier(key, dueAt));
        } else if (r < 0.6) {
          queue.hold(key);
          model.held.add(key);
        } else if (r < 0.7) {
          queue.release(key);
          model.held.delete(key);
        } else if (r < 0.8) {
          const expected = model.first();
          const due = expected !== undefined && expected.dueAt <= clock.now() ? expected : undefined;
          expect(queue.popDue(clock.now())).toEqual(due === undefined ? undefined : expect.objectContaining(due));
          if (due !== undefined) model.entries.delete(due.key);
        } else if (r < 0.82) {
          // Pop every key not held, in order (the whole heap, not only its top), then request them again.
          const drained: string[] = [];
          for (let expected = model.first(); expected !== undefined; expected = model.first()) {
            expect(queue.pop()).toEqual(expect.objectContaining(expected));
            model.entries.delete(expected.key);
            drained.push(expected.key);
          }
          expect(queue.pop()).toBeUndefined();
          for (const k of drained.sort(() => rand() - 0.5)) {
            const at = clock.now() + Math.floor(rand() * 12);
            queue.set(k, at);
            model.set(k, at);
          }
        } else if (r < 0.84) {
          const expected = model.first();
          expect(queue.pop()).toEqual(expected === undefined ? undefined : expect.objectContaining(expected));
          if (expected !== undefined) model.entries.delete(expected.key);
        } else if (r < 0.88) {
          // Delete a key wherever it waits (held or not); its hold stays.
          expect(queue.delete(key)).toBe(model.entries.delete(key));
        } else if (r < 0.999) {
          // Arm, move the clock, and see the timer fire exactly when the earliest key is due.
          queue.arm();
          const first = model.first();
          expect(clock.pendingDelays()).toEqual(first === undefined ? [] : [Math.max(0, first.dueAt - clock.now())]);
          const before = fired;
          const by = Math.floor(rand() * 20);
          await clock.advance(by);
          expect(fired - before).toBe(first !== undefined && first.dueAt <= clock.now() ? 1 : 0);
          queue.disarm();
        } else {
          queue.clear();
          model.entries.clear();
          model.held.clear();
        }
        expect(queue.size).toBe(model.entries.size);
        const first = model.first();
        expect(queue.peek()).toEqual(first === undefined ? undefined : expect.objectContaining(first));
        for (const k of KEYS) expect(queue.dueAt(k)).toBe(model.entries.get(k)?.dueAt);
        expect(new Set(queue.keys())).toEqual(new Set(model.entries.keys()));
      }
    } catch (err) {
      throw new Error(`DelayQueue diverged from the model at step ${step}; replay with DELAY_QUEUE_SEED=${seed}`, { cause: err });
    }
    expect(clock.pendingTimers()).toBe(0);
  });
});
