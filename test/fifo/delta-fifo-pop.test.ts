// DeltaFIFO's pop/close contract, errors, and the behaviours upstream leaves untested (catalogue §20).

import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown, flushPromises, InvalidObjectError } from '../../src/core/index.js';
import { DeltaFIFO, FifoClosedError, isFifoClosedError, TransformFailedError } from '../../src/fifo/index.js';
import { drain, fmt, literal, newestVal, obj, popOne, type FifoObj } from './helpers.js';
import { gate } from '../helpers/async.js';

describe('DeltaFIFO pop and close', () => {
  it('rejects with the very error a synchronous process throws, and does not requeue', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    f.add(obj('bar', 2));
    const boom = new Error('boom');
    await expect(f.pop(() => { throw boom; })).rejects.toBe(boom);
    expect(f.listKeys()).toEqual(['bar']);
    expect(newestVal(await popOne(f))).toBe(2);
  });

  it('rejects with the very error an async process rejects with', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    const boom = new Error('async boom');
    await expect(f.pop(async () => { await Promise.resolve(); throw boom; })).rejects.toBe(boom);
    expect(f.listKeys()).toEqual([]);
  });

  it('waits for an async process before resolving', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    const g = gate();
    let resolved = false;
    const p = f.pop(() => g.promise).then(() => (resolved = true));
    await flushPromises();
    expect(resolved).toBe(false);
    g.open();
    await p;
    expect(resolved).toBe(true);
  });

  it('waits for an item when empty and resolves once one is added', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const p = popOne(f);
    await flushPromises();
    f.add(obj('foo', 7));
    expect(newestVal(await p)).toBe(7);
  });

  it('keeps adds that arrive while process runs, in order, and merges those of the key being processed into a new entry', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    const g = gate();
    const first = f.pop(() => g.promise);
    await flushPromises();
    f.add(obj('a', 2));
    f.add(obj('foo', 3));
    f.add(obj('b', 4));
    f.update(obj('a', 5));
    g.open();
    expect(fmt(await first)).toEqual(['Added(foo:1)']);
    expect(await drain(f)).toEqual([
      ['a', ['Added(a:2)', 'Updated(a:5)']],
      ['foo', ['Added(foo:3)']],
      ['b', ['Added(b:4)']],
    ]);
  });

  it('makes a second concurrent pop wait its turn until the first process finished', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    f.add(obj('bar', 2));
    const g = gate();
    const order: string[] = [];
    const first = f.pop(async (d) => { order.push(`start ${f.keyOf(d)}`); await g.promise; order.push(`end ${f.keyOf(d)}`); });
    const second = f.pop((d) => { order.push(`start ${f.keyOf(d)}`); });
    await flushPromises();
    expect(order).toEqual(['start foo']);
    g.open();
    await Promise.all([first, second]);
    expect(order).toEqual(['start foo', 'end foo', 'start bar']);
  });

  it('serves waiting pops in call order even when a new pop arrives as an item is added', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const got: string[] = [];
    const waiting = [popOne(f).then((d) => got.push(`w1:${f.keyOf(d)}`)), popOne(f).then((d) => got.push(`w2:${f.keyOf(d)}`))];
    await flushPromises();
    f.add(obj('x', 1));
    const late = popOne(f).then((d) => got.push(`late:${f.keyOf(d)}`));
    f.add(obj('y', 2));
    f.add(obj('z', 3));
    await Promise.all([...waiting, late]);
    expect(got).toEqual(['w1:x', 'w2:y', 'late:z']);
  });

  it('rejects a pop on a closed empty queue with FIFO_CLOSED', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.close();
    expect(f.isClosed()).toBe(true);
    const err = await popOne(f).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FifoClosedError);
    expect(isFifoClosedError(err)).toBe(true);
    expect(err).toMatchObject({ code: 'FIFO_CLOSED' });
  });

  it('wakes a waiting pop with FIFO_CLOSED when closed', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const p = popOne(f).catch((e: unknown) => e);
    await flushPromises();
    f.close();
    expect(await p).toMatchObject({ code: 'FIFO_CLOSED' });
  });

  it('wakes a pop that waits behind a running process with FIFO_CLOSED after that process ends', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    const g = gate();
    const first = f.pop(() => g.promise);
    const second = popOne(f).catch((e: unknown) => e);
    await flushPromises();
    f.close();
    g.open();
    expect(fmt(await first)).toEqual(['Added(foo:1)']);
    expect(await second).toMatchObject({ code: 'FIFO_CLOSED' });
  });

  // NC-15
  it('drains the items still queued after close, accepts later adds, then rejects', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    f.close();
    f.add(obj('bar', 2));
    expect(newestVal(await popOne(f))).toBe(1);
    expect(newestVal(await popOne(f))).toBe(2);
    await expect(popOne(f)).rejects.toMatchObject({ code: 'FIFO_CLOSED' });
  });

  it('does not report synced while the last initial item is still being processed', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.replace([obj('a', 1)], '1');
    const g = gate();
    let syncedDuring: boolean | undefined;
    const p = f.pop(async () => {
      syncedDuring = f.hasSynced();
      await g.promise;
    });
    await flushPromises();
    expect(f.hasSynced()).toBe(false);
    g.open();
    await p;
    expect(syncedDuring).toBe(false);
    expect(f.hasSynced()).toBe(true);
  });

  it('counts a failed initial item as processed', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.replace([obj('a', 1)], '1');
    await expect(f.pop(() => { throw new Error('x'); })).rejects.toThrow('x');
    expect(f.hasSynced()).toBe(true);
  });

  it('reports items after the initial list as not in the initial list', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.replace([obj('a', 1)], '1');
    f.add(obj('b', 2));
    const flags: boolean[] = [];
    await f.pop((_d, initial) => { flags.push(initial); });
    await f.pop((_d, initial) => { flags.push(initial); });
    expect(flags).toEqual([true, false]);
  });

  it('keeps the order of a long queue across compactions', async () => {
    const f = new DeltaFIFO<FifoObj>();
    let next = 0;
    const popped: number[] = [];
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 300; i++) f.add(obj(`k${next}`, next++));
      for (let i = 0; i < 250; i++) popped.push(newestVal(await popOne(f)));
    }
    while (f.listKeys().length > 0) popped.push(newestVal(await popOne(f)));
    expect(popped).toEqual(Array.from({ length: next }, (_, i) => i));
  });
});

