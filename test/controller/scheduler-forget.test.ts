// ReconcileScheduler.forget: a key's requests and failures leave at once — queued, held behind its own run, or parked for its group.

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/index.js';
import { Action, ReconcileScheduler, type ReconcileSchedulerOptions } from '../../src/controller/scheduler.js';
import type { WorkQueueMetricsProvider } from '../../src/observability/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

failOnUnhandledRejections();

/** A scheduler whose reconciles end when the test says; `outcome` picks what each run ends with. */
function harness(options: ReconcileSchedulerOptions = {}) {
  const clock = new FakeClock();
  const scheduler = new ReconcileScheduler({ clock, ...options });
  const started: string[] = [];
  const open = new Map<string, (outcome: Action | Error) => void>();
  const stop = new AbortController();
  const done = scheduler.run(stop.signal, (key) => {
    started.push(key);
    return new Promise<Action>((resolve, reject) => open.set(key, (outcome) => (open.delete(key), outcome instanceof Error ? reject(outcome) : resolve(outcome))));
  });
  return {
    clock,
    scheduler,
    started,
    end: async (key: string, outcome: Action | Error = Action.done()) => {
      open.get(key)!(outcome);
      await flushPromises();
    },
    stop: async () => {
      stop.abort();
      await flushPromises();
      await done;
    },
  };
}

describe('ReconcileScheduler.forget', () => {
  it('takes a queued key out at once: stats, and it is never reconciled', async () => {
    const h = harness();
    h.scheduler.schedule('a', { delayMs: 300_000 });
    h.scheduler.schedule('b', { delayMs: 10 });
    expect(h.scheduler.forget('a')).toBe(true);
    expect(h.scheduler.forget('a')).toBe(false);
    expect(h.scheduler.stats().queued).toBe(1);
    await h.clock.advance(400_000);
    await h.end('b');
    expect(h.started).toEqual(['b']);
    await h.stop();
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('forgets a key in a 5-minute backoff at once, its failure count with it', async () => {
    const h = harness({ onError: () => Action.requeueAfter(300_000), rateLimit: false });
    h.scheduler.schedule('a');
    await flushPromises();
    await h.end('a', new Error('boom'));
    expect([h.scheduler.stats(), h.scheduler.attempts('a')]).toEqual([{ queued: 1, running: 0, failing: 1 }, 1]);
    h.scheduler.forget('a');
    expect([h.scheduler.stats(), h.scheduler.attempts('a')]).toEqual([{ queued: 0, running: 0, failing: 0 }, 0]);
    await h.clock.advance(600_000);
    expect(h.started).toEqual(['a']);
    await h.stop();
  });

  it('drops the pending re-run of a running key and what its run asks for, but keeps a request made after the forget', async () => {
    const h = harness({ concurrency: 2 });
    h.scheduler.schedule('a');
    h.scheduler.schedule('b');
    await flushPromises();
    h.scheduler.schedule('a'); // held behind its run
    h.scheduler.schedule('b');
    expect(h.scheduler.forget('a')).toBe(true);
    expect(h.scheduler.forget('b')).toBe(true);
    expect(h.scheduler.stats()).toEqual({ queued: 0, running: 2, failing: 0 });
    h.scheduler.schedule('b', { delayMs: 5 }); // after the forget: a request of its own
    await h.end('a', Action.requeueAfter(1));
    await h.end('b', new Error('ignored: forgotten'));
    expect(h.scheduler.stats()).toEqual({ queued: 1, running: 0, failing: 0 });
    await h.clock.advance(100);
    expect(h.started).toEqual(['a', 'b', 'b']);
    await h.end('b');
    await h.stop();
  });

  it('forgets a key waiting for a slot of its concurrency group; the group runs its next key', async () => {
    const h = harness({ concurrency: 3, concurrencyGroups: { keyOf: (k) => k.slice(0, 1), concurrency: 1 } });
    h.scheduler.schedule('x1');
    await flushPromises();
    h.scheduler.schedule('x2');
    h.scheduler.schedule('x3');
    await flushPromises();
    h.scheduler.forget('x2');
    expect(h.scheduler.stats().queued).toBe(1);
    await h.end('x1');
    expect(h.started).toEqual(['x1', 'x3']);
    h.scheduler.schedule('x2'); // not held forever by its old wait
    await h.end('x3');
    expect(h.started).toEqual(['x1', 'x3', 'x2']);
    await h.end('x2');
    await h.stop();
  });

  it('forget with a test takes every matching key and counts them; the depth metric follows', async () => {
    let depth = 0;
    const none = { inc: () => undefined, dec: () => undefined, observe: () => undefined, set: () => undefined };
    const metrics: WorkQueueMetricsProvider = {
      newDepthMetric: () => ({ inc: () => void depth++, dec: () => void depth-- }),
      newAddsMetric: () => none,
      newLatencyMetric: () => none,
      newWorkDurationMetric: () => none,
      newUnfinishedWorkSecondsMetric: () => none,
      newLongestRunningProcessorSecondsMetric: () => none,
      newRetriesMetric: () => none,
    };
    const h = harness({ metricsProvider: metrics, name: 'q' });
    h.scheduler.schedule('1|a', { delayMs: 1000 });
    h.scheduler.schedule('1|b');
    h.scheduler.schedule('2|a');
    expect(h.scheduler.forget((key) => key.startsWith('1|'))).toBe(2);
    await flushPromises();
    expect(h.started).toEqual(['2|a']);
    expect(depth).toBe(0);
    await h.end('2|a');
    await h.stop();
  });
});
