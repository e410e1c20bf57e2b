// A watch chunk holding many events is drained without a promise per event (the decoder's READ_READY).
// What must not change: every event applied in order and reported before the next; a relist asked for
// in the middle of a chunk drops the rest of that stream, as it did when each event was awaited; a
// store failure in the middle stops the stream at that event.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import { decodeWatchStream } from '../../src/listwatch/index.js';
import type { ListerWatcher, ListOptions, WatchEvent } from '../../src/listwatch/types.js';
import { Reflector } from '../../src/reflector/index.js';
import { pod, podList, RecordingStore, settle, type Pod } from './helpers.js';

/** Lists from a script; each watch is one chunk of lines, then the stream stays open until aborted. */
class ChunkLW implements ListerWatcher<Pod> {
  readonly lists: Array<ReturnType<typeof podList>> = [];
  readonly chunks: string[] = [];
  readonly listed: ListOptions[] = [];
  list(options: ListOptions): Promise<ReturnType<typeof podList>> {
    this.listed.push(options);
    const next = this.lists.shift();
    return next === undefined ? new Promise(() => {}) : Promise.resolve(next);
  }
  watch(_options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<Pod>>> {
    const chunk = this.chunks.shift();
    async function* source(): AsyncGenerator<Buffer> {
      if (chunk !== undefined) yield Buffer.from(chunk);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
    return Promise.resolve(decodeWatchStream<Pod>(source(), { signal }));
  }
}

const line = (type: string, name: string, rv: string): string => `${JSON.stringify({ type, object: pod(name, rv) })}\n`;

describe('a watch chunk drained at once', () => {
  it('applies and reports every event of the chunk in order', async () => {
    const lw = new ChunkLW();
    lw.lists.push(podList('1', []));
    lw.chunks.push(['a', 'b', 'c', 'd', 'e'].map((n, i) => line('ADDED', n, String(i + 2))).join(''));
    const store = new RecordingStore();
    const r = new Reflector<Pod>(lw, store, { clock: new FakeClock(), random: () => 0 });
    const reported: string[] = [];
    r.events.on('event', (e) => reported.push(`${e.key}@${e.resourceVersion}`));
    const ac = new AbortController();
    const running = r.run(ac.signal);
    await settle();
    await settle();
    expect(store.ops).toEqual(['replace@1 []', 'add a@2', 'add b@3', 'add c@4', 'add d@5', 'add e@6']);
    expect(reported).toEqual(['a@2', 'b@3', 'c@4', 'd@5', 'e@6']);
    expect(r.lastSyncResourceVersion()).toBe('6');
    ac.abort();
    await running;
  });

  it('a relist asked for by the store mid-chunk drops the rest of that stream and lists from ""', async () => {
    const lw = new ChunkLW();
    lw.lists.push(podList('1', []), podList('9', [pod('z', '9')]));
    lw.chunks.push(['a', 'b', 'c', 'd'].map((n, i) => line('ADDED', n, String(i + 2))).join(''));
    const store = new RecordingStore();
    const r = new Reflector<Pod>(lw, store, { clock: new FakeClock(), random: () => 0 });
    const add = store.add.bind(store);
    store.add = (obj: Pod): void => {
      add(obj);
      if (obj.metadata?.name === 'b') r.requestRelist();
    };
    const ac = new AbortController();
    const running = r.run(ac.signal);
    for (let i = 0; i < 4; i++) await settle();
    expect(store.ops).toEqual(['replace@1 []', 'add a@2', 'add b@3', 'replace@9 [z]']);
    expect(lw.listed.map((o) => o.resourceVersion)).toEqual(['0', '']);
    ac.abort();
    await running;
  });

  it('a store failure mid-chunk stops at that event', async () => {
    const lw = new ChunkLW();
    lw.lists.push(podList('1', []));
    lw.chunks.push(['a', 'b', 'c'].map((n, i) => line('ADDED', n, String(i + 2))).join(''));
    const store = new RecordingStore();
    const r = new Reflector<Pod>(lw, store, { clock: new FakeClock(), random: () => 0 });
    const add = store.add.bind(store);
    store.add = (obj: Pod): void => {
      if (obj.metadata?.name === 'b') throw new Error('store full');
      add(obj);
    };
    const errors: string[] = [];
    r.events.on('error', (e) => errors.push(`${e.phase}: ${e.error.message}`));
    const ac = new AbortController();
    const running = r.run(ac.signal);
    for (let i = 0; i < 4; i++) await settle();
    expect(store.ops.slice(0, 2)).toEqual(['replace@1 []', 'add a@2']);
    expect(store.ops).not.toContain('add c@4');
    expect(errors).toEqual(['store: store full']);
    ac.abort();
    await running;
  });
});
