// Ports client-go's delaying-queue tests (DQ-1..4) and the uncovered edge cases (NC-41).

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import { DelayingQueue } from '../../src/workqueue/delaying-queue.js';
import { track } from './helpers.js';

async function takeAndDone<T>(q: DelayingQueue<T>): Promise<T> {
  const { item, shutdown } = await q.get();
  expect(shutdown).toBe(false);
  q.done(item as T);
  return item as T;
}

describe('DelayingQueue', () => {
  // DQ-1
  it('adds an item once its delay has passed, and only once', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('foo', 50);
    expect(q.len()).toBe(0);
    expect(q.delayedLen()).toBe(1);
    await clock.advance(60);
    expect(q.len()).toBe(1);
    expect(await takeAndDone(q)).toBe('foo');
    await clock.advance(10_000);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  // DQ-2
  it('keeps the earlier ready time when an item is delayed twice', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('foo', 50);
    q.addAfter('foo', 70);
    expect(q.len()).toBe(0);
    await clock.advance(60);
    expect(q.len()).toBe(1);
    await takeAndDone(q);
    await clock.advance(20);
    expect(q.len()).toBe(0);

    q.addAfter('foo', 50);
    q.addAfter('foo', 30);
    expect(q.len()).toBe(0);
    await clock.advance(40);
    expect(q.len()).toBe(1);
    await takeAndDone(q);
    await clock.advance(20);
    expect(q.len()).toBe(0);
  });

  // DQ-3
  it('fires a later-requested but sooner item first', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('foo', 1000);
    q.addAfter('bar', 50);
    expect(q.len()).toBe(0);
    await clock.advance(60);
    expect(q.len()).toBe(1);
    expect(await takeAndDone(q)).toBe('bar');
    q.addAfter('baz', 2000);
    await clock.advance(1000);
    expect(q.len()).toBe(1);
    expect(await takeAndDone(q)).toBe('foo');
    await clock.advance(2000);
    expect(q.len()).toBe(1);
    expect(await takeAndDone(q)).toBe('baz');
  });

  // DQ-4
  it('adds items that fall due together in ready-time order', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('foo', 1000);
    q.addAfter('bar', 500);
    q.addAfter('baz', 250);
    expect(q.len()).toBe(0);
    await clock.advance(2000);
    expect(q.len()).toBe(3);
    expect([await takeAndDone(q), await takeAndDone(q), await takeAndDone(q)]).toEqual(['baz', 'bar', 'foo']);
  });

  it('keeps a single timer, armed for the earliest item', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    for (let i = 0; i < 100; i++) q.addAfter(`k${i}`, 1000 + i);
    q.addAfter('early', 10);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerDelay()).toBe(10);
    await clock.advance(10);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerDelay()).toBe(990);
  });

  it('breaks ready-time ties in request order', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    for (const k of ['c', 'a', 'b']) q.addAfter(k, 100);
    await clock.advance(100);
    expect([await takeAndDone(q), await takeAndDone(q), await takeAndDone(q)]).toEqual(['c', 'a', 'b']);
  });

  // NC-41
  it('rejects a bad clock at construction instead of at the first addAfter', () => {
    expect(() => new DelayingQueue({ clock: { now: () => 0 } } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining('DelayingQueue: option clock must be a Clock') }),
    );
    expect(() => new DelayingQueue(42 as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining('DelayingQueue: options must be an object') }),
    );
  });

  it('adds at once for a delay of zero or less', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('zero', 0);
    q.addAfter('negative', -5);
    expect(q.len()).toBe(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  // NC-41
  it('ignores addAfter after shutdown and drops waiting items at shutdown', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('waiting', 100);
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    expect(q.delayedLen()).toBe(0);
    q.addAfter('late', 10);
    q.addAfter('now', 0);
    await clock.advance(200);
    expect(q.len()).toBe(0);
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  it('shutDownWithDrain also clears the delay timer', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('waiting', 100);
    await q.shutDownWithDrain();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('wakes a waiting worker when a delayed item falls due', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    const got = track(q.get());
    q.addAfter('foo', 30);
    await clock.advance(29);
    expect(got.settled()).toBe(false);
    await clock.advance(1);
    expect(await got.promise).toEqual({ item: 'foo', shutdown: false });
  });

  it('is not idle while an item waits for its delay', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('foo', 30);
    const idle = track(q.onIdle());
    await flushPromises();
    expect(idle.settled()).toBe(false);
    await clock.advance(30);
    expect(idle.settled()).toBe(false);
    await takeAndDone(q);
    await idle.promise;
  });
});
