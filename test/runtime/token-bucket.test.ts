// The one token bucket: tryTake (a passive filter) and reserve (a wait, in debt), on clock times.

import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/runtime/token-bucket.js';
import { seededRandom } from '../../src/testing/random.js';

describe('TokenBucket', () => {
  it('starts full, takes while tokens last and gets one back every period, never above the burst', () => {
    const bucket = new TokenBucket(3, 1, 1_000, 0);
    expect([0, 0, 0, 0].map((t) => bucket.tryTake(t))).toEqual([true, true, true, false]);
    expect([bucket.tryTake(999), bucket.tryTake(1_000), bucket.tryTake(1_000)]).toEqual([false, true, false]);
    expect([0, 0, 0, 0].map(() => bucket.tryTake(1_000_000))).toEqual([true, true, true, false]);
  });

  it('reserves in debt: 10 per second with a burst of 2 waits 0, 0, 100, 200 ms … and a clock going back refills nothing', () => {
    const bucket = new TokenBucket(2, 10, 1_000, 5_000);
    expect([0, 0, 0, 0].map(() => bucket.reserve(5_000))).toEqual([0, 0, 100, 200]);
    expect(bucket.reserve(4_000)).toBe(300);
    expect(bucket.reserve(5_300)).toBe(100);
  });

  it('tokens(now) reads what the bucket holds without taking: below 0 while reservations are in debt, refilled by time', () => {
    const bucket = new TokenBucket(2, 10, 1_000, 0);
    expect(bucket.tokens(0)).toBe(2);
    [0, 0, 0, 0].forEach((t) => bucket.reserve(t));
    expect(bucket.tokens(0)).toBe(-2);
    expect(bucket.tokens(0)).toBe(-2);
    expect(bucket.tokens(300)).toBeCloseTo(1, 9);
    expect(bucket.tokens(10_000)).toBe(2);
  });

  it('matches a plain model of tokens over 5 000 random takes, reservations and clock moves', () => {
    const seed = Number(process.env.TOKEN_BUCKET_SEED ?? 20261126);
    const rand = seededRandom(seed);
    const burst = 5;
    const bucket = new TokenBucket(burst, 2, 1_000, 0);
    let tokens = burst;
    let at = 0;
    let now = 0;
    for (let step = 0; step < 5_000; step++) {
      now += Math.floor(rand() * 400);
      tokens = Math.min(burst, tokens + ((now - at) * 2) / 1_000);
      at = now;
      if (rand() < 0.5) {
        const expected = tokens >= 1;
        if (expected) tokens -= 1;
        expect(bucket.tryTake(now), `step ${step}; replay with TOKEN_BUCKET_SEED=${seed}`).toBe(expected);
      } else {
        tokens -= 1;
        expect(bucket.reserve(now), `step ${step}; replay with TOKEN_BUCKET_SEED=${seed}`).toBeCloseTo(tokens >= 0 ? 0 : (-tokens / 2) * 1_000, 6);
      }
    }
  });
});
