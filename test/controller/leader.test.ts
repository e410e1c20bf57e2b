// runWhileLeading: controllers reconcile only while leading; a lost lease stops and drains them; then it competes again.

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { Action, Controller, runWhileLeading, type Runnable } from '../../src/controller/index.js';
import { InMemoryLock, InMemoryLockStore } from '../../src/leaderelection/memory-lock.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { abortAfterTest, fixture, widget, widgets } from './fixture.js';

failOnUnhandledRejections();

const electorTimes = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, random: () => 0 };

describe('runWhileLeading', () => {
  it('reconciles only while leading; losing the lease stops new reconciles, aborts the running one and waits for it; then it competes again', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const events: string[] = [];
    let release: (() => void) | undefined;
    const controller = Controller.for(f.factory, widgets).build(
      (key, ctx) => {
        events.push(`reconcile ${key} @${f.clock.now()}`);
        ctx.signal.addEventListener('abort', () => events.push(`aborted ${key} @${f.clock.now()}`));
        return new Promise<Action>((resolve) => (release = () => resolve(Action.done())));
      },
      { clock: f.clock, logger: false, reconcileTimeoutMs: 0 },
    );
    f.factory.start(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);

    const store = new InMemoryLockStore();
    store.create({ holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: new Date(0), renewTime: new Date(0), leaderTransitions: 0 });
    const stop = abortAfterTest(new AbortController());
    const log = { lines: [] as string[] };
    const logger = { debug: () => {}, info: (m: string) => log.lines.push(m), warn: (m: string) => log.lines.push(m), error: () => {} };
    const running = runWhileLeading([controller], { ...electorTimes, lock: new InMemoryLock('me', store), clock: f.clock, logger }, stop.signal);
    await flushPromises(6);
    expect(events).toEqual([]); // 'other' holds a fresh lease
    await f.clock.advance(16_000); // its lease expired on our clock: we take over and reconcile
    await flushPromises(10);
    expect(controller.stats().active).toBe(true);
    expect(events).toEqual(['reconcile ns/a @16000']);

    // Someone else takes the lock: our next renewal sees it, the term ends, the reconcile is aborted.
    store.forceWrite({ holderIdentity: 'usurper', leaseDurationSeconds: 15, acquireTime: new Date(0), renewTime: new Date(0), leaderTransitions: 1 });
    await f.clock.advance(2_000);
    await flushPromises(10);
    expect(events.at(-1)).toBe('aborted ns/a @18000');
    expect(controller.stats().active).toBe(true); // draining: waits for the reconcile it aborted
    release?.();
    await flushPromises(10);
    expect(controller.stats().active).toBe(false);
    expect(log.lines).toContain('leadership lost: controllers example.com/v1/widgets stopped; competing again');

    // Competing again: once the usurper's lease expires on our clock, a new term reconciles every key again.
    await f.clock.advance(16_000);
    await flushPromises(10);
    expect(events.filter((e) => e.startsWith('reconcile'))).toHaveLength(2);
    expect(log.lines.filter((l) => l.startsWith('leading'))).toEqual([
      'leading (term 1): running controllers example.com/v1/widgets',
      'leading (term 2): running controllers example.com/v1/widgets',
    ]);
    stop.abort();
    release?.();
    await running;
  });

  it('rejects when a controller fails, after stopping the others of the term', async () => {
    const f = fixture();
    const stop = abortAfterTest(new AbortController());
    let otherStopped = false;
    const failing: Runnable = { name: 'failing', run: () => Promise.reject(new Error('cache cannot sync')) };
    const other: Runnable = {
      name: 'other',
      run: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => ((otherStopped = true), resolve()))),
    };
    const running = runWhileLeading([failing, other], { ...electorTimes, lock: new InMemoryLock('me'), clock: f.clock, logger: false }, stop.signal);
    const err = await running.then(() => undefined, (e: unknown) => e);
    expect(otherStopped).toBe(true);
    expect(err).toMatchObject({ code: 'LEADER_ELECTION', cause: { message: 'cache cannot sync' } });
  });
});
