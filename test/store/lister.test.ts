// Lister tests: list/get across and within namespaces, selectors, with and without the namespace index.

import { describe, expect, it } from 'vitest';
import { ErrorCodes, metaNamespaceKeyFunc, type DeepReadonly } from '../../src/core/index.js';
import {
  NamespaceIndex,
  SelectorParseError,
  metaNamespaceIndexFunc,
  newIndexer,
  newLister,
  newStore,
  parseLabelSelector,
  type Indexer,
  type Lister,
} from '../../src/store/index.js';

interface Pod {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: { node?: string };
}
const pod = (namespace: string, name: string, labels?: Record<string, string>): Pod => ({
  metadata: { name, namespace: namespace || undefined, labels },
});

const pods = [
  pod('a', 'web-1', { app: 'web', tier: 'front' }),
  pod('a', 'web-2', { app: 'web', tier: 'back' }),
  pod('a', 'db-1', { app: 'db' }),
  pod('b', 'web-1', { app: 'web' }),
  pod('b', 'plain'),
  pod('', 'cluster-thing', { app: 'web' }),
];

const names = (list: readonly DeepReadonly<Pod>[]): string[] =>
  list.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`).sort();

function withIndex(): Indexer<Pod> {
  const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, { [NamespaceIndex]: metaNamespaceIndexFunc });
  for (const p of pods) indexer.add(p);
  return indexer;
}

function withoutIndex(): Indexer<Pod> {
  const indexer = newIndexer<Pod>(metaNamespaceKeyFunc, {});
  for (const p of pods) indexer.add(p);
  return indexer;
}

for (const [what, make] of [
  ['an indexer with the namespace index', withIndex],
  ['an indexer without it', withoutIndex],
  ['a plain store', () => {
    const store = newStore<Pod>(metaNamespaceKeyFunc);
    for (const p of pods) store.add(p);
    return store;
  }],
] as const) {
  describe(`newLister over ${what}`, () => {
    const lister: Lister<Pod> = newLister(make());

    it('lists everything when no selector is given, and for the empty selector', () => {
      expect(lister.list()).toHaveLength(pods.length);
      expect(lister.list('')).toHaveLength(pods.length);
      expect(lister.list({})).toHaveLength(pods.length);
    });

    it('filters by a selector given as text, record or parsed selector', () => {
      const expected = ['/cluster-thing', 'a/web-1', 'a/web-2', 'b/web-1'];
      expect(names(lister.list('app=web'))).toEqual(expected);
      expect(names(lister.list({ app: 'web' }))).toEqual(expected);
      expect(names(lister.list(parseLabelSelector('app in (web)')))).toEqual(expected);
      expect(names(lister.list('!app'))).toEqual(['b/plain']);
    });

    it('lists one namespace, with and without a selector', () => {
      expect(names(lister.namespace('a').list())).toEqual(['a/db-1', 'a/web-1', 'a/web-2']);
      expect(names(lister.namespace('a').list('tier'))).toEqual(['a/web-1', 'a/web-2']);
      expect(names(lister.namespace('b').list('app=web'))).toEqual(['b/web-1']);
      expect(lister.namespace('nowhere').list()).toEqual([]);
    });

    it('reads the empty namespace as all namespaces', () => {
      expect(lister.namespace('').list()).toHaveLength(pods.length);
      expect(names(lister.namespace('').list('tier=back'))).toEqual(['a/web-2']);
    });

    it('gets objects by namespace and name, and cluster-scoped ones by name', () => {
      expect(lister.namespace('b').get('web-1')).toBe(pods[3]);
      expect(lister.namespace('a').get('web-1')).toBe(pods[0]);
      expect(lister.namespace('a').get('plain')).toBeUndefined();
      expect(lister.get('cluster-thing')).toBe(pods[5]);
      expect(lister.namespace('').get('cluster-thing')).toBe(pods[5]);
      expect(lister.get('web-1')).toBeUndefined();
    });

    it('throws INVALID_SELECTOR for a malformed selector instead of listing everything', () => {
      expect(() => lister.list('app in (web')).toThrow(SelectorParseError);
      expect(() => lister.namespace('a').list('app=')).not.toThrow();
      expect(() => lister.namespace('a').list('app==,')).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_SELECTOR }));
    });
  });
}

describe('lister snapshots and types', () => {
  it('returns fresh arrays that later writes do not change', () => {
    const indexer = withIndex();
    const lister = newLister(indexer);
    const all = lister.list();
    const inA = lister.namespace('a').list();
    const webInA = lister.namespace('a').list('app=web');
    indexer.add(pod('a', 'web-3', { app: 'web' }));
    indexer.delete(pods[0]);
    expect(all).toHaveLength(pods.length);
    expect(inA).toHaveLength(3);
    expect(webInA).toHaveLength(2);
    expect(lister.namespace('a').list('app=web')).toHaveLength(2);
  });

  it('hands out the cached objects themselves, typed read-only', () => {
    const lister = newLister(withIndex());
    const got = lister.namespace('a').get('web-1');
    expect(got).toBe(pods[0]);
    const write = (): void => {
      // @ts-expect-error objects from the cache are DeepReadonly (tsc checks this line)
      got!.metadata.labels!.app = 'changed';
    };
    expect(typeof write).toBe('function'); // never called: the cached object must stay untouched
    expect(pods[0].metadata.labels?.app).toBe('web');
  });

  it('uses the namespace index when present', () => {
    const indexer = withIndex();
    let scans = 0;
    const counting = new Proxy(indexer, {
      get(target, prop, receiver) {
        if (prop === 'list') scans++;
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    newLister(counting).namespace('a').list('app=web');
    expect(scans).toBe(0);
  });
});
