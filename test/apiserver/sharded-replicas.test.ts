// Three processes of examples/sharded/replica.ts over 30 000 ConfigMaps on kube-apiserver with the
// ShardedListAndWatch gate: each replica caches and receives only its third (server-side filtering),
// every object is reconciled, and the ownership log never shows two replicas reconciling one object at
// once — through a SIGKILL (its slots taken over within a lease duration and a sync) and a join.
// SHARDED_REPLICAS, SHARDED_SLOTS and SHARDED_OBJECTS size it (the N = 5 × 100 000 run of
// docs/sharding.md: a measurement, under the heavy lock, not CI).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { HASH_SPACE, shardHash } from '../../src/core/shard-selector.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { ownershipOverlaps, peakRssMiB, reconciledKeys, ReplicaProcess, until, type ReplicaStatus } from './replicas.js';

const OBJECTS = Number(process.env.SHARDED_OBJECTS ?? 30_000);
const N = Number(process.env.SHARDED_REPLICAS ?? 3);
const SLOTS = Number(process.env.SHARDED_SLOTS ?? 48);
const LEASE_MS = 6_000;
const BURST = 3_000;
/** Timeouts grow with the objects (30 000: the values this file always had). */
const scaled = (ms: number): number => Math.max(ms, Math.round((ms * OBJECTS) / 30_000));
/** Balanced within one slot: each of `n` replicas owns floor or ceil of SLOTS / n, all SLOTS owned. */
const balanced = (rs: readonly Replica[]): boolean =>
  rs.every((r) => r.status.owned.length >= Math.floor(SLOTS / rs.length) && r.status.owned.length <= Math.ceil(SLOTS / rs.length)) && rs.reduce((n, r) => n + r.status.owned.length, 0) === SLOTS;

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
  }, scaled(300_000));

  afterAll(async () => {
    for (const r of replicas) if (!r.exited) r.child.kill('SIGKILL');
    configMaps?.close();
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it(`splits the work ${N} ways, survives a SIGKILL and a join, never two reconciles of one object at once`, async () => {
    const all = (await newListWatch<KubeObject>(server.kubeConfig, resources.configmaps, { namespace }).list({}, new AbortController().signal)).items;
    expect(all).toHaveLength(OBJECTS);
    const uidOf = new Map(all.map((o) => [`${namespace}/${o.metadata?.name}`, o.metadata?.uid ?? '']));
    const kubeconfig = server.kubeConfigPath;
    for (let i = 1; i <= N; i++) replicas.push(new Replica(`r${i}`, kubeconfig, namespace, dir));
    const r2 = replicas[1];
    const survivors = replicas.filter((r) => r !== r2);
    const started = Date.now();

    // 1. N replicas: SLOTS / N slots each (16 of 48 for three); every object cached by exactly one and reconciled.
    // (Status lines come once a second: wait for one that shows the whole cache.)
    await until(`${SLOTS}/${N} slots each, every object cached once and reconciled`, () => balanced(replicas) && replicas.reduce((n, r) => n + r.status.cached, 0) === OBJECTS && reconciledKeys(replicas).size === OBJECTS, scaled(180_000));
    const syncedMs = Date.now() - started;
    const cachedAtStart = replicas.map((r) => r.status.cached);
    for (const n of cachedAtStart) expect(n).toBeLessThanOrEqual((1.1 * OBJECTS) / N);

    // 2. Watch events are filtered by the server: a burst of 3 000 updates reaches each replica ~1/N.
    const before = replicas.map((r) => r.status.events);
    const bytesBefore = replicas.map((r) => r.status.bytes);
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      for (let i = next++; i < BURST; i = next++) await configMaps.patch(`cm-${i}`, namespace, { metadata: { annotations: { touched: '1' } } }, 'merge');
    }));
    await until('the burst delivered', () => replicas.reduce((n, r, i) => n + r.status.events - before[i], 0) >= BURST, 60_000);
    const received = replicas.map((r, i) => r.status.events - before[i]);
    expect(received.reduce((a, b) => a + b, 0)).toBe(BURST);
    for (const n of received) expect(n).toBeLessThanOrEqual((1.1 * BURST) / N);
    // And in bytes on the wire (the next status line shows every byte of the burst).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const bytes = replicas.map((r, i) => r.status.bytes - bytesBefore[i]);
    const totalBytes = bytes.reduce((a, b) => a + b, 0);
    for (const b of bytes) expect(b).toBeLessThanOrEqual((1.1 * totalBytes) / N);

    // 3. SIGKILL r2: the others take its slots a lease duration later, and reconcile its objects.
    const r2Slots = new Set(r2.status.owned);
    const r2Rss = r2.peakRssMiB();
    const killedAt = Date.now();
    r2.child.kill('SIGKILL');
    const takeover = await until(`the other replicas own all ${SLOTS} slots`, () => survivors.reduce((n, r) => n + r.status.owned.length, 0) === SLOTS, 60_000);
    expect(takeover).toBeLessThan(LEASE_MS * 2 + 5_000);
    const r2Keys = [...uidOf].filter(([, uid]) => r2Slots.has(slotOf(uid))).map(([k]) => k);
    const recovered = await until('r2’s objects reconciled by the survivors', () => {
      const done = reconciledKeys(survivors, killedAt);
      return r2Keys.every((k) => done.has(k));
    }, scaled(120_000));

    // 4. A join: the newcomer takes its 1/N; slots move with no overlap.
    const joiner = new Replica(`r${N + 1}`, kubeconfig, namespace, dir);
    replicas.push(joiner);
    const joined = await until(`${SLOTS}/${N} slots each after the join`, () => balanced([...survivors, joiner]), 90_000);

    // The ownership log: for each object, no two replicas' reconciles overlap in time (r2's open
    // reconciles end at its death).
    const { overlaps, reconciles: reconcilesLogged } = ownershipOverlaps(replicas, (r) => (r === r2 ? killedAt : Date.now()));
    expect(overlaps).toEqual([]);
    const rss = replicas.map((r) => (r === r2 ? r2Rss : r.peakRssMiB()));
    const serverRss = { apiServer: peakRssMiB(server.pids.apiServer), etcd: peakRssMiB(server.pids.etcd) };
    process.stdout.write(
      `sharded replicas: ${N} replicas, ${OBJECTS} objects, ${SLOTS} slots; all cached and reconciled ${syncedMs} ms after the start; cached ${JSON.stringify(cachedAtStart)}; ` +
        `burst of ${BURST} updates received ${JSON.stringify(received)} events, ${JSON.stringify(bytes)} bytes; SIGKILL takeover ${takeover} ms (lease ${LEASE_MS} ms), its objects reconciled ${recovered} ms after; ` +
        `join balanced in ${joined} ms; ${reconcilesLogged} reconciles logged, 0 overlaps; peak RSS MiB replicas ${JSON.stringify(rss)}, kube-apiserver ${serverRss.apiServer}, etcd ${serverRss.etcd}\n`,
    );
    for (const r of replicas) if (!r.exited) r.child.kill('SIGTERM');
    await until('replicas exited', () => replicas.every((r) => r.exited), 30_000);
  }, scaled(600_000));
});
