// Contenders ki-reflector and ki-controller: kube-informer's lower floors alone, to tell where the informer's per-event cost lies.
//
// Not in any phase's default set: `--only raw,ki-reflector,ki-controller,ki-1` runs them beside the
// whole informer. Each sends `ki-1`'s requests (bench/lib/ki-source.ts) and calls the handler hook for
// every MODIFIED it applies:
// - `ki-reflector` (stage `reflector`): a Reflector writing into an Indexer — the transport, the
//   decoder, the pushed read and the reflector's machine, and nothing above them;
// - `ki-controller` (stage `controller`): the low-level controller (`newController`: a Reflector into a
//   DeltaFIFO whose parked consumer runs `processDeltas` into an Indexer with one handler) — everything
//   `ki-1` runs but the SharedIndexInformer's own layer: its processor and listeners, read-your-writes
//   and catch-up bookkeeping, health and its subscribers of the reflector's reports.
// The differences ki-reflector → ki-controller → ki-1, measured in one session, place the cost
// (bench/notes.md, issue 29, twelfth session).

import { Reflector } from '../../src/reflector/index.js';
import { newController, processDeltas } from '../../src/informer/controller.js';
import { DeltaFIFO } from '../../src/fifo/index.js';
import { newIndexer } from '../../src/store/index.js';
import { deletionHandlingMetaNamespaceKeyFunc, type KeyFunc, type KubeObject } from '../../src/core/index.js';
import { runContender } from '../lib/contender.js';
import { podSource } from '../lib/ki-source.js';

const stage = process.argv[3];
if (stage !== 'reflector' && stage !== 'controller') throw new Error(`kube-informer-stages: unknown stage ${String(stage)} (reflector or controller)`);

await runContender((cfg, hooks) => {
  const source = podSource(cfg);
  // The informer's key function and indexer (no indices), as `ki-1` has them.
  const keyFunc = deletionHandlingMetaNamespaceKeyFunc as KeyFunc<KubeObject>;
  const indexer = newIndexer<KubeObject>(keyFunc, {});
  let markSynced!: () => void;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  const run = stage === 'reflector' ? reflectorOnly() : controller();
  run.catch((err: unknown) => hooks.error(err));
  return { synced, size: () => indexer.listKeys().length };

  function reflectorOnly(): Promise<void> {
    const store = {
      add: (obj: KubeObject) => indexer.add(obj),
      update: (obj: KubeObject) => {
        indexer.update(obj);
        hooks.modified(0);
      },
      delete: (obj: KubeObject) => indexer.delete(obj),
      replace: (items: KubeObject[], resourceVersion: string) => {
        indexer.replace(items, resourceVersion);
        markSynced();
      },
      resync: () => {},
    };
    return new Reflector<KubeObject>(source, store, { name: cfg.id, knownObjects: indexer }).run(new AbortController().signal);
  }

  function controller(): Promise<void> {
    const handler = { onAdd() {}, onUpdate: () => hooks.modified(0), onDelete() {} };
    return newController<KubeObject>({
      queue: new DeltaFIFO<KubeObject>({ keyFunc, knownObjects: indexer }),
      listerWatcher: source,
      name: cfg.id,
      process: (deltas, isInInitialList, key) => processDeltas(handler, indexer, deltas, isInInitialList, key),
      onSynced: markSynced,
      reflector: { knownObjects: indexer },
    }).run(new AbortController().signal);
  }
});
