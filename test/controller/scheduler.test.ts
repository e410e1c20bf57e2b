// ReconcileScheduler: merging, per-key exclusivity, the concurrency cap, actions, error backoff, debounce and the stop.

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/index.js';
import { exponentialBackoff, ReconcileScheduler, type Action, type ReconcileSchedulerOptions } from '../../src/controller/scheduler.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

interface Run {
  key: string;
  at: number;
  signal: AbortSignal;
  finish: (action?: Action) => void;
  fail: (error: unknown) => void;
}

/** A scheduler on a fake clock whose reconciles end when the test says (or at once, with `auto`). */
function harness(options: ReconcileSchedulerOptions = {}, auto?: (key: string, n: number) => Action | Error) {
  const clock = new FakeClock();
  const scheduler = new ReconcileScheduler({ clock, ...options });
  const runs: Run[] = [];
  const open: Run[] = [];
  let maxRunning = 0;
  const controller = new AbortController();
  const done = scheduler.run(controller.signal, (key, signal) => {
    const n = runs.filter((r) => r.key === key).length;
    if (open.some((r) => r.key === key)) throw new Error(`two reconciles of ${key} at once`);
    return new Promise<Action>((resolve, reject) => {
      const run: Run = {
        key,
        at: clock.now(),
        signal,
        finish: (action = { kind: 'done' }) => {
          open.splice(open.indexOf(run), 1);
          resolve(action);
        },
        fail: (error) => {
          open.splice(open.indexOf(run), 1);
          reject(error);
        },
      };
      runs.push(run);
      open.push(run);
      maxRunning = Math.max(maxRunning, open.length);
      if (auto !== undefined) {
        const result = auto(key, n);
        if (result instanceof Error) run.fail(result);
        else run.finish(result);
      }
    });
  });
  return {
    clock,
    scheduler,
    runs,
    open,
    maxRunning: () => maxRunning,
    keys: () => runs.map((r) => r.key),
    times: (key: string) => runs.filter((r) => r.key === key).map((r) => r.at),
    stop: async () => {
      controller.abort();
      await flushPromises();
      return done;
    },
    done,
  };
}

failOnUnhandledRejections();

