// The multi-cluster manager on two fake API servers: one controller, one scheduler, keys carrying the
// cluster; ctx.client writes to the request's cluster; read-your-writes per cluster; an unreachable
// cluster reported without making the others unready; a disengage drops the cluster's queued keys.

import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { flushPromises, resources } from '../../../src/core/index.js';
import { Action } from '../../../src/controller/index.js';
import type { KubeConfigLike } from '../../../src/listwatch/index.js';
import { MultiClusterController, MultiClusterManager, probeReport, registerInformerMetrics, staticClusters, type ClusterProvider } from '../../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../../src/testing/index.js';
import { metricValue } from '../prom.js';
import { handProvider, useTwoClusters, until } from './clusters.js';

let east: FakeApiServer;
let west: FakeApiServer;
let stop: AbortController;
useTwoClusters((c) => ({ east, west, stop } = c));


const cm = (name: string, data: Record<string, string>): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data });


const quiet = { logger: false as const };

describe('MultiClusterManager on two fake API servers', () => {
  it('reconciles each cluster against its own cache, and ctx.client writes to the request’s cluster', async () => {
    east.create(resources.configmaps, cm('a', { from: 'east' }));
    west.create(resources.configmaps, cm('a', { from: 'west' }));
    const seen: string[] = [];
    const controller = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        if (ctx.name.endsWith('-done') || ctx.object === undefined) return Action.done();
        seen.push(`${ctx.cluster} ${ctx.key} ${ctx.object.data?.from}`);
        await ctx.client(resources.configmaps).create(cm(`${ctx.name}-done`, { by: String(ctx.cluster) }));
        return Action.done();
      },
      { name: 'copy', logger: false, concurrency: 2 },
    );
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig, west: west.kubeConfig })], controllers: [controller], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => east.get(resources.configmaps, 'a-done', 'ns') !== undefined && west.get(resources.configmaps, 'a-done', 'ns') !== undefined, 'both children');
    expect(seen.sort()).toEqual(['east ns/a east', 'west ns/a west']);
    expect((east.get(resources.configmaps, 'a-done', 'ns') as ConfigMap).data).toEqual({ by: 'east' });
    expect((west.get(resources.configmaps, 'a-done', 'ns') as ConfigMap).data).toEqual({ by: 'west' });
    expect(manager.clusters().sort()).toEqual(['east', 'west']);
    stop.abort();
    await running;
    expect(manager.clusters()).toEqual([]);
  });

  it('read-your-writes per cluster: the next reconcile of a key sees its cluster’s cache hold the write', async () => {
    east.create(resources.configmaps, cm('a', { n: '0' }));
    west.create(resources.configmaps, cm('a', { n: '0' }));
    const stale: string[] = [];
    const runs = new Map<string | undefined, number>();
    const written = new Map<string | undefined, number>();
    const controller = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        if (ctx.object === undefined) return Action.done();
        const n = Number(ctx.object.data?.n);
        runs.set(ctx.cluster, (runs.get(ctx.cluster) ?? 0) + 1);
        if (n < (written.get(ctx.cluster) ?? 0)) stale.push(`${ctx.cluster} saw ${n}`);
        if (n >= 3) return Action.done();
        const next = { ...cm('a', { n: String(n + 1) }), metadata: { ...cm('a', {}).metadata, resourceVersion: ctx.object.metadata?.resourceVersion } };
        await ctx.client(resources.configmaps).update(next);
        written.set(ctx.cluster, n + 1);
        return Action.requeueAfter(0);
      },
      { name: 'count', logger: false },
    );
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig, west: west.kubeConfig })], controllers: [controller], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => (east.get(resources.configmaps, 'a', 'ns') as ConfigMap).data?.n === '3' && (west.get(resources.configmaps, 'a', 'ns') as ConfigMap).data?.n === '3', 'n = 3 on both');
    await until(() => controller.stats().queued === 0 && controller.stats().running === 0, 'the queue drained');
    expect(stale).toEqual([]);
    stop.abort();
    await running;
  });

  it('an unreachable cluster is reported unready; the others run and the manager stays ready', async () => {
    const gone = await startFakeApiServer();
    const goneKc: KubeConfigLike = gone.kubeConfig;
    await gone.close();
    east.create(resources.configmaps, cm('a', {}));
    const seen: string[] = [];
    const controller = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        seen.push(`${ctx.cluster} ${ctx.key}`);
        return Action.done();
      },
      { name: 'look', logger: false },
    );
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig, gone: goneKc })], controllers: [controller], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => seen.length === 1, 'east reconciled');
    expect(seen).toEqual(['east ns/a']);
    await until(() => manager.readiness().clusters.some((c) => c.name === 'east' && c.ready), 'east ready');
    const report = manager.readiness();
    expect(report.ok).toBe(true);
    expect(report.clusters.find((c) => c.name === 'gone')).toMatchObject({ ready: false, source: 'static gone' });
    expect(manager.stats()).toMatchObject({ engaged: 2, unready: 1 });
    expect(manager.health()['gone/v1/configmaps']).toMatchObject({ name: 'gone/v1/configmaps', ready: false });
    const readyz = probeReport('readyz', { informers: manager.probeInformers() });
    expect(readyz.ok).toBe(true);
    expect(readyz.informers.find((i) => i.name === 'gone/v1/configmaps')?.detail).toMatch(/^cluster gone \(static gone\) is not ready: /);
    expect(readyz.informers.find((i) => i.name === 'east/v1/configmaps')).toMatchObject({ ready: true });
    expect(probeReport('livez', { informers: manager.probeInformers() }).ok).toBe(true);
    const registry = new promClient.Registry();
    const metrics = registerInformerMetrics(promClient, manager, { registry });
    expect(await metricValue(registry, 'kube_informer_ready', { informer: 'east/v1/configmaps' })).toBe(1);
    expect(await metricValue(registry, 'kube_informer_ready', { informer: 'gone/v1/configmaps' })).toBe(0);
    metrics.close();
    stop.abort();
    await running;
  });

  it('a disengage drops the cluster’s queued keys (never reconciled) and aborts its running reconcile', async () => {
    for (const name of ['a', 'b', 'c']) west.create(resources.configmaps, cm(name, {}));
    east.create(resources.configmaps, cm('a', {}));
    const provider = handProvider();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const aborted: string[] = [];
    const controller = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        started.push(`${ctx.cluster} ${ctx.key}`);
        if (ctx.cluster === 'west') {
          await Promise.race([gate, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))]);
          if (ctx.signal.aborted) aborted.push(`${ctx.cluster} ${ctx.key}`);
        }
        return Action.done();
      },
      { name: 'drop', logger: false, concurrency: 1 },
    );
    const manager = new MultiClusterManager({ providers: [provider], controllers: [controller], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => provider.sink !== undefined, 'the provider ran');
    provider.sink!.engage('west', west.kubeConfig, 'hand west');
    await until(() => started.length === 1 && controller.stats().queued === 2, 'one west reconcile running, two queued');
    provider.sink!.disengage('west', 'test');
    expect(controller.stats()).toMatchObject({ queued: 0, clusters: [] }); // forgotten at once, not when due
    await until(() => aborted.length === 1, 'the running reconcile aborted');
    provider.sink!.engage('east', east.kubeConfig, 'hand east');
    await until(() => started.includes('east ns/a'), 'east reconciled');
    await until(() => controller.stats().queued === 0 && controller.stats().running === 0, 'the queue drained');
    expect(started.filter((s) => s.startsWith('west'))).toHaveLength(1);
    expect(controller.stats()).toMatchObject({ dropped: 0, clusters: ['east'] });
    expect(manager.stats()).toMatchObject({ engaged: 1, engages: 2, disengages: 1 });
    release!();
    stop.abort();
    await running;
  });

  it('a re-engage drops the old engagement’s queued keys; the new one reconciles every object once', async () => {
    for (const name of ['a', 'b', 'c']) west.create(resources.configmaps, cm(name, {}));
    const provider = handProvider();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const controller = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        started.push(ctx.key);
        if (started.length === 1) await Promise.race([gate, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))]);
        return Action.done();
      },
      { name: 'again', logger: false, concurrency: 1 },
    );
    const manager = new MultiClusterManager({ providers: [provider], controllers: [controller], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => provider.sink !== undefined, 'the provider ran');
    provider.sink!.engage('west', west.kubeConfig, 'hand west');
    await until(() => started.length === 1 && controller.stats().queued === 2, 'one reconcile running, two queued');
    provider.sink!.engage('west', west.kubeConfig, 'hand west');
    expect(controller.stats().queued).toBe(0); // the old engagement's keys gone at once
    await until(() => started.length === 4 && controller.stats().queued === 0 && controller.stats().running === 0, 'the new engagement reconciled');
    expect(started.slice(1).sort()).toEqual(['ns/a', 'ns/b', 'ns/c']);
    expect(manager.stats()).toMatchObject({ engaged: 1, engages: 2, disengages: 1 });
    release!();
    stop.abort();
    await running;
  });

  it('one name from two sources is refused, naming both; refusals are counted', async () => {
    const provider = handProvider();
    const manager = new MultiClusterManager({ providers: [provider], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => provider.sink !== undefined, 'the provider ran');
    provider.sink!.engage('one', east.kubeConfig, 'secret ns/a');
    expect(() => provider.sink!.engage('one', west.kubeConfig, 'secret ns/b')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/secret ns\/a.*secret ns\/b/) }));
    expect(manager.factoryOf('one')?.kubeConfig).toBe(east.kubeConfig);
    provider.sink!.refuse('two', new Error('no key value'), 'secret ns/c');
    expect(manager.readiness().refused).toBe(1);
    stop.abort();
    await running;
  });

  it('a provider that rejects stops the manager: run rejects with its error once every cluster stopped', async () => {
    const failing: ClusterProvider = {
      name: 'failing',
      run: async (_signal, sink) => {
        sink.engage('east', east.kubeConfig, 'failing east');
        await flushPromises(5);
        throw new Error('the registry went away');
      },
    };
    const manager = new MultiClusterManager({ providers: [failing, staticClusters({ west: west.kubeConfig })], factoryOptions: quiet, ...quiet });
    expect(() => manager.engage('early', east.kubeConfig, 'test')).toThrow(/has not started/);
    await expect(manager.run(stop.signal)).rejects.toThrow('the registry went away');
    expect(manager.clusters()).toEqual([]);
    expect(manager.stats()).toMatchObject({ engaged: 0, engages: 2, disengages: 2 });
    expect(manager.ready()).toBe(false);
  });

  it('staticClusters refuses an empty set and a value that is not a KubeConfig', () => {
    expect(() => staticClusters({})).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => staticClusters({ x: {} as KubeConfigLike })).toThrow(/cluster x is not a KubeConfig/);
    expect(() => new MultiClusterManager({ providers: [] })).toThrow(/at least one ClusterProvider/);
  });
});
