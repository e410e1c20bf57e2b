// Ported client-go scenarios for Store, ThreadSafeStore and Index (catalogue §8, §9, §10, §20).
//
// Not ported, on purpose: ST-2 and NC-37 (transformers run in the informer before the FIFO, not in the
// store), ST-3 (FIFO; the fifo room), ST-4 (UndeltaStore; not part of kube-informer), ST-7 and the
// Transaction step of TS-4 (client-go's batched Transaction API is not part of the API contract), ST-8
// (store metrics).

import { describe, expect, it } from 'vitest';
import {
  DeletedFinalStateUnknown,
  ErrorCodes,
  InvalidObjectError,
  deletionHandlingMetaNamespaceKeyFunc,
  metaNamespaceKeyFunc,
} from '../../src/core/index.js';
import {
  IndexedStore,
  NamespaceIndex,
  metaNamespaceIndexFunc,
  newIndexer,
  newStore,
  type Indexer,
  type Store,
} from '../../src/store/index.js';

interface TestObj {
  id: string;
  val: string;
}
const obj = (id: string, val: string): TestObj => ({ id, val });
const idKey = (o: unknown): string => (o as TestObj).id;

// The shared doTestStore scenario of store_test.go.
function doTestStore(store: Store<TestObj>): void {
  store.add(obj('foo', 'bar'));
  expect(store.get(obj('foo', ''))?.val).toBe('bar');
  store.update(obj('foo', 'baz'));
  expect(store.get(obj('foo', ''))?.val).toBe('baz');
  store.delete(obj('foo', ''));
  expect(store.get(obj('foo', ''))).toBeUndefined();

  store.add(obj('a', 'b'));
  store.add(obj('c', 'd'));
  store.add(obj('e', 'e'));
  expect(store.list().map((o) => o.val).sort()).toEqual(['b', 'd', 'e']);

  store.replace([obj('foo', 'foo'), obj('bar', 'bar')], '0');
  expect(store.list().map((o) => o.val).sort()).toEqual(['bar', 'foo']);
}

describe('Store (store_test.go)', () => {
  it('adds, updates, gets, deletes, lists and replaces objects on a plain store', () => {
    // ST-1
    doTestStore(newStore<TestObj>(idKey));
  });

  it('finds objects that share an index value', () => {
    // ST-5
    const indexer = newIndexer<TestObj>(idKey, { by_val: (o) => [o.val] });
    for (const [id, val] of [['a', 'b'], ['c', 'b'], ['e', 'f'], ['g', 'h']]) indexer.add(obj(id, val));
    const ids = (val: string): string[] => indexer.index('by_val', obj('', val)).map((o) => o.id).sort();
    expect(ids('b')).toEqual(['a', 'c']);
    expect(ids('f')).toEqual(['e']);
    expect(ids('h')).toEqual(['g']);
  });

  it('keeps the key function error in the cause chain and leaves the store unchanged', () => {
    // ST-6: client-go's KeyError unwraps to the key function's error; here the chain is `cause`.
    const inner = new Error('no id');
    const store = newStore<TestObj>((o) => {
      if ((o as TestObj).id === '') throw inner;
      return (o as TestObj).id;
    });
    store.add(obj('x', '1'));
    let caught: unknown;
    try {
      store.add(obj('', '2'));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InvalidObjectError);
    expect((caught as InvalidObjectError).code).toBe(ErrorCodes.INVALID_OBJECT);
    expect((caught as Error).cause).toBe(inner);
    expect(store.listKeys()).toEqual(['x']);
  });

  it('passes the key function own library errors through unwrapped', () => {
    // ST-6 (library errors already carry a code)
    const store = newStore<unknown>(metaNamespaceKeyFunc);
    expect(() => store.add({ kind: 'Pod' })).toThrow(InvalidObjectError);
    expect(store.list()).toEqual([]);
  });
});