describe('DeltaFIFO reading, keys and transforms', () => {
  it('returns copies from get, and the newest object per key from list', () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 1));
    f.update(obj('foo', 2));
    f.add(obj('bar', 3));
    const copy = f.get(obj('foo', 0)) as Array<unknown>;
    copy.length = 0;
    expect(fmt(f.getByKey('foo'))).toEqual(['Added(foo:1)', 'Updated(foo:2)']);
    expect(f.list()).toEqual([obj('foo', 2), obj('bar', 3)]);
    expect(f.getByKey('nope')).toBeUndefined();
  });

  it('throws InvalidObjectError with a preview for an object with no name', () => {
    const f = new DeltaFIFO<FifoObj>();
    const bad = { metadata: {}, val: 42 } as unknown as FifoObj;
    expect(() => f.add(bad)).toThrow(InvalidObjectError);
    expect(() => f.add(bad)).toThrow(/"val":42/);
    expect(f.listKeys()).toEqual([]);
  });

  it('wraps a custom key function failure in InvalidObjectError keeping the cause', () => {
    const cause = new Error('no key for you');
    const f = new DeltaFIFO<FifoObj>({ keyFunc: () => { throw cause; } });
    const err = (() => { try { f.add(obj('a', 1)); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(InvalidObjectError);
    expect((err as Error).cause).toBe(cause);
  });

  it('uses a tombstone key without calling the key function', () => {
    const f = new DeltaFIFO<FifoObj>({ keyFunc: (o) => `custom/${(o as FifoObj).metadata.name}` });
    f.add(obj('a', 1));
    f.delete(new DeletedFinalStateUnknown('custom/a', obj('a', 1)));
    expect(fmt(f.getByKey('custom/a'))).toEqual(['Added(a:1)', 'Deleted(DFSU(custom/a, a:1))']);
  });

  it('fails with TransformFailedError and leaves the queue unchanged when the transformer throws', () => {
    const f = new DeltaFIFO<FifoObj>({
      transform: (o) => { if (o.val < 0) throw new Error('negative'); return { ...o, val: o.val * 10 }; },
    });
    f.add(obj('a', 1));
    expect(() => f.add(obj('b', -1))).toThrow(TransformFailedError);
    expect(() => f.replace([obj('c', 2), obj('d', -2)], '1')).toThrow(/transform failed for "d": negative/);
    expect(f.listKeys()).toEqual(['a']);
    expect(fmt(f.getByKey('a'))).toEqual(['Added(a:10)']);
  });

  it('transforms replace items even when they are emitted as Sync, but not resync items', () => {
    const held = obj('k', 1);
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(held), transform: (o) => ({ ...o, val: o.val + 100 }) });
    f.resync();
    expect(fmt(f.getByKey('k'))).toEqual(['Sync(k:1)']);
    f.replace([obj('r', 2)], '1');
    expect(fmt(f.getByKey('r'))).toEqual(['Sync(r:102)']);
  });
});

