// processDeltas with the queue's key: the store finds and writes the object without its key function.

import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc } from '../../src/core/keys.js';
import { DeltaFIFO } from '../../src/fifo/delta-fifo.js';
import { processDeltas } from '../../src/informer/index.js';
import { newIndexer, newStore } from '../../src/store/store.js';
import type { Store } from '../../src/store/types.js';
import { pod, type Pod } from './helpers.js';

function recorder(): { history: string[]; handler: Parameters<typeof processDeltas<Pod>>[0] } {
  const history: string[] = [];
  const rv = (o: Pod): string => o.metadata.resourceVersion ?? '';
  return {
    history,
    handler: {
      onAdd: (o) => void history.push(`add ${o.metadata.name}@${rv(o)}`),
      onUpdate: (old, o, isSync) => void history.push(`update ${o.metadata.name}@${rv(old)}→${rv(o)}${isSync ? ' sync' : ''}`),
      onDelete: (o) => void history.push(`delete ${o instanceof DeletedFinalStateUnknown ? o.key : o.metadata.name}`),
    },
  };
}

describe('processDeltas with the key the queue computed', () => {
  it('adds, updates and deletes as without it, with the store indexed, calling the key function only to check the first key', () => {
    let keyCalls = 0;
    const keyFunc = (o: unknown): string => (keyCalls++, metaNamespaceKeyFunc(o));
    const store = newIndexer<Pod>(keyFunc, { app: (o) => [o.metadata.labels?.app ?? ''] });
    const { history, handler } = recorder();
    const a1 = pod('a', { resourceVersion: '1', labels: { app: 'x' } });
    const a2 = pod('a', { resourceVersion: '2', labels: { app: 'y' } });
    processDeltas(handler, store, [{ type: 'Added', object: a1 }, { type: 'Updated', object: a2 }], false, 'default/a');
    processDeltas(handler, store, [{ type: 'Replaced', object: a2 }], false, 'default/a');
    expect(keyCalls).toBe(1);
    expect(history).toEqual(['add a@1', 'update a@1→2', 'update a@2→2 sync']);
    expect(store.getByKey('default/a')).toBe(a2);
    expect(store.byIndex('app', 'x')).toEqual([]);
    expect(store.byIndex('app', 'y')).toEqual([a2]);
    processDeltas(handler, store, [{ type: 'Deleted', object: a2 }], false, 'default/a');
    expect(store.listKeys()).toEqual([]);
    expect(history.at(-1)).toBe('delete a');
  });

  it('refuses, at the first write, a key the store would not give the object (a store keyed another way)', () => {
    // The mistake: a store keyed by uid handed the queue's namespace/name key. Silent, it would file the
    // object under a key its own reads never find; it throws instead, so the controller's run() rejects.
    const store = newIndexer<Pod>((o) => String((o as Pod).metadata.uid), {});
    const { history, handler } = recorder();
    const a = pod('a', { resourceVersion: '1', uid: 'u-1' });
    let error: unknown;
    try {
      processDeltas(handler, store, [{ type: 'Added', object: a }], false, 'default/a');
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'INVALID_OPTION' });
    expect((error as Error).message).toContain('"default/a"');
    expect((error as Error).message).toContain('"u-1"');
    expect(store.listKeys()).toEqual([]);
    expect(history).toEqual([]);
  });

  it('leaves the key to a store that is not one of ours (its key function may differ)', () => {
    const items = new Map<string, Pod>();
    const theirs: Store<Pod> = {
      add: (o) => void items.set(o.metadata.name, o),
      update: (o) => void items.set(o.metadata.name, o),
      delete: (o) => void items.delete((o as Pod).metadata.name),
      get: (o) => items.get(o.metadata.name),
      getByKey: (k) => items.get(k),
      list: () => [...items.values()],
      listKeys: () => [...items.keys()],
      replace: () => {},
      resync: () => {},
    } as Store<Pod>;
    const { history, handler } = recorder();
    processDeltas(handler, theirs, [{ type: 'Added', object: pod('a', { resourceVersion: '1' }) }], false, 'default/a');
    processDeltas(handler, theirs, [{ type: 'Updated', object: pod('a', { resourceVersion: '2' }) }], false, 'default/a');
    expect(history).toEqual(['add a@1', 'update a@1→2']);
    expect([...items.keys()]).toEqual(['a']);
  });

  it('is what DeltaFIFO hands its process function as the third argument', async () => {
    const fifo = new DeltaFIFO<Pod>({ knownObjects: newStore<Pod>(metaNamespaceKeyFunc) });
    fifo.add(pod('a', {}, 'ns1'));
    fifo.update(pod('b'));
    const keys: string[] = [];
    await fifo.pop((_deltas, _initial, key) => void keys.push(key));
    await fifo.pop((_deltas, _initial, key) => void keys.push(key));
    expect(keys).toEqual(['ns1/a', 'default/b']);
  });
});
