// Ports client-go's rate-limiter and rate-limiting-queue tests (RL-1..5, RQ-1) and NC-42..44.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { InvalidOptionError } from '../../src/core/options.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
  type RateLimiter,
} from '../../src/workqueue/rate-limiters.js';
import { RateLimitingQueue } from '../../src/workqueue/rate-limiting-queue.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('rate limiters', () => {
  // RL-1
  it('backs off exponentially per item and forgets on request', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(1, SECOND);
    expect([1, 2, 3, 4, 5].map(() => l.when('one'))).toEqual([1, 2, 4, 8, 16]);
    expect(l.numRequeues('one')).toBe(5);
    expect([l.when('two'), l.when('two')]).toEqual([1, 2]);
    expect(l.numRequeues('two')).toBe(2);
    l.forget('one');
    expect(l.numRequeues('one')).toBe(0);
    expect(l.when('one')).toBe(1);
  });

  // RL-2
  it('never overflows past its cap', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(1, 1000 * SECOND);
    for (let i = 0; i < 5; i++) l.when('one');
    expect(l.when('one')).toBe(32);
    for (let i = 0; i < 1000; i++) l.when('overflow1');
    expect(l.when('overflow1')).toBe(1000 * SECOND);

    const l2 = new ItemExponentialFailureRateLimiter<string>(MINUTE, 1000 * HOUR);
    for (let i = 0; i < 2; i++) l2.when('one');
    expect(l2.when('one')).toBe(4 * MINUTE);
    for (let i = 0; i < 1000; i++) l2.when('overflow1');
    expect(l2.when('overflow1')).toBe(1000 * HOUR);
  });

  // NC-44
  it('returns 0 for a zero base and the cap when the cap is below the base', () => {
    const zero = new ItemExponentialFailureRateLimiter<string>(0, SECOND);
    expect([zero.when('a'), zero.when('a'), zero.when('a')]).toEqual([0, 0, 0]);
    for (let i = 0; i < 1100; i++) zero.when('b');
    expect(zero.when('b')).toBe(0);
    const capped = new ItemExponentialFailureRateLimiter<string>(100, 10);
    expect([capped.when('a'), capped.when('a')]).toEqual([10, 10]);
    expect(() => new ItemExponentialFailureRateLimiter(-1, 10)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new ItemExponentialFailureRateLimiter(1, Number.NaN)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  // RL-3
  it('retries fast for the first attempts, then slowly', () => {
    const l = new ItemFastSlowRateLimiter<string>(5, 10 * SECOND, 3);
    expect([1, 2, 3, 4, 5].map(() => l.when('one'))).toEqual([5, 5, 5, 10 * SECOND, 10 * SECOND]);
    expect(l.numRequeues('one')).toBe(5);
    expect([l.when('two'), l.when('two')]).toEqual([5, 5]);
    expect(l.numRequeues('two')).toBe(2);
    l.forget('one');
    expect(l.numRequeues('one')).toBe(0);
    expect(l.when('one')).toBe(5);
  });

  // RL-4
  it('takes the longest delay of several limiters, and forgets in all', () => {
    const l = new MaxOfRateLimiter<string>(
      new ItemFastSlowRateLimiter<string>(5, 3 * SECOND, 3),
      new ItemExponentialFailureRateLimiter<string>(1, SECOND),
    );
    expect([1, 2, 3, 4, 5].map(() => l.when('one'))).toEqual([5, 5, 5, 3 * SECOND, 3 * SECOND]);
    expect(l.numRequeues('one')).toBe(5);
    expect([l.when('two'), l.when('two')]).toEqual([5, 5]);
    expect(l.numRequeues('two')).toBe(2);
    l.forget('one');
    expect(l.numRequeues('one')).toBe(0);
    expect(l.when('one')).toBe(5);
  });

  // RL-5
  it('caps another limiter at a maximum wait', () => {
    let calls = 0;
    const step: RateLimiter<number> = {
      when: () => (calls++ < 100 ? 5 : 1000 * SECOND),
      forget: () => {},
      numRequeues: () => 0,
    };
    const l = new WithMaxWaitRateLimiter(step, 500 * SECOND);
    for (let i = 0; i < 100; i++) expect(l.when(i)).toBe(5);
    for (let i = 100; i < 200; i++) expect(l.when(i)).toBe(500 * SECOND);
  });

  // NC-42
  it('shares a token bucket across items and refills it on the clock', async () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter<string>(10, 100, { clock });
    for (let i = 0; i < 100; i++) expect(l.when(`item${i}`)).toBe(0);
    expect(l.when('a')).toBeCloseTo(100);
    expect(l.when('b')).toBeCloseTo(200);
    expect(l.when('c')).toBeCloseTo(300);
    await clock.advance(150);
    expect(l.when('d')).toBeCloseTo(250);
    expect(l.numRequeues('a')).toBe(0);
    l.forget('a');
    await clock.advance(100 * SECOND);
    for (let i = 0; i < 100; i++) expect(l.when(`again${i}`)).toBe(0);
    expect(l.when('e')).toBeCloseTo(100);
  });

  it('rejects a token bucket without rate or burst', () => {
    expect(() => new BucketRateLimiter(0, 10)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new BucketRateLimiter(10, 0)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(new BucketRateLimiter(Infinity, 1).when('x')).toBe(0);
  });

  it('rejects bad limiter arguments at construction with an InvalidOptionError naming them', () => {
    const invalid = (message: string): unknown => expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining(message) });
    expect(() => new ItemExponentialFailureRateLimiter(1, undefined as never)).toThrow(invalid('ItemExponentialFailureRateLimiter: maxDelayMs is required'));
    expect(() => new ItemExponentialFailureRateLimiter(1, Infinity)).toThrow(invalid('option maxDelayMs'));
    expect(() => new ItemFastSlowRateLimiter(5, 10, 1.5)).toThrow(invalid('ItemFastSlowRateLimiter: option maxFastAttempts'));
    expect(() => new ItemFastSlowRateLimiter(-5, 10, 1)).toThrow(invalid('option fastDelayMs'));
    expect(() => new BucketRateLimiter('10' as never, 1)).toThrow(invalid('BucketRateLimiter: qps'));
    expect(() => new BucketRateLimiter(10, 1.5)).toThrow(invalid('BucketRateLimiter: option burst'));
    expect(() => new BucketRateLimiter(10, 1, { clock: {} as never })).toThrow(invalid('BucketRateLimiter: option clock'));
    expect(() => new WithMaxWaitRateLimiter(defaultItemBasedRateLimiter(), -1)).toThrow(invalid('WithMaxWaitRateLimiter: option maxDelayMs'));
    expect(() => new MaxOfRateLimiter()).toThrow(InvalidOptionError);
    expect(() => defaultControllerRateLimiter({ clock: 5 as never })).toThrow(InvalidOptionError);
  });

  // NC-43
  it('the default controller limiter is the longer of per-item backoff and the bucket', () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter<string>({ clock });
    expect([l.when('one'), l.when('one'), l.when('one')]).toEqual([5, 10, 20]);
    expect(l.numRequeues('one')).toBe(3);
    for (let i = 0; i < 97; i++) l.when(`other${i}`);
    // The bucket is empty now: the next call of a fresh item waits 100 ms, more than its 5 ms backoff.
    expect(l.when('fresh')).toBeCloseTo(100);
    l.forget('one');
    expect(l.numRequeues('one')).toBe(0);
    expect(defaultItemBasedRateLimiter<string>().when('x')).toBe(1);
  });
});

