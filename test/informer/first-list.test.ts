// A fresh first list taken whole (informer/first-list.ts) against the one-by-one hand-over it replaces:
// on random lists, pages, stagings and stores, both leave the same indexer (keys, the very objects, the
// resource version), make the same handler calls in the same order and the same queue state.

import { describe, expect, it } from 'vitest';
import { metaNamespaceKeyFunc } from '../../src/core/index.js';
import { DeltaFIFO, setFirstListSink, stageListPage } from '../../src/fifo/delta-fifo.js';
import { processDeltas, type DeltaHandler } from '../../src/informer/controller.js';
import { FirstList } from '../../src/informer/perf/first-list.js';
import { newIndexer, type IndexedStore } from '../../src/store/store.js';
import type { Indexers } from '../../src/store/types.js';
import { prng, type FifoObj } from '../fifo/helpers.js';

interface World {
  fifo: DeltaFIFO<FifoObj>;
  indexer: IndexedStore<FifoObj>;
  log: string[];
  parked: { settled: string };
  took: { count: number; newest: Array<string | undefined> };
}

const name = (o: unknown): string => (o as FifoObj).metadata.name;

/** Index functions: none, one, or two (one with several values per object); `failVal` makes them throw for that `val`. */
function indexers(indexed: number, failVal: number | undefined): Indexers<FifoObj> {
  const check = (o: FifoObj): void => {
    if (o.val === failVal) throw new Error(`no index for ${o.val}`);
  };
  const byVal = (o: FifoObj): string[] => (check(o), [String(o.val % 3)]);
  const byDigits = (o: FifoObj): string[] => (check(o), o.val % 4 === 0 ? [] : [...new Set(String(o.val).split(''))]);
  return indexed === 0 ? {} : indexed === 1 ? { byVal } : { byVal, byDigits };
}

function world(withSink: boolean, eligible: () => boolean, indexed: number, known: FifoObj[], failOn?: string, failVal?: number): World {
  const indexer = newIndexer<FifoObj>(metaNamespaceKeyFunc, indexers(indexed, failVal)) as IndexedStore<FifoObj>;
  for (const o of known) indexer.add(o);
  const log: string[] = [];
  const handler: DeltaHandler<FifoObj> = {
    onAdd: (o, initial) => {
      if (name(o) === failOn) throw new Error(`no add for ${failOn}`);
      log.push(`add ${name(o)}:${o.val}${initial ? ' initial' : ''}`);
    },
    onUpdate: (old, o, isSync) => void log.push(`update ${name(old)}:${old.val}->${o.val}${isSync ? ' sync' : ''}`),
    onDelete: (o) => void log.push(`delete ${name(o)}`),
  };
  const fifo = new DeltaFIFO<FifoObj>({ knownObjects: indexer, emitDeltaTypeReplaced: true });
  const took = { count: 0, newest: [] as Array<string | undefined> };
  if (withSink) {
    const sink = new FirstList<FifoObj>({
      indexer,
      eligible,
      onAdded: (objects, initial, newest) => {
        took.newest.push(newest);
        for (const o of objects) void handler.onAdd(o, initial);
      },
    });
    setFirstListSink(fifo, {
      stage: (page, keys, from) => sink.stage(page, keys, from),
      drop: () => sink.drop(),
      take: (keys, objects, staged, initial) => {
        const ok = sink.take(keys, objects, staged, initial);
        if (ok) took.count++;
        return ok;
      },
    });
  }
  const parked = { settled: 'pending' };
  fifo.park((deltas, initial, key) => processDeltas(handler, indexer, deltas, initial, key)).then(
    () => (parked.settled = 'resolved'),
    (err: unknown) => (parked.settled = `rejected ${String(err)}`),
  );
  return { fifo, indexer, log, parked, took };
}

/** The highest comparable resource version among `items`, by BigInt: the reference for `onAdded`'s `newest`. */
function newestOf(items: FifoObj[]): string | undefined {
  let best: string | undefined;
  for (const o of items) {
    const rv = o.metadata.resourceVersion;
    if (rv === undefined || !/^(0|[1-9][0-9]*)$/.test(rv)) continue;
    if (best === undefined || BigInt(rv) > BigInt(best)) best = rv;
  }
  return best;
}

