// Limits at the queue: the retry bucket beside per-key backoff (client-go's default controller rate limiter), Retry-After honoured, the limit's metrics and bad options.

import { describe, expect, it } from 'vitest';
import { ApiStatusError, FakeClock, flushPromises } from '../../src/core/index.js';
import { ReconcileScheduler, type Action, type ReconcileSchedulerOptions } from '../../src/controller/scheduler.js';
import { MAX_RETRY_AFTER_MS, type RateLimitCause } from '../../src/controller/rate-limit.js';
import { Controller } from '../../src/controller/controller.js';
import { resources } from '../../src/core/resources.js';
import { SharedInformerFactory } from '../../src/informer/factory.js';
import { FakeControllerSource } from '../../src/testing/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

failOnUnhandledRejections();

/** A scheduler on a fake clock whose reconcile answers with `outcome(key, n)` (n: the key's runs so far); records every run's time. */
function harness(options: ReconcileSchedulerOptions, outcome: (key: string, n: number) => Action | Error) {
  const clock = new FakeClock();
  const scheduler = new ReconcileScheduler({ clock, concurrency: 50, ...options });
  const runs = new Map<string, number[]>();
  const ac = new AbortController();
  const done = scheduler.run(ac.signal, async (key) => {
    const times = runs.get(key) ?? [];
    runs.set(key, times);
    times.push(clock.now());
    const result = outcome(key, times.length - 1);
    if (result instanceof Error) throw result;
    return result;
  });
  return {
    clock,
    scheduler,
    /** The time of each key's `n`-th run (from 0), sorted; keys that did not run that often are left out. */
    nth: (n: number) => [...runs.values()].filter((t) => t.length > n).map((t) => t[n]!).sort((a, b) => a - b),
    times: (key: string) => runs.get(key) ?? [],
    stop: async () => {
      ac.abort();
      await flushPromises();
      await done;
    },
  };
}

const keys = (n: number, prefix = 'k'): string[] => Array.from({ length: n }, (_, i) => `ns/${prefix}${i}`);
const failOnce = (_key: string, n: number): Action | Error => (n === 0 ? new Error('boom') : { kind: 'done' });
const tooMany = (seconds: number): ApiStatusError => new ApiStatusError(429, 'create configmaps: HTTP 429 TooManyRequests', { reason: 'TooManyRequests', retryAfterSeconds: seconds });

/** A metrics sink: counters and the gauge's last value. */
function sink() {
  const counts: Record<RateLimitCause, number> = { bucket: 0, retry_after: 0 };
  const tokens: number[] = [];
  return {
    counts,
    tokens,
    metrics: {
      tokens: { set: (v: number) => void tokens.push(v) },
      delayed: { bucket: { inc: () => void counts.bucket++ }, retry_after: { inc: () => void counts.retry_after++ } },
    },
  };
}

