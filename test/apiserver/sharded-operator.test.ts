// Three processes of the configmapset operator (examples/configmapset/replica.ts), sharded on a ring
// that hashes namespaces, over 1 000 namespaces × (one ConfigMapSet + the 9 ConfigMaps it owns) =
// 10 000 objects on kube-apiserver with the ShardedListAndWatch gate (CI's size, for its 25-minute
// budget; SHARDED_OPERATOR_NAMESPACES=3000 gives docs/sharding.md's 30 000). Each replica caches, receives and
// reconciles only its third (server-side filtering, measured in events and bytes), every set converges,
// a SIGKILLed replica's sets are taken over within a lease duration and a sync with nothing lost, a
// fourth replica joins, and the ownership log never shows one set reconciled by two replicas at once.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { HASH_SPACE, shardHash } from '../../src/core/shard-selector.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, type ResourceClient, type ResourceDescriptor } from '../../src/index.js';
import { firstDifference } from '../../examples/configmapset/consistency.js';
import { configMapSets, installCrd, SET_LABEL, type ConfigMapSet } from '../../examples/configmapset/crd.js';
import { DirectoryRegistry } from '../../examples/configmapset/registry.js';
import { configMapSet } from '../../examples/configmapset/scenario.js';
import { startRealApiServer, type RealApiServer } from './harness.js';
import { ownershipOverlaps, reconciledKeys, ReplicaProcess, until, type ReplicaStatus } from './replicas.js';

const NAMESPACES = Number(process.env.SHARDED_OPERATOR_NAMESPACES ?? 1_000);
const NAMES = Array.from({ length: 9 }, (_, i) => `n${i}`);
const SLOTS = 48;
const LEASE_MS = 6_000;

interface Status extends ReplicaStatus {
  reconciles: number;
  failed: number;
}

class Replica extends ReplicaProcess<Status> {
  constructor(identity: string, kubeconfig: string, dir: string) {
    const args = ['--kubeconfig', kubeconfig, '--registry', join(dir, 'registry'), '--slots', String(SLOTS), '--lease-ms', String(LEASE_MS), '--concurrency', '8'];
    super(identity, 'examples/configmapset/replica.ts', args, { dir, logFlag: '--ownership-log', initial: { reconciles: 0, failed: 0 } });
  }
}

const slotOfNamespace = (namespace: string): number => Number((BigInt(`0x${shardHash(namespace)}`) * BigInt(SLOTS)) / HASH_SPACE);

async function list<T>(server: RealApiServer, resource: ResourceDescriptor<T>, labelSelector?: string): Promise<T[]> {
  const lw = newListWatch<T>(server.kubeConfig, resource, { labelSelector });
  try {
    return (await lw.list({ resourceVersion: '' }, AbortSignal.timeout(120_000))).items;
  } finally {
    lw.close();
  }
}

