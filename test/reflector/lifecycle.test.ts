import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import type { ListOptions, ObjectList } from '../../src/listwatch/types.js';
import { channelNames } from '../../src/observability/channels.js';
import { FakeWatch, harness, pod, podList, settle } from './helpers.js';
import type { Pod } from './helpers.js';

describe('Reflector lifecycle', () => {
  // NC-8
  it('resolves run() and leaves no timer when aborted during the list', async () => {
    const h = harness();
    h.start();
    await settle();
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
    expect(h.store.ops).toEqual([]);
  });

  it('resolves even when the ListerWatcher ignores its signal, and never applies the late answer', async () => {
    const h = harness();
    let answer: ((l: ObjectList<Pod>) => void) | undefined;
    h.lw.lists.push(() => new Promise<ObjectList<Pod>>((resolve) => (answer = resolve)));
    h.start();
    await settle();
    await h.stop();
    answer?.(podList('5', [pod('late', '5')]));
    await settle();
    expect(h.store.ops).toEqual([]);
  });

  it('ends a read the watch iterator never answers: on stop, on a relist request, and when it stalls', async () => {
    // An iterator whose next() never settles and that ignores its signal: the stream's one abort
    // listener (not a listener per read) must still end the read in flight.
    class DeafWatch extends FakeWatch {
      override attach(): void {}
      override [Symbol.asyncIterator](): AsyncIterator<never> {
        const stop = (): void => this.stop();
        return { next: () => new Promise<never>(() => {}), return: () => (stop(), Promise.resolve({ value: undefined, done: true })) };
      }
    }
    const deaf = (): FakeWatch => new DeafWatch();
    const h = harness({ watchIdleMarginMs: 1000 });
    h.lw.lists.push(podList('1', []), podList('2', []));
    h.lw.watches.push(deaf, deaf, deaf);
    h.start();
    await settle();
    expect(h.lw.watchRequests()).toHaveLength(1);
    h.reflector.requestRelist();
    await settle();
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '']);
    expect(h.lw.watchRequests()).toHaveLength(2);
    const timeoutMs = (h.lw.watchRequests()[1].timeoutSeconds ?? 0) * 1000;
    await h.clock.advance(timeoutMs + 1000);
    expect(h.errors.map((e) => e.error.name)).toContain('WatchStalledError');
    await h.stop();
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('resolves run() when aborted while the watch is connecting', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', []));
    let open: ((w: FakeWatch) => void) | undefined;
    h.lw.watches.push(() => new Promise<FakeWatch>((resolve) => (open = resolve)));
    h.start();
    await settle();
    expect(h.lw.watchRequests()).toHaveLength(1);
    h.controller.abort();
    await h.running;
    const late = new FakeWatch();
    open?.(late);
    await settle();
    expect(late.stopped).toBe(true);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('resolves run() when aborted during backoff', async () => {
    const h = harness();
    h.lw.lists.push(new Error('down'));
    h.start();
    await settle();
    expect(h.clock.pendingTimers()).toBe(1);
    await h.stop();
    expect(h.lw.listRequests()).toHaveLength(1);
  });

  it('listAndWatch() rejects with the error that ended the cycle and reports it once', async () => {
    const h = harness();
    const boom = new Error('list exploded');
    h.lw.lists.push(boom);
    await expect(h.reflector.listAndWatch(h.controller.signal)).rejects.toBe(boom);
    expect(h.errors).toEqual([{ error: boom, context: { name: 'test', phase: 'list', action: 'relist' } }]);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  // RF-3, RF-19
  it('resyncs the store every resyncPeriodMs, and relists when a resync fails', async () => {
    const h = harness({ resyncPeriodMs: 1000 });
    h.lw.lists.push(podList('1', []), podList('2', []));
    h.start();
    await settle();
    await h.clock.advance(1000);
    expect(h.store.resyncs).toBe(1);
    await h.clock.advance(1000);
    expect(h.store.resyncs).toBe(2);
    h.store.failNext.resync = new Error('resync failed');
    await h.clock.advance(1000);
    expect(h.errors.map((e) => [e.error.message, e.context.phase, e.context.action])).toEqual([['resync failed', 'resync', 'relist']]);
    expect(h.lw.opened[0].stopped).toBe(true);
    await h.clock.advance(800);
    expect(h.lw.listRequests()).toHaveLength(2);
    await h.clock.advance(1000);
    expect(h.store.resyncs).toBe(3);
    await h.stop();
  });

  // NC-11
  it('skips a resync when shouldResync() says no, and keeps the timer going', async () => {
    let allow = false;
    const h = harness({ resyncPeriodMs: 500, shouldResync: () => allow });
    h.lw.lists.push(podList('1', []));
    h.start();
    await settle();
    await h.clock.advance(1500);
    expect(h.store.resyncs).toBe(0);
    allow = true;
    await h.clock.advance(500);
    expect(h.store.resyncs).toBe(1);
    await h.stop();
  });

  // RF-29
  it('asks for a watch timeoutSeconds in [min, 2*min)', async () => {
    const seen: number[] = [];
    for (const [min, random] of [[300_000, 0], [300_000, 0.999_999_9], [1_800_000, 0], [1_800_000, 0.5]] as const) {
      const h = harness({ minWatchTimeoutMs: min, random: () => random });
      h.lw.lists.push(podList('1', []));
      h.start();
      await settle();
      seen.push(h.lw.watchRequests()[0].timeoutSeconds ?? -1);
      await h.stop();
    }
    expect(seen).toEqual([300, 599, 1800, 2700]);
  });

  it('publishes list, watch-start, watch-end and error messages on its diagnostics channels', async () => {
    const messages: Array<[string, unknown]> = [];
    const names = [channelNames.reflectorList, channelNames.reflectorWatchStart, channelNames.reflectorWatchEnd, channelNames.reflectorError];
    const listeners = names.map((n) => {
      const l = (m: unknown): void => void messages.push([n, m]);
      diagnosticsChannel.subscribe(n, l);
      return l;
    });
    try {
      const h = harness();
      h.lw.lists.push(podList('4', [pod('a', '4')]));
      h.start();
      await settle();
      h.lw.current.push({ type: 'ADDED', object: { metadata: {} } as Pod });
      await settle();
      await h.clock.advance(800);
      await h.stop();
      expect(messages.map(([n]) => n.split(':').pop())).toEqual(['list', 'watch-start', 'watch-end', 'error', 'watch-start', 'watch-end']);
      expect(messages[0][1]).toEqual({ name: 'test', resourceVersion: '4', items: 1 });
      expect(messages[3][1]).toMatchObject({ name: 'test', phase: 'event', action: 'rewatch' });
    } finally {
      names.forEach((n, i) => diagnosticsChannel.unsubscribe(n, listeners[i]));
    }
  });

  it('runs again after a clean stop with a new signal, resuming from the held version', async () => {
    const h = harness();
    h.lw.lists.push(podList('4', []), (o: ListOptions) => podList(o.resourceVersion === '4' ? '6' : 'x', []));
    h.start();
    await settle();
    await h.stop();
    const again = new AbortController();
    const running = h.reflector.run(again.signal);
    await settle();
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '4']);
    again.abort();
    await running;
    expect(h.clock.pendingTimers()).toBe(0);
  });
});