describe('ThreadSafeStore (thread_safe_store_test.go)', () => {
  const selfKey = (o: unknown): string => o as string;

  it('removes an index bucket entirely when its last object is deleted', () => {
    // TS-1
    const store = newIndexer<string>(selfKey, { self: (s) => [s] });
    store.add('testKey');
    expect(store.indexKeys('self', 'testKey')).toEqual(['testKey']);
    store.delete('testKey');
    expect(store.listIndexFuncValues('self')).toEqual([]);
    expect(store.indexKeys('self', 'testKey')).toEqual([]);
  });

  it('keeps a bucket that still has members after a delete', () => {
    // TS-2
    const store = newIndexer<string>(selfKey, { constant: () => ['testIndex'] });
    store.add('retain');
    store.add('delete');
    expect(store.indexKeys('constant', 'testIndex')).toHaveLength(2);
    store.delete('delete');
    expect(store.indexKeys('constant', 'testIndex')).toEqual(['retain']);
    expect(store.listIndexFuncValues('constant')).toEqual(['testIndex']);
  });

  it('moves keys between the buckets of a multi-valued index function on every update and delete', () => {
    // TS-3: objects are [key, "comma,separated,values"] pairs.
    type Entry = [string, string];
    const store = newIndexer<Entry>((e) => (e as Entry)[0], { split: (e) => e[1].split(',') });
    const expectBuckets = (foo: string[], bar: string[], baz: string[]): void => {
      expect(store.indexKeys('split', 'foo')).toEqual(foo);
      expect(store.indexKeys('split', 'bar')).toEqual(bar);
      expect(store.indexKeys('split', 'baz')).toEqual(baz);
      const present = ['foo', 'bar', 'baz'].filter((_, i) => [foo, bar, baz][i].length > 0);
      expect(store.listIndexFuncValues('split').sort()).toEqual(present.sort());
    };
    store.add(['key1', 'foo']);
    store.add(['key2', 'bar']);
    expectBuckets(['key1'], ['key2'], []);
    store.update(['key2', 'foo,bar']);
    expectBuckets(['key1', 'key2'], ['key2'], []);
    store.update(['key1', 'foo,bar']);
    expectBuckets(['key1', 'key2'], ['key1', 'key2'], []);
    store.add(['key3', 'foo,bar,baz']);
    expectBuckets(['key1', 'key2', 'key3'], ['key1', 'key2', 'key3'], ['key3']);
    store.update(['key1', 'foo']);
    expectBuckets(['key1', 'key2', 'key3'], ['key2', 'key3'], ['key3']);
    store.update(['key2', 'bar']);
    expectBuckets(['key1', 'key3'], ['key2', 'key3'], ['key3']);
    store.delete(['key1', '']);
    expectBuckets(['key3'], ['key2', 'key3'], ['key3']);
    store.delete(['key3', '']);
    expectBuckets([], ['key2'], []);
  });

  it('records the resource version of the last write', () => {
    // TS-4 (a), (b), (d); the Transaction step of (b) has no counterpart here.
    const pod = (name: string, rv: string) => ({ metadata: { name, resourceVersion: rv } });
    const store = new IndexedStore<unknown>(deletionHandlingMetaNamespaceKeyFunc);
    expect(store.lastStoreSyncResourceVersion()).toBe('');
    store.add(pod('key1', '10'));
    expect(store.lastStoreSyncResourceVersion()).toBe('10');
    store.add(pod('key3', '10'));
    expect(store.lastStoreSyncResourceVersion()).toBe('10');
    store.add(pod('key4', '20'));
    expect(store.lastStoreSyncResourceVersion()).toBe('20');
    store.delete(pod('key4', '30'));
    expect(store.lastStoreSyncResourceVersion()).toBe('30');
    store.add('explicit-key'); // no metadata
    expect(store.lastStoreSyncResourceVersion()).toBe('30');
    store.add(pod('key6', '40'));
    expect(store.lastStoreSyncResourceVersion()).toBe('40');
    // NC-38: a tombstone does not change it.
    store.delete(new DeletedFinalStateUnknown('key6', pod('key6', '99')));
    expect(store.lastStoreSyncResourceVersion()).toBe('40');
    expect(store.getByKey('key6')).toBeUndefined();
  });

  it('takes the resource version of a replace from its argument, not from the items', () => {
    // TS-4 (c)
    const pod = (name: string, rv: string) => ({ metadata: { name, resourceVersion: rv } });
    const store = new IndexedStore<unknown>(deletionHandlingMetaNamespaceKeyFunc);
    store.add(pod('key1', '10'));
    store.replace([pod('key3', '40'), pod('key2', '30')], '50');
    expect(store.lastStoreSyncResourceVersion()).toBe('50');
  });
});

interface Pod {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}
const pod = (name: string, extra: Partial<Pod['metadata']> = {}): Pod => ({ metadata: { name, namespace: 'ns', ...extra } });

describe('Index (index_test.go)', () => {
  it('lists every distinct value of an index once', () => {
    // IX-1
    const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, { testmodes: (p) => [p.metadata.labels!.foo] });
    indexer.add(pod('one', { labels: { foo: 'bar' } }));
    indexer.add(pod('two', { labels: { foo: 'bar' } }));
    indexer.add(pod('tre', { labels: { foo: 'biz' } }));
    expect(indexer.listIndexFuncValues('testmodes').sort()).toEqual(['bar', 'biz']);
  });

  it('indexes objects under several values and removes stale entries on delete and update', () => {
    // IX-2
    const users = (p: Pod): string[] => p.metadata.annotations!.users.split(',');
    const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, { byUser: users });
    const one = pod('one', { annotations: { users: 'ernie,bert' } });
    const two = pod('two', { annotations: { users: 'bert,oscar' } });
    const tre = pod('tre', { annotations: { users: 'ernie,elmo' } });
    for (const p of [one, two, tre]) indexer.add(p);
    const names = (user: string): string[] => indexer.byIndex('byUser', user).map((p) => p.metadata.name).sort();
    expect(names('ernie')).toEqual(['one', 'tre']);
    expect(names('bert')).toEqual(['one', 'two']);
    expect(names('elmo')).toEqual(['tre']);
    expect(names('oscar')).toEqual(['two']);
    expect(names('elmo1')).toEqual([]);

    indexer.delete(tre);
    expect(names('ernie')).toEqual(['one']);
    expect(names('elmo')).toEqual([]);

    const twoCopy = structuredClone(two);
    twoCopy.metadata.annotations!.users = 'oscar';
    indexer.update(twoCopy);
    expect(names('bert')).toEqual(['one']);
    expect(names('oscar')).toEqual(['two']);
  });
});

