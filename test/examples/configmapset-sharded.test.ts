// The configmapset operator sharded over a ring (namespace-hashed) on the fake API server: two replicas,
// then a third joins, then one leaves. Every namespace converges (sets, their ConfigMaps, statuses and
// the shared directory registry agree), each set is reconciled only by the owner of its namespace's
// slot, and no set is ever reconciled by two replicas at once (the ownership log).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, type FakeApiServer } from '../../src/testing/index.js';
import { InMemoryRingStore, ShardRing } from '../../src/sharding/index.js';
import { awaitConverged } from '../../examples/configmapset/consistency.js';
import { configMapSets, type ConfigMapSet } from '../../examples/configmapset/crd.js';
import type { KubeObject } from '../../src/index.js';
import { ConfigMapSetOperator } from '../../examples/configmapset/operator.js';
import { DirectoryRegistry } from '../../examples/configmapset/registry.js';
import { configMapSet } from '../../examples/configmapset/scenario.js';
import { settle } from '../sharding/helpers.js';
import { startExampleCluster, until } from './helpers.js';

const NAMESPACES = Array.from({ length: 12 }, (_, i) => `team-${i}`);
const SLOTS = 8;

interface Replica {
  readonly identity: string;
  readonly ring: ShardRing;
  readonly operator: ConfigMapSetOperator;
  readonly stop: AbortController;
  readonly running: Promise<unknown>;
}

interface Interval {
  readonly r: string;
  readonly start: number;
  end: number | undefined;
}

