// Gathering a busy watch's reads (decodeWatchStream's coalesceMs, newListWatch's watchCoalesceMs): when
// the socket is held, that it is released, that nothing is lost, and that a stop leaves no timer behind
// (incident 4: stopping releases everything).

import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ErrorCodes } from '../../src/core/index.js';
import { HOLD_SKIP_BYTES } from '../../src/listwatch/chunk-source.js';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { decodeWatchStream, newListWatch, type WatchEvent } from '../../src/listwatch/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/core/index.js';
import { beginWatch, collect, eventLine, kubeConfigFor, pod, useCleanups } from './helpers.js';

// newListWatch as it is, observed: the factory test checks what the factory gives it.
vi.mock('../../src/listwatch/list-watch.js', async (original) => {
  const actual = await original<typeof import('../../src/listwatch/list-watch.js')>();
  return { ...actual, newListWatch: vi.fn(actual.newListWatch) };
});

const PODS = { group: '', version: 'v1', resource: 'pods' };
const { cleanups, serve } = useCleanups();

/** A stream with a socket that records what a hold does to it, as an HTTP response's would be. */
function held(): { stream: PassThrough; calls: string[] } {
  const stream = new PassThrough();
  const calls: string[] = [];
  Object.assign(stream, { socket: { pause: () => calls.push('pause'), resume: () => calls.push('resume') } });
  return { stream, calls };
}

/** A held stream decoded with a 20 ms window on a fake clock. */
function decoding(): { stream: PassThrough; calls: string[]; clock: FakeClock; events: AsyncIterableIterator<WatchEvent<unknown>> } {
  const clock = new FakeClock();
  const { stream, calls } = held();
  return { stream, calls, clock, events: decodeWatchStream(stream, { coalesceMs: 20, clock }) };
}

/** Two events in one read (a busy watch), both taken, then the turn in which the hold pauses the socket. */
async function twoInOneRead(stream: PassThrough, events: AsyncIterableIterator<WatchEvent<unknown>>): Promise<string[]> {
  stream.write(line('a', 1) + line('b', 2));
  const names = [name(await events.next()), name(await events.next())];
  await turn();
  return names;
}

