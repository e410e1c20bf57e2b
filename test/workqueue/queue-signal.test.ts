// WorkQueue waits that take an AbortSignal: get, onEmpty, onIdle, shutDownWithDrain.

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/clock.js';
import { DelayingQueue } from '../../src/workqueue/delaying-queue.js';
import { WorkQueue } from '../../src/workqueue/queue.js';
import { RateLimitingQueue } from '../../src/workqueue/rate-limiting-queue.js';
import { track } from './helpers.js';

const aborted = (message: RegExp, cause?: unknown): unknown =>
  expect.objectContaining({ name: 'AbortedError', code: 'ABORTED', message: expect.stringMatching(message), ...(cause === undefined ? {} : { cause }) });

describe('WorkQueue waits with a signal', () => {
  it('get(signal) rejects with ABORTED when the signal aborts while waiting, takes no item, and leaves no listener', async () => {
    const q = new WorkQueue<string>();
    const ac = new AbortController();
    const waiting = q.get(ac.signal);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort('worker stopping');
    await expect(waiting).rejects.toEqual(aborted(/stopped waiting for an item/, 'worker stopping'));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    // The aborted waiter is gone: the next item goes to the next get, not into the void.
    q.add('a');
    expect(q.len()).toBe(1);
    expect(await q.get()).toEqual({ item: 'a', shutdown: false });
  });

  it('get(signal) resolves like get() when an item or the shutdown comes first, removing its listener', async () => {
    const q = new WorkQueue<string>();
    const ac = new AbortController();
    const first = track(q.get(ac.signal));
    const second = track(q.get(ac.signal));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(2);
    q.add('a');
    await flushPromises();
    expect(first.value()).toEqual({ item: 'a', shutdown: false });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    q.shutDown();
    await flushPromises();
    expect(second.value()).toEqual({ item: undefined, shutdown: true });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    ac.abort(); // too late to matter
    await flushPromises();
  });

  it('get(signal) with an aborted signal rejects at once even when an item is waiting, and takes nothing', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const ac = new AbortController();
    ac.abort();
    await expect(q.get(ac.signal)).rejects.toEqual(aborted(/an item/));
    expect(q.len()).toBe(1);
    q.shutDown();
    await expect(q.get(ac.signal)).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('hands items in order to the waiters that are left after one of them aborted', async () => {
    const q = new WorkQueue<number>();
    const acs = [new AbortController(), new AbortController(), new AbortController()];
    const waits = acs.map((ac) => q.get(ac.signal).catch((e: { code: string }) => e.code));
    acs[1].abort();
    q.add(1);
    q.add(2);
    q.add(3);
    expect(await Promise.all(waits)).toEqual([{ item: 1, shutdown: false }, 'ABORTED', { item: 2, shutdown: false }]);
    expect(q.len()).toBe(1);
  });

  it('a worker loop that passes its signal to get() ends when the signal aborts, without an unhandled rejection', async () => {
    const q = new WorkQueue<string>();
    const ac = new AbortController();
    const seen: string[] = [];
    const worker = (async () => {
      try {
        for (;;) {
          const { item, shutdown } = await q.get(ac.signal);
          if (shutdown) return 'shutdown';
          seen.push(item);
          q.done(item);
        }
      } catch (err) {
        if ((err as { code?: string }).code === 'ABORTED') return 'aborted';
        throw err;
      }
    })();
    q.add('a');
    q.add('b');
    await flushPromises();
    ac.abort();
    expect(await worker).toBe('aborted');
    expect(seen).toEqual(['a', 'b']);
  });

  it('onEmpty(signal) and onIdle(signal) reject with ABORTED when the signal aborts first, and stop being waited on', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const ac = new AbortController();
    const empty = q.onEmpty(ac.signal);
    const idle = q.onIdle(ac.signal);
    ac.abort();
    await expect(empty).rejects.toEqual(aborted(/the queue to be empty/));
    await expect(idle).rejects.toEqual(aborted(/the queue to be idle/));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    // Without abort they still resolve, and with an aborted signal they reject at once.
    const other = new AbortController();
    const idle2 = track(q.onIdle(other.signal));
    const { item } = await q.get();
    q.done(item as string);
    await flushPromises();
    expect(idle2.settled()).toBe(true);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    await expect(q.onEmpty(ac.signal)).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('shutDownWithDrain(signal) stops waiting when the signal aborts; the queue stays shut down', async () => {
    for (const q of [new WorkQueue<string>(), new DelayingQueue<string>(), new RateLimitingQueue<string>()]) {
      q.add('a');
      const { item } = await q.get();
      const ac = new AbortController();
      const drained = q.shutDownWithDrain(ac.signal);
      expect(q.shuttingDown()).toBe(true);
      ac.abort('took too long');
      await expect(drained).rejects.toEqual(aborted(/the queue to drain/, 'took too long'));
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
      // A drain waited for without a signal still completes on done().
      const again = track(q.shutDownWithDrain());
      q.done(item as string);
      await flushPromises();
      expect(again.settled()).toBe(true);
    }
  });
});
