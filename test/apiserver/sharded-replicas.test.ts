// Three processes of examples/sharded/replica.ts over 30 000 ConfigMaps on kube-apiserver with the
// ShardedListAndWatch gate: each replica caches and receives only its third (server-side filtering),
// every object is reconciled, and the ownership log never shows two replicas reconciling one object at
// once — through a SIGKILL (its slots taken over within a lease duration and a sync) and a join.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { HASH_SPACE, shardHash } from '../../src/core/shard-selector.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

const OBJECTS = Number(process.env.SHARDED_OBJECTS ?? 30_000);
const SLOTS = 48;
const LEASE_MS = 6_000;

interface Status {
  identity: string;
  owned: number[];
  cached: number;
  events: number;
  bytes: number;
  reconciles: number;
}

class Replica {
  readonly status: Status;
  readonly logFile: string;
  readonly child: ChildProcess;
  exited = false;

  constructor(readonly identity: string, kubeconfig: string, namespace: string, dir: string) {
    this.logFile = join(dir, `${identity}.jsonl`);
    this.status = { identity, owned: [], cached: 0, events: 0, bytes: 0, reconciles: 0 };
    this.child = spawn(
      process.execPath,
      ['--import', 'tsx', 'examples/sharded/replica.ts', '--kubeconfig', kubeconfig, '--identity', identity, '--namespace', namespace, '--log', this.logFile, '--slots', String(SLOTS), '--lease-ms', String(LEASE_MS)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let buffered = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        if (line.startsWith('{"identity"')) Object.assign(this.status, JSON.parse(line) as Status);
        else process.stderr.write(`${identity}: ${line}\n`);
        buffered = buffered.slice(nl + 1);
      }
    });
    this.child.once('exit', () => (this.exited = true));
  }

  entries(): Array<{ t: number; r: string; key?: string; p?: string }> {
    if (!existsSync(this.logFile)) return [];
    // Only whole lines: the replica may be appending the last one right now.
    const text = readFileSync(this.logFile, 'utf8');
    return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { t: number; r: string; key?: string; p?: string });
  }
}

async function until(what: string, holds: () => boolean, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (!holds()) {
    if (Date.now() - start > timeoutMs) throw new Error(`not true after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - start;
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
    const reconciledKeys = (rs: Replica[], after = 0): Set<string> =>
      new Set(rs.flatMap((r) => r.entries().filter((e) => e.p === 'e' && e.t >= after).map((e) => e.key!)));

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
    const intervals = new Map<string, Array<{ r: string; s: number; e: number }>>();
    for (const r of replicas) {
      const open = new Map<string, number>();
      for (const e of r.entries()) {
        if (e.key === undefined) continue;
        if (e.p === 's') open.set(e.key, e.t);
        else if (e.p === 'e' && open.has(e.key)) {
          (intervals.get(e.key) ?? intervals.set(e.key, []).get(e.key)!).push({ r: r.identity, s: open.get(e.key)!, e: e.t });
          open.delete(e.key);
        }
      }
      for (const [key, s] of open) (intervals.get(key) ?? intervals.set(key, []).get(key)!).push({ r: r.identity, s, e: r === r2 ? killedAt : Date.now() });
    }
    const overlaps: string[] = [];
    for (const [key, list] of intervals) {
      list.sort((a, b) => a.s - b.s);
      for (let i = 1; i < list.length; i++) if (list[i].r !== list[i - 1].r && list[i].s < list[i - 1].e) overlaps.push(`${key}: ${list[i - 1].r} ${list[i].r}`);
    }
    expect(overlaps).toEqual([]);
    const reconcilesLogged = [...intervals.values()].reduce((n, l) => n + l.length, 0);
    process.stdout.write(`sharded replicas: ${OBJECTS} objects, ${SLOTS} slots; cached ${JSON.stringify(cachedAtStart)}; burst of 3000 updates received ${JSON.stringify(received)} events, ${JSON.stringify(bytes)} bytes; SIGKILL takeover ${takeover} ms (lease ${LEASE_MS} ms); ${reconcilesLogged} reconciles logged, 0 overlaps\n`);
    for (const r of replicas) if (!r.exited) r.child.kill('SIGTERM');
    await until('replicas exited', () => replicas.every((r) => r.exited), 30_000);
  }, 600_000);
});
