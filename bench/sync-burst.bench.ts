// The informer's own share of an initial sync, cold: from run() to the handler's last onAdd, with the list
// already parsed in memory, in a fresh process — the burst that follows the last page of a 10 000-pod
// list over HTTP (bench/notes.md, issue 29: 50–55 ms of the sync gap against the raw loop was this burst).
//
// Run: npm run build:bench && node --expose-gc .cache/bench-build/bench/sync-burst.bench.js [pods=10000] [handler=add] [index=none]
// handler `add`: one handler with an onAdd, the burst ends at its last onAdd; `update`: one handler with
// only an onUpdate, as the independent harness's (bench/contenders/kube-informer-dist.ts), the burst ends
// when its registration has synced. index `namespace`: the informer has the namespace index, as every
// informer of a factory has. It prints one JSON line: the burst's wall-clock ms and the process's
// CPU ms over it. One process is one
// cold sample; compare two builds by alternating fresh processes, e.g. with a copy of an older build in
// .cache/base-build:
//   for i in $(seq 8); do for b in bench-build base-build; do node --expose-gc .cache/$b/bench/sync-burst.bench.js; done; done
// Not part of npm test; the figures are not asserted anywhere.

import type { KubeObject } from '../src/core/index.js';
import { SharedIndexInformer } from '../src/informer/index.js';
import { metaNamespaceIndexFunc, NamespaceIndex, type Indexers } from '../src/store/index.js';
import type { ListerWatcher, ObjectList, WatchEvent } from '../src/listwatch/index.js';
import { indepPod } from './lib/pods.js';

const PODS = Number(process.argv[2] ?? 10_000);
if (!(PODS > 0)) throw new Error(`pods must be a positive number, got ${process.argv[2]}`);
const HANDLER = process.argv[3] ?? 'add';
if (HANDLER !== 'add' && HANDLER !== 'update') throw new Error(`handler must be add or update, got ${HANDLER}`);
const INDEX = process.argv[4] ?? 'none';
if (INDEX !== 'none' && INDEX !== 'namespace') throw new Error(`index must be none or namespace, got ${INDEX}`);

// Parsed from JSON as a list answer's items are, then given kind and apiVersion as newListWatch gives them.
const items = JSON.parse(
  JSON.stringify(
    Array.from({ length: PODS }, (_, i) => {
      const { kind: _k, apiVersion: _a, ...pod } = indepPod(i);
      pod.metadata.resourceVersion = String(100 + i);
      return pod;
    }),
  ),
) as KubeObject[];
for (const item of items) Object.assign(item, { apiVersion: 'v1', kind: 'Pod' });

const list: ObjectList<KubeObject> = { metadata: { resourceVersion: String(100 + PODS) }, items };
const lw: ListerWatcher<KubeObject> = {
  list: () => Promise.resolve(list),
  // A watch that stays open, quiet, until the informer stops.
  watch: (_options, signal) =>
    Promise.resolve({
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<WatchEvent<KubeObject>>>((resolve) => signal.addEventListener('abort', () => resolve({ done: true, value: undefined }))),
        return: () => Promise.resolve({ done: true as const, value: undefined }),
      }),
    }),
};

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
(globalThis as { gc?: () => void }).gc?.();
const indexers: Indexers<KubeObject> = INDEX === 'namespace' ? { [NamespaceIndex]: metaNamespaceIndexFunc } : {};
const informer = new SharedIndexInformer<KubeObject>(lw, { name: 'sync-burst', logger: quiet, indexers });
let adds = 0;
let lastAddAt = 0;
let allAdded!: () => void;
const done = new Promise<void>((resolve) => (allAdded = resolve));
if (HANDLER === 'add') {
  informer.addEventHandler({
    onAdd: () => {
      if (++adds === PODS) {
        lastAddAt = performance.now();
        allAdded();
      }
    },
  });
} else {
  const registration = informer.addEventHandler({ onUpdate: () => undefined });
  void registration.whenSynced().then(() => {
    lastAddAt = performance.now();
    allAdded();
  });
}
const stop = new AbortController();
const startedAt = performance.now();
const cpuBefore = process.cpuUsage();
const running = informer.run(stop.signal);
await done;
const cpu = process.cpuUsage(cpuBefore);
console.log(JSON.stringify({ pods: PODS, handler: HANDLER, index: INDEX, burstMs: Number((lastAddAt - startedAt).toFixed(1)), cpuMs: Number(((cpu.user + cpu.system) / 1000).toFixed(1)) }));
stop.abort();
await running;
