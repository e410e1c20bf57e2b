// The keys of a paged list's pages computed while the next page is on its way (stageListPage): replace
// uses a staged key only for the very object it was computed for, at the same place; anything else is
// computed as before, and a key function that throws is met by replace itself.

import { describe, expect, it } from 'vitest';
import { metaNamespaceKeyFunc } from '../../src/core/index.js';
import { DeltaFIFO, stageListPage } from '../../src/fifo/delta-fifo.js';
import { fmt, literal, obj, type FifoObj } from './helpers.js';

/** A FIFO whose key function counts the objects it keyed, by name. */
function counting(options: { knownObjects?: ReturnType<typeof literal>; failOn?: string } = {}): { fifo: DeltaFIFO<FifoObj>; keyed: string[] } {
  const keyed: string[] = [];
  const fifo = new DeltaFIFO<FifoObj>({
    knownObjects: options.knownObjects,
    emitDeltaTypeReplaced: true,
    keyFunc: (o) => {
      const name = (o as FifoObj).metadata.name;
      keyed.push(name);
      if (name === options.failOn) throw new Error(`no key for ${name}`);
      return metaNamespaceKeyFunc(o);
    },
  });
  return { fifo, keyed };
}

function drain(fifo: DeltaFIFO<FifoObj>): string[] {
  const out: string[] = [];
  for (let taken = fifo.tryPop((d) => void out.push(...(fmt(d) ?? []))); taken !== undefined; taken = fifo.tryPop((d) => void out.push(...(fmt(d) ?? [])))) {
    // tryPop ran the process function synchronously
  }
  return out;
}

describe('DeltaFIFO: staged list pages', () => {
  it('keys each staged object once: replace computes only the keys of the pages it was not offered', () => {
    const { fifo, keyed } = counting();
    const page1 = [obj('a', 1), obj('b', 2)];
    const page2 = [obj('c', 3), obj('d', 4)];
    const last = [obj('e', 5)];
    stageListPage(fifo, page1, true);
    stageListPage(fifo, page2, false);
    expect(keyed).toEqual(['a', 'b', 'c', 'd']);
    fifo.replace([...page1, ...page2, ...last], '10');
    expect(keyed).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(drain(fifo)).toEqual(['Replaced(a:1)', 'Replaced(b:2)', 'Replaced(c:3)', 'Replaced(d:4)', 'Replaced(e:5)']);
    expect(fifo.hasSynced()).toBe(true);
  });

  it('uses a staged key only for the same object at the same place, and computes the rest', () => {
    const { fifo, keyed } = counting();
    const page1 = [obj('a', 1), obj('b', 2)];
    const page2 = [obj('c', 3), obj('d', 4)];
    stageListPage(fifo, page1, true);
    stageListPage(fifo, page2, false);
    keyed.length = 0;
    // An equal but different object at the third place: from there on, every key is computed again.
    const items = [page1[0], page1[1], obj('c', 3), page2[1]];
    fifo.replace(items, '10');
    expect(keyed).toEqual(['c', 'd']);
    expect(drain(fifo)).toEqual(['Replaced(a:1)', 'Replaced(b:2)', 'Replaced(c:3)', 'Replaced(d:4)']);
  });

  it('uses the staging once: a second replace computes every key', () => {
    const { fifo, keyed } = counting();
    const page = [obj('a', 1), obj('b', 2)];
    stageListPage(fifo, page, true);
    fifo.replace(page, '10');
    keyed.length = 0;
    fifo.replace(page, '11');
    expect(keyed).toEqual(['a', 'b']);
  });

  it('starts over on a first page, ignores a later page without one, and lets go on undefined', () => {
    const { fifo, keyed } = counting();
    stageListPage(fifo, [obj('x', 1)], false); // no list in progress: ignored
    expect(keyed).toEqual([]);
    const old = [obj('a', 1)];
    stageListPage(fifo, old, true);
    const fresh = [obj('b', 2)];
    stageListPage(fifo, fresh, true); // a new list: the old staging is gone
    stageListPage(fifo, undefined, false);
    keyed.length = 0;
    fifo.replace(fresh, '10');
    expect(keyed).toEqual(['b']);
  });

  it('leaves a key function that throws to replace: the same error, and nothing queued', () => {
    const { fifo, keyed } = counting({ failOn: 'b' });
    const page1 = [obj('a', 1), obj('b', 2)];
    const page2 = [obj('c', 3)];
    stageListPage(fifo, page1, true);
    stageListPage(fifo, page2, false); // the staging was dropped at b: this page is ignored
    expect(keyed).toEqual(['a', 'b']);
    expect(() => fifo.replace([...page1, ...page2], '10')).toThrow(/couldn't compute the key of .*"name":"b"/);
    expect(fifo.size).toBe(0);
    expect(fifo.hasSynced()).toBe(false);
  });

  it('computes the deletions of a relist from staged keys as from computed ones', () => {
    const known = literal(obj('a', 0), obj('gone', 0));
    const { fifo } = counting({ knownObjects: known });
    const page = [obj('a', 1)];
    stageListPage(fifo, page, true);
    fifo.replace([...page, obj('b', 2)], '10');
    expect(drain(fifo)).toEqual(['Replaced(a:1)', 'Replaced(b:2)', 'Deleted(DFSU(gone, gone:0))']);
  });
});