describe('the retry rate limit', () => {
  it('a storm of 1 000 failing keys: the first 100 retry on their backoff (5 ms), the rest 10 a second, the last 90 s later', async () => {
    const h = harness({}, failOnce);
    for (const k of keys(1000)) h.scheduler.schedule(k);
    await flushPromises();
    expect(h.nth(0)).toHaveLength(1000);
    await h.clock.advance(100_000);
    const retries = h.nth(1).map((t) => Math.round(t));
    expect(retries).toHaveLength(1000);
    expect(retries.slice(0, 100)).toEqual(Array(100).fill(5));
    expect(retries.slice(100)).toEqual(Array.from({ length: 900 }, (_, i) => (i + 1) * 100));
    await h.stop();
  });

  it('rateLimit: false retries every key on its own backoff (controller-runtime v0.23+ with its priority queue)', async () => {
    const h = harness({ rateLimit: false }, failOnce);
    for (const k of keys(1000)) h.scheduler.schedule(k);
    await h.clock.advance(10);
    expect(h.nth(1)).toEqual(Array(1000).fill(5));
    await h.stop();
  });

  it('qps and burst shape the spread: burst 2 at 4 qps retries 2 on their backoff, then one every 250 ms', async () => {
    const h = harness({ rateLimit: { qps: 4, burst: 2 } }, failOnce);
    for (const k of keys(5)) h.scheduler.schedule(k);
    await h.clock.advance(2_000);
    expect(h.nth(1)).toEqual([5, 5, 250, 500, 750]);
    await h.stop();
  });

  it('never limits successes, new requests nor requeueAfter, even while the bucket is deep in debt', async () => {
    const h = harness({ rateLimit: { qps: 1, burst: 1 } }, (key, n) => {
      if (key.startsWith('ns/fail')) return n === 0 ? new Error('boom') : { kind: 'done' };
      if (key === 'ns/again') return n < 3 ? { kind: 'requeueAfter', ms: 10 } : { kind: 'done' };
      return { kind: 'done' };
    });
    for (const k of keys(50, 'fail')) h.scheduler.schedule(k);
    await flushPromises();
    // 49 retries booked ahead of the refill: the bucket owes 49 s.
    for (const k of keys(200, 'ok')) h.scheduler.schedule(k);
    h.scheduler.schedule('ns/again');
    await flushPromises();
    expect(h.nth(0).filter((t) => t === 0)).toHaveLength(251);
    await h.clock.advance(30);
    expect(h.times('ns/again')).toEqual([0, 10, 20, 30]);
    await h.clock.advance(60_000);
    expect(h.nth(1).slice(-1)).toEqual([49_000]);
    await h.stop();
  });

  it('retries a 429 with Retry-After 3 s no sooner than 3 s, and holds back the retries of every other key until then', async () => {
    const s = sink();
    const h = harness({ rateLimitMetrics: s.metrics }, (key, n) => {
      if (n > 0 || key === 'ns/fresh') return { kind: 'done' };
      return key === 'ns/throttled' ? tooMany(3) : new Error('boom');
    });
    h.scheduler.schedule('ns/throttled');
    await flushPromises();
    await h.clock.advance(1_000);
    h.scheduler.schedule('ns/other');
    h.scheduler.schedule('ns/fresh');
    await h.clock.advance(1_999);
    expect(h.times('ns/throttled')).toEqual([0]);
    expect(h.times('ns/other')).toEqual([1_000]);
    expect(h.times('ns/fresh')).toEqual([1_000]);
    await h.clock.advance(1);
    expect(h.times('ns/throttled')).toEqual([0, 3_000]);
    expect(h.times('ns/other')).toEqual([1_000, 3_000]);
    expect(s.counts).toEqual({ bucket: 0, retry_after: 2 });
    await h.stop();
  });

  it("honours another status's Retry-After for its own key only (a 503 is not the server's throttling)", async () => {
    const h = harness({}, (key, n) => {
      if (n > 0) return { kind: 'done' };
      return key === 'ns/busy' ? new ApiStatusError(503, 'unavailable', { retryAfterSeconds: 2 }) : new Error('boom');
    });
    h.scheduler.schedule('ns/busy');
    h.scheduler.schedule('ns/other');
    await h.clock.advance(3_000);
    expect(h.times('ns/busy')).toEqual([0, 2_000]);
    expect(h.times('ns/other')).toEqual([0, 5]);
    await h.stop();
  });

  it('finds the Retry-After on the cause chain, and honours it with rateLimit: false too (without pausing other keys)', async () => {
    const h = harness({ rateLimit: false }, (key, n) => {
      if (n > 0) return { kind: 'done' };
      return key === 'ns/wrapped' ? new Error('reconcile failed', { cause: tooMany(1) }) : new Error('boom');
    });
    h.scheduler.schedule('ns/wrapped');
    h.scheduler.schedule('ns/other');
    await h.clock.advance(2_000);
    expect(h.times('ns/wrapped')).toEqual([0, 1_000]);
    expect(h.times('ns/other')).toEqual([0, 5]);
    await h.stop();
  });

  it(`caps an absurd Retry-After at ${MAX_RETRY_AFTER_MS} ms (5 minutes)`, async () => {
    const h = harness({}, (_key, n) => (n === 0 ? tooMany(86_400 * 365) : { kind: 'done' }));
    h.scheduler.schedule('ns/a');
    await h.clock.advance(MAX_RETRY_AFTER_MS - 1);
    expect(h.times('ns/a')).toEqual([0]);
    await h.clock.advance(1);
    expect(h.times('ns/a')).toEqual([0, MAX_RETRY_AFTER_MS]);
    await h.stop();
  });

  it('a policy that gives up takes no token, but a 429 still holds back the others', async () => {
    const s = sink();
    const h = harness(
      { rateLimit: { qps: 1, burst: 1 }, rateLimitMetrics: s.metrics, onError: (key) => ({ kind: key === 'ns/gives-up' ? 'done' : 'requeueAfter', ms: 5 }) as Action },
      (key, n) => (n > 0 ? { kind: 'done' } : key === 'ns/gives-up' ? tooMany(2) : new Error('boom')),
    );
    h.scheduler.schedule('ns/gives-up');
    await flushPromises();
    h.scheduler.schedule('ns/b');
    await h.clock.advance(5_000);
    expect(h.times('ns/gives-up')).toEqual([0]);
    // ns/b had the bucket's one token (none went to the give-up), but waits for the 429's pause.
    expect(h.times('ns/b')).toEqual([0, 2_000]);
    expect(s.tokens).toEqual([1, 0]);
    await h.stop();
  });

  it('counts each retry held past the policy delay by what decided it, and reports the tokens (below 0: booked ahead)', async () => {
    const s = sink();
    const h = harness({ rateLimit: { qps: 10, burst: 2 }, rateLimitMetrics: s.metrics }, failOnce);
    for (const k of keys(4)) h.scheduler.schedule(k);
    await flushPromises();
    expect(s.tokens).toEqual([2, 1, 0, -1, -2]);
    expect(s.counts).toEqual({ bucket: 2, retry_after: 0 });
    await h.stop();
  });

  describe('bad options', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ qps: 0 }, /ReconcileScheduler: option rateLimit\.qps must be a finite number > 0 \(rateLimit: false turns the limit off\), got 0/],
      [{ qps: -1 }, /option rateLimit\.qps must be a finite number > 0.*got -1/],
      [{ qps: Number.NaN }, /option rateLimit\.qps must be a finite number > 0.*got NaN/],
      [{ qps: Infinity }, /option rateLimit\.qps must be a finite number > 0.*got Infinity/],
      [{ qps: '10' }, /option rateLimit\.qps must be a finite number > 0/],
      [{ burst: 0 }, /ReconcileScheduler: option rateLimit\.burst must be a whole number >= 1, got 0/],
      [{ burst: 2.5 }, /option rateLimit\.burst must be a whole number >= 1, got 2\.5/],
      [true, /ReconcileScheduler: option rateLimit must be false or \{ qps, burst \}, got true/],
      [null, /option rateLimit must be false or \{ qps, burst \}, got null/],
      [{ qsp: 5 }, /ReconcileScheduler: unknown option rateLimit\.qsp \(did you mean rateLimit\.qps\?\)/],
    ];
    it.each(bad)('refuses rateLimit %o at construction with INVALID_OPTION naming it', (rateLimit, message) => {
      expect(() => new ReconcileScheduler({ rateLimit: rateLimit as never })).toThrow(message);
      expect(() => new ReconcileScheduler({ rateLimit: rateLimit as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    });

    it('refuses them when the Controller is built, naming the controller option', () => {
      const factory = new SharedInformerFactory(undefined, { listWatchFor: () => new FakeControllerSource() as never, logger: false });
      const build = (rateLimit: unknown) => () => Controller.for(factory, resources.configmaps).build(async () => ({ kind: 'done' }), { rateLimit: rateLimit as never });
      expect(build({ qps: 0 })).toThrow(/^Controller: option rateLimit\.qps must be a finite number > 0/);
      expect(build({ burst: 0 })).toThrow(/^Controller: option rateLimit\.burst must be a whole number >= 1/);
      expect(build(false)).not.toThrow();
    });
  });
});
