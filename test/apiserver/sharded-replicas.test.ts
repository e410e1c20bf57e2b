// Three processes of examples/sharded/replica.ts over 30 000 ConfigMaps on kube-apiserver with the
// ShardedListAndWatch gate: each replica caches and receives only its third (server-side filtering),
// every object is reconciled, and the ownership log never shows two replicas reconciling one object at
// once — through a SIGKILL (its slots taken over within a lease duration and a sync) and a join.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { HASH_SPACE, shardHash } from '../../src/core/shard-selector.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { ownershipOverlaps, reconciledKeys, ReplicaProcess, until, type ReplicaStatus } from './replicas.js';

const OBJECTS = Number(process.env.SHARDED_OBJECTS ?? 30_000);
const SLOTS = 48;
const LEASE_MS = 6_000;

interface Status extends ReplicaStatus {
  cached: number;
  reconciles: number;
}

class Replica extends ReplicaProcess<Status> {
  constructor(identity: string, kubeconfig: string, namespace: string, dir: string) {
    const args = ['--kubeconfig', kubeconfig, '--namespace', namespace, '--slots', String(SLOTS), '--lease-ms', String(LEASE_MS)];
    super(identity, 'examples/sharded/replica.ts', args, { dir, logFlag: '--log', initial: { cached: 0, reconciles: 0 } });
  }
}

const slotOf = (uid: string): number => Number((BigInt(`0x${shardHash(uid)}`) * BigInt(SLOTS)) / HASH_SPACE);

describe('sharded replicas on the real kube-apiserver', () => {
  let server: RealApiServer;
  let namespace: string;
  let configMaps: ResourceClient<KubeObject>;
  let dir: string;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    server = await startRealApiServer();
    namespace = await freshNamespace(server, 'sharded');
    configMaps = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'test-user' });
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      for (let i = next++; i < OBJECTS; i = next++) await configMaps.create({ metadata: { name: `cm-${i}`, namespace, labels: { i: String(i) } } });
    }));
    dir = mkdtempSync(join(tmpdir(), 'sharded-'));
  }, 300_000);

  afterAll(async () => {
    for (const r of replicas) if (!r.exited) r.child.kill('SIGKILL');
    configMaps?.close();
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('splits the work three ways, survives a SIGKILL and a join, never two reconciles of one object at once', async () => {
    const all = (await newListWatch<KubeObject>(server.kubeConfig, resources.configmaps, { namespace }).list({}, new AbortController().signal)).items;
    expect(all).toHaveLength(OBJECTS);
    const uidOf = new Map(all.map((o) => [`${namespace}/${o.metadata?.name}`, o.metadata?.uid ?? '']));
    const kubeconfig = server.kubeConfigPath;
    for (const id of ['r1', 'r2', 'r3']) replicas.push(new Replica(id, kubeconfig, namespace, dir));
    const [r1, r2, r3] = replicas;

    // 1. Three replicas: 16 slots each; every object cached by exactly one and reconciled.
    // (Status lines come once a second: wait for one that shows the whole cache.)
    await until('16 slots each, every object cached once and reconciled', () => replicas.every((r) => r.status.owned.length === 16) && replicas.reduce((n, r) => n + r.status.cached, 0) === OBJECTS && reconciledKeys(replicas).size === OBJECTS, 180_000);
    const cachedAtStart = replicas.map((r) => r.status.cached);
    for (const n of cachedAtStart) expect(n).toBeLessThanOrEqual((1.1 * OBJECTS) / 3);

    // 2. Watch events are filtered by the server: a burst of 3 000 updates reaches each replica ~1/3.
    const before = replicas.map((r) => r.status.events);
    const bytesBefore = replicas.map((r) => r.status.bytes);
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      for (let i = next++; i < 3_000; i = next++) await configMaps.patch(`cm-${i}`, namespace, { metadata: { annotations: { touched: '1' } } }, 'merge');
    }));
    await until('the burst delivered', () => replicas.reduce((n, r, i) => n + r.status.events - before[i], 0) >= 3_000, 60_000);
    const received = replicas.map((r, i) => r.status.events - before[i]);
    expect(received.reduce((a, b) => a + b, 0)).toBe(3_000);
    for (const n of received) expect(n).toBeLessThanOrEqual(1_100);
    // And in bytes on the wire (the next status line shows every byte of the burst).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const bytes = replicas.map((r, i) => r.status.bytes - bytesBefore[i]);
    const totalBytes = bytes.reduce((a, b) => a + b, 0);
    for (const b of bytes) expect(b).toBeLessThanOrEqual((1.1 * totalBytes) / 3);

    // 3. SIGKILL r2: r1 and r3 take its slots a lease duration later, and reconcile its objects.
    const r2Slots = new Set(r2.status.owned);
    const killedAt = Date.now();
    r2.child.kill('SIGKILL');
    const takeover = await until('r1 and r3 own all 48 slots', () => r1.status.owned.length + r3.status.owned.length === SLOTS, 60_000);
    expect(takeover).toBeLessThan(LEASE_MS * 2 + 5_000);
    const r2Keys = [...uidOf].filter(([, uid]) => r2Slots.has(slotOf(uid))).map(([k]) => k);
    await until('r2’s objects reconciled by the survivors', () => {
      const done = reconciledKeys([r1, r3], killedAt);
      return r2Keys.every((k) => done.has(k));
    }, 120_000);

    // 4. A join: r4 takes a third; slots move with no overlap.
    const r4 = new Replica('r4', kubeconfig, namespace, dir);
    replicas.push(r4);
    await until('16 slots each for r1, r3, r4', () => [r1, r3, r4].every((r) => r.status.owned.length === 16), 90_000);

    // The ownership log: for each object, no two replicas' reconciles overlap in time (r2's open
    // reconciles end at its death).
    const { overlaps, reconciles: reconcilesLogged } = ownershipOverlaps(replicas, (r) => (r === r2 ? killedAt : Date.now()));
    expect(overlaps).toEqual([]);
    process.stdout.write(`sharded replicas: ${OBJECTS} objects, ${SLOTS} slots; cached ${JSON.stringify(cachedAtStart)}; burst of 3000 updates received ${JSON.stringify(received)} events, ${JSON.stringify(bytes)} bytes; SIGKILL takeover ${takeover} ms (lease ${LEASE_MS} ms); ${reconcilesLogged} reconciles logged, 0 overlaps\n`);
    for (const r of replicas) if (!r.exited) r.child.kill('SIGTERM');
    await until('replicas exited', () => replicas.every((r) => r.exited), 30_000);
  }, 600_000);
});
