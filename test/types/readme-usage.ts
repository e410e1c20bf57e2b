// The README's Usage example, as written there (imports pointed at src/): it must type-check with honest types.
//
// Compiled by `npm run typecheck` only (not a *.test.ts file, so vitest never runs it). When the README's
// example changes, change this copy with it.

import { KubeConfig } from '@kubernetes/client-node';
import { expectTypeOf } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { SharedInformerFactory, resources, stripManagedFields, type SharedIndexInformer } from '../../src/index.js';

const kc = new KubeConfig();
kc.loadFromDefault();
const factory = new SharedInformerFactory(kc, { transform: stripManagedFields, resyncPeriodMs: 10 * 60_000 });
const pods = factory.forResource(resources.pods); // SharedIndexInformer<Pod>: the JSON the server sends
pods.addEventHandler({
  onAdd: (pod, isInInitialList) => console.log('add', pod.metadata?.name, pod.metadata?.creationTimestamp, isInInitialList),
  onUpdate: (_old, pod) => console.log('update', pod.metadata?.name, pod.status?.phase),
  onDelete: (pod) => console.log('delete', pod),
});

const ac = new AbortController();
process.once('SIGINT', () => ac.abort());
const running = factory.run(ac.signal); // starts every informer; rejects if one fails (a handler threw)
await pods.whenSynced(ac.signal);       // rejects with the reason if it cannot sync (403, 404, server down, ...)
console.log('synced:', pods.lister().list().length, 'pods');
await running;                          // resolves after a clean stop: watches closed, timers cleared

// What the example's types are, spelled out.
expectTypeOf(pods).toEqualTypeOf<SharedIndexInformer<Pod>>();
pods.addEventHandler({
  onAdd: (pod) => {
    expectTypeOf(pod.metadata?.creationTimestamp).toEqualTypeOf<string | undefined>();
    // @ts-expect-error -- a timestamp is the string the server sent, not a Date
    pod.metadata?.creationTimestamp?.getTime();
  },
});
