// MultiClusterController is the house Controller engaged per cluster: owns() per cluster, one concurrency
// for all clusters, a disengage forgetting a key in backoff at once, onError seeing the object key, and
// one cluster's Controller failing while the other reconciles on. Two fake API servers, handles made by hand.

import { describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { FakeClock, flushPromises, resources } from '../../../src/core/index.js';
import { Action, type ControllerMetricsProvider } from '../../../src/controller/index.js';
import { SharedInformerFactory } from '../../../src/informer/index.js';
import { MultiClusterController, type ClusterAware, type ClusterHandle } from '../../../src/operations/index.js';
import { type FakeApiServer } from '../../../src/testing/index.js';
import { failOnUnhandledRejections } from '../../helpers/async.js';
import { useTwoClusters, until } from './clusters.js';

failOnUnhandledRejections();

let east: FakeApiServer;
let west: FakeApiServer;
let stop: AbortController;
useTwoClusters((c) => ({ east, west, stop } = c));


const cm = (name: string, data: Record<string, string> = {}): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data });

let epoch = 1000;
/** Engages `server` on `fleet` as the manager would: a factory of its own, started right after. */
function engage(fleet: ClusterAware, name: string, server: FakeApiServer): { handle: ClusterHandle; cut: AbortController } {
  const cut = new AbortController(); // stops its factory only (the handle's signal is the manager's disengage)
  const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
  const handle: ClusterHandle = { name, epoch: ++epoch, kubeConfig: server.kubeConfig, factory, signal: new AbortController().signal };
  fleet.engage(handle);
  factory.start(AbortSignal.any([cut.signal, stop.signal]));
  return { handle, cut };
}

