import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/core/errors.js';
import { FakeWatch, connRefused, harness, podList, settle, statusEvent } from './helpers.js';

describe('Reflector backoff', () => {
  it('waits 800, 1600, 3200 ms ... between failing lists', async () => {
    const h = harness();
    for (let i = 0; i < 5; i++) h.lw.lists.push(new Error(`list failed ${i}`));
    h.start();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      await settle();
      delays.push(h.clock.nextTimerDelay() ?? -1);
      await h.clock.runNext();
    }
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800]);
    expect(h.reflector.stats().errors).toBe(5);
    await h.stop();
  });

  // RF-14
  it('re-opens a refused watch with exponential then capped delays and never relists in between', async () => {
    for (const [n, expected] of [[5, 31], [40, 1763]] as const) {
      const h = harness({ backoff: { initialMs: 1, factor: 2, maxMs: 50, jitter: 1, resetAfterMs: 100 } });
      h.lw.lists.push(podList('1', []));
      for (let i = 0; i < n; i++) h.lw.watches.push(connRefused());
      h.start();
      await settle();
      while (h.lw.watchRequests().length <= n) await h.clock.runNext();
      expect(h.clock.now()).toBe(expected);
      expect(h.lw.listRequests()).toHaveLength(1);
      await h.stop();
    }
  });

  // RF-15 (b)
  it('uses a custom backoff: 10 ms doubling, no jitter, cap 100 ms', async () => {
    const h = harness({ backoff: { initialMs: 10, factor: 2, maxMs: 100, jitter: 0 }, random: () => 0.7 });
    h.lw.lists.push(podList('1', []));
    for (let i = 0; i < 5; i++) h.lw.watches.push(connRefused());
    h.start();
    await settle();
    while (h.lw.watchRequests().length <= 5) await h.clock.runNext();
    expect(h.clock.now()).toBe(250);
    await h.stop();
  });

  // RF-16
  it('backs off once per 429, thrown by the watch call or sent inside the stream', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', []));
    h.lw.watches.push(new ApiStatusError(429, 'slow down'), new FakeWatch().push(statusEvent(429, 'TooManyRequests')));
    h.start();
    await settle();
    await h.clock.advance(800);
    await h.clock.advance(1600);
    expect(h.codes()).toEqual(['API_STATUS', 'API_STATUS']);
    expect(h.errors.map((e) => e.context.action)).toEqual(['rewatch', 'rewatch']);
    expect(h.lw.watchRequests()).toHaveLength(3);
    await h.stop();
  });

  // RF-17
  it('never relists because of 429s', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', []));
    for (let i = 0; i < 4; i++) h.lw.watches.push(new ApiStatusError(429, 'slow down'));
    h.start();
    await settle();
    for (let i = 0; i < 4; i++) await h.clock.runNext();
    expect(h.lw.listRequests()).toHaveLength(1);
    expect(h.lw.watchRequests()).toHaveLength(5);
    await h.stop();
  });

  it('waits at least the Retry-After of a 429, on a list and inside a watch', async () => {
    const h = harness();
    h.lw.lists.push(new ApiStatusError(429, 'slow down', { retryAfterSeconds: 10 }), podList('1', []));
    h.lw.watches.push(new FakeWatch().push(statusEvent(429, 'TooManyRequests', { details: { retryAfterSeconds: 7 } })));
    h.start();
    await settle();
    expect(h.clock.nextTimerDelay()).toBe(10_000);
    await h.clock.advance(9_999);
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.lw.listRequests()).toHaveLength(2);
    expect(h.clock.pendingDelays()).toContain(7_000);
    await h.clock.advance(6_999);
    expect(h.lw.watchRequests()).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.lw.watchRequests()).toHaveLength(2);
    expect(h.lw.listRequests()).toHaveLength(2);
    await h.stop();
  });
});