function snapshot(w: World): unknown {
  const indices = Object.keys(w.indexer.getIndexers()).map((name) => {
    const values = w.indexer.listIndexFuncValues(name);
    return [name, values, values.map((v) => w.indexer.indexKeys(name, v)), w.indexer.listKeys().map((k) => w.indexer.indexValuesOf(name, k))];
  });
  return {
    indices,
    keys: w.indexer.listKeys(),
    objects: w.indexer.listKeys().map((k) => w.indexer.getByKey(k)),
    rv: w.indexer.lastStoreSyncResourceVersion(),
    log: w.log,
    synced: w.fifo.hasSynced(),
    queued: w.fifo.size,
  };
}

describe('FirstList: a fresh first list taken whole', () => {
  it('matches the one-by-one hand-over on 400 random lists, pagings, stagings, stores and indices', async () => {
    const rand = prng(Number(process.env.SEED ?? 20261128));
    const pick = (n: number): number => Math.floor(rand() * n);
    let tookWhole = 0;
    for (let run = 0; run < 400; run++) {
      const n = pick(40);
      const names = Array.from({ length: n }, (_, i) => `o${rand() < 0.05 && i > 0 ? pick(i) : i}`);
      const items: FifoObj[] = names.map((nm, i) => {
        const o: FifoObj = { metadata: { name: nm }, val: i };
        const r = rand();
        // Versions out of list order, of different lengths, and some not decimal (not comparable).
        if (r < 0.6) o.metadata.resourceVersion = String(100 + pick(2000));
        else if (r < 0.7) o.metadata.resourceVersion = String(pick(10));
        else if (r < 0.75) o.metadata.resourceVersion = rand() < 0.5 ? `0${pick(5000)}` : `v${pick(5000)}`;
        else if (r < 0.85) o.metadata.resourceVersion = '';
        return o;
      });
      const known = rand() < 0.15 ? [{ metadata: { name: 'k1', resourceVersion: '5' }, val: -1 }] : [];
      const indexed = pick(3);
      // Sometimes an index function throws for one listed object: the one-by-one path stops there.
      const failVal = indexed > 0 && n > 0 && rand() < 0.15 ? pick(n) : undefined;
      const ok = rand() < 0.85;
      const eligible = (): boolean => ok;
      const a = world(true, eligible, indexed, known, undefined, failVal);
      const b = world(false, eligible, indexed, known, undefined, failVal);
      // Stage some pages of the list (every page but the last, as the reflector does), sometimes with a
      // failed list before, a drop, or other objects in the final list than were staged.
      const script: Array<() => void> = [];
      if (rand() < 0.2) script.push(() => stageListPage(a.fifo, items.slice(0, 3), true), () => stageListPage(b.fifo, items.slice(0, 3), true));
      if (rand() < 0.1) script.push(() => stageListPage(a.fifo, undefined, false), () => stageListPage(b.fifo, undefined, false));
      const pageSize = 1 + pick(12);
      let final = items;
      if (rand() < 0.8) {
        for (let from = 0; from + pageSize < n; from += pageSize) {
          const page = items.slice(from, from + pageSize);
          script.push(() => stageListPage(a.fifo, page, from === 0), () => stageListPage(b.fifo, page, from === 0));
        }
        if (rand() < 0.15 && n > 0) {
          // The list that ends is not the one staged from some point on (a new object at that place).
          const at = pick(n);
          final = items.map((o, i) => (i === at ? { ...o, metadata: { ...o.metadata } } : o));
        }
      }
      for (const step of script) step();
      a.fifo.replace(final, '999');
      b.fifo.replace(final, '999');
      await Promise.resolve();
      expect(snapshot(a), `run ${run}`).toEqual(snapshot(b));
      expect(a.parked.settled, `run ${run}`).toBe(b.parked.settled);
      // The very same objects, not equal copies.
      for (const k of a.indexer.listKeys()) expect(a.indexer.getByKey(k)).toBe(b.indexer.getByKey(k));
      // It takes a list whole exactly when the one-by-one path would only add.
      const fresh = known.length === 0 && ok && n > 0 && new Set(names).size === n && !final.some((o) => o.val === failVal);
      expect(a.took.count, `run ${run}`).toBe(fresh ? 1 : 0);
      // The watermark it hands on: the highest decimal resource version of the list, read while staging.
      if (fresh) expect(a.took.newest, `run ${run}`).toEqual([newestOf(final)]);
      tookWhole += a.took.count;
      // After the list, both queues take changes the same way.
      a.fifo.update({ metadata: { name: 'o0', resourceVersion: '1000' }, val: 1000 });
      b.fifo.update({ metadata: { name: 'o0', resourceVersion: '1000' }, val: 1000 });
      expect(snapshot(a), `run ${run} after`).toEqual(snapshot(b));
    }
    expect(tookWhole).toBeGreaterThan(100);
  });

  it('lets go of the staged map when the list fails, and a relist over a full store goes one by one', () => {
    const a = world(true, () => true, 0, []);
    const page = [
      { metadata: { name: 'a', resourceVersion: '1' }, val: 1 },
      { metadata: { name: 'b', resourceVersion: '2' }, val: 2 },
    ];
    stageListPage(a.fifo, page, true);
    stageListPage(a.fifo, undefined, false);
    // A different first list: nothing of the dropped staging may show.
    const other = [{ metadata: { name: 'c', resourceVersion: '3' }, val: 3 }];
    a.fifo.replace(other, '10');
    expect(a.indexer.listKeys()).toEqual(['c']);
    expect(a.took.count).toBe(1);
    expect(a.log).toEqual(['add c:3 initial']);
    // A relist over a store that holds something is queued as before: a, b replaced, c deleted.
    a.fifo.replace(page, '11');
    expect(a.took.count).toBe(1);
    expect(a.fifo.size).toBe(3);
    expect(a.indexer.listKeys()).toEqual(['c']);
  });

  it('asks again at the end of the list whether it may take it whole (someone began to wait meanwhile)', () => {
    const page = [0, 1, 2].map((i) => ({ metadata: { name: `p${i}`, resourceVersion: String(10 + i) }, val: i }));
    let ok = true;
    const a = world(true, () => ok, 0, []);
    stageListPage(a.fifo, page.slice(0, 2), true);
    ok = false;
    a.fifo.replace(page, '20');
    expect(a.took.count).toBe(0);
    expect(a.indexer.listKeys()).toEqual(['p0', 'p1', 'p2']);
    expect(a.log).toEqual(['add p0:0 initial', 'add p1:1 initial', 'add p2:2 initial']);
  });

  it('builds the indices while staging, and goes one by one when an index was added to the store meanwhile', () => {
    const page = [0, 1, 2, 3].map((i) => ({ metadata: { name: `p${i}`, resourceVersion: String(10 + i) }, val: i }));
    const a = world(true, () => true, 1, []);
    stageListPage(a.fifo, page.slice(0, 2), true);
    a.fifo.replace(page, '20');
    expect(a.took.count).toBe(1);
    expect(a.indexer.indexKeys('byVal', '0')).toEqual(['p0', 'p3']);
    expect(a.indexer.indexKeys('byVal', '1')).toEqual(['p1']);

    const b = world(true, () => true, 1, []);
    stageListPage(b.fifo, page.slice(0, 2), true);
    b.indexer.addIndexers({ odd: (o) => (o.val % 2 === 1 ? ['odd'] : []) });
    b.fifo.replace(page, '20');
    expect(b.took.count).toBe(0);
    expect(b.indexer.listKeys()).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(b.indexer.indexKeys('odd', 'odd')).toEqual(['p1', 'p3']);
    expect(b.indexer.indexKeys('byVal', '0')).toEqual(['p0', 'p3']);
  });

  it('hands the consumer a failure of its own processing, as the one-by-one path does, and never syncs', async () => {
    const items = ['a', 'b', 'c'].map((nm, i) => ({ metadata: { name: nm, resourceVersion: String(i + 1) }, val: i }));
    const a = world(true, () => true, 0, [], 'b');
    const b = world(false, () => true, 0, [], 'b');
    a.fifo.replace(items, '10');
    b.fifo.replace(items, '10');
    await Promise.resolve();
    expect(a.parked.settled).toBe('rejected Error: no add for b');
    expect(b.parked.settled).toBe(a.parked.settled);
    expect(a.log).toEqual(['add a:0 initial']);
    expect(b.log).toEqual(a.log);
    expect(a.fifo.hasSynced()).toBe(false);
    expect(b.fifo.hasSynced()).toBe(false);
    // The turn is free again: a change is queued for the next pop, not lost and not stuck.
    a.fifo.update({ metadata: { name: 'a', resourceVersion: '11' }, val: 11 });
    expect(a.fifo.size).toBe(1);
  });
});
