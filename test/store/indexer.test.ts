// Indexer guarantees beyond client-go: atomic writes, snapshot reads, addIndexers, no stale buckets.

import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/index.js';
import {
  IndexFuncError,
  IndexedStore,
  IndexerConflictError,
  newIndexer,
  type Indexer,
  type Indexers,
} from '../../src/store/index.js';

interface Item {
  id: string;
  tags: string[];
  owner?: string;
}
const item = (id: string, tags: string[], owner?: string): Item => ({ id, tags, owner });
const key = (o: unknown): string => (o as Item).id;

const indexers: Indexers<Item> = {
  byTag: (o) => o.tags,
  byOwner: (o) => (o.owner === undefined ? [] : [o.owner]),
  byFirst: (o) => [o.id.slice(0, 1)],
};

/** Everything observable about an indexer, in a canonical form. */
function stateOf(store: Indexer<Item>): unknown {
  const names = Object.keys(store.getIndexers()).sort();
  return {
    items: store.listKeys().sort().map((k) => [k, store.getByKey(k)]),
    indices: names.map((n) => [
      n,
      store
        .listIndexFuncValues(n)
        .sort()
        .map((v) => [v, store.indexKeys(n, v)]),
    ]),
  };
}

function filled(): Indexer<Item> {
  const store = newIndexer<Item>(key, indexers);
  store.add(item('a1', ['x', 'y'], 'ann'));
  store.add(item('b1', ['y']));
  store.add(item('a2', [], 'bob'));
  return store;
}

function catchError(fn: () => void): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('atomic writes', () => {
  const failing = (when: (o: Item) => boolean): Indexers<Item> => ({
    late: (o) => {
      if (when(o)) throw new Error('late index exploded');
      return [o.id];
    },
  });

  it('leaves the store and every index unchanged when the last index function throws on an add', () => {
    const store = filled();
    store.addIndexers(failing((o) => o.id === 'c1'));
    const before = stateOf(store);
    const err = catchError(() => store.add(item('c1', ['x', 'z'], 'ann')));
    expect(err).toBeInstanceOf(IndexFuncError);
    expect(err).toMatchObject({ code: ErrorCodes.INDEX_FUNC_FAILED, indexName: 'late', key: 'c1' });
    expect((err as Error).message).toMatch(/"late".*"c1".*late index exploded/);
    expect(((err as Error).cause as Error).message).toBe('late index exploded');
    expect(stateOf(store)).toEqual(before);
  });

  it('leaves the previous object and its index entries in place when an update fails', () => {
    const store = filled();
    store.addIndexers(failing((o) => o.tags.includes('boom')));
    const before = stateOf(store);
    expect(() => store.update(item('a1', ['boom'], 'zed'))).toThrow(IndexFuncError);
    expect(stateOf(store)).toEqual(before);
    expect(store.byIndex('byTag', 'x').map((o) => o.id)).toEqual(['a1']);
  });

  it('leaves everything unchanged when replace meets a throwing index function halfway', () => {
    const store = filled();
    store.addIndexers(failing((o) => o.id === 'r3'));
    const before = stateOf(store);
    const items = [item('r1', ['q']), item('r2', ['q']), item('r3', ['q']), item('r4', ['q'])];
    expect(() => store.replace(items, '9')).toThrow(expect.objectContaining({ key: 'r3', indexName: 'late' }));
    expect(stateOf(store)).toEqual(before);
  });

  it('rejects an index function result that is not an array of strings, changing nothing', () => {
    const store = filled();
    const before = stateOf(store);
    store.addIndexers({ odd: (o) => (o.id === 'z' ? ([1] as unknown as string[]) : o.id === 'y' ? (null as unknown as string[]) : []) });
    const withOdd = stateOf(store);
    expect(() => store.add(item('z', []))).toThrow(/"odd".*"z".*non-string/);
    expect(() => store.add(item('y', []))).toThrow(/"odd".*"y".*not an array/);
    expect(stateOf(store)).toEqual(withOdd);
    expect(before).not.toEqual(withOdd); // the new index shows in the state
  });

  it('leaves everything unchanged when the key function throws', () => {
    const store = filled();
    const before = stateOf(store);
    expect(() => store.add({ tags: ['x'] } as unknown as Item)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OBJECT }));
    expect(stateOf(store)).toEqual(before);
  });
});

