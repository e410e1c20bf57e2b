// ReconcileScheduler priorities: the restart storm, the merge of priorities, retries and requeues, fairness both ways, concurrency groups, bad input.

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/index.js';
import { Priority } from '../../src/controller/priority.js';
import { ReconcileScheduler, type Action, type ReconcileSchedulerOptions } from '../../src/controller/scheduler.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

interface Run {
  key: string;
  priority: number;
  finish: (action?: Action) => void;
  fail: (error: unknown) => void;
}

/** A scheduler on a fake clock whose reconciles end when the test says. */
function harness(options: ReconcileSchedulerOptions = {}) {
  const clock = new FakeClock();
  const scheduler = new ReconcileScheduler({ clock, onError: () => ({ kind: 'requeueAfter', ms: 10 }), ...options });
  const runs: Run[] = [];
  const open: Run[] = [];
  const controller = new AbortController();
  const done = scheduler.run(controller.signal, (key, _signal, priority) => {
    return new Promise<Action>((resolve, reject) => {
      const run: Run = {
        key,
        priority,
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
    });
  });
  /** Ends the oldest open run and lets the next start. */
  const next = async (action?: Action): Promise<void> => {
    open[0]!.finish(action);
    await flushPromises();
  };
  return {
    clock,
    scheduler,
    runs,
    open,
    next,
    keys: () => runs.map((r) => r.key),
    stop: async () => {
      controller.abort();
      for (const r of [...open]) r.finish();
      await flushPromises();
      return done;
    },
    done,
  };
}

failOnUnhandledRejections();

describe('ReconcileScheduler priorities', () => {
  it('restart storm: with thousands of initial-list keys queued low, a new high key is started next, not last', async () => {
    const h = harness();
    for (let i = 0; i < 5000; i++) h.scheduler.schedule(`ns/old-${i}`, { priority: Priority.low });
    await flushPromises();
    await h.next();
    await h.next();
    h.scheduler.schedule('ns/new', { priority: Priority.high });
    await h.next();
    expect(h.keys()).toEqual(['ns/old-0', 'ns/old-1', 'ns/old-2', 'ns/new']);
    expect(h.runs[3]!.priority).toBe(Priority.high);
    expect(h.runs[0]!.priority).toBe(Priority.low);
    await h.stop();
  });

  it('merges a key’s requests to the highest priority; a lower request later does not lower it', async () => {
    const h = harness();
    h.scheduler.schedule('ns/busy');
    h.scheduler.schedule('ns/a', { priority: Priority.low });
    h.scheduler.schedule('ns/b', { priority: Priority.low });
    h.scheduler.schedule('ns/c', { priority: Priority.high });
    h.scheduler.schedule('ns/b', { priority: Priority.high }); // raised: after c, the high key due before it
    h.scheduler.schedule('ns/c', { priority: Priority.low }); // stays high
    await flushPromises();
    for (let i = 0; i < 3; i++) await h.next();
    expect(h.keys()).toEqual(['ns/busy', 'ns/c', 'ns/b', 'ns/a']);
    expect(h.runs.map((r) => r.priority)).toEqual([0, 0, 0, -100]);
    await h.stop();
  });

  it('a retry keeps the priority its failed run started with; a requeue is high unless the action says otherwise', async () => {
    const h = harness();
    h.scheduler.schedule('ns/low', { priority: Priority.low });
    await flushPromises();
    h.open[0]!.fail(new Error('boom'));
    await flushPromises();
    await h.clock.advance(10);
    expect(h.runs.map((r) => [r.key, r.priority])).toEqual([['ns/low', -100], ['ns/low', -100]]);
    await h.next({ kind: 'requeueAfter', ms: 5 });
    await h.clock.advance(5);
    expect(h.runs.at(-1)).toMatchObject({ key: 'ns/low', priority: Priority.high });
    await h.next({ kind: 'requeueAfter', ms: 5, priority: -7 });
    await h.clock.advance(5);
    expect(h.runs.at(-1)).toMatchObject({ key: 'ns/low', priority: -7 });
    await h.stop();
  });

  it('a request made while the key runs raises the priority of its next run', async () => {
    const h = harness();
    h.scheduler.schedule('ns/a', { priority: Priority.low });
    await flushPromises();
    h.scheduler.schedule('ns/a', { priority: Priority.low });
    h.scheduler.schedule('ns/a', { priority: 5 });
    await h.next();
    expect(h.runs.map((r) => r.priority)).toEqual([-100, 5]);
    await h.stop();
  });

  it('fairness: a flood of high work never starves a low key — it starts within 10 starts', async () => {
    const h = harness();
    for (let i = 0; i < 50; i++) h.scheduler.schedule(`ns/high-${i}`);
    h.scheduler.schedule('ns/low', { priority: Priority.low });
    await flushPromises();
    // The high keys ahead of the low one (due earlier) go first: 50 starts, no passing over.
    for (let i = 0; i < 49; i++) await h.next();
    expect(h.keys().includes('ns/low')).toBe(false);
    // From now on every start passes over the low key: new high keys keep coming, two per start.
    let n = 0;
    while (!h.keys().includes('ns/low')) {
      h.scheduler.schedule(`ns/more-${n++}`);
      h.scheduler.schedule(`ns/more-${n++}`);
      await h.next();
      if (n > 100) throw new Error('the low key starved');
    }
    const at = h.keys().indexOf('ns/low');
    expect(h.keys().slice(50, at)).toHaveLength(9); // 9 starts passed it over; the 10th was its
    await h.stop();
  });

  it('fairness the other way: a flood of low work leaves high keys at least 9 starts in 10', async () => {
    const h = harness();
    for (let i = 0; i < 2000; i++) h.scheduler.schedule(`ns/low-${i}`, { priority: Priority.low });
    await flushPromises();
    let high = 0;
    for (let i = 0; i < 100; i++) {
      h.scheduler.schedule(`ns/high-${high++}`);
      h.scheduler.schedule(`ns/high-${high++}`);
      await h.next();
    }
    const started = h.keys().slice(1);
    const highs = started.filter((k) => k.startsWith('ns/high-')).length;
    expect(highs).toBeGreaterThanOrEqual(90);
    expect(highs).toBeLessThan(100); // and the oldest low keys still move
    await h.stop();
  });

  it('without priorities the order is first due, first started', async () => {
    const h = harness();
    for (const k of ['c', 'a', 'b']) h.scheduler.schedule(`ns/${k}`);
    h.scheduler.schedule('ns/early', { runAt: -1 });
    await flushPromises();
    for (let i = 0; i < 3; i++) await h.next();
    expect(h.keys()).toEqual(['ns/early', 'ns/c', 'ns/a', 'ns/b']);
    await h.stop();
  });

  it('concurrencyGroups: at most `concurrency` of a group at once; other groups start meanwhile; a slot of the group starts its best waiting key', async () => {
    const h = harness({ concurrency: 4, concurrencyGroups: { keyOf: (key) => key.split('/')[0]!, concurrency: 1 } });
    h.scheduler.schedule('a/1', { priority: Priority.low });
    h.scheduler.schedule('a/2', { priority: Priority.low });
    h.scheduler.schedule('a/3');
    h.scheduler.schedule('b/1', { priority: Priority.low });
    h.scheduler.schedule('c/1', { priority: Priority.low });
    await flushPromises();
    expect(h.open.map((r) => r.key).sort()).toEqual(['a/3', 'b/1', 'c/1']);
    expect(h.scheduler.stats()).toEqual({ queued: 2, running: 3, failing: 0 });
    h.open.find((r) => r.key === 'a/3')!.finish();
    await flushPromises();
    expect(h.open.map((r) => r.key).sort()).toEqual(['a/1', 'b/1', 'c/1']);
    h.open.find((r) => r.key === 'a/1')!.finish();
    await flushPromises();
    expect(h.open.map((r) => r.key).sort()).toEqual(['a/2', 'b/1', 'c/1']);
    await h.stop();
  });

  it('refuses a priority that is not a finite number, and a concurrencyGroups option of the wrong shape', () => {
    const s = new ReconcileScheduler();
    expect(() => s.schedule('k', { priority: Number.NaN })).toThrow(/priority must be a finite number/);
    expect(() => s.schedule('k', { priority: '1' as unknown as number })).toThrow(/priority must be a finite number/);
    expect(() => s.scheduleNow('k', Infinity)).toThrow(/priority must be a finite number/);
    expect(() => new ReconcileScheduler({ concurrencyGroups: 'ns' as never })).toThrow(/concurrencyGroups must be an object/);
    expect(() => new ReconcileScheduler({ concurrencyGroups: {} as never })).toThrow(/keyOf is required/);
    expect(() => new ReconcileScheduler({ concurrencyGroups: { keyOf: () => '', concurrency: 0 } })).toThrow(/concurrency/);
  });

  it('a bare scheduler whose keyOf returns a non-string stops: run rejects with it, the key kept', async () => {
    const clock = new FakeClock();
    const s = new ReconcileScheduler({ clock, concurrencyGroups: { keyOf: () => 7 as unknown as string } });
    s.schedule('ns/a');
    await expect(s.run(new AbortController().signal, () => Promise.resolve({ kind: 'done' }))).rejects.toThrow(/keyOf must return a string/);
    expect(s.stats().queued).toBe(1);
  });
});