describe('ReconcileScheduler', () => {
  it('reconciles a key requested now on the next turn', async () => {
    const h = harness({}, () => ({ kind: 'done' }));
    h.scheduler.schedule('ns/a');
    await flushPromises();
    expect(h.keys()).toEqual(['ns/a']);
    expect(h.scheduler.stats()).toEqual({ queued: 0, running: 0, failing: 0 });
    await h.stop();
    expect(h.clock.pendingTimers()).toBe(0);
  });

  // kube-rs scheduler: only the earliest of several requests for one message is emitted.
  it('merges requests for one key so that the earliest due time wins', async () => {
    const h = harness({}, () => ({ kind: 'done' }));
    h.scheduler.schedule('a', { delayMs: 300 });
    h.scheduler.schedule('a', { delayMs: 100 });
    h.scheduler.schedule('a', { runAt: 200 });
    expect(h.scheduler.stats().queued).toBe(1);
    await h.clock.advance(1000);
    expect(h.times('a')).toEqual([100]);
    await h.stop();
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('runs due keys in due order, ties in request order', async () => {
    const h = harness({}, () => ({ kind: 'done' }));
    h.scheduler.schedule('late', { delayMs: 50 });
    h.scheduler.schedule('b', { delayMs: 10 });
    h.scheduler.schedule('a', { delayMs: 10 });
    await h.clock.advance(100);
    expect(h.keys()).toEqual(['b', 'a', 'late']);
    await h.stop();
  });

  // controller-runtime: a key is never processed by two workers at once; kube-rs runner holds it.
  it('holds a request made while its key is running and runs it once after the run ends', async () => {
    const h = harness({ concurrency: 4 });
    h.scheduler.schedule('a');
    await flushPromises();
    expect(h.open.map((r) => r.key)).toEqual(['a']);
    h.scheduler.schedule('a');
    h.scheduler.schedule('a');
    await h.clock.advance(50);
    expect(h.runs).toHaveLength(1);
    expect(h.scheduler.stats()).toMatchObject({ queued: 1, running: 1 });
    h.open[0]!.finish();
    await flushPromises();
    expect(h.times('a')).toEqual([0, 50]);
    h.open[0]!.finish();
    await h.clock.advance(50);
    expect(h.runs).toHaveLength(2);
    await h.stop();
  });

  it('never runs more reconciles at once than the concurrency cap', async () => {
    const h = harness({ concurrency: 3 });
    for (let i = 0; i < 10; i++) h.scheduler.schedule(`k${i}`);
    await flushPromises();
    expect(h.open).toHaveLength(3);
    while (h.open.length > 0) {
      h.open[0]!.finish();
      await flushPromises();
    }
    expect(h.runs).toHaveLength(10);
    expect(h.maxRunning()).toBe(3);
    await h.stop();
  });

  it('runs one reconcile at a time by default', async () => {
    const h = harness();
    h.scheduler.schedule('a');
    h.scheduler.schedule('b');
    await flushPromises();
    expect(h.open.map((r) => r.key)).toEqual(['a']);
    h.open[0]!.finish();
    await flushPromises();
    expect(h.open.map((r) => r.key)).toEqual(['b']);
    h.open[0]!.finish();
    await h.stop();
    expect(h.maxRunning()).toBe(1);
  });

  // controller-runtime: Result{RequeueAfter} re-adds the key after the delay.
  it('reconciles again after the delay a requeueAfter action asks for', async () => {
    const h = harness({}, (_key, n) => (n < 2 ? { kind: 'requeueAfter', ms: 30 } : { kind: 'done' }));
    h.scheduler.schedule('a');
    await h.clock.advance(500);
    expect(h.times('a')).toEqual([0, 30, 60]);
    expect(h.clock.pendingTimers()).toBe(0);
    await h.stop();
  });

  it('merges a requeueAfter with an earlier request made during the run', async () => {
    const h = harness();
    h.scheduler.schedule('a');
    await flushPromises();
    h.scheduler.schedule('a', { delayMs: 5 });
    h.open[0]!.finish({ kind: 'requeueAfter', ms: 100 });
    await h.clock.advance(10);
    expect(h.times('a')).toEqual([0, 5]);
    h.open[0]!.finish();
    await h.clock.advance(200);
    expect(h.runs).toHaveLength(2);
    await h.stop();
  });

  it('waits for the next request after an await action', async () => {
    const h = harness({}, () => ({ kind: 'await' }));
    h.scheduler.schedule('a');
    await h.clock.advance(10_000);
    expect(h.runs).toHaveLength(1);
    expect(h.clock.pendingTimers()).toBe(0);
    h.scheduler.schedule('a');
    await flushPromises();
    expect(h.times('a')).toEqual([0, 10_000]);
    await h.stop();
  });

  // client-go's default controller rate limiter: 5 ms doubling per failure of the item.
  it('requeues a failing key with exponential backoff 5, 10, 20, 40 ms and keeps running other keys', async () => {
    const h = harness({ concurrency: 2 }, (key) => (key === 'bad' ? new Error('boom') : { kind: 'done' }));
    h.scheduler.schedule('bad');
    await h.clock.advance(75);
    expect(h.times('bad')).toEqual([0, 5, 15, 35, 75]);
    expect(h.scheduler.attempts('bad')).toBe(5);
    expect(h.scheduler.stats().failing).toBe(1);
    h.scheduler.schedule('good');
    await flushPromises();
    expect(h.keys()).toContain('good');
    await h.stop();
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('resets the backoff of a key after a success', async () => {
    const h = harness({}, (_key, n) => (n === 2 || n > 3 ? { kind: 'done' } : new Error(`fail ${n}`)));
    h.scheduler.schedule('a');
    await h.clock.advance(15);
    expect(h.times('a')).toEqual([0, 5, 15]);
    expect(h.scheduler.attempts('a')).toBe(0);
    h.scheduler.schedule('a', { runAt: 100 });
    await h.clock.advance(200);
    // The failure after the success starts again at 5 ms.
    expect(h.times('a')).toEqual([0, 5, 15, 100, 105]);
    expect(h.scheduler.attempts('a')).toBe(0);
    await h.stop();
  });

  it('caps the default backoff at 1000 s', () => {
    const policy = exponentialBackoff();
    const err = new Error('x');
    expect([1, 2, 3, 4].map((n) => policy('k', err, n))).toEqual([5, 10, 20, 40].map((ms) => ({ kind: 'requeueAfter', ms })));
    expect(policy('k', err, 40)).toEqual({ kind: 'requeueAfter', ms: 1_000_000 });
    expect(policy('k', err, 5000)).toEqual({ kind: 'requeueAfter', ms: 1_000_000 });
  });

  it('lets an error policy decide what follows a failure, with the attempt count', async () => {
    const seen: Array<[string, string, number]> = [];
    const h = harness(
      {
        onError: (key, error, attempt) => {
          seen.push([key, error.message, attempt]);
          return attempt < 3 ? { kind: 'requeueAfter', ms: 1000 } : { kind: 'done' };
        },
      },
      () => new Error('nope'),
    );
    h.scheduler.schedule('a');
    await h.clock.advance(10_000);
    expect(h.times('a')).toEqual([0, 1000, 2000]);
    expect(seen).toEqual([['a', 'nope', 1], ['a', 'nope', 2], ['a', 'nope', 3]]);
    await h.stop();
  });

  // One fallback for a broken policy, the Controller's (logged); a bare scheduler stops, loudly.
  it('stops when the error policy throws or returns nonsense: run rejects with it, no retry', async () => {
    for (const policy of [
      () => {
        throw new Error('policy bug');
      },
      () => ({ kind: 'later' }) as unknown as Action,
    ]) {
      const h = harness({ onError: policy }, () => new Error('x'));
      const ended = h.done.then(() => undefined, (e: unknown) => e);
      h.scheduler.schedule('a');
      await h.clock.advance(100);
      expect(h.times('a')).toEqual([0]);
      expect(await ended).toMatchObject({ message: expect.stringMatching(/policy bug|a reconcile must return/) });
    }
  });

  it('stops at an action that is not one (a programming error): run rejects with a TypeError, no retry', async () => {
    const h = harness({}, () => null as unknown as Action);
    const ended = h.done.then(() => undefined, (e: unknown) => e);
    h.scheduler.schedule('a');
    await h.clock.advance(100);
    expect(h.times('a')).toEqual([0]);
    expect(await ended).toBeInstanceOf(TypeError);
  });

  // kube-rs scheduler debounce: a burst of requests yields one reconcile once the burst is over.
  it('with debounceMs, holds a key until requests for it stop for that long', async () => {
    const h = harness({ debounceMs: 100 }, () => ({ kind: 'done' }));
    for (let t = 0; t < 5; t++) {
      h.scheduler.schedule('a');
      await h.clock.advance(50);
    }
    expect(h.runs).toHaveLength(0);
    await h.clock.advance(49);
    expect(h.runs).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.times('a')).toEqual([300]);
    await h.stop();
  });

  it('with debounceMs, keeps an earlier pending request over a later one', async () => {
    const h = harness({ debounceMs: 10 }, () => ({ kind: 'done' }));
    h.scheduler.schedule('a');
    h.scheduler.schedule('a', { delayMs: 500 });
    await h.clock.advance(1000);
    expect(h.times('a')).toEqual([10]);
    await h.stop();
  });

  it('does not debounce requeues asked for by a reconcile', async () => {
    const h = harness({ debounceMs: 100 }, (_key, n) => (n === 0 ? { kind: 'requeueAfter', ms: 10 } : { kind: 'done' }));
    h.scheduler.schedule('a');
    await h.clock.advance(1000);
    expect(h.times('a')).toEqual([100, 110]);
    await h.stop();
  });

  it('on abort starts nothing new, lets running reconciles see the signal, and resolves once they ended', async () => {
    const h = harness({ concurrency: 2 });
    h.scheduler.schedule('a');
    h.scheduler.schedule('b');
    h.scheduler.schedule('c');
    h.scheduler.schedule('d', { delayMs: 1000 });
    await flushPromises();
    expect(h.open.map((r) => r.key)).toEqual(['a', 'b']);
    let resolved = false;
    void h.done.then(() => (resolved = true));
    const stopping = h.stop();
    await flushPromises();
    expect(h.open.every((r) => r.signal.aborted)).toBe(true);
    expect(resolved).toBe(false);
    h.open[0]!.finish();
    await flushPromises();
    expect(resolved).toBe(false);
    h.open[0]!.finish({ kind: 'requeueAfter', ms: 5 });
    await stopping;
    expect(h.keys()).toEqual(['a', 'b']);
    expect(h.clock.pendingTimers()).toBe(0);
    await h.clock.advance(5000);
    expect(h.runs).toHaveLength(2);
    expect(h.scheduler.stats()).toEqual({ queued: 3, running: 0, failing: 0 });
  });

  it('keeps a reconcile interrupted by the stop as a request, without counting a failure', async () => {
    const h = harness();
    h.scheduler.schedule('a');
    await flushPromises();
    const run = h.open[0]!;
    const stopping = h.stop();
    await flushPromises();
    run.fail(run.signal.reason);
    await stopping;
    expect(h.scheduler.attempts('a')).toBe(0);
    expect(h.scheduler.stats()).toEqual({ queued: 1, running: 0, failing: 0 });
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('resolves at once when stopped with nothing running, and rejects a second run', async () => {
    const h = harness();
    h.scheduler.schedule('a', { delayMs: 100 });
    await flushPromises();
    expect(h.clock.pendingTimers()).toBe(1);
    await h.stop();
    expect(h.clock.pendingTimers()).toBe(0);
    await expect(h.scheduler.run(new AbortController().signal, async () => ({ kind: 'done' }))).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
  });

  it('rejects bad options and bad requests with INVALID_OPTION', () => {
    expect(() => new ReconcileScheduler({ concurrency: 0 })).toThrow(/concurrency/);
    expect(() => new ReconcileScheduler({ debounceMs: -1 })).toThrow(/debounceMs/);
    expect(() => new ReconcileScheduler({ onError: 5 as never })).toThrow(/onError/);
    const s = new ReconcileScheduler({ clock: new FakeClock() });
    expect(() => s.schedule('a', { delayMs: -5 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }) as Error);
    expect(() => s.schedule('a', { delayMs: 1, runAt: 2 })).toThrow(/not both/);
    expect(() => s.schedule('a', { runAt: Number.NaN })).toThrow(/runAt/);
  });
});
