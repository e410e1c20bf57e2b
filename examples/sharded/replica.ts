// sharded: one replica of a sharded ConfigMap controller. Replicas share the hash space over Leases
// (ShardRing), each caches only its slots (ShardedInformer: server-side sharded list and watch) and
// reconciles only the objects it owns; an ownership log records every reconcile.
//
// Run several copies against one cluster (Kubernetes 1.36+ with the ShardedListAndWatch gate; without
// it the slices are filtered on the client — every replica then receives everything):
//   npx tsx examples/sharded/replica.ts --kubeconfig PATH --identity r1 --namespace demo --log /tmp/r1.jsonl
// Stop one with Ctrl-C: its slots are drained, released and taken over at once; kill one with SIGKILL:
// its slots are taken over a lease duration later. Every second it prints one JSON status line:
// { identity, owned, cached, events, bytes (received on the informers' connections), reconciles }. RBAC: list/watch ConfigMaps in the namespace, and
// list/create/update Leases there.

import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import type { DeepReadonly, KubeObject } from '../../src/core/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { resources, SharedIndexInformer } from '../../src/index.js';
import { LeaseRingStore, ShardRing, ShardedInformer } from '../../src/sharding/index.js';
import { CountingAgent } from '../lib/counting-agent.js';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    identity: { type: 'string' },
    namespace: { type: 'string', default: 'default' },
    log: { type: 'string' },
    slots: { type: 'string', default: '32' },
    'lease-ms': { type: 'string', default: '15000' },
    'reconcile-ms': { type: 'string', default: '1' },
  },
});
const identity = values.identity ?? `replica-${process.pid}`;
const namespace = values.namespace ?? 'default';
const leaseMs = Number(values['lease-ms']);
const reconcileMs = Number(values['reconcile-ms']);
const kc = new KubeConfig();
if (values.kubeconfig !== undefined) kc.loadFromFile(values.kubeconfig);
else kc.loadFromDefault();

const log = (entry: Record<string, unknown>): void => {
  if (values.log !== undefined) appendFileSync(values.log, `${JSON.stringify({ t: Date.now(), r: identity, ...entry })}\n`);
};

// One connection pool for every slot's list and watch, counting the bytes the server sent on it.
const agent = await CountingAgent.for(kc);

const store = new LeaseRingStore(kc, { namespace, ring: 'sharded-example', leaseDurationSeconds: Math.ceil(leaseMs / 1000) });
const ring = new ShardRing({
  store,
  name: 'sharded-example',
  identity,
  slots: Number(values.slots),
  leaseDurationMs: leaseMs,
  renewDeadlineMs: Math.round(leaseMs * 0.66),
  retryPeriodMs: Math.round(leaseMs * 0.13),
  onSlotsChanged: (owned) => log({ owned }),
});
const informer = new ShardedInformer<KubeObject>({
  ring,
  name: identity,
  informerFor: (shard, slot) => new SharedIndexInformer(newListWatch<KubeObject>(kc, resources.configmaps, { namespace, shard, agent }), { name: `${identity}/slot-${slot}` }),
});

// The work: one reconcile per changed object of an owned slot, four at a time, each tracked by the ring.
let events = 0;
let reconciles = 0;
const pending: Array<DeepReadonly<KubeObject>> = [];
let active = 0;
const pump = (): void => {
  while (active < 4 && pending.length > 0) {
    const obj = pending.shift()!;
    const slot = ring.slotOf(obj);
    if (!ring.owns(slot)) continue; // another replica owns it now
    const key = `${obj.metadata?.namespace}/${obj.metadata?.name}`;
    active++;
    const work = (async () => {
      log({ key, p: 's' });
      await new Promise((resolve) => setTimeout(resolve, reconcileMs));
      log({ key, p: 'e' });
      reconciles++;
    })();
    void ring.track(slot, work).finally(() => {
      active--;
      pump();
    });
  }
};
const enqueue = (obj: DeepReadonly<KubeObject>): void => {
  events++;
  pending.push(obj);
  pump();
};
informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, obj) => enqueue(obj), onDelete() {} });

const stop = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
const status = setInterval(() => {
  process.stdout.write(`${JSON.stringify({ identity, owned: ring.ownedSlots(), cached: informer.list().length, events, bytes: agent.bytesRead(), reconciles })}\n`);
}, 1000);
await Promise.all([ring.run(stop.signal), informer.run(stop.signal)]);
clearInterval(status);
store.close();
agent.destroy();
