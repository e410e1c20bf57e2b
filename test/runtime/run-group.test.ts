// RunGroup: runnables started together, the first failure stops the rest, stages stop in reverse order within one grace, nothing left behind.

import { getEventListeners } from 'node:events';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { FakeClock, flushPromises, sleep } from '../../src/core/index.js';
import { RunGroup, type Runnable } from '../../src/runtime/index.js';
import type { Controller } from '../../src/controller/index.js';
import type { DriftAudit, EventRecorder } from '../../src/operations/index.js';
import type { ShardRing } from '../../src/sharding/index.js';
import { memoryLog } from '../controller/fixture.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

failOnUnhandledRejections();

/** A runnable that runs until its signal aborts, then (after `stopMs` on the clock) ends; it logs both. */
function service(log: string[], name: string, clock?: FakeClock, stopMs = 0): Runnable {
  return {
    name,
    run: async (signal) => {
      log.push(`${name} started`);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      if (stopMs > 0 && clock !== undefined) await sleep(clock, stopMs);
      log.push(`${name} stopped`);
    },
  };
}

describe('RunGroup', () => {
  it('runs its runnables until its signal aborts, then resolves once every one stopped, leaving no listener behind', async () => {
    const stop = new AbortController();
    const log: string[] = [];
    const group = new RunGroup({ name: 'g', signal: stop.signal, logger: false });
    group.start(service(log, 'a'));
    group.start(service(log, 'b'));
    await flushPromises();
    expect(group.running()).toEqual(['a', 'b']);
    stop.abort();
    await expect(group.closed()).resolves.toEqual({ abandoned: [] });
    expect(log.sort()).toEqual(['a started', 'a stopped', 'b started', 'b stopped']);
    expect(group.running()).toEqual([]);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('stops every runnable on the first failure and rejects with it, once all have ended; a later failure is logged', async () => {
    const log: string[] = [];
    const memory = memoryLog();
    const group = new RunGroup({ name: 'g', logger: memory.logger });
    group.start(service(log, 'a'));
    group.start({ name: 'broken', run: () => Promise.reject(new Error('broke')) });
    group.start({
      name: 'late',
      run: (signal) => new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(new Error('late too')), { once: true })),
    });
    await expect(group.closed()).rejects.toThrow('broke');
    expect(group.signal.reason).toBe(group.failure);
    expect(log).toEqual(['a started', 'a stopped']);
    expect(memory.lines).toContain('warn: g: late failed after the first failure: late too');
  });

  it('a runnable that ends on its own does not stop the others; a throw counts as a failure', async () => {
    const group = new RunGroup({ logger: false });
    const log: string[] = [];
    group.start({ name: 'done', run: async () => undefined });
    group.start(service(log, 'a'));
    await flushPromises();
    expect(group.signal.aborted).toBe(false);
    group.start({
      name: 'throws',
      run: () => {
        throw new Error('sync throw');
      },
    });
    await expect(group.closed()).rejects.toThrow('sync throw');
    expect(log).toEqual(['a started', 'a stopped']);
  });

  it('stops the stages in reverse start order, each after the later ones ended, and hands them the group reason', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    const reasons: unknown[] = [];
    const group = new RunGroup({ stages: ['informers', 'runnables', 'controllers'], clock, logger: false });
    group.start(service(log, 'informers', clock, 10), 'informers');
    group.start(service(log, 'recorder', clock, 10), 'runnables');
    group.start(service(log, 'controller', clock, 10), 'controllers');
    group.start({ name: 'reason', run: (s) => new Promise<void>((resolve) => s.addEventListener('abort', () => resolve(void reasons.push(s.reason)), { once: true })) }, 'controllers');
    await flushPromises();
    const reason = new Error('SIGTERM');
    group.stop(reason);
    await clock.advance(10);
    expect(log.slice(3)).toEqual(['controller stopped']);
    await clock.advance(10);
    expect(log.slice(3)).toEqual(['controller stopped', 'recorder stopped']);
    await clock.advance(10);
    await expect(group.closed()).resolves.toEqual({ abandoned: [] });
    expect(log.slice(3)).toEqual(['controller stopped', 'recorder stopped', 'informers stopped']);
    expect(reasons).toEqual([reason]);
  });

  it('a failure in an early stage still lets the later stages stop first', async () => {
    const log: string[] = [];
    const group = new RunGroup({ stages: ['informers', 'controllers'], logger: false });
    let fail!: (err: Error) => void;
    group.start({ name: 'informers', run: () => new Promise<void>((_, reject) => (fail = reject)) }, 'informers');
    group.start(service(log, 'controller'), 'controllers');
    await flushPromises();
    fail(new Error('informer failed'));
    await expect(group.closed()).rejects.toThrow('informer failed');
    expect(log).toEqual(['controller started', 'controller stopped']);
  });

  it('abandons what is still running when the grace runs out, names it in a warning and the result', async () => {
    const clock = new FakeClock();
    const memory = memoryLog();
    const log: string[] = [];
    const group = new RunGroup({ name: 'g', stages: ['first', 'second'], graceMs: 100, clock, logger: memory.logger });
    group.start(service(log, 'slow', clock, 60), 'first');
    group.start(service(log, 'slower', clock, 70), 'second');
    group.start({ name: 'deaf', run: () => new Promise<void>(() => undefined) }, 'first');
    await flushPromises();
    group.stop();
    const closed = group.closed();
    await clock.advance(70); // 'second' ended at 70: 30 ms of grace are left for 'first'
    await clock.advance(30);
    await expect(closed).resolves.toEqual({ abandoned: ['slow', 'deaf'] });
    expect(memory.lines).toContain('warn: g: stopped with slow, deaf still running after 100 ms (graceMs); they were abandoned');
    expect(clock.pendingTimers()).toBe(1); // only 'slow''s own sleep: the group left no timer
  });

  it('RunGroup.run runs runnables together until the signal aborts; the first rejection stops the others and is rethrown', async () => {
    const stop = new AbortController();
    const log: string[] = [];
    const running = RunGroup.run([service(log, 'a'), service(log, 'b')], stop.signal, { logger: false });
    await flushPromises();
    stop.abort();
    await running;
    expect(log.sort()).toEqual(['a started', 'a stopped', 'b started', 'b stopped']);
    const failing = RunGroup.run([service(log, 'c'), { name: 'x', run: () => Promise.reject(new Error('x broke')) }], new AbortController().signal, { logger: false });
    await expect(failing).rejects.toThrow('x broke');
    expect(log).toContain('c stopped');
  });

  it('starts nothing into a stage that has ended, and refuses bad options and unknown stages', async () => {
    expect(() => new RunGroup({ graceMs: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new RunGroup({ stages: [] })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new RunGroup({ stages: ['a', 'a'] })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new RunGroup({ clock: {} as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    const group = new RunGroup({ logger: false });
    expect(() => group.start(service([], 'a'), 'nope')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    group.stop();
    await group.closed();
    expect(() => group.start(service([], 'a'))).toThrow(expect.objectContaining({ code: 'ABORTED' }));
  });

  it('runs what runs in this library: controllers, the event recorder, the drift audit and the shard ring are runnables', () => {
    expectTypeOf<Controller<unknown>>().toExtend<Runnable>();
    expectTypeOf<EventRecorder>().toExtend<Runnable>();
    expectTypeOf<DriftAudit>().toExtend<Runnable>();
    expectTypeOf<ShardRing>().toExtend<Runnable>();
  });
});
