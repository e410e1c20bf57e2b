// A wait on the cache ends a watch's gathering hold (watchCoalesceMs): read-your-writes
// costs no gathering window. Incident 5 in small: a wait that stalls for no reason the user can see.

import type http from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { Hurry, WATCH_HURRY } from '../../src/listwatch/hurry.js';
import { decodeWatchStream, newListWatch, type WatchEvent } from '../../src/listwatch/index.js';
import { SharedIndexInformer } from '../../src/index.js';
import { until } from '../examples/helpers.js';
import { beginWatch, eventLine, kubeConfigFor, pod, useCleanups } from './helpers.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const { cleanups, serve } = useCleanups();

/** One turn of the event loop: a hold pauses the socket at the end of the turn that asked for it. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const line = (name: string, rv: number): string => eventLine('MODIFIED', pod(name, String(rv)));

/** A stream with a socket that records pauses and resumes, decoded with a 20 ms window and a Hurry. */
function hurried(): { stream: PassThrough; calls: string[]; clock: FakeClock; hurry: Hurry; events: AsyncIterableIterator<WatchEvent<unknown>> } {
  const stream = new PassThrough();
  const calls: string[] = [];
  Object.assign(stream, { socket: { pause: () => calls.push('pause'), resume: () => calls.push('resume') } });
  const clock = new FakeClock();
  const hurry = new Hurry();
  const events = decodeWatchStream(stream, { coalesceMs: 20, clock });
  (events as unknown as { [WATCH_HURRY](h: Hurry): void })[WATCH_HURRY](hurry);
  return { stream, calls, clock, hurry, events };
}

/** Two events in one read (a busy watch), both taken, then `between` (in the turn that asked for a hold), then a turn. */
async function twoInOneRead(stream: PassThrough, events: AsyncIterableIterator<WatchEvent<unknown>>, rv: number, between = (): void => {}): Promise<void> {
  stream.write(line('a', rv) + line('b', rv + 1));
  await events.next();
  await events.next();
  between();
  await turn();
}

describe('Hurry', () => {
  it('counts waits, tells its listeners when the first begins, and ends a tracked wait however it settles', async () => {
    const hurry = new Hurry();
    const told: string[] = [];
    const unsubscribe = hurry.subscribe(() => told.push('first'));
    expect(hurry.urgent).toBe(false);
    hurry.begin();
    hurry.begin();
    expect(told).toEqual(['first']);
    hurry.end();
    expect(hurry.urgent).toBe(true);
    hurry.end();
    hurry.end(); // more ends than begins never counts below zero
    expect(hurry.urgent).toBe(false);
    await expect(hurry.track(Promise.reject(new Error('aborted')))).rejects.toThrow('aborted');
    expect(hurry.urgent).toBe(false);
    const resolved = hurry.track(Promise.resolve('observed'));
    expect(hurry.urgent).toBe(true);
    expect(await resolved).toBe('observed');
    expect(hurry.urgent).toBe(false);
    expect(told).toEqual(['first', 'first', 'first']);
    unsubscribe();
    hurry.begin();
    expect(told).toHaveLength(3);
  });
});

describe('decodeWatchStream with a Hurry', () => {
  it('ends a hold in progress when a wait begins: the socket reads again at once, no timer left', async () => {
    const { stream, calls, clock, hurry, events } = hurried();
    await twoInOneRead(stream, events, 1);
    expect(calls).toEqual(['pause']);
    hurry.begin();
    expect(calls).toEqual(['pause', 'resume']);
    expect(clock.pendingTimers()).toBe(0);
    await events.return?.();
  });

  it('holds no read while anyone waits, and holds again once nobody does', async () => {
    const { stream, calls, clock, hurry, events } = hurried();
    hurry.begin();
    await twoInOneRead(stream, events, 1);
    expect(calls).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    hurry.end();
    await twoInOneRead(stream, events, 3);
    expect(calls).toEqual(['pause']);
    await events.return?.();
  });

  it('does not pause at all when the wait begins in the turn that asked for the hold', async () => {
    const { stream, calls, clock, hurry, events } = hurried();
    await twoInOneRead(stream, events, 1, () => hurry.begin());
    expect(calls).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    await events.return?.();
  });

  it('forgets the Hurry when the watch ends: a later wait touches nothing', async () => {
    const { stream, calls, hurry, events } = hurried();
    await twoInOneRead(stream, events, 1);
    await events.return?.();
    hurry.begin();
    expect(calls).toEqual(['pause']);
  });
});

describe('an informer over newListWatch with watchCoalesceMs', () => {
  it('holds a busy watch, and awaitObserved of an event the hold kept back resolves without waiting out the window', async () => {
    let watch: http.ServerResponse | undefined;
    const server = await serve((req, res) => {
      if (new URL(req.url ?? '/', 'http://x').searchParams.get('watch') !== 'true') {
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' }, items: [] }));
        return;
      }
      beginWatch(res);
      watch = res;
      res.write(eventLine('ADDED', pod('a', '2')) + eventLine('ADDED', pod('b', '3'))); // a busy watch's read
    });
    // The holds' clock is never advanced: only a wait can end one.
    const holds = new FakeClock();
    const lw = newListWatch(kubeConfigFor(server.url, { token: 't' }), PODS, { watchCoalesceMs: 20, clock: holds });
    cleanups.push(() => lw.close());
    // The stub speaks a list and a plain watch (no streaming list): paged.
    const informer = new SharedIndexInformer(lw, { logger: false, reflector: { useWatchList: false } });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await until(() => informer.getIndexer().getByKey('default/b') !== undefined && holds.pendingTimers() === 1, 'both events, then a hold');

    const c = pod('c', '4');
    watch?.write(eventLine('ADDED', c));
    for (let i = 0; i < 10; i++) await turn();
    expect(informer.getIndexer().getByKey('default/c')).toBeUndefined(); // held back: the socket is paused

    expect(await informer.awaitObserved(c, AbortSignal.timeout(5_000))).toBe('observed');
    expect(holds.now()).toBe(0);
  });
});
