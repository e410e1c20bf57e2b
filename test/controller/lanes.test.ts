// Lanes of one shared scheduler: keys prefixed per lane, one concurrency for all, a closed lane's keys gone at once.

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/index.js';
import { SharedScheduler } from '../../src/controller/lanes.js';
import { Action } from '../../src/controller/scheduler.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

failOnUnhandledRejections();

describe('SharedScheduler lanes', () => {
  it('hands each lane its own keys, prefix stripped, under one concurrency; requests before a lane runs wait in it', async () => {
    const clock = new FakeClock();
    const shared = new SharedScheduler({ clock, concurrency: 1 });
    const seen: string[] = [];
    const open: Array<() => void> = [];
    const reconcile = (lane: string) => (key: string) => {
      seen.push(`${lane}:${key}`);
      return new Promise<Action>((resolve) => open.push(() => resolve(Action.done())));
    };
    const east = shared.lane('1', 'east', {});
    const west = shared.lane('2', 'west', {});
    east.scheduleNow('ns/a', 0);
    west.schedule('ns/a', { delayMs: 0 });
    expect([east.stats().queued, shared.stats().queued]).toEqual([1, 0]);
    const stop = new AbortController();
    const done = shared.run(stop.signal);
    const runs = [east.run(stop.signal, reconcile('east')), west.run(stop.signal, reconcile('west'))];
    await flushPromises();
    expect(seen).toEqual(['east:ns/a']); // one at a time across both lanes
    expect([east.stats(), west.stats()]).toEqual([{ queued: 0, running: 1, failing: 0 }, { queued: 1, running: 0, failing: 0 }]);
    open.shift()!();
    await flushPromises();
    expect(seen).toEqual(['east:ns/a', 'west:ns/a']);
    open.shift()!();
    stop.abort();
    await Promise.all([done, ...runs]);
  });

  it('a closed lane forgets its keys at once (one in a 5-minute backoff too), aborts its running reconcile, and takes no more requests', async () => {
    const clock = new FakeClock();
    const shared = new SharedScheduler({ clock, concurrency: 2, rateLimit: false });
    const errors: string[] = [];
    const lane = shared.lane('7', 'b', { onError: (key, error) => (errors.push(`${key}: ${error.message}`), Action.requeueAfter(300_000)) });
    const other = shared.lane('8', 'a', {});
    const stop = new AbortController();
    const done = shared.run(stop.signal);
    let signal: AbortSignal | undefined;
    const laneRun = lane.run(stop.signal, async (key, s) => {
      if (key === 'ns/fails') throw new Error('boom');
      signal = s;
      return new Promise<Action>((_resolve, reject) => s.addEventListener('abort', () => reject(s.reason), { once: true }));
    });
    const otherRun = other.run(stop.signal, async () => Action.requeueAfter(300_000));
    lane.scheduleNow('ns/fails', 0);
    lane.scheduleNow('ns/hangs', 0);
    other.scheduleNow('ns/x', 0);
    await flushPromises();
    expect(errors).toEqual(['ns/fails: boom']); // the policy sees the object key, not the shared one
    expect(lane.stats()).toEqual({ queued: 1, running: 1, failing: 1 });
    lane.close('disengaged');
    expect(lane.stats()).toEqual({ queued: 0, running: 1, failing: 0 });
    expect(signal?.aborted).toBe(true);
    await laneRun;
    lane.scheduleNow('ns/fails', 0);
    expect([lane.stats(), shared.stats()]).toEqual([{ queued: 0, running: 0, failing: 0 }, { queued: 1, running: 0, failing: 0 }]);
    await clock.advance(600_000);
    expect(errors).toHaveLength(1);
    stop.abort();
    await Promise.all([done, otherRun]);
  });

  it('keeps concurrency groups per lane: one group name in two lanes is two groups', async () => {
    const clock = new FakeClock();
    const shared = new SharedScheduler({ clock, concurrency: 4, concurrencyGroups: { keyOf: () => 'unused', concurrency: 1 } });
    const groups = { keyOf: (key: string) => key.split('/')[0]!, concurrency: 1 };
    const running: string[] = [];
    const stop = new AbortController();
    const done = shared.run(stop.signal);
    const hang = (lane: string) => (key: string, s: AbortSignal) => (running.push(`${lane}:${key}`), new Promise<Action>((resolve) => s.addEventListener('abort', () => resolve(Action.done()), { once: true })));
    const a = shared.lane('1', 'a', { concurrencyGroups: groups });
    const b = shared.lane('2', 'b', { concurrencyGroups: groups });
    const runs = [a.run(stop.signal, hang('a')), b.run(stop.signal, hang('b'))];
    for (const lane of [a, b]) for (const key of ['ns/1', 'ns/2']) lane.scheduleNow(key, 0);
    await flushPromises();
    expect(running).toEqual(['a:ns/1', 'b:ns/1']);
    stop.abort();
    await Promise.all([done, ...runs]);
  });
});