describe('DeltaFIFO behaviours upstream does not test', () => {
  // NC-17
  it('tombstones a known key whose object is gone with an undefined object, and skips it on resync', () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: { listKeys: () => ['ghost'], getByKey: () => undefined } });
    f.resync();
    expect(f.listKeys()).toEqual([]);
    f.replace([], '1');
    expect(fmt(f.getByKey('ghost'))).toEqual(['Deleted(DFSU(ghost, nil))']);
  });

  // NC-18
  it('does not extend the initial list with a second replace before the first is drained', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.replace([obj('a', 1)], '1');
    f.replace([obj('a', 2), obj('b', 3)], '2');
    const flags: boolean[] = [];
    await f.pop((_d, initial) => { flags.push(initial); });
    expect(f.hasSynced()).toBe(true);
    await f.pop((_d, initial) => { flags.push(initial); });
    expect(flags).toEqual([true, false]);
  });

  // NC-19
  it('makes inferred deletions in queue order, then in knownObjects order', async () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('k2', 0), obj('k1', 0), obj('q2', 0)) });
    f.add(obj('q2', 1));
    f.add(obj('q1', 1));
    f.add(obj('q3', 1));
    f.replace([obj('q3', 2)], '1');
    expect(f.listKeys()).toEqual(['q2', 'q1', 'q3', 'k2', 'k1']);
    expect((await drain(f)).map(([k, d]) => `${k}:${d.at(-1)}`)).toEqual([
      'q2:Deleted(DFSU(q2, q2:1))',
      'q1:Deleted(DFSU(q1, q1:1))',
      'q3:Sync(q3:2)',
      'k2:Deleted(DFSU(k2, k2:0))',
      'k1:Deleted(DFSU(k1, k1:0))',
    ]);
  });

  // NC-24
  it('keeps the newer of two consecutive tombstones', () => {
    const f = new DeltaFIFO<FifoObj>();
    const older = new DeletedFinalStateUnknown('t', obj('t', 1));
    const newer = new DeletedFinalStateUnknown('t', obj('t', 2));
    f.add(obj('t', 0));
    f.delete(older);
    f.delete(newer);
    const deltas = f.getByKey('t')!;
    expect(deltas).toHaveLength(2);
    expect(deltas[1].object).toBe(newer);
  });

  it('keeps the real delete over a later tombstone, and replaces an earlier tombstone with a real delete', () => {
    const f = new DeltaFIFO<FifoObj>();
    const real = obj('t', 5);
    f.add(obj('t', 0));
    f.delete(real);
    f.delete(new DeletedFinalStateUnknown('t', obj('t', 9)));
    expect(f.getByKey('t')![1].object).toBe(real);
    const g = new DeltaFIFO<FifoObj>();
    g.add(obj('u', 0));
    g.delete(new DeletedFinalStateUnknown('u', obj('u', 9)));
    const realU = obj('u', 5);
    g.delete(realU);
    expect(g.getByKey('u')![1].object).toBe(realU);
  });
});