/** One turn of the event loop: a hold pauses the socket at the end of the turn that asked for it. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const line = (name: string, rv: number): string => eventLine('MODIFIED', pod(name, String(rv)));

function name(result: IteratorResult<WatchEvent<unknown>>): string {
  return (result.value as WatchEvent<{ metadata: { name: string } }>).object.metadata.name;
}

describe('decodeWatchStream coalesceMs', () => {
  it('holds the socket after a read that completed two events, and reads again coalesceMs later', async () => {
    const { stream, calls, clock, events } = decoding();
    expect(calls).toEqual([]);
    expect(await twoInOneRead(stream, events)).toEqual(['a', 'b']);
    expect(calls).toEqual(['pause']);
    expect(clock.pendingDelays()).toEqual([20]);
    await clock.advance(19);
    expect(calls).toEqual(['pause']);
    await clock.advance(1);
    expect(calls).toEqual(['pause', 'resume']);
    expect(clock.pendingTimers()).toBe(0);
    await events.return?.();
  });

  it('reads an event after a quiet spell at once, and holds after one that follows within coalesceMs', async () => {
    const { stream, calls, clock, events } = decoding();
    stream.write(line('a', 1));
    expect(name(await events.next())).toBe('a');
    await clock.advance(20);
    stream.write(line('b', 2));
    expect(name(await events.next())).toBe('b');
    await turn();
    expect(calls).toEqual([]);
    // 19 ms after b: the watch is busy.
    await clock.advance(19);
    stream.write(line('c', 3));
    expect(name(await events.next())).toBe('c');
    await turn();
    expect(calls).toEqual(['pause']);
    await clock.advance(20);
    expect(calls).toEqual(['pause', 'resume']);
    await events.return?.();
  });

  it('does not hold for an event split over two reads: only reads that complete events count', async () => {
    const { stream, calls, clock, events } = decoding();
    const text = line('a', 1);
    const next = events.next();
    stream.write(text.slice(0, 10));
    await turn();
    stream.write(text.slice(10));
    expect(name(await next)).toBe('a');
    await turn();
    expect(calls).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    await events.return?.();
  });

  it('leaves no timer and does not resume when the watch is stopped during a hold', async () => {
    const { stream, calls, clock, events } = decoding();
    await twoInOneRead(stream, events);
    expect(calls).toEqual(['pause']);
    await events.return?.();
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(100);
    expect(calls).toEqual(['pause']);
    expect(stream.destroyed).toBe(true);
  });

  it('does not pause a socket whose response ended in the turn that asked for the hold', async () => {
    const { stream, calls, clock, events } = decoding();
    stream.end(line('a', 1) + line('b', 2));
    expect((await collect(events)).length).toBe(2);
    await turn();
    expect(calls).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it(`does not hold a watch that read ${HOLD_SKIP_BYTES / 1024} KiB or more since the last hold: its reads are large already`, async () => {
    const { stream, calls, clock, events } = decoding();
    let text = '';
    for (let i = 0; text.length < HOLD_SKIP_BYTES; i++) text += line(`p${i}`, i + 1);
    const count = text.split('\n').length - 1;
    stream.write(text);
    for (let i = 0; i < count; i++) await events.next();
    await turn();
    expect(calls).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    await events.return?.();
  });

  it('reads as usual from a source without a socket, and never holds at the default of 0', async () => {
    const clock = new FakeClock();
    const bare = new PassThrough();
    const fromBare = decodeWatchStream(bare, { coalesceMs: 20, clock });
    await twoInOneRead(bare, fromBare);
    expect(clock.pendingTimers()).toBe(0);
    await fromBare.return?.();

    const { stream, calls } = held();
    const byDefault = decodeWatchStream(stream);
    await twoInOneRead(stream, byDefault);
    expect(calls).toEqual([]);
    await byDefault.return?.();
  });

  it('refuses a window that is negative, not a number, or above 1 000 ms', () => {
    for (const coalesceMs of [-1, Number.NaN, '20', 1001]) {
      expect(() => decodeWatchStream(new PassThrough(), { coalesceMs: coalesceMs as number })).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_OPTION, message: expect.stringContaining('coalesceMs') }),
      );
    }
  });
});

describe('newListWatch watchCoalesceMs', () => {
  const kubeConfig = kubeConfigFor('http://127.0.0.1:1', { token: 't' });

  it('refuses a bad value and a misspelt name', () => {
    expect(() => newListWatch(kubeConfig, PODS, { watchCoalesceMs: 5000 })).toThrow(/watchCoalesceMs must be at most 1000 ms/);
    expect(() => newListWatch(kubeConfig, PODS, { watchCoalesceMs: -5 })).toThrow(/watchCoalesceMs must be a finite number/);
    expect(() => newListWatch(kubeConfig, PODS, { watchCoalesceMS: 20 } as never)).toThrow(/did you mean watchCoalesceMs/);
  });

  it('holds a real response\'s socket on its clock, and delivers every event of a busy watch in order', async () => {
    const total = 60;
    const server = await serve((_req, res) => {
      beginWatch(res);
      let i = 0;
      // Two events per turn, as a busy server sends them: every read completes more than one event.
      const send = (): void => {
        if (i === total) {
          res.end();
          return;
        }
        res.write(line(`p${i}`, ++i) + line(`p${i}`, ++i));
        setImmediate(send);
      };
      send();
    });
    const clock = new FakeClock();
    const lw = newListWatch<{ metadata: { name: string } }>(kubeConfigFor(server.url, { token: 't' }), PODS, { watchCoalesceMs: 15, clock });
    cleanups.push(() => lw.close());
    let settled = false;
    const all = collect(await lw.watch({ resourceVersion: '0' }, new AbortController().signal)).finally(() => (settled = true));
    // Each hold pauses the socket until its timer on this clock fires: released here, one at a time.
    let holds = 0;
    while (!settled) {
      await turn();
      if (clock.pendingTimers() > 0) {
        holds++;
        await clock.advance(15);
      }
    }
    expect((await all).map((e) => e.object.metadata.name)).toEqual(Array.from({ length: total }, (_, i) => `p${i}`));
    expect(holds).toBeGreaterThan(0);
  });
});

describe('SharedInformerFactory watchCoalesceMs', () => {
  it('refuses it beside listWatchFor (it would not reach that ListerWatcher) and above 1 000 ms', () => {
    const kubeConfig = kubeConfigFor('http://127.0.0.1:1', { token: 't' });
    expect(() => new SharedInformerFactory(undefined, { watchCoalesceMs: 20, listWatchFor: () => ({ list: () => Promise.reject(new Error('x')), watch: () => Promise.reject(new Error('x')) }) })).toThrow(
      /watchCoalesceMs is passed to newListWatch, which listWatchFor replaces/,
    );
    expect(() => new SharedInformerFactory(kubeConfig, { watchCoalesceMs: 1001 })).toThrow(/watchCoalesceMs must be at most 1000 ms/);
  });

  it('gives it to the newListWatch of every resource, whose watch delivers a burst of writes to the cache and the handler, in order', async () => {
    const server = await startFakeApiServer();
    const stop = new AbortController();
    try {
      const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, watchCoalesceMs: 10 });
      const informer = factory.forResource<KubeObject>(resources.configmaps);
      const seen: string[] = [];
      informer.addEventHandler({ onUpdate: (_old, obj) => void seen.push(String((obj as { data?: { n?: string } }).data?.n)) });
      server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' }, data: { n: '0' } });
      factory.start(stop.signal);
      await factory.waitForCacheSync(stop.signal);
      let last = '';
      expect(vi.mocked(newListWatch)).toHaveBeenCalledWith(server.kubeConfig, resources.configmaps, expect.objectContaining({ watchCoalesceMs: 10 }));
      for (let i = 1; i <= 40; i++) {
        last = server.update<KubeObject & { data?: Record<string, string> }>('configmaps', { metadata: { name: 'a', namespace: 'ns' }, data: { n: String(i) } }).metadata!.resourceVersion!;
        if (i % 8 === 0) await turn();
      }
      await informer.awaitResourceVersion(last, AbortSignal.timeout(10_000));
      expect((informer.getIndexer().getByKey('ns/a') as { data: { n: string } }).data.n).toBe('40');
      expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => String(i + 1)));
    } finally {
      stop.abort();
      await server.close();
    }
  });
});
