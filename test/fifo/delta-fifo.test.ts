// client-go's DeltaFIFO scenarios (catalogue §1, DF-1..20), ported one by one.

import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown, flushPromises } from '../../src/core/index.js';
import { DeltaFIFO, type Deltas } from '../../src/fifo/index.js';
import { drain, fmt, literal, newestVal, obj, popOne, type FifoObj } from './helpers.js';

describe('DeltaFIFO (client-go scenarios)', () => {
  // DF-1
  it('keeps each producer order when two producers add concurrently and nothing is lost', async () => {
    const f = new DeltaFIFO<FifoObj>();
    const producer = async (prefix: string): Promise<void> => {
      for (let i = 0; i < 500; i++) {
        f.add(obj(`${prefix}${i}`, i + 1));
        if (i % 7 === 0) await Promise.resolve();
      }
    };
    const seen: Record<string, number[]> = { a: [], b: [] };
    const consumer = (async () => {
      for (let i = 0; i < 1000; i++) {
        const deltas = await popOne(f);
        const name = (deltas[0].object as FifoObj).metadata.name;
        seen[name[0]].push(newestVal(deltas));
      }
    })();
    await Promise.all([producer('a'), producer('b'), consumer]);
    for (const values of Object.values(seen)) {
      expect(values).toHaveLength(500);
      for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1]);
    }
  });

  // DF-2
  it('does not let a queued Deleted suppress the Sync of an object that reappears in a relist', async () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 1)) });
    f.delete(obj('foo', 1));
    f.replace([obj('foo', 2)], '0');
    expect(fmt(await popOne(f))).toEqual(['Deleted(foo:1)', 'Sync(foo:2)']);
  });

  // DF-3
  describe('replace makes deletions for objects only in the queue', () => {
    const cases: Array<[string, boolean, (f: DeltaFIFO<FifoObj>) => void, string[]]> = [
      ['an added object is deleted on replace', false, (f) => {
        f.add(obj('foo', 2));
        f.replace([], '0');
      }, ['Added(foo:2)', 'Deleted(DFSU(foo, foo:2))']],
      ['a replaced object gets only a single delete', true, (f) => {
        f.add(obj('foo', 2));
        f.replace([obj('foo', 2)], '0');
        f.replace([], '0');
      }, ['Added(foo:2)', 'Replaced(foo:2)', 'Deleted(DFSU(foo, foo:2))']],
      ['a deleted object gets only a single delete, the real one', false, (f) => {
        f.add(obj('foo', 2));
        f.delete(obj('foo', 2));
        f.replace([], '0');
      }, ['Added(foo:2)', 'Deleted(foo:2)']],
      ['synced objects get a single delete', false, (f) => {
        f.add(obj('foo', 2));
        f.replace([obj('foo', 2)], '0');
        f.replace([obj('foo', 2)], '0');
        f.replace([], '0');
      }, ['Added(foo:2)', 'Sync(foo:2)', 'Sync(foo:2)', 'Deleted(DFSU(foo, foo:2))']],
      ['an added object gets a single delete over several replaces', false, (f) => {
        f.add(obj('foo', 2));
        f.replace([], '0');
        f.replace([], '1');
      }, ['Added(foo:2)', 'Deleted(DFSU(foo, foo:2))']],
      ['an added, deleted and re-added object is deleted with its newest state', false, (f) => {
        f.add(obj('foo', 2));
        f.delete(obj('foo', 2));
        f.add(obj('foo', 3));
        f.replace([], '0');
      }, ['Added(foo:2)', 'Deleted(foo:2)', 'Added(foo:3)', 'Deleted(DFSU(foo, foo:3))']],
    ];
    for (const [name, emitReplaced, actions, expected] of cases) {
      for (const withKnown of [true, false]) {
        it(`${name} (${withKnown ? 'empty knownObjects' : 'no knownObjects'})`, async () => {
          const f = new DeltaFIFO<FifoObj>({
            emitDeltaTypeReplaced: emitReplaced,
            knownObjects: withKnown ? literal() : undefined,
          });
          actions(f);
          expect(fmt(await popOne(f))).toEqual(expected);
          expect(f.listKeys()).toEqual([]);
          expect(f.list()).toEqual([]);
        });
      }
    }
  });

  // DF-4
  it('coalesces add, update and delete of one key into one pop of its newest state', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 10));
    f.update(obj('foo', 12));
    f.delete(obj('foo', 15));
    expect(f.list()).toEqual([obj('foo', 15)]);
    expect(f.listKeys()).toEqual(['foo']);
    expect(newestVal(await popOne(f))).toBe(15);
    let second = false;
    const next = popOne(f).then(() => (second = true), (err: unknown) => err);
    await flushPromises();
    expect(second).toBe(false);
    expect(f.get(obj('foo', 0))).toBeUndefined();
    f.close();
    expect(await next).toMatchObject({ code: 'FIFO_CLOSED' });
  });

  // DF-5
  it('transforms each entering object exactly once and never a tombstone', async () => {
    const transformer = (o: FifoObj): FifoObj => {
      if ((o as unknown) instanceof DeletedFinalStateUnknown) throw new Error('tombstone reached the transformer');
      o.transformCount = (o.transformCount ?? 0) + 1;
      return o;
    };
    const rv = (name: string, v: number): FifoObj => ({ metadata: { name, resourceVersion: String(v) }, val: v });
    const f = new DeltaFIFO<FifoObj>({ transform: transformer });
    f.add(rv('foo', 10));
    f.add(rv('bar', 11));
    f.update(rv('foo', 12));
    f.delete(rv('foo', 15));
    f.replace([], '');
    f.add(rv('bar', 16));
    f.replace([], '');
    expect(f.listKeys()).toEqual(['foo', 'bar']);
    const foo = (await popOne(f)).at(-1)!.object as FifoObj;
    expect(foo).not.toBeInstanceOf(DeletedFinalStateUnknown);
    expect(foo).toMatchObject({ val: 15, transformCount: 1 });
    const bar = (await popOne(f)).at(-1)!.object;
    expect(bar).toBeInstanceOf(DeletedFinalStateUnknown);
    expect((bar as DeletedFinalStateUnknown<FifoObj>).obj).toMatchObject({ val: 16, transformCount: 1 });
  });

  // DF-6
  it('ignores the delete of a key it never saw when it has no knownObjects', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 10));
    f.update(obj('bar', 15));
    f.add(obj('qux', 17));
    f.delete(obj('qux', 18));
    f.delete(obj('baz', 20));
    const vals = [newestVal(await popOne(f)), newestVal(await popOne(f)), newestVal(await popOne(f))];
    expect(vals).toEqual([10, 15, 18]);
    expect(f.listKeys()).toEqual([]);
  });

  // DF-7
  it('queues the delete of a key that only knownObjects holds', async () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 5), obj('bar', 6), obj('baz', 7)) });
    f.add(obj('foo', 10));
    f.update(obj('bar', 15));
    f.delete(obj('baz', 20));
    const vals = [newestVal(await popOne(f)), newestVal(await popOne(f)), newestVal(await popOne(f))];
    expect(vals).toEqual([10, 15, 20]);
    expect(f.listKeys()).toEqual([]);
  });

  // DF-8
  it('delivers the replaced state together with an earlier add', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 10));
    f.replace([obj('foo', 15)], '0');
    expect(newestVal(await popOne(f))).toBe(15);
    expect(f.listKeys()).toEqual([]);
    expect(f.get(obj('foo', 0))).toBeUndefined();
  });

  // DF-9
  it('does not add a Sync on resync for a key with a queued delete', () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 5)) });
    f.delete(obj('foo', 10));
    f.resync();
    expect(fmt(f.getByKey('foo'))).toEqual(['Deleted(foo:10)']);
  });

  // DF-10
  it('queues a Sync for every known key on resync', () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 5)) });
    f.resync();
    expect(fmt(f.getByKey('foo'))).toEqual(['Sync(foo:5)']);
  });

  // DF-11
  it('records the delete of a key that is only queued, not known', () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal() });
    f.add(obj('foo', 5));
    f.delete(obj('foo', 6));
    expect(fmt(f.getByKey('foo'))).toEqual(['Added(foo:5)', 'Deleted(foo:6)']);
  });

  // DF-12
  describe('replace makes deletions', () => {
    const known = (): ReturnType<typeof literal> => literal(obj('foo', 5), obj('bar', 6), obj('baz', 7));

    it('dedups a queued delete and skips known keys already queued', async () => {
      const f = new DeltaFIFO<FifoObj>({ knownObjects: known() });
      f.delete(obj('baz', 10));
      f.replace([obj('foo', 5)], '0');
      expect(await drain(f)).toEqual([
        ['baz', ['Deleted(baz:10)']],
        ['foo', ['Sync(foo:5)']],
        ['bar', ['Deleted(DFSU(bar, bar:6))']],
      ]);
    });

    it('deletes a queued add with its queued state', async () => {
      const f = new DeltaFIFO<FifoObj>({ knownObjects: known() });
      f.add(obj('baz', 10));
      f.replace([obj('foo', 5)], '0');
      expect(await drain(f)).toEqual([
        ['baz', ['Added(baz:10)', 'Deleted(DFSU(baz, baz:10))']],
        ['foo', ['Sync(foo:5)']],
        ['bar', ['Deleted(DFSU(bar, bar:6))']],
      ]);
    });

    it('deletes a re-added key with its newest queued state', async () => {
      const f = new DeltaFIFO<FifoObj>({ knownObjects: known() });
      f.delete(obj('bar', 6));
      f.add(obj('bar', 100));
      f.replace([obj('foo', 5)], '0');
      expect(await drain(f)).toEqual([
        ['bar', ['Deleted(bar:6)', 'Added(bar:100)', 'Deleted(DFSU(bar, bar:100))']],
        ['foo', ['Sync(foo:5)']],
        ['baz', ['Deleted(DFSU(baz, baz:7))']],
      ]);
    });

    it('uses the queued state over the known one and tombstones a missing key once', async () => {
      const f = new DeltaFIFO<FifoObj>({ knownObjects: known() });
      f.replace([obj('bar', 100), obj('foo', 5)], '0');
      f.replace([obj('foo', 5)], '0');
      expect(await drain(f)).toEqual([
        ['bar', ['Sync(bar:100)', 'Deleted(DFSU(bar, bar:100))']],
        ['foo', ['Sync(foo:5)', 'Sync(foo:5)']],
        ['baz', ['Deleted(DFSU(baz, baz:7))']],
      ]);
    });

    it('deletes a queued add without knownObjects', async () => {
      const f = new DeltaFIFO<FifoObj>();
      f.add(obj('baz', 10));
      f.replace([obj('foo', 5)], '0');
      expect(await drain(f)).toEqual([
        ['baz', ['Added(baz:10)', 'Deleted(DFSU(baz, baz:10))']],
        ['foo', ['Sync(foo:5)']],
      ]);
    });
  });

  // DF-13
  it('emits Replaced for relisted items when emitDeltaTypeReplaced is on', async () => {
    const f = new DeltaFIFO<FifoObj>({
      knownObjects: literal(obj('foo', 5), obj('bar', 6), obj('baz', 7)),
      emitDeltaTypeReplaced: true,
    });
    f.delete(obj('baz', 10));
    f.replace([obj('foo', 6)], '0');
    expect(await drain(f)).toEqual([
      ['baz', ['Deleted(baz:10)']],
      ['foo', ['Replaced(foo:6)']],
      ['bar', ['Deleted(DFSU(bar, bar:6))']],
    ]);
  });

  // DF-14
  it('emits a single Replaced for a known object that is relisted', async () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 5)), emitDeltaTypeReplaced: true });
    f.replace([obj('foo', 5)], '0');
    expect(fmt(await popOne(f))).toEqual(['Replaced(foo:5)']);
  });

  // DF-15
  it('does not let a resync Sync follow a pending update of the same key', async () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 5)) });
    f.update(obj('foo', 6));
    f.resync();
    expect(fmt(await popOne(f))).toEqual(['Updated(foo:6)']);
  });

  // DF-16
  it('counts inferred deletions toward the initial list before reporting synced', async () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 5), obj('bar', 6), obj('baz', 7)) });
    f.replace([obj('foo', 5)], '0');
    const expected = [['Sync(foo:5)'], ['Deleted(DFSU(bar, bar:6))'], ['Deleted(DFSU(baz, baz:7))']];
    for (const want of expected) {
      expect(f.hasSynced()).toBe(false);
      let initial: boolean | undefined;
      const deltas = await f.pop((_d, isInInitialList) => {
        initial = isInInitialList;
      });
      expect(fmt(deltas)).toEqual(want);
      expect(initial).toBe(true);
    }
    expect(f.hasSynced()).toBe(true);
  });

  // DF-17
  it('keeps a key at its first position however many changes it accumulates', async () => {
    const f = new DeltaFIFO<FifoObj>();
    f.add(obj('foo', 10));
    f.add(obj('bar', 1));
    f.add(obj('foo', 11));
    f.add(obj('foo', 13));
    f.add(obj('zab', 30));
    expect(newestVal(await popOne(f))).toBe(13);
    f.add(obj('foo', 14));
    const vals = [newestVal(await popOne(f)), newestVal(await popOne(f)), newestVal(await popOne(f))];
    expect(vals).toEqual([1, 30, 14]);
  });

  // DF-18
  it('finds the key of an object, a tombstone and a Deltas list', () => {
    const f = new DeltaFIFO<FifoObj>();
    const tomb = (key: string): DeletedFinalStateUnknown<FifoObj> =>
      new DeletedFinalStateUnknown<FifoObj>(key, undefined as unknown as FifoObj);
    expect(f.keyOf(obj('A', 1))).toBe('A');
    expect(f.keyOf(tomb('B'))).toBe('B');
    const deltasC: Deltas<FifoObj> = [{ type: 'Added', object: obj('C', 1) }];
    expect(f.keyOf(deltasC)).toBe('C');
    const deltasD: Deltas<FifoObj> = [{ type: 'Added', object: obj('X', 1) }, { type: 'Deleted', object: tomb('D') }];
    expect(f.keyOf(deltasD)).toBe('D');
  });

  // DF-19
  describe('hasSynced', () => {
    const cases: Array<[string, (f: DeltaFIFO<FifoObj>) => Promise<void>, boolean]> = [
      ['is false on a fresh queue', async () => {}, false],
      ['is true after an add before any replace', async (f) => f.add(obj('a', 1)), true],
      ['is true after an empty replace', async (f) => f.replace([], '0'), true],
      ['is false after a replace with items', async (f) => f.replace([obj('a', 1), obj('b', 2)], '0'), false],
      ['is false after popping some of the initial items', async (f) => {
        f.replace([obj('a', 1), obj('b', 2)], '0');
        await popOne(f);
      }, false],
      ['is true after popping all of the initial items', async (f) => {
        f.replace([obj('a', 1), obj('b', 2)], '0');
        await popOne(f);
        await popOne(f);
      }, true],
      ['counts distinct keys of the initial list', async (f) => {
        f.replace([obj('a', 1), obj('a', 2)], '0');
        await popOne(f);
      }, true],
    ];
    for (const [name, actions, want] of cases) {
      it(name, async () => {
        const f = new DeltaFIFO<FifoObj>();
        await actions(f);
        expect(f.hasSynced()).toBe(want);
      });
    }
  });

  // DF-20
  it('wakes every waiting pop with FIFO_CLOSED when it is closed', async () => {
    const f = new DeltaFIFO<FifoObj>({ knownObjects: literal(obj('foo', 5)) });
    const pops = Array.from({ length: 10 }, () => popOne(f).then(() => 'popped', (e: { code?: string }) => e.code));
    await flushPromises();
    f.close();
    expect(await Promise.all(pops)).toEqual(Array(10).fill('FIFO_CLOSED'));
  });
});
