// DeltaFIFO.pop(process, signal): a waiting pop can be told to stop waiting.

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { DeltaFIFO } from '../../src/fifo/index.js';
import { newestVal, obj, popOne, type FifoObj } from './helpers.js';

describe('DeltaFIFO pop with a signal', () => {
  it('rejects a waiting pop with ABORTED when its signal aborts, takes nothing, and leaves no listener', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const ac = new AbortController();
    const processed: number[] = [];
    const waiting = f.pop((d) => void processed.push(newestVal(d)), ac.signal);
    await flushPromises();
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort('consumer stopping');
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED', cause: 'consumer stopping' });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    f.add(obj('a', 1));
    expect(newestVal(await popOne(f))).toBe(1);
    expect(processed).toEqual([]);
  });

  it('passes the turn on to the next waiting pop when an earlier one aborted', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const first = new AbortController();
    const a = f.pop(() => {}, first.signal).catch((e: { code: string }) => e.code);
    const b = f.pop(() => {}, new AbortController().signal);
    await flushPromises();
    first.abort();
    f.add(obj('x', 7));
    expect(await a).toBe('ABORTED');
    expect(newestVal(await b)).toBe(7);
  });

  it('rejects at once with an aborted signal even when an item is queued, and ignores an abort once processing began', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('a', 1));
    const ac = new AbortController();
    ac.abort();
    await expect(f.pop(() => {}, ac.signal)).rejects.toMatchObject({ code: 'ABORTED' });
    expect(f.listKeys()).toEqual(['a']);
    const live = new AbortController();
    let release!: () => void;
    const popped = f.pop(() => new Promise<void>((r) => (release = r)), live.signal);
    await flushPromises();
    live.abort();
    release();
    expect(newestVal(await popped)).toBe(1);
  });

  it('still rejects FIFO_CLOSED for a pop with a signal when the queue closes first', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const ac = new AbortController();
    const waiting = f.pop(() => {}, ac.signal);
    await flushPromises();
    f.close();
    await expect(waiting).rejects.toMatchObject({ code: 'FIFO_CLOSED' });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});
