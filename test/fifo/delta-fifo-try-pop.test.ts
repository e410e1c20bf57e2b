// DeltaFIFO.tryPop: pop without the wait, used by the informer's process loop to drain what is queued
// without a promise per key. Same order, same error and sync bookkeeping as pop.

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { DeltaFIFO, type Deltas } from '../../src/fifo/index.js';
import { gate } from '../helpers/async.js';
import { fmt, newestVal, obj, type FifoObj } from './helpers.js';

describe('DeltaFIFO.tryPop', () => {
  it('takes nothing from an empty or closed queue', () => {
    const f = new DeltaFIFO<FifoObj>();
    let calls = 0;
    expect(f.tryPop(() => void calls++)).toBeUndefined();
    f.close();
    expect(f.tryPop(() => void calls++)).toBeUndefined();
    expect(calls).toBe(0);
  });

  it('drains in queue order, synchronously, with the deltas of each key', () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('a', 1));
    f.add(obj('b', 2));
    f.update(obj('a', 3));
    const seen: string[][] = [];
    for (let taken = f.tryPop((d) => void seen.push(fmt(d)!)); taken !== undefined; taken = f.tryPop((d) => void seen.push(fmt(d)!))) {
      expect(Array.isArray(taken)).toBe(true);
    }
    expect(seen).toEqual([['Added(a:1)', 'Updated(a:3)'], ['Added(b:2)']]);
    expect(f.size).toBe(0);
  });

  it('returns a promise when process returns one, and holds the turn until it settles', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('a', 1));
    f.add(obj('b', 2));
    const g = gate();
    const taken = f.tryPop(() => g.promise);
    expect(taken).toBeInstanceOf(Promise);
    // While a's processing runs, nobody else gets a turn: not tryPop, and pop waits.
    expect(f.tryPop(() => undefined)).toBeUndefined();
    let popped: Deltas<FifoObj> | undefined;
    const waiting = f.pop(() => undefined).then((d) => (popped = d));
    await flushPromises();
    expect(popped).toBeUndefined();
    g.open();
    expect(newestVal(await (taken as Promise<Deltas<FifoObj>>))).toBe(1);
    await waiting;
    expect(newestVal(popped!)).toBe(2);
  });

  it('gives way to a pop already waiting for an item', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const order: string[] = [];
    const waiting = f.pop((d) => void order.push(`pop ${fmt(d)![0]}`));
    f.add(obj('a', 1));
    expect(f.tryPop((d) => void order.push(`tryPop ${fmt(d)![0]}`))).toBeUndefined();
    await waiting;
    expect(order).toEqual(['pop Added(a:1)']);
  });

  it('throws what a synchronous process throws, does not requeue, and frees the turn', () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('a', 1));
    f.add(obj('b', 2));
    const boom = new Error('boom');
    expect(() => f.tryPop(() => { throw boom; })).toThrow(boom);
    expect(f.listKeys()).toEqual(['b']);
    expect(newestVal(f.tryPop(() => undefined) as Deltas<FifoObj>)).toBe(2);
  });

  it('rejects with what an async process rejects with', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('a', 1));
    const boom = new Error('async boom');
    await expect(f.tryPop(() => Promise.reject(boom))).rejects.toBe(boom);
    expect(f.tryPop(() => undefined)).toBeUndefined();
  });

  it('counts the initial items down only once each was processed', () => {
    const f = new DeltaFIFO<FifoObj>();
    f.replace([obj('a', 1), obj('b', 2)], '1');
    const synced: boolean[] = [];
    const initial: boolean[] = [];
    while (f.tryPop((_d, isInInitialList) => {
      synced.push(f.hasSynced());
      initial.push(isInInitialList);
    }) !== undefined);
    expect(initial).toEqual([true, true]);
    expect(synced).toEqual([false, false]);
    expect(f.hasSynced()).toBe(true);
  });
});