/** Polls `check` (a difference, or undefined when done) every 2 s until it is done; rejects with the last difference after `timeoutMs`. */
async function eventually(what: string, check: () => Promise<string | undefined>, timeoutMs: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    const difference = await check();
    if (difference === undefined) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`${what}: not after ${timeoutMs} ms: ${difference}`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

describe('the configmapset operator, three sharded replica processes, on the real kube-apiserver', () => {
  let server: RealApiServer;
  let sets: ResourceClient<ConfigMapSet>;
  let dir: string;
  // The varying part first: FNV-1a barely moves the top bits for a string's last characters, so
  // `cms-0000` … `cms-2999` would land in 25 of the 48 slots (docs/sharding.md, Warning).
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `tenant-${i}-cms`);
  const replicas: Replica[] = [];

  beforeAll(async () => {
    // Its own server: fixed namespace names, and the replicas reconcile (and the checks list) every
    // ConfigMapSet and set-labelled ConfigMap in the cluster.
    server = await startRealApiServer({ private: true });
    await installCrd(server.kubeConfig, AbortSignal.timeout(60_000));
    const ns = newResourceClient(server.kubeConfig, resources.namespaces, { fieldManager: 'test-user' });
    sets = newResourceClient(server.kubeConfig, configMapSets, { fieldManager: 'test-user' });
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      for (let i = next++; i < NAMESPACES; i = next++) {
        await ns.create({ metadata: { name: namespaces[i] } });
        await sets.create(configMapSet('set', namespaces[i], { names: NAMES, data: { v: '1' } }));
      }
    }));
    ns.close();
    dir = mkdtempSync(join(tmpdir(), 'sharded-operator-'));
  }, 300_000);

  afterAll(async () => {
    for (const r of replicas) if (!r.exited) r.child.kill('SIGKILL');
    sets?.close();
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** A difference while any set is not converged at data version `version(namespace)`, checked on every namespace. */
  async function converged(version: (namespace: string) => string): Promise<string | undefined> {
    const all = await list(server, configMapSets);
    const notYet = all.find((s) => s.spec?.data?.v !== version(s.metadata?.namespace ?? '') || s.status?.observedGeneration !== s.metadata?.generation || s.status?.ready !== NAMES.length);
    if (notYet !== undefined) return `set ${notYet.metadata?.namespace}/${notYet.metadata?.name}: status ${JSON.stringify(notYet.status ?? null)}`;
    // Every set looks done: compare everything, namespace by namespace (ConfigMaps, their data, the registry).
    const configMaps = await list<ConfigMap>(server, resources.configmaps, SET_LABEL);
    const records = await new DirectoryRegistry(join(dir, 'registry')).all();
    const byNamespace = new Map<string, ConfigMap[]>();
    for (const cm of configMaps) (byNamespace.get(cm.metadata?.namespace ?? '') ?? byNamespace.set(cm.metadata?.namespace ?? '', []).get(cm.metadata?.namespace ?? '')!).push(cm);
    for (const namespace of namespaces) {
      const snapshot = {
        sets: all.filter((s) => s.metadata?.namespace === namespace),
        configMaps: byNamespace.get(namespace) ?? [],
        registry: Object.fromEntries(Object.entries(records).filter(([, r]) => r.namespace === namespace)),
      };
      const difference = firstDifference(snapshot) ?? (snapshot.configMaps.some((cm) => cm.data?.v !== version(namespace)) ? `ConfigMaps of ${namespace} not at v${version(namespace)}` : undefined);
      if (difference !== undefined) return `${namespace}: ${difference}`;
    }
    return undefined;
  }

  /** Sets `spec.data.v` of the set in each of `which` (32 writers). */
  async function bump(which: readonly string[], v: string): Promise<void> {
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      for (let i = next++; i < which.length; i = next++) await sets.patch('set', which[i], { spec: { names: NAMES, data: { v } } }, 'merge');
    }));
  }

  /** Waits until the replicas' event counters stopped moving for 3 s (the status lines come once a second). */
  async function quiet(rs: readonly Replica[]): Promise<void> {
    let last = '';
    let since = Date.now();
    await until('the replicas are quiet', () => {
      const now = JSON.stringify(rs.map((r) => [r.status.events, r.status.bytes]));
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since > 3_000;
    }, 120_000);
  }

  it(`splits ${NAMESPACES * (1 + NAMES.length)} objects three ways, survives a SIGKILL and a join, never reconciles one set twice at once`, async () => {
    const kubeconfig = server.kubeConfigPath;
    for (const id of ['r1', 'r2', 'r3']) replicas.push(new Replica(id, kubeconfig, dir));
    const [r1, r2, r3] = replicas;

    // 1. Three replicas, 16 slots each: every set converges (9 ConfigMaps per set created by the operator).
    await until('16 slots each', () => replicas.every((r) => r.status.owned.length === 16), 120_000);
    const initialMs = await eventually('every set converged at v1', () => converged(() => '1'), 600_000);
    const objects = (await list(server, configMapSets)).length + (await list(server, resources.configmaps, SET_LABEL)).length;
    expect(objects).toBeGreaterThanOrEqual(NAMESPACES * (1 + NAMES.length));
    expect(reconciledKeys(replicas).size).toBe(NAMESPACES);

    // 2. A burst: every set's data changes (one update per set → 9 ConfigMap replaces and a status
    //    write each). What each replica's informers received, in events and in bytes on the wire.
    await quiet(replicas);
    const before = replicas.map((r) => ({ events: r.status.events, bytes: r.status.bytes }));
    await bump(namespaces, '2');
    await eventually('every set converged at v2', () => converged(() => '2'), 600_000);
    await quiet(replicas);
    const received = replicas.map((r, i) => r.status.events - before[i].events);
    const bytes = replicas.map((r, i) => r.status.bytes - before[i].bytes);
    const totalEvents = received.reduce((a, b) => a + b, 0);
    const totalBytes = bytes.reduce((a, b) => a + b, 0);
    expect(totalEvents).toBeGreaterThanOrEqual(NAMESPACES * (1 + NAMES.length));
    for (const n of received) expect(n).toBeLessThanOrEqual((1.1 * totalEvents) / 3);
    for (const b of bytes) expect(b).toBeLessThanOrEqual((1.1 * totalBytes) / 3);

    // 3. SIGKILL r2: r1 and r3 own its slots within a lease duration and a sync; its sets, changed
    //    after the kill, converge under their new owners (nothing lost).
    const r2Slots = new Set(r2.status.owned);
    const r2Namespaces = namespaces.filter((ns) => r2Slots.has(slotOfNamespace(ns)));
    const killedAt = Date.now();
    r2.child.kill('SIGKILL');
    await bump(r2Namespaces, '3');
    await until('r1 and r3 own all 48 slots', () => r1.status.owned.length + r3.status.owned.length === SLOTS, 60_000);
    const takeover = Date.now() - killedAt;
    expect(takeover).toBeLessThan(LEASE_MS * 2 + 5_000);
    const afterKillMs = await eventually('r2’s sets converged at v3 under r1 and r3', () => converged((ns) => (r2Slots.has(slotOfNamespace(ns)) ? '3' : '2')), 300_000);
    const survivors = reconciledKeys([r1, r3], killedAt);
    expect(r2Namespaces.every((ns) => survivors.has(`${ns}/set`))).toBe(true);

    // 4. A join: r4 takes a third; every set changes again and converges.
    const r4 = new Replica('r4', kubeconfig, dir);
    replicas.push(r4);
    await until('16 slots each for r1, r3, r4', () => [r1, r3, r4].every((r) => r.status.owned.length === 16), 90_000);
    await bump(namespaces, '4');
    await eventually('every set converged at v4', () => converged(() => '4'), 600_000);
    expect([...reconciledKeys([r4])].length).toBeGreaterThan(0);

    // The ownership log: no two replicas' reconciles of one set overlap in time (r2's open ones end at its death).
    const { overlaps, reconciles } = ownershipOverlaps(replicas, (r) => (r === r2 ? killedAt : Date.now()));
    expect(overlaps).toEqual([]);
    process.stdout.write(
      `sharded operator: ${objects} objects (${NAMESPACES} sets), ${SLOTS} slots; converged in ${initialMs} ms; burst of ${NAMESPACES} set updates: events ${JSON.stringify(received)} of ${totalEvents}, bytes ${JSON.stringify(bytes)} of ${totalBytes}; ` +
        `SIGKILL takeover ${takeover} ms (lease ${LEASE_MS} ms), its ${r2Namespaces.length} sets converged ${afterKillMs} ms later; ${reconciles} reconciles logged (failed, retried: ${JSON.stringify(replicas.map((r) => r.status.failed))}), 0 overlaps\n`,
    );
    for (const r of replicas) if (!r.exited) r.child.kill('SIGTERM');
    await until('replicas exited', () => replicas.every((r) => r.exited), 60_000);
  }, 1_800_000);
});
