// Nothing keeps the objects of a list as parsed once a transform replaced them: measured in the
// benchmark, a reflector that held its last result in its suspended loop kept every parsed pod alive
// until the first watch event — stripManagedFields saved nothing right after a sync.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FakeClock, type KubeObject } from '../../src/core/index.js';
import { SharedIndexInformer, stripManagedFields } from '../../src/informer/index.js';
import type { ListerWatcher, ObjectList, WatchEvent } from '../../src/listwatch/types.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('a transformed list', () => {
  it('leaves the parsed objects collectable as soon as the cache synced (the watch not even open)', async () => {
    const originals: Array<WeakRef<object>> = [];
    const lw: ListerWatcher<KubeObject> = {
      list: () => {
        const items = Array.from({ length: 50 }, (_, i) => {
          const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'ns', resourceVersion: '1', managedFields: [{ manager: 'x' }] } } as KubeObject;
          originals.push(new WeakRef(obj));
          return obj;
        });
        return Promise.resolve({ metadata: { resourceVersion: '1' }, items } as ObjectList<KubeObject>);
      },
      // A watch that never opens: the reflector waits on it with the list behind it.
      watch: () => new Promise<AsyncIterable<WatchEvent<KubeObject>>>(() => {}),
    };
    const informer = new SharedIndexInformer<KubeObject>(lw, { clock: new FakeClock(), logger: false, transform: stripManagedFields });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await informer.whenSynced(stop.signal);
    expect(informer.getStore().list()).toHaveLength(50);
    expect(informer.getStore().list().every((o) => !('managedFields' in (o.metadata ?? {})))).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(originals.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    stop.abort();
    await running;
  });
});