describe('RateLimitingQueue', () => {
  // RQ-1
  it('delays each re-queue by the limiter, per item, until forgotten', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ rateLimiter: new ItemExponentialFailureRateLimiter<string>(1, SECOND), clock });
    const failOnce = async (item: string, expectedDelay: number): Promise<void> => {
      q.addRateLimited(item);
      expect(clock.pendingDelays()).toEqual([expectedDelay]);
      await clock.advance(expectedDelay);
      const got = await q.get();
      expect(got.item).toBe(item);
      q.done(item);
    };
    await failOnce('one', 1);
    await failOnce('one', 2);
    expect(q.numRequeues('one')).toBe(2);
    await failOnce('two', 1);
    await failOnce('two', 2);
    q.forget('one');
    expect(q.numRequeues('one')).toBe(0);
    expect(q.numRequeues('two')).toBe(2);
    await failOnce('one', 1);
  });

  it('records each rate-limited delay as the limiter returns it', async () => {
    const clock = new FakeClock();
    const delays: number[] = [];
    const inner = new ItemExponentialFailureRateLimiter<string>(1, SECOND);
    const spy: RateLimiter<string> = {
      when: (i) => {
        const d = inner.when(i);
        delays.push(d);
        return d;
      },
      forget: (i) => inner.forget(i),
      numRequeues: (i) => inner.numRequeues(i),
    };
    const q = new RateLimitingQueue<string>({ rateLimiter: spy, clock });
    q.addRateLimited('one');
    q.addRateLimited('one');
    q.addRateLimited('two');
    q.addRateLimited('two');
    q.forget('one');
    q.addRateLimited('one');
    expect(delays).toEqual([1, 2, 1, 2, 1]);
    expect(q.rateLimiter).toBe(spy);
  });

  it('takes one options object, so new RateLimitingQueue({ name }) rate-limits with the default limiter', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ name: 'pods', clock });
    // Before the fix the object was taken for a rate limiter and this threw "when is not a function".
    q.addRateLimited('one');
    expect(clock.pendingDelays()).toEqual([5]);
    expect(q.numRequeues('one')).toBe(1);
    expect(q.name).toBe('pods');
  });

  it('rejects a wrong argument at construction with INVALID_OPTION', () => {
    const invalid = (message: string): unknown => expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining(message) });
    expect(() => new RateLimitingQueue('pods' as never)).toThrow(invalid('RateLimitingQueue: options must be an object'));
    expect(() => new RateLimitingQueue({ rateLimiter: { when: () => 1 } } as never)).toThrow(invalid('option rateLimiter'));
    expect(() => new RateLimitingQueue({ rateLimiter: null } as never)).toThrow(invalid('option rateLimiter'));
    expect(() => new RateLimitingQueue({ rateLimiter: 'fast' } as never)).toThrow(invalid('option rateLimiter'));
    expect(() => new RateLimitingQueue({ name: 7 } as never)).toThrow(invalid('option name'));
    expect(() => new RateLimitingQueue({ clock: {} } as never)).toThrow(invalid('option clock'));
    expect(() => new RateLimitingQueue({ metricsUpdatePeriodMs: 0 })).toThrow(invalid('option metricsUpdatePeriodMs'));
  });

  it('tells a caller of the old (rateLimiter, options) form how to call it now', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, SECOND);
    const howTo = expect.objectContaining({
      code: 'INVALID_OPTION',
      message: expect.stringContaining('new RateLimitingQueue({ rateLimiter })'),
    });
    expect(() => new RateLimitingQueue(limiter as never)).toThrow(howTo);
    expect(() => new RateLimitingQueue(...([limiter, { name: 'pods' }] as unknown as []))).toThrow(howTo);
    expect(() => new RateLimitingQueue(...([undefined, { name: 'pods' }] as unknown as []))).toThrow(howTo);
    expect(() => new RateLimitingQueue(limiter as never)).toThrow(InvalidOptionError);
  });

  it('ignores addRateLimited after shutdown without counting a failure', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ clock });
    q.shutDown();
    q.addRateLimited('x');
    expect(q.numRequeues('x')).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
