// TaskScope: shared signal, first failure aborts the rest, grace-bounded close, nothing left behind.

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { AbortedError, FakeClock, flushPromises, isAbortOf, sleep, TaskScope, type TaskScopeResult } from '../../src/core/index.js';
import { failOnUnhandledRejections, gate } from '../helpers/async.js';

/** A task that runs until its signal aborts, then (optionally after `stopMs` on the clock) ends. */
function service(clock: FakeClock, log: string[], name: string, stopMs = 0) {
  return async (signal: AbortSignal): Promise<void> => {
    log.push(`${name} started`);
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    if (stopMs > 0) await sleep(clock, stopMs);
    log.push(`${name} stopped`);
  };
}

function settled<T>(p: Promise<T>): { value: () => T | undefined; error: () => unknown; done: () => boolean } {
  let done = false;
  let value: T | undefined;
  let error: unknown;
  p.then(
    (v) => {
      done = true;
      value = v;
    },
    (e: unknown) => {
      done = true;
      error = e;
    },
  );
  return { value: () => value, error: () => error, done: () => done };
}

failOnUnhandledRejections();

describe('TaskScope', () => {
  it('gives every task the scope signal and stays open when a task ends on its own', async () => {
    const clock = new FakeClock();
    const scope = new TaskScope({ clock });
    const seen: AbortSignal[] = [];
    await scope.spawn('quick', (s) => void seen.push(s));
    expect(seen).toEqual([scope.signal]);
    expect(scope.state).toBe('open');
    const log: string[] = [];
    void scope.spawn('later', service(clock, log, 'later'));
    expect(log).toEqual(['later started']);
    expect(scope.running()).toEqual(['later']);
  });

  it('closes once a linked signal aborts and every task has ended, leaving no listener or timer', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const other = new AbortController();
    const scope = new TaskScope({ clock, signal: ac.signal, graceMs: 1000 });
    scope.link(other.signal);
    const log: string[] = [];
    void scope.spawn('a', service(clock, log, 'a'));
    void scope.spawn('b', service(clock, log, 'b', 50));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    const closed = settled(scope.closed());
    ac.abort('bye');
    expect(scope.state).toBe('stopping');
    expect(scope.signal.reason).toBe('bye');
    await clock.advance(49);
    expect(closed.done()).toBe(false);
    await clock.advance(1);
    expect(closed.value()).toEqual({ abandoned: [] });
    expect(log).toEqual(['a started', 'b started', 'a stopped', 'b stopped']);
    expect(scope.state).toBe('closed');
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('aborts the other tasks on the first failure and rejects with it once they have ended', async () => {
    const clock = new FakeClock();
    const failures: Array<[string, string]> = [];
    const late: Array<[string, string]> = [];
    const scope = new TaskScope({
      clock,
      onFailure: (err, task) => void failures.push([task, err.message]),
      onLateFailure: (err, task) => void late.push([task, err.message]),
    });
    const log: string[] = [];
    void scope.spawn('steady', service(clock, log, 'steady', 10));
    const first = gate();
    const second = gate();
    void scope.spawn('first', () => first.promise);
    void scope.spawn('second', () => second.promise);
    const closed = settled(scope.closed());
    const boom = new Error('first broke');
    first.fail(boom);
    await flushPromises();
    expect(scope.signal.aborted).toBe(true);
    expect(scope.signal.reason).toBe(boom);
    expect(scope.failure).toBe(boom);
    expect(failures).toEqual([['first', 'first broke']]);
    second.fail(new Error('second broke too'));
    await flushPromises();
    expect(late).toEqual([['second', 'second broke too']]);
    expect(closed.done()).toBe(false); // 'steady' is still stopping
    await clock.advance(10);
    expect(closed.error()).toBe(boom);
    await expect(scope.closed()).rejects.toBe(boom);
  });

  it('records a failure that comes during the grace period as the failure', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const scope = new TaskScope({ clock, signal: ac.signal, graceMs: 500 });
    const inFlight = gate();
    void scope.spawn('handler', () => inFlight.promise);
    const closed = settled(scope.closed());
    ac.abort();
    await clock.advance(100);
    inFlight.fail(new Error('rejected while stopping'));
    await flushPromises();
    expect((closed.error() as Error).message).toBe('rejected while stopping');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('abandons a task that ignores its signal once the grace period runs out, and reports its late failure instead of throwing it', async () => {
    const clock = new FakeClock();
    const late: Error[] = [];
    const scope = new TaskScope({ clock, name: 'loops', onLateFailure: (err) => void late.push(err) });
    const log: string[] = [];
    const stuck = gate();
    void scope.spawn('well-behaved', service(clock, log, 'well-behaved'));
    const stuckDone = settled(scope.spawn('stuck', () => stuck.promise));
    const closed = settled(scope.close(300));
    expect(clock.pendingDelays()).toEqual([300]);
    await clock.advance(299);
    expect(closed.done()).toBe(false);
    expect(scope.running()).toEqual(['stuck']);
    await clock.advance(1);
    expect(closed.value()).toEqual({ abandoned: ['stuck'] });
    expect(scope.abandoned).toEqual(['stuck']);
    expect(scope.state).toBe('closed');
    expect(clock.pendingTimers()).toBe(0);
    stuck.fail(new Error('too late'));
    await flushPromises();
    expect(late.map((e) => e.message)).toEqual(['too late']);
    expect(stuckDone.done()).toBe(true); // spawn's promise never rejects
    expect(stuckDone.error()).toBeUndefined();
    expect(scope.failure).toBeUndefined();
    expect(scope.running()).toEqual([]);
  });

  it('sets no timer when every task stops in time, and close() can shorten but never lengthen the grace', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const scope = new TaskScope({ clock, signal: ac.signal, graceMs: 1000 });
    const stuck = gate();
    void scope.spawn('stuck', () => stuck.promise);
    ac.abort();
    expect(clock.pendingDelays()).toEqual([1000]);
    await clock.advance(100);
    const longer = settled(scope.close(5000));
    expect(clock.pendingDelays()).toEqual([900]);
    const shorter = settled(scope.close(200));
    expect(clock.pendingDelays()).toEqual([200]);
    await clock.advance(200);
    expect(longer.value()).toEqual({ abandoned: ['stuck'] });
    expect(shorter.value()).toEqual({ abandoned: ['stuck'] });
    stuck.open();

    const quick = new TaskScope({ clock });
    const log: string[] = [];
    void quick.spawn('svc', service(clock, log, 'svc'));
    await expect(quick.close(300)).resolves.toEqual({ abandoned: [] });
    expect(clock.pendingTimers()).toBe(0);
    // An Infinity grace waits for every task and never sets a timer.
    const patient = new TaskScope({ clock });
    const slow = gate();
    void patient.spawn('slow', () => slow.promise);
    const closing = settled(patient.close());
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(1e9);
    expect(closing.done()).toBe(false);
    slow.open();
    await flushPromises();
    expect(closing.value()).toEqual({ abandoned: [] });
  });

  it('treats a task rejecting with its own abort as a clean stop, not a failure', async () => {
    const scope = new TaskScope();
    void scope.spawn('fetch-like', (s) => new Promise((_, reject) => s.addEventListener('abort', () => reject(s.reason), { once: true })));
    void scope.spawn('library-wait', (s) =>
      new Promise((_, reject) => s.addEventListener('abort', () => reject(new AbortedError('stopped waiting', { cause: s.reason })), { once: true })),
    );
    await expect(scope.close()).resolves.toEqual({ abandoned: [] });
    expect(scope.failure).toBeUndefined();
    const reason = new Error('why');
    const ac = new AbortController();
    ac.abort(reason);
    expect(isAbortOf(reason, ac.signal)).toBe(true);
    expect(isAbortOf(new AbortedError('x', { cause: reason }), ac.signal)).toBe(true);
    expect(isAbortOf(new AbortedError('x', { cause: 'another' }), ac.signal)).toBe(false);
    expect(isAbortOf(reason, new AbortController().signal)).toBe(false);
  });

  it('counts a synchronous throw, a non-Error value and an AbortedError from elsewhere as failures', async () => {
    const sync = new TaskScope();
    void sync.spawn('sync', () => {
      throw new Error('sync throw');
    });
    await expect(sync.closed()).rejects.toThrow('sync throw');
    const odd = new TaskScope();
    void odd.spawn('odd', () => Promise.reject('a string'));
    await expect(odd.closed()).rejects.toThrow(/non-Error value thrown: a string/);
    const foreign = new TaskScope();
    void foreign.spawn('foreign', () => Promise.reject(new AbortedError('some other signal')));
    await expect(foreign.closed()).rejects.toMatchObject({ code: 'ABORTED', message: 'some other signal' });
  });

  it('refuses a task once closed, and runs one spawned while stopping with an aborted signal', async () => {
    const clock = new FakeClock();
    const scope = new TaskScope({ clock, name: 'processor' });
    const log: string[] = [];
    void scope.spawn('slow', service(clock, log, 'slow', 100));
    const closed = settled(scope.close());
    let sawAborted: boolean | undefined;
    void scope.spawn('late', async (s) => {
      sawAborted = s.aborted;
      await sleep(clock, 150);
      log.push('late ended');
    });
    expect(sawAborted).toBe(true);
    await clock.advance(100);
    expect(closed.done()).toBe(false);
    await clock.advance(50);
    expect(closed.value()).toEqual({ abandoned: [] });
    expect(log).toEqual(['slow started', 'slow stopped', 'late ended']);
    expect(() => scope.spawn('too late', () => undefined)).toThrow(
      expect.objectContaining({ code: 'ABORTED', message: expect.stringMatching(/processor has closed: task too late was not started/) }),
    );
  });

  it('closes at the end of the turn when linked to an aborted signal, and when aborted with nothing running', async () => {
    const ac = new AbortController();
    ac.abort('already');
    const scope = new TaskScope({ signal: ac.signal });
    expect(scope.state).toBe('stopping');
    expect(scope.signal.reason).toBe('already');
    await expect(scope.closed()).resolves.toEqual({ abandoned: [] });
    expect(scope.state).toBe('closed');
    const idle = new TaskScope();
    idle.abort();
    await flushPromises();
    expect(idle.state).toBe('closed');
    expect(idle.signal.reason).toMatchObject({ code: 'ABORTED' });
    const live = new AbortController();
    idle.link(live.signal); // harmless once closed
    expect(getEventListeners(live.signal, 'abort')).toHaveLength(0);
  });

  it('starts and waits for tasks spawned right after it was created on an aborted signal', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    ac.abort();
    const scope = new TaskScope({ clock, signal: ac.signal });
    const child = scope.child('loops');
    const log: string[] = [];
    let sawAborted: boolean | undefined;
    void scope.spawn('setup', async (s) => {
      sawAborted = s.aborted;
      await sleep(clock, 20);
      log.push('setup ended');
    });
    void child.spawn('loop', () => void log.push('loop ran'));
    const closed = settled(scope.closed());
    await flushPromises();
    expect(sawAborted).toBe(true);
    expect(closed.done()).toBe(false);
    await clock.advance(20);
    expect(closed.value()).toEqual({ abandoned: [] });
    expect(log).toEqual(['loop ran', 'setup ended']);
    expect(() => child.spawn('later', () => undefined)).toThrow(/has closed/);
  });

  it('fails the scope from outside a task with fail(), and reports a failure after close as late', async () => {
    const late: string[] = [];
    const scope = new TaskScope({ onLateFailure: (err, task) => void late.push(`${task}: ${err.message}`) });
    const g = gate();
    void scope.spawn('t', () => g.promise);
    const err = new Error('callback broke');
    scope.fail(err, 'callback');
    scope.fail(err, 'callback'); // the same error again is not a second failure
    expect(scope.signal.reason).toBe(err);
    g.open();
    await expect(scope.closed()).rejects.toBe(err);
    scope.fail(new Error('after close'), 'timer');
    expect(late).toEqual(['timer: after close']);
  });

  it('rethrows a throwing failure hook as an uncaught exception rather than losing the failure', async () => {
    const thrown: unknown[] = [];
    const original = globalThis.queueMicrotask;
    globalThis.queueMicrotask = (cb) =>
      original(() => {
        try {
          cb();
        } catch (e) {
          thrown.push(e);
        }
      });
    try {
      const scope = new TaskScope({
        onFailure: () => {
          throw new Error('hook broke');
        },
      });
      scope.fail(new Error('boom'));
      await expect(scope.closed()).rejects.toThrow('boom');
      await flushPromises();
    } finally {
      globalThis.queueMicrotask = original;
    }
    expect(thrown).toEqual([expect.objectContaining({ message: 'hook broke' })]);
  });

  it('validates graceMs', () => {
    for (const graceMs of [-1, Number.NaN, '5' as unknown as number]) {
      expect(() => new TaskScope({ name: 'x', graceMs })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/x: graceMs/) }));
    }
    expect(() => new TaskScope().close(-5)).toThrow(/graceMs/);
  });

  describe('child scopes', () => {
    it('abort with their parent, and the parent waits for them to close', async () => {
      const clock = new FakeClock();
      const parent = new TaskScope({ clock, name: 'informer' });
      const child = parent.child('processor');
      const log: string[] = [];
      void child.spawn('listener', service(clock, log, 'listener', 40));
      expect(parent.running()).toEqual(['processor']);
      const closed = settled(parent.close());
      expect(child.signal.aborted).toBe(true);
      expect(child.state).toBe('stopping');
      await clock.advance(39);
      expect(closed.done()).toBe(false);
      await clock.advance(1);
      expect(closed.value()).toEqual({ abandoned: [] });
      expect(child.state).toBe('closed');
      expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    });

    it('fail their parent at once with their first failure, and close on their own without ending the parent', async () => {
      const clock = new FakeClock();
      const childFailures: string[] = [];
      const parent = new TaskScope({ clock });
      const log: string[] = [];
      void parent.spawn('controller', service(clock, log, 'controller'));
      const child = parent.child('processor', { onFailure: (err) => void childFailures.push(err.message) });
      void child.spawn('sibling', service(clock, log, 'sibling'));
      const bad = gate();
      void child.spawn('handler', () => bad.promise);
      const boom = new Error('handler broke');
      bad.fail(boom);
      await flushPromises();
      expect(childFailures).toEqual(['handler broke']);
      expect(parent.failure).toBe(boom);
      expect(log).toEqual(['controller started', 'sibling started', 'sibling stopped', 'controller stopped']);
      await expect(parent.closed()).rejects.toBe(boom);
      await expect(child.closed()).rejects.toBe(boom);

      const calm = new TaskScope();
      const inner = calm.child('inner');
      await inner.close();
      await flushPromises();
      expect(calm.state).toBe('open');
      expect(calm.running()).toEqual([]);
    });

    it('are abandoned by their parent grace, and report their late failures through the parent hook by default', async () => {
      const clock = new FakeClock();
      const late: string[] = [];
      const parent = new TaskScope({ clock, onLateFailure: (err, task) => void late.push(`${task}: ${err.message}`) });
      const child = parent.child('processor');
      const stuck = gate();
      void child.spawn('stuck', () => stuck.promise);
      const result: Promise<TaskScopeResult> = parent.close(100);
      await clock.advance(100);
      await expect(result).resolves.toEqual({ abandoned: ['processor'] });
      expect(child.state).toBe('stopping');
      stuck.fail(new Error('much later'));
      await flushPromises();
      // The child's first failure fails its (closed) parent: a late failure there.
      expect(late).toEqual(['processor: much later']);
      await expect(child.closed()).rejects.toThrow('much later');
      expect(() => parent.child('another')).toThrow(/has closed/);
    });
  });
});
