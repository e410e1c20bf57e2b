// configmapset, sharded: one replica of the ConfigMapSet operator. Replicas share the sets over a shard
// ring on Leases (hashing namespaces, so a set's ConfigMaps share its slot); each caches and reconciles
// only the sets of the slots it owns, with one external registry (a directory) shared by all.
//
// Run several copies against one cluster (Kubernetes 1.36+ with the ShardedListAndWatch gate), with
// the CRD installed (`npx tsx examples/configmapset/main.ts --kubeconfig PATH` installs it):
//   npx tsx examples/configmapset/replica.ts --kubeconfig PATH --identity r1 --registry /tmp/registry \
//       --lease-namespace default [--ownership-log /tmp/r1.jsonl] [--slots 64] [--lease-ms 15000]
// Every second it prints one JSON status line: { identity, owned, cached (sets, ConfigMaps), events
// (received by its informers), bytes (received on their connections), reconciles, failed }. With
// --ownership-log it appends `{ t, r, key, p: 's' | 'e' }` for the start and end of every reconcile.
// SIGTERM or Ctrl-C: its slots drain, are released and are taken over at once; SIGKILL: a lease
// duration later. RBAC: the operator's (see main.ts), and list/create/update Leases in --lease-namespace.

import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { LeaseRingStore, ShardRing } from '../../src/sharding/index.js';
import { exitWhenIdle } from '../lib/cluster.js';
import { shutdownSignal } from '../../src/operations/index.js';
import { CountingAgent } from '../lib/counting-agent.js';
import { ConfigMapSetOperator } from './operator.js';
import { DirectoryRegistry } from './registry.js';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    identity: { type: 'string' },
    registry: { type: 'string' },
    'lease-namespace': { type: 'string', default: 'default' },
    'ownership-log': { type: 'string' },
    slots: { type: 'string', default: '64' },
    'lease-ms': { type: 'string', default: '15000' },
    concurrency: { type: 'string', default: '4' },
  },
});
if (values.registry === undefined) throw new Error('--registry DIR is required: the directory every replica shares as the external registry');
const identity = values.identity ?? `replica-${process.pid}`;
const leaseMs = Number(values['lease-ms']);
const kc = new KubeConfig();
if (values.kubeconfig !== undefined) kc.loadFromFile(values.kubeconfig);
else kc.loadFromDefault();

const ownershipLog = values['ownership-log'];
const agent = await CountingAgent.for(kc);
const store = new LeaseRingStore(kc, { namespace: values['lease-namespace'], ring: 'configmapset-operator', leaseDurationSeconds: Math.ceil(leaseMs / 1000) });
const ring = new ShardRing({
  store,
  name: 'configmapset-operator',
  identity,
  field: 'namespace',
  slots: Number(values.slots),
  leaseDurationMs: leaseMs,
  renewDeadlineMs: Math.round(leaseMs * 0.66),
  retryPeriodMs: Math.round(leaseMs * 0.13),
});
let events = 0; // adds, updates and deletes the informers delivered: only those of owned slots reach this process
const operator = new ConfigMapSetOperator(kc, {
  registry: new DirectoryRegistry(values.registry),
  sharded: ring,
  agent,
  concurrency: Number(values.concurrency),
  onInformerEvent: () => void events++,
  onReconcile: ownershipLog === undefined ? undefined : (key, p) => appendFileSync(ownershipLog, `${JSON.stringify({ t: Date.now(), r: identity, key, p: p === 'start' ? 's' : 'e' })}\n`),
});
const stop = shutdownSignal(); // SIGTERM or Ctrl-C: the slots drain and are released; a second one exits at once
const status = setInterval(() => {
  const s = operator.stats();
  const line = { identity, owned: ring.ownedSlots(), events, bytes: agent.bytesRead(), reconciles: s.succeeded, failed: s.failed };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}, 1000);
try {
  await operator.run(stop);
} finally {
  clearInterval(status);
  stop.dispose();
  store.close();
  agent.destroy();
}
exitWhenIdle(0);
