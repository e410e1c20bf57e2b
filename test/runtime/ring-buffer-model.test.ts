// Model-based randomized test of the ring buffer: thousands of random operations against a plain array.

import { describe, expect, it } from 'vitest';
import { RingBuffer } from '../../src/runtime/ring-buffer.js';
import { seededRandom } from '../../src/testing/random.js';

describe('RingBuffer against a plain array', () => {
  it('matches the array after every one of 20 000 random push/shift/peek/clear operations, through growth and shrinking', () => {
    const seed = Number(process.env.RING_BUFFER_SEED ?? 20261126);
    const rand = seededRandom(seed);
    const ring = new RingBuffer<number>();
    const model: number[] = [];
    let next = 0;
    let maxLength = 0;
    let step = 0;
    try {
      for (; step < 20_000; step++) {
        // Phases of mostly pushing and mostly shifting, so the buffer grows past thousands and drains again.
        const pushBias = Math.floor(step / 2_500) % 2 === 0 ? 0.7 : 0.3;
        const r = rand();
        if (r < 0.001) {
          ring.clear();
          model.length = 0;
        } else if (r < 0.05) {
          expect(ring.peek()).toBe(model[0]);
        } else if (r < 0.05 + 0.95 * pushBias) {
          const burst = 1 + Math.floor(rand() * 8);
          for (let i = 0; i < burst; i++) {
            ring.push(next);
            model.push(next++);
          }
        } else {
          expect(ring.shift()).toBe(model.shift());
        }
        expect(ring.length).toBe(model.length);
        maxLength = Math.max(maxLength, model.length);
        if (step % 97 === 0) expect(ring.toArray()).toEqual(model);
      }
      while (model.length > 0) expect(ring.shift()).toBe(model.shift());
      expect([ring.shift(), ring.peek(), ring.length]).toEqual([undefined, undefined, 0]);
    } catch (err) {
      throw new Error(`RingBuffer diverged from the model at step ${step}; replay with RING_BUFFER_SEED=${seed}`, { cause: err });
    }
    expect(maxLength).toBeGreaterThan(1_000);
  });

  it('hands items out in order across the wrap of an array shrunk after a backlog', () => {
    const ring = new RingBuffer<object>();
    const items = Array.from({ length: 5_000 }, (_, i) => ({ i }));
    for (const item of items) ring.push(item);
    for (let i = 0; i < 4_999; i++) ring.shift();
    expect(ring.toArray()).toEqual([items[4_999]]);
    // Push and shift at a steady small size: the order holds across the wrap of the shrunk array.
    for (let i = 0; i < 100; i++) {
      ring.push({ i: -i });
      expect(ring.shift()).toEqual(i === 0 ? items[4_999] : { i: -(i - 1) });
    }
    expect(ring.length).toBe(1);
  });
});
