// DeltaFIFO.park: the informer's process loop waits on an empty queue, and a change that comes meanwhile
// is processed inside the producer's call (issue 29: one event per chunk without a promise per event).
// Same order, same errors and the same sync bookkeeping as pop.

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { DeltaFIFO, type Deltas } from '../../src/fifo/index.js';
import { gate } from '../helpers/async.js';
import { fmt, obj, type FifoObj } from './helpers.js';

/** A queue past its initial list (an empty replace, processed). */
function synced(): DeltaFIFO<FifoObj> {
  const f = new DeltaFIFO<FifoObj>();
  f.replace([], '1');
  expect(f.hasSynced()).toBe(true);
  return f;
}

describe('DeltaFIFO.park', () => {
  it('hands a change to the parked consumer inside update(), queueing nothing', async () => {
    const f = synced();
    const seen: Array<[string[] | undefined, boolean, string]> = [];
    const parked = f.park((d, initial, key) => void seen.push([fmt(d), initial, key]));
    f.update(obj('a', 1));
    // Synchronously, before any promise ran.
    expect(seen).toEqual([[['Updated(a:1)'], false, 'a']]);
    f.add(obj('b', 2));
    expect(seen.map(([d]) => d)).toEqual([['Updated(a:1)'], ['Added(b:2)']]);
    expect(f.size).toBe(0);
    // Still parked: it settles only when something is queued or the queue closes.
    let settled = false;
    void parked.then(() => (settled = true));
    await flushPromises();
    expect(settled).toBe(false);
    f.close();
    await expect(parked).resolves.toBeUndefined();
  });

  it('hands a first list to the parked consumer item by item inside replace(), counting it as initial', () => {
    const f = new DeltaFIFO<FifoObj>({ emitDeltaTypeReplaced: true });
    const seen: Array<[string[] | undefined, boolean, string, boolean]> = [];
    void f.park((d, initial, key) => void seen.push([fmt(d), initial, key, f.hasSynced()]));
    f.replace([obj('a', 1), obj('b', 2)], '1');
    // Synchronously, in list order; hasSynced turns true only once the last one was processed.
    expect(seen).toEqual([[['Replaced(a:1)'], true, 'a', false], [['Replaced(b:2)'], true, 'b', false]]);
    expect(f.size).toBe(0);
    expect(f.hasSynced()).toBe(true);
    // Past the initial list, changes go inline as before.
    f.update(obj('a', 3));
    expect(seen.at(-1)).toEqual([['Updated(a:3)'], false, 'a', true]);
  });

  it('queues the rest of a first list behind an item whose processing is async, and syncs once all are processed', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const g = gate();
    const seen: string[][] = [];
    const syncedDuring: boolean[] = [];
    const process = (d: Deltas<FifoObj>): void | Promise<void> => {
      seen.push(fmt(d)!);
      syncedDuring.push(f.hasSynced());
      return (d[0].object as FifoObj).metadata.name === 'a' ? g.promise : undefined;
    };
    const parked = f.park(process);
    f.replace([obj('a', 1), obj('b', 2), obj('c', 3)], '1');
    expect(seen).toEqual([['Sync(a:1)']]);
    expect(f.listKeys()).toEqual(['b', 'c']);
    // A change meanwhile joins b's queued deltas, never inline.
    f.update(obj('b', 4));
    expect(f.hasSynced()).toBe(false);
    g.open();
    await parked;
    expect(f.hasSynced()).toBe(false);
    while (f.tryPop(process) !== undefined);
    expect(seen).toEqual([['Sync(a:1)'], ['Sync(b:2)', 'Updated(b:4)'], ['Sync(c:3)']]);
    // Not synced before the last item was processed, though the first was handed over.
    expect(syncedDuring).toEqual([false, false, false]);
    expect(f.hasSynced()).toBe(true);
  });

  it('queues what a consumer adds while it processes a first list behind the rest of the list, as pop would', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const seen: string[][] = [];
    let reentered = false;
    const process = (d: Deltas<FifoObj>): void => {
      seen.push(fmt(d)!);
      if (!reentered) {
        reentered = true;
        f.update(obj('c', 9)); // a listed key not yet processed: joins its entry, after the listed state
        f.add(obj('z', 1)); // a new key: queued behind the list
      }
    };
    const parked = f.park(process);
    f.replace([obj('a', 1), obj('b', 2), obj('c', 3)], '1');
    await parked;
    while (f.tryPop(process) !== undefined);
    expect(seen).toEqual([['Sync(a:1)'], ['Sync(b:2)'], ['Sync(c:3)', 'Updated(c:9)'], ['Added(z:1)']]);
    expect(f.hasSynced()).toBe(true);
  });

  it('gives the parked consumer the error of a first-list item and queues the rest', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const boom = new Error('handler failed');
    const parked = f.park((d) => {
      if ((d[0].object as FifoObj).metadata.name === 'b') throw boom;
    });
    expect(() => f.replace([obj('a', 1), obj('b', 2), obj('c', 3)], '1')).not.toThrow();
    await expect(parked).rejects.toBe(boom);
    expect(f.listKeys()).toEqual(['c']);
    expect(f.hasSynced()).toBe(false);
    // Even once the rest is processed: the list had an item that failed.
    while (f.tryPop(() => undefined) !== undefined);
    expect(f.hasSynced()).toBe(false);
  });

  it('resolves at once when keys are queued, so what is queued goes first', async () => {
    const f = synced();
    f.add(obj('a', 1));
    const seen: string[][] = [];
    await f.park((d) => void seen.push(fmt(d)!));
    expect(seen).toEqual([]);
    expect(f.size).toBe(1);
  });

  it('queues a change while the queue holds another key, and wakes the consumer for it', async () => {
    const f = synced();
    const seen: string[][] = [];
    const process = (d: Deltas<FifoObj>): void => void seen.push(fmt(d)!);
    const parked = f.park(process);
    f.update(obj('a', 1)); // inline
    expect(seen).toEqual([['Updated(a:1)']]);
    // A pop waiting in line is served first: changes are queued for it, not handed to the parked consumer.
    const popped = f.pop((d) => void seen.push(['pop', ...fmt(d)!]));
    f.update(obj('b', 2));
    await popped;
    expect(seen).toEqual([['Updated(a:1)'], ['pop', 'Updated(b:2)']]);
    f.close();
    await parked;
  });

  it('rejects with the error process threw; the producer call returns normally', async () => {
    const f = synced();
    const boom = new Error('handler failed');
    const parked = f.park(() => {
      throw boom;
    });
    expect(() => f.update(obj('a', 1))).not.toThrow();
    await expect(parked).rejects.toBe(boom);
    // The turn is free again and nothing was queued (as pop: the deltas are gone).
    expect(f.size).toBe(0);
    expect(f.tryPop(() => undefined)).toBeUndefined();
  });

  it('waits for an async process, holding the turn; changes meanwhile are queued in order', async () => {
    const f = synced();
    const g = gate();
    const seen: string[][] = [];
    const parked = f.park((d) => {
      seen.push(fmt(d)!);
      return g.promise;
    });
    f.update(obj('a', 1));
    f.update(obj('b', 2)); // the turn is held: queued
    expect(seen).toEqual([['Updated(a:1)']]);
    expect(f.tryPop(() => undefined)).toBeUndefined();
    let settled = false;
    void parked.then(() => (settled = true));
    await flushPromises();
    expect(settled).toBe(false);
    g.open();
    await parked;
    expect(f.listKeys()).toEqual(['b']);
  });

  it('rejects with the rejection of an async process', async () => {
    const f = synced();
    const parked = f.park(() => Promise.reject(new Error('async handler failed')));
    f.add(obj('a', 1));
    await expect(parked).rejects.toThrow('async handler failed');
    expect(f.size).toBe(0);
  });

  it('rejects FIFO_CLOSED on a closed empty queue, and a second park with INVALID_OPTION', async () => {
    const f = synced();
    const first = f.park(() => undefined);
    await expect(f.park(() => undefined)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    f.close();
    await first;
    await expect(f.park(() => undefined)).rejects.toMatchObject({ code: 'FIFO_CLOSED' });
  });

  it('keeps the delete rule: a delete of a key neither queued nor known hands nothing over', async () => {
    const f = synced();
    const seen: string[][] = [];
    const parked = f.park((d) => void seen.push(fmt(d)!));
    f.delete(obj('ghost', 1));
    expect(seen).toEqual([]);
    f.close();
    await parked;
  });

  it('waits for a pop that holds the turn, then rejects FIFO_CLOSED once the closed queue is empty', async () => {
    const f = synced();
    f.add(obj('a', 1));
    const g = gate();
    const popped = f.pop(() => g.promise); // holds the turn while a is processed
    await flushPromises();
    f.close();
    let outcome = 'pending';
    const parked = f.park(() => undefined).then(
      () => (outcome = 'resolved'),
      (err: { code?: string }) => (outcome = err.code ?? 'rejected'),
    );
    await flushPromises();
    expect(outcome).toBe('pending');
    g.open();
    await popped;
    await parked;
    // Woken when the turn came free: nothing is left, and the queue is closed.
    expect(outcome).toBe('resolved');
    await expect(f.park(() => undefined)).rejects.toMatchObject({ code: 'FIFO_CLOSED' });
  });
});
