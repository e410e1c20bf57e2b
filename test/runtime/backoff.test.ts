// The one backoff family (runtime/backoff.ts): capped exponential delays, jitter from an injected random source, per-item counts.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { Backoff, exponentialDelay, FailureCounts, ItemBackoff, jittered, jitteredAround, resolveBackoffOptions } from '../../src/runtime/backoff.js';

function sequence(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length];
}

describe('exponentialDelay', () => {
  it('multiplies the base by the factor once per earlier failure and stops at the cap', () => {
    expect([0, 1, 2, 3, 4].map((n) => exponentialDelay(5, 2, n, 60))).toEqual([5, 10, 20, 40, 60]);
    expect(exponentialDelay(800, 1.5, 2, 30_000)).toBe(1800);
  });

  it('never exceeds the cap however many failures, is 0 for a base of 0 and the cap for a base above it', () => {
    expect(exponentialDelay(5, 2, 5000, 1_000_000)).toBe(1_000_000);
    expect(exponentialDelay(0, 2, 5000, 1_000_000)).toBe(0);
    expect(exponentialDelay(500, 2, 0, 100)).toBe(100);
  });
});

describe('jitter', () => {
  it('stretches a delay by up to the factor, from the random source, clamping draws outside [0, 1]', () => {
    expect([0, 0.5, 0.999, 7, -1].map((r) => jittered(1000, 0.25, () => r))).toEqual([1000, 1125, 1249.75, 1250, 1000]);
  });

  it('stretches or shrinks a delay around itself by up to the fraction', () => {
    expect([0, 0.5, 1].map((r) => jitteredAround(60_000, 0.1, () => r))).toEqual([54_000, 60_000, 66_000]);
  });
});

describe('FailureCounts', () => {
  it('counts failures in a row per item until the item is forgotten', () => {
    const counts = new FailureCounts<string>();
    expect([counts.add('a'), counts.add('a'), counts.add('b'), counts.add('a')]).toEqual([1, 2, 1, 3]);
    expect(counts.size).toBe(2);
    counts.forget('a');
    expect([counts.get('a'), counts.get('b'), counts.size]).toEqual([0, 1, 1]);
  });
});

describe('ItemBackoff', () => {
  it('waits 5 ms doubling up to 1000 s per item by default, and starts an item over once forgotten', () => {
    const backoff = new ItemBackoff<string>();
    expect(Array.from({ length: 4 }, () => backoff.next('a'))).toEqual([5, 10, 20, 40]);
    expect(backoff.next('b')).toBe(5);
    for (let i = 0; i < 100; i++) backoff.next('a');
    expect(backoff.next('a')).toBe(1_000_000);
    expect(backoff.failures('a')).toBe(105);
    backoff.forget('a');
    expect([backoff.failures('a'), backoff.next('a')]).toEqual([0, 5]);
  });

  it('gives the delay of an attempt without counting, and jitters from the injected random source', () => {
    const plain = new ItemBackoff<string>({ baseMs: 10, maxMs: 100 });
    expect([1, 2, 3, 4, 5].map((n) => plain.delayOf(n))).toEqual([10, 20, 40, 80, 100]);
    expect(plain.failures('x')).toBe(0);
    const jittery = new ItemBackoff<string>({ baseMs: 10, maxMs: 100, jitter: 1, random: sequence([0.5, 0]) });
    expect([jittery.next('x'), jittery.next('x')]).toEqual([15, 20]);
  });

  it('refuses options outside their range, naming its owner', () => {
    expect(() => new ItemBackoff({ factor: 0.5 }, 'Mine')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining('Mine') }));
    expect(() => new ItemBackoff({ baseMs: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new ItemBackoff({ random: 0.5 as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});

describe('Backoff', () => {
  it('starts at 800 ms, doubles up to 30 s and adds jitter from the injected random', () => {
    const clock = new FakeClock();
    const b = new Backoff(resolveBackoffOptions(), clock, sequence([0.5, 0, 0.25, 0, 0, 0, 0, 0.999]));
    expect(Array.from({ length: 8 }, () => b.next())).toEqual([1200, 1600, 4000, 6400, 12800, 25600, 30000, 59970]);
  });

  it('starts over after two minutes without a failure, measured from the end of the last delay', async () => {
    const clock = new FakeClock();
    const b = new Backoff(resolveBackoffOptions(), clock, () => 0);
    expect([b.next(), b.next(), b.next()]).toEqual([800, 1600, 3200]);
    await clock.advance(3200 + 119_999);
    expect(b.next()).toBe(6400);
    await clock.advance(6400 + 120_000);
    expect(b.next()).toBe(800);
  });

  it('keeps the capped delay while failures keep coming', async () => {
    const clock = new FakeClock();
    const b = new Backoff(resolveBackoffOptions(), clock, () => 0);
    for (let i = 0; i < 10; i++) {
      const d = b.next();
      await clock.advance(d + 1000);
    }
    expect(b.next()).toBe(30_000);
  });

  it('honours custom parameters without jitter', () => {
    const b = new Backoff(resolveBackoffOptions({ initialMs: 10, factor: 2, maxMs: 100, jitter: 0 }), new FakeClock(), () => 0.9);
    expect(Array.from({ length: 6 }, () => b.next())).toEqual([10, 20, 40, 80, 100, 100]);
  });
});