describe('MultiClusterController: the house Controller on every cluster', () => {
  it('owns() per cluster: a child changed in west requests west’s owner, never east’s; ctx.children reads the request’s cluster', async () => {
    const seen: string[] = [];
    const fleet = MultiClusterController.for(resources.configmaps)
      .owns(resources.secrets)
      .build(
        async (key, ctx) => {
          if (ctx.object === undefined) return Action.done();
          seen.push(`${ctx.cluster} ${key} ${ctx.children(resources.secrets).map((s) => s.data?.v ?? '').join(',')}`);
          return Action.done();
        },
        { name: 'owner', logger: false },
      );
    const uids: Record<string, string> = {};
    for (const [name, server] of [['east', east], ['west', west]] as const) {
      const parent = server.create(resources.configmaps, cm('p')) as ConfigMap;
      uids[name] = parent.metadata!.uid!;
      const child: Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c', namespace: 'ns', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'p', uid: uids[name], controller: true }] }, data: { v: 'MQ==' } };
      server.create(resources.secrets, child);
    }
    for (const [name, server] of [['east', east], ['west', west]] as const) engage(fleet, name, server);
    const running = fleet.run(stop.signal);
    await until(() => seen.length === 2, 'the first reconcile of each parent');
    expect(seen.sort()).toEqual(['east ns/p MQ==', 'west ns/p MQ==']);
    const child = west.get(resources.secrets, 'c', 'ns') as Secret;
    west.update(resources.secrets, { ...child, data: { v: 'Mg==' } });
    await until(() => seen.length === 3, 'the west parent requested by its child');
    expect(seen[2]).toBe('west ns/p Mg==');
    await flushPromises(50);
    expect(seen).toHaveLength(3);
    expect(fleet.stats()).toMatchObject({ clusters: ['east', 'west'], succeeded: 3, failed: 0 });
    stop.abort();
    await running;
  });

  it('one concurrency for all clusters: concurrency 1 never runs two reconciles at once across two clusters', async () => {
    for (const name of ['a', 'b', 'c']) {
      east.create(resources.configmaps, cm(name));
      west.create(resources.configmaps, cm(name));
    }
    let running = 0;
    let most = 0;
    const done: string[] = [];
    const fleet = MultiClusterController.for(resources.configmaps).build(
      async (key, ctx) => {
        most = Math.max(most, ++running);
        await flushPromises(3);
        running--;
        done.push(`${ctx.cluster} ${key}`);
        return Action.done();
      },
      { name: 'one', logger: false, concurrency: 1 },
    );
    engage(fleet, 'east', east);
    engage(fleet, 'west', west);
    const run = fleet.run(stop.signal);
    await until(() => done.length === 6, 'six reconciles');
    expect(most).toBe(1);
    expect(new Set(done).size).toBe(6);
    stop.abort();
    await run;
  });

  it('a disengage forgets a key in a 5-minute backoff at once; onError sees ns/name, the reconcile ctx.cluster', async () => {
    east.create(resources.configmaps, cm('a'));
    west.create(resources.configmaps, cm('a'));
    const clock = new FakeClock();
    const policy: string[] = [];
    const fleet = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        if (ctx.cluster === 'west') throw new Error(`west is broken (${ctx.cluster})`);
        return Action.done();
      },
      { name: 'backoff', logger: false, clock, rateLimit: false, onError: (key, error) => (policy.push(`${key}: ${error.message}`), Action.requeueAfter(300_000)) },
    );
    engage(fleet, 'east', east);
    engage(fleet, 'west', west);
    const running = fleet.run(stop.signal);
    await until(() => fleet.stats().failing === 1 && fleet.stats().succeeded === 1, 'west failed once, east done');
    expect(policy).toEqual(['ns/a: west is broken (west)']);
    expect(fleet.stats()).toMatchObject({ queued: 1, failing: 1 });
    fleet.disengage('west');
    expect(fleet.stats()).toMatchObject({ queued: 0, failing: 0, clusters: ['east'] });
    await clock.advance(600_000);
    await flushPromises(20);
    expect(policy).toHaveLength(1);
    stop.abort();
    await running;
  });

  it('one cluster’s Controller failing (its factory stopped) is logged, counted and kept disengaged; the other reconciles on', async () => {
    const seen: string[] = [];
    const lines: string[] = [];
    const clusterOf: Array<[string, unknown]> = [];
    const line = (level: string) => (message: string, fields?: Record<string, unknown>): void => {
      lines.push(`${level} ${message}`);
      clusterOf.push([message, fields?.cluster]);
    };
    const logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
    const fleet = MultiClusterController.for(resources.configmaps).build(
      async (key, ctx) => {
        seen.push(`${ctx.cluster} ${key}`);
        return Action.done();
      },
      { name: 'isolated', logger },
    );
    engage(fleet, 'east', east);
    const { cut } = engage(fleet, 'west', west);
    const running = fleet.run(stop.signal);
    west.create(resources.configmaps, cm('w'));
    await until(() => seen.includes('west ns/w'), 'west reconciled');
    cut.abort(); // west's factory stops under its running Controller
    await until(() => fleet.stats().failedClusters.length === 1, 'west counted as failed');
    expect(fleet.stats()).toMatchObject({ clusters: ['east'], failedClusters: ['west'] });
    expect(fleet.failureOf('west')?.message).toMatch(/factory stopped/);
    expect(lines.some((l) => l.startsWith('error controller isolated on cluster west failed'))).toBe(true);
    // Each cluster's Controller logs with the field cluster.
    const synced = clusterOf.filter(([m]) => m.startsWith('controller isolated: caches synced')).map(([, c]) => c);
    expect(synced.sort()).toEqual(['east', 'west']);
    east.create(resources.configmaps, cm('e'));
    await until(() => seen.includes('east ns/e'), 'east still reconciles');
    fleet.disengage('west'); // the manager's disengage of a failed cluster forgets its failure
    expect([fleet.stats().failedClusters, fleet.failureOf('west')]).toEqual([[], undefined]);
    const again = engage(fleet, 'west', west);
    await until(() => seen.filter((s) => s === 'west ns/w').length === 2, 'west re-engaged reconciles its objects again');
    expect(fleet.stats().failedClusters).toEqual([]);
    stop.abort();
    await running;
    again.cut.abort();
  });

  it('metrics: one active-workers gauge for the controller, the sum of every cluster’s running reconciles', async () => {
    east.create(resources.configmaps, cm('a'));
    west.create(resources.configmaps, cm('a'));
    const active: number[] = [];
    const counter = { inc: () => undefined };
    const metricsProvider: ControllerMetricsProvider = {
      newReconcileTotalMetric: () => counter,
      newReconcileErrorsMetric: () => counter,
      newReconcileTimeMetric: () => ({ observe: () => undefined }),
      newActiveWorkersMetric: () => ({ set: (v: number) => void active.push(v) }),
      newMaxConcurrentReconcilesMetric: () => ({ set: () => undefined }),
    };
    const release: Array<() => void> = [];
    const fleet = MultiClusterController.for(resources.configmaps).build(
      () => new Promise((resolve) => release.push(() => resolve(Action.done()))),
      { name: 'gauge', logger: false, concurrency: 2, metricsProvider },
    );
    engage(fleet, 'east', east);
    engage(fleet, 'west', west);
    const running = fleet.run(stop.signal);
    await until(() => release.length === 2, 'one reconcile running on each cluster');
    expect(active.at(-1)).toBe(2);
    release.shift()!();
    await until(() => fleet.stats().running === 1, 'one ended');
    expect(active.at(-1)).toBe(1);
    release.shift()!();
    stop.abort();
    await running;
    expect(active.at(-1)).toBe(0);
  });

  it('built without a reconcile: requests() hands out every cluster’s requests, each with its ctx.cluster and object key', async () => {
    east.create(resources.configmaps, cm('a'));
    west.create(resources.configmaps, cm('b'));
    const fleet = MultiClusterController.for(resources.configmaps).build({ name: 'loop', logger: false });
    engage(fleet, 'east', east);
    engage(fleet, 'west', west);
    const running = fleet.run(stop.signal);
    const seen: string[] = [];
    for await (const request of fleet.requests(stop.signal)) {
      seen.push(`${request.ctx.cluster} ${request.key} ${request.ctx.object?.metadata?.name}`);
      request.done();
      if (seen.length === 2) break;
    }
    expect(seen.sort()).toEqual(['east ns/a a', 'west ns/b b']);
    stop.abort();
    await running;
  });

  it('tracing: each cluster’s reconcile spans carry k8s.cluster.name', async () => {
    east.create(resources.configmaps, cm('a'));
    west.create(resources.configmaps, cm('a'));
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const fleet = MultiClusterController.for(resources.configmaps).build(async () => Action.done(), { name: 'traced', logger: false, tracerProvider });
    engage(fleet, 'east', east);
    engage(fleet, 'west', west);
    const running = fleet.run(stop.signal);
    await until(() => fleet.stats().succeeded === 2, 'a reconcile on each cluster');
    const spans = exporter.getFinishedSpans().filter((span) => span.name === 'reconcile traced');
    expect(spans.map((span) => span.attributes['k8s.cluster.name']).sort()).toEqual(['east', 'west']);
    stop.abort();
    await running;
    await tracerProvider.shutdown();
  });
});