describe('index maintenance', () => {
  it('moves an updated object between index values and drops emptied buckets', () => {
    const store = filled();
    store.update(item('a1', ['z'], 'bob'));
    expect(store.listIndexFuncValues('byTag').sort()).toEqual(['y', 'z']);
    expect(store.indexKeys('byTag', 'y')).toEqual(['b1']);
    expect(store.listIndexFuncValues('byOwner').sort()).toEqual(['bob']);
    expect(store.indexKeys('byOwner', 'bob')).toEqual(['a1', 'a2']);
  });

  it('removes a deleted object from every index', () => {
    const store = filled();
    store.delete(item('a1', []));
    expect(store.listIndexFuncValues('byTag')).toEqual(['y']);
    expect(store.listIndexFuncValues('byOwner')).toEqual(['bob']);
    expect(store.indexKeys('byFirst', 'a')).toEqual(['a2']);
  });

  it('counts a value an index function returns twice only once', () => {
    const store = newIndexer<Item>(key, indexers);
    store.add(item('d', ['x', 'x', 'y', 'x']));
    expect(store.indexKeys('byTag', 'x')).toEqual(['d']);
    expect((store as IndexedStore<Item>).indexValuesOf('byTag', 'd')).toEqual(['x', 'y']);
    store.update(item('d', ['x', 'x']));
    expect(store.listIndexFuncValues('byTag')).toEqual(['x']);
  });

  it('keeps its index correct when a stored object was changed in place before the next update', () => {
    // A user bug client-go cannot survive: the old index values are no longer derivable.
    const store = newIndexer<Item>(key, indexers);
    const stored = item('m', ['x'], 'ann');
    store.add(stored);
    stored.tags = ['y']; // mutates the cached object
    stored.owner = 'bob';
    store.update(item('m', ['y'], 'bob')); // the server echoes the change back
    expect(store.listIndexFuncValues('byTag')).toEqual(['y']);
    expect(store.listIndexFuncValues('byOwner')).toEqual(['bob']);
    store.delete(item('m', []));
    expect(store.listIndexFuncValues('byTag')).toEqual([]);
  });

  it('still removes an object whose index function now throws on the stored object', () => {
    let broken = false;
    const store = newIndexer<Item>(key, {
      flaky: (o) => {
        if (broken) throw new Error('flaky');
        return [o.id];
      },
    });
    store.add(item('f', []));
    broken = true;
    store.delete(item('f', []));
    expect(store.listKeys()).toEqual([]);
    expect(store.listIndexFuncValues('flaky')).toEqual([]);
  });
});

describe('snapshots', () => {
  it('never changes an array it already returned', () => {
    const store = filled();
    const list = store.list();
    const keys = store.listKeys();
    const byTag = store.byIndex('byTag', 'y');
    const index = store.index('byTag', item('q', ['x', 'y']));
    const indexKeys = store.indexKeys('byTag', 'y');
    const values = store.listIndexFuncValues('byTag');
    const copies = structuredClone({ list, keys, byTag, index, indexKeys, values });
    store.add(item('n1', ['y', 'new']));
    store.delete(item('b1', []));
    store.update(item('a1', []));
    store.replace([item('only', ['w'])], '2');
    expect({ list, keys, byTag, index, indexKeys, values }).toEqual(copies);
  });

  it('allows writing while iterating over a returned list', () => {
    const store = filled();
    const seen: string[] = [];
    for (const o of store.list()) {
      seen.push(o.id);
      store.delete(o);
      store.add(item(`${o.id}-next`, o.tags));
    }
    expect(seen.sort()).toEqual(['a1', 'a2', 'b1']);
    expect(store.listKeys().sort()).toEqual(['a1-next', 'a2-next', 'b1-next']);
  });
});

describe('addIndexers', () => {
  it('adds indexers to an empty store and indexes later objects', () => {
    const store = newIndexer<Item>(key, {});
    store.addIndexers({ byTag: indexers.byTag });
    store.add(item('a', ['x']));
    expect(store.indexKeys('byTag', 'x')).toEqual(['a']);
  });

  it('indexes the objects already stored', () => {
    // NC-36 (AddIndexers on a non-empty store)
    const store = newIndexer<Item>(key, {});
    store.add(item('a', ['x']));
    store.add(item('b', ['x', 'y']));
    store.addIndexers({ byTag: indexers.byTag, byFirst: indexers.byFirst });
    expect(store.indexKeys('byTag', 'x')).toEqual(['a', 'b']);
    expect(store.indexKeys('byFirst', 'b')).toEqual(['b']);
    expect(Object.keys(store.getIndexers()).sort()).toEqual(['byFirst', 'byTag']);
  });

  it('refuses a name that exists with INDEXER_CONFLICT and adds none of the batch', () => {
    const store = filled();
    const before = stateOf(store);
    const err = catchError(() => store.addIndexers({ fresh: (o) => [o.id], byTag: (o) => o.tags }));
    expect(err).toBeInstanceOf(IndexerConflictError);
    expect(err).toMatchObject({ code: ErrorCodes.INDEXER_CONFLICT, indexName: 'byTag' });
    expect(stateOf(store)).toEqual(before);
    expect(() => store.byIndex('fresh', 'a1')).toThrow(expect.objectContaining({ code: ErrorCodes.UNKNOWN_INDEX }));
  });

  it('adds none of the batch when a new function throws on an existing object', () => {
    const store = filled();
    const before = stateOf(store);
    const err = catchError(() =>
      store.addIndexers({
        ok: (o) => [o.id],
        bad: (o) => {
          if (o.id === 'b1') throw new Error('cannot index b1');
          return [];
        },
      }),
    );
    expect(err).toMatchObject({ code: ErrorCodes.INDEX_FUNC_FAILED, indexName: 'bad', key: 'b1' });
    expect(stateOf(store)).toEqual(before);
    expect(Object.keys(store.getIndexers()).sort()).toEqual(['byFirst', 'byOwner', 'byTag']);
  });

  it('rejects an indexer that is not a function', () => {
    const store = filled();
    expect(() => store.addIndexers({ nope: 'x' as unknown as () => string[] })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(() => newIndexer<Item>(key, { nope: 1 as unknown as () => string[] })).toThrow(/"nope"/);
  });
});