describe('the configmapset operator, sharded', () => {
  let server: FakeApiServer;
  let dir: string;
  let registry: DirectoryRegistry;
  let replicas: Replica[];
  const clock = new FakeClock();
  const store = new InMemoryRingStore();
  const log = new Map<string, Interval[]>(); // set key → its reconciles, in start order
  let tick = 0; // a logical time: one step per log entry, so intervals compare without wall clocks

  beforeEach(async () => {
    server = await startExampleCluster();
    server.resource({ ...configMapSets, generation: true });
    dir = await mkdtemp(join(tmpdir(), 'configmapset-sharded-'));
    registry = new DirectoryRegistry(dir);
    replicas = [];
  });
  afterEach(async () => {
    for (const r of replicas) r.stop.abort();
    await clock.advance(30_000);
    await Promise.all(replicas.map((r) => r.running));
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  function start(identity: string): Replica {
    const ring = new ShardRing({ store, name: 'configmapsets', identity, field: 'namespace', slots: SLOTS, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: false });
    const operator = new ConfigMapSetOperator(server.kubeConfig, {
      registry,
      sharded: ring,
      logger: false,
      informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: 5 } } },
      onReconcile: (key, phase) => {
        const intervals = log.get(key) ?? log.set(key, []).get(key)!;
        if (phase === 'start') intervals.push({ r: identity, start: ++tick, end: undefined });
        else intervals.findLast((i) => i.r === identity && i.end === undefined)!.end = ++tick;
      },
    });
    const stop = new AbortController();
    const running = operator.run(stop.signal).catch((err: unknown) => err);
    const replica = { identity, ring, operator, stop, running };
    replicas.push(replica);
    return replica;
  }

  const ownerOf = (namespace: string): string | undefined =>
    replicas.find((r) => !r.stop.signal.aborted && r.ring.owns(r.ring.slotOf({ metadata: { namespace } })))?.identity;

  async function converged(expect?: (set: { spec?: { data?: Record<string, string> } }) => string | undefined): Promise<void> {
    for (const namespace of NAMESPACES) {
      const result = await awaitConverged({
        kubeConfig: server.kubeConfig,
        namespace,
        registry,
        timeoutMs: 20_000,
        expect: expect === undefined ? undefined : (s) => s.sets.map(expect).find((d) => d !== undefined),
      });
      if (result.difference !== undefined) throw new Error(`${namespace} did not converge: ${result.difference}`);
    }
  }

  function overlaps(): string[] {
    const found: string[] = [];
    for (const [key, intervals] of log) {
      for (let i = 1; i < intervals.length; i++) {
        const before = intervals[i - 1];
        if (before.r !== intervals[i].r && (before.end === undefined || before.end > intervals[i].start)) found.push(`${key}: ${before.r} and ${intervals[i].r}`);
      }
    }
    return found;
  }

  it('splits the sets by namespace, hands them over on a join and a leave, never reconciles one set twice at once', async () => {
    for (const namespace of NAMESPACES) {
      for (const name of ['web', 'db']) server.create(configMapSets, configMapSet(name, namespace, { names: ['a', 'b'], data: { tier: name } }));
    }
    const a = start('a');
    const b = start('b');
    await settle(clock, 'a and b split the slots', () => a.ring.ownedSlots().length === SLOTS / 2 && b.ring.ownedSlots().length === SLOTS / 2);
    await converged();
    // Each set was reconciled by the owner of its namespace's slot only.
    for (const [key, intervals] of log) expect([key, [...new Set(intervals.map((i) => i.r))]]).toEqual([key, [ownerOf(key.split('/')[0])]]);
    expect(Object.keys(await registry.all())).toHaveLength(NAMESPACES.length * 2);

    // A third replica joins; every set changes; each is reconciled by its (possibly new) owner.
    const c = start('c');
    await settle(clock, 'three replicas share the slots', () => [a, b, c].every((r) => [2, 3].includes(r.ring.ownedSlots().length)));
    log.clear();
    for (const namespace of NAMESPACES) {
      for (const name of ['web', 'db']) {
        const current = server.get<ConfigMapSet & KubeObject>(configMapSets, name, namespace)!;
        server.update(configMapSets, { ...current, spec: { ...current.spec, data: { tier: name, version: '2' } } });
      }
    }
    await converged((set) => (set.spec?.data?.version === '2' ? undefined : 'not updated yet'));
    await until(() => replicas.every((r) => r.operator.stats().running === 0), 'reconciles done');
    for (const [key, intervals] of log) expect([key, [...new Set(intervals.map((i) => i.r))]]).toEqual([key, [ownerOf(key.split('/')[0])]]);
    expect(log.size).toBe(NAMESPACES.length * 2);
    expect([...log.values()].flat().some((i) => i.r === 'c')).toBe(true);

    // The replica with the most namespaces leaves gracefully: its slots drain and go to the other two;
    // the sets of one of its namespaces are deleted and cleaned up by their new owner.
    const namespacesOf = (r: Replica): string[] => NAMESPACES.filter((ns) => ownerOf(ns) === r.identity);
    const leaver = [a, b, c].sort((x, y) => namespacesOf(y).length - namespacesOf(x).length)[0];
    const stay = [a, b, c].filter((r) => r !== leaver);
    const moved = namespacesOf(leaver);
    const gone = moved[0];
    leaver.stop.abort();
    await settle(clock, 'the other two own every slot', () => stay[0].ring.ownedSlots().length + stay[1].ring.ownedSlots().length === SLOTS);
    expect(await leaver.running).toBeUndefined();
    log.clear();
    for (const name of ['web', 'db']) server.delete(configMapSets, name, gone);
    await converged();
    const remaining = await registry.all();
    expect(Object.keys(remaining).filter((k) => k.startsWith(`${gone}/`))).toEqual([]);
    expect(Object.keys(remaining)).toHaveLength((NAMESPACES.length - 1) * 2);
    // What was reconciled since: the leaver's namespaces only (their new owners reconcile each set of a
    // slot gained once its caches synced), each by its new owner, and the deleted sets among them.
    expect(log.has(`${gone}/web`) && log.has(`${gone}/db`)).toBe(true);
    for (const [key, intervals] of log) {
      const namespace = key.split('/')[0];
      expect([key, moved.includes(namespace), intervals.every((i) => i.r === ownerOf(namespace))]).toEqual([key, true, true]);
    }
    expect(overlaps()).toEqual([]);
  }, 120_000);
});