describe('Store and Indexer behaviour no client-go test covers (§20)', () => {
  it('throws UNKNOWN_INDEX naming the index for every query on an unknown index', () => {
    // NC-34
    const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, { [NamespaceIndex]: metaNamespaceIndexFunc });
    const p = pod('a');
    indexer.add(p);
    const queries: Array<() => unknown> = [
      () => indexer.index('nope', p),
      () => indexer.indexKeys('nope', 'x'),
      () => indexer.listIndexFuncValues('nope'),
      () => indexer.byIndex('nope', 'x'),
    ];
    for (const q of queries) {
      expect(q).toThrow(expect.objectContaining({ code: ErrorCodes.UNKNOWN_INDEX, indexName: 'nope' }));
      expect(q).toThrow(/"nope" does not exist.*"namespace"/);
    }
  });

  it('throws INDEX_FUNC_FAILED naming the index and key when an index function throws', () => {
    // NC-34 (client-go panics here)
    const boom = new Error('boom');
    const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, {
      bad: (o) => {
        if (o.metadata.name === 'b') throw boom;
        return ['v'];
      },
    });
    indexer.add(pod('a'));
    expect(() => indexer.add(pod('b'))).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX_FUNC_FAILED, indexName: 'bad', key: 'ns/b', cause: boom }),
    );
    expect(() => indexer.add(pod('b'))).toThrow(/index function "bad" failed for key "ns\/b".*boom/);
    expect(indexer.listKeys()).toEqual(['ns/a']);
  });

  it('returns the union of the buckets of every value of a multi-valued object, without duplicates', () => {
    // NC-35
    const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, { byUser: (p) => (p.metadata.labels?.users ?? '').split('.') });
    indexer.add(pod('one', { labels: { users: 'ernie.bert' } }));
    indexer.add(pod('two', { labels: { users: 'bert.oscar' } }));
    indexer.add(pod('tre', { labels: { users: 'elmo' } }));
    const names = indexer.index('byUser', pod('q', { labels: { users: 'ernie.bert.oscar' } })).map((p) => p.metadata.name);
    expect(names.sort()).toEqual(['one', 'two']);
  });

  it('rebuilds every index on replace', () => {
    // NC-36
    const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, {
      [NamespaceIndex]: metaNamespaceIndexFunc,
      byTier: (p) => [p.metadata.labels?.tier ?? 'none'],
    });
    indexer.add(pod('old', { namespace: 'gone' }));
    const items = [
      pod('a', { namespace: 'x', labels: { tier: 'web' } }),
      pod('b', { namespace: 'y' }),
      pod('a', { namespace: 'x', labels: { tier: 'db' } }), // same key: the later one wins
    ];
    indexer.replace(items, '7');
    expect(indexer.listIndexFuncValues(NamespaceIndex).sort()).toEqual(['x', 'y']);
    expect(indexer.byIndex(NamespaceIndex, 'gone')).toEqual([]);
    expect(indexer.listIndexFuncValues('byTier').sort()).toEqual(['db', 'none']);
    expect(indexer.byIndex('byTier', 'db')).toEqual([items[2]]);
    expect(indexer.listKeys().sort()).toEqual(['x/a', 'y/b']);
  });

  it('indexes cluster-scoped objects under the empty namespace', () => {
    const indexer: Indexer<Pod> = newIndexer<Pod>(metaNamespaceKeyFunc, { [NamespaceIndex]: metaNamespaceIndexFunc });
    indexer.add({ metadata: { name: 'node-1' } });
    expect(indexer.indexKeys(NamespaceIndex, '')).toEqual(['node-1']);
  });

  it('treats add and update as the same upsert, and deleting a missing key as a no-op', () => {
    const store = newStore<TestObj>(idKey);
    store.update(obj('a', '1'));
    store.add(obj('a', '2'));
    expect(store.list()).toEqual([obj('a', '2')]);
    store.delete(obj('missing', ''));
    store.resync();
    expect(store.listKeys()).toEqual(['a']);
    expect(store.getByKey('a')).toEqual(obj('a', '2'));
  });

  it('returns indexKeys sorted and getIndexers as a copy', () => {
    const indexer = newIndexer<TestObj>(idKey, { all: () => ['x'] });
    for (const id of ['c', 'a', 'b']) indexer.add(obj(id, ''));
    expect(indexer.indexKeys('all', 'x')).toEqual(['a', 'b', 'c']);
    const copy = indexer.getIndexers();
    delete copy.all;
    expect(Object.keys(indexer.getIndexers())).toEqual(['all']);
  });
});
