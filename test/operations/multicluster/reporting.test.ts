// What a multi-cluster manager reports: each cluster's informers named apart in health, channels and
// metrics; the management cluster's Secret informer failing /readyz; the manager's own metrics.

import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { resources, SharedInformerFactory, type InformerHealth } from '../../../src/index.js';
import { ClusterRefusedError, informerMetricNames, kubeconfigSecrets, MultiClusterManager, probeReport, registerInformerMetrics, shardedClusters, staticClusters, type ClusterAware, type ClusterHandle, type ClusterProvider } from '../../../src/operations/index.js';
import { InMemoryRingStore, ShardRing } from '../../../src/sharding/index.js';
import { FakeClock, startFakeApiServer, type FakeApiServer } from '../../../src/testing/index.js';
import { until } from '../../examples/helpers.js';
import { metricValue } from '../prom.js';
import { useTwoClusters } from './clusters.js';

let east: FakeApiServer;
let west: FakeApiServer;
let stop: AbortController;
useTwoClusters((c) => ({ east, west, stop } = c));

const quiet = { logger: false as const };
const fastRetry = { ...quiet, informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: 5 } } } };

/** A ClusterAware that only asks each engaged cluster's factory for its ConfigMaps informer. */
function configMapsEverywhere(): ClusterAware {
  return {
    name: 'configmaps-everywhere',
    engage: (handle: ClusterHandle) => void handle.factory.forResource(resources.configmaps),
    disengage: () => undefined,
    run: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
  };
}

describe('a cluster’s informers are named apart', () => {
  it('the factory option cluster names every informer <cluster>/<resource>: health, errors and their metrics per cluster', async () => {
    const eastFactory = new SharedInformerFactory(east.kubeConfig, { ...fastRetry, cluster: 'east' });
    const westFactory = new SharedInformerFactory(west.kubeConfig, { ...fastRetry, cluster: 'west' });
    const informers = [eastFactory.forResource(resources.configmaps), westFactory.forResource(resources.configmaps)];
    const registry = new promClient.Registry();
    const registration = registerInformerMetrics(promClient, informers, { registry });
    east.injectFault({ verb: 'watch', resource: 'configmaps', type: 'status', code: 500 });
    eastFactory.start(stop.signal);
    westFactory.start(stop.signal);
    await Promise.all([eastFactory.waitForCacheSync(stop.signal), westFactory.waitForCacheSync(stop.signal)]);
    expect(informers.map((i) => i.health().name)).toEqual(['east/v1/configmaps', 'west/v1/configmaps']);
    expect(Object.keys(eastFactory.health())).toEqual(['v1/configmaps']); // the factory's keys stay resource keys
    expect(await metricValue(registry, 'kube_informer_errors_total', { informer: 'east/v1/configmaps', phase: 'watch-list', reason: 'API_STATUS_500' })).toBe(1);
    expect(await metricValue(registry, 'kube_informer_errors_total', { informer: 'west/v1/configmaps' })).toBeUndefined();
    expect(await metricValue(registry, 'kube_informer_lists_total', { informer: 'west/v1/configmaps' })).toBe(1);
    registration.close();
  });

  it('a namespace set’s informers carry the cluster too', async () => {
    const factory = new SharedInformerFactory(east.kubeConfig, { ...quiet, cluster: 'east' });
    factory.forResource(resources.secrets, { namespaces: ['a'] });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    expect(Object.values(factory.health()).map((h) => h.name)).toEqual(['east/v1/secrets in a']);
  });

  it('the factory refuses an empty cluster name', () => {
    expect(() => new SharedInformerFactory(east.kubeConfig, { cluster: '' })).toThrow(/cluster/);
  });

  it('the MultiClusterManager names each cluster’s factory: reflector errors of one cluster are that cluster’s series', async () => {
    west.injectFault({ verb: 'watch', resource: 'configmaps', type: 'status', code: 500 });
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig, west: west.kubeConfig })], controllers: [configMapsEverywhere()], factoryOptions: fastRetry, ...quiet });
    const registry = new promClient.Registry();
    const registration = registerInformerMetrics(promClient, manager, { registry });
    const running = manager.run(stop.signal);
    await until(() => manager.readiness().clusters.length === 2 && manager.readiness().clusters.every((c) => c.ready), 'both clusters ready');
    expect(Object.entries(manager.health()).map(([k, h]) => `${k} ${h.name}`).sort()).toEqual(['east/v1/configmaps east/v1/configmaps', 'west/v1/configmaps west/v1/configmaps']);
    expect(await metricValue(registry, 'kube_informer_errors_total', { informer: 'west/v1/configmaps', phase: 'watch-list', reason: 'API_STATUS_500' })).toBe(1);
    expect(await metricValue(registry, 'kube_informer_errors_total', { informer: 'east/v1/configmaps' })).toBeUndefined();
    expect(await metricValue(registry, 'kube_informer_errors_total', { informer: 'v1/configmaps' })).toBeUndefined();
    registration.close();
    stop.abort();
    await running;
  });
});

describe('a controller failed on one cluster', () => {
  it('is named among that cluster’s problems (ClusterAware.failureOf): the cluster unready, /readyz detail, the others ready', async () => {
    const failed = new Set<string>();
    const controller: ClusterAware = { ...configMapsEverywhere(), name: 'labeler', failureOf: (name) => (failed.has(name) ? new Error('informer v1/configmaps failed for good') : undefined) };
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig, west: west.kubeConfig })], controllers: [controller], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => manager.readiness().clusters.filter((c) => c.ready).length === 2, 'both ready');
    failed.add('west');
    expect(manager.readiness().clusters.find((c) => c.name === 'west')).toMatchObject({ ready: false, problems: ['controller labeler stopped on this cluster: informer v1/configmaps failed for good'] });
    expect(manager.readiness().ok).toBe(true);
    const readyz = probeReport('readyz', { informers: manager.probeInformers() });
    expect(readyz.ok).toBe(true);
    expect(readyz.informers.find((i) => i.name === 'west/v1/configmaps')?.detail).toBe('cluster west (static west) is not ready: controller labeler stopped on this cluster: informer v1/configmaps failed for good');
    expect(manager.stats().unready).toBe(1);
    stop.abort();
    await running;
  });
});

describe('the management cluster in readiness', () => {
  it('its Secret informer refused (403 listing Secrets) makes the manager not ready and fails /readyz, naming it; ready again once it lists', async () => {
    const clock = new FakeClock();
    const management = new SharedInformerFactory(west.kubeConfig, { ...quiet, cluster: 'management', informerOptions: { clock } });
    for (let i = 0; i < 2; i++) west.injectFault({ verb: ['list', 'watch'], resource: 'secrets', type: 'status', code: 403 });
    const secrets = kubeconfigSecrets({ factory: management, namespace: 'fleet', verify: false });
    const manager = new MultiClusterManager({ providers: [secrets, staticClusters({ east: east.kubeConfig })], controllers: [configMapsEverywhere()], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => manager.readiness().clusters.every((c) => c.ready) && west.pendingFaults().length === 0, 'east ready and both 403s served');
    await until(() => manager.readiness().providers.some((p) => p.problems.some((q) => q.includes('403'))), 'the 403 named');
    const report = manager.readiness();
    expect(report.ok).toBe(false);
    expect(manager.ready()).toBe(false);
    expect(report.providers.map((p) => [p.name, p.ready])).toEqual([['kubeconfig-secrets', false], ['static', true]]);
    expect(report.clusters.map((c) => [c.name, c.ready])).toEqual([['east', true]]);
    const readyz = probeReport('readyz', { informers: manager.probeInformers() });
    expect(readyz.ok).toBe(false);
    expect(readyz.informers.find((i) => i.name === 'management/v1/secrets in fleet')).toMatchObject({ ready: false, problems: [expect.stringContaining('403')] });
    expect(readyz.informers.find((i) => i.name === 'east/v1/configmaps')).toMatchObject({ ready: true });
    expect(probeReport('livez', { informers: manager.probeInformers() }).ok).toBe(true);
    // The informer retries on its clock; the fault is spent: it lists, and the manager is ready.
    await until(async () => {
      await clock.advance(1_000);
      return manager.readiness().ok;
    }, 'the Secrets listed');
    expect(probeReport('readyz', { informers: manager.probeInformers() }).ok).toBe(true);
    stop.abort();
    await running;
  });

  it('kubeconfigSecrets’ health is its Secrets’ informer: v1/secrets without a namespace, nothing before run', async () => {
    const secrets = kubeconfigSecrets({ factory: new SharedInformerFactory(west.kubeConfig, quiet), verify: false });
    expect(secrets.health()).toEqual({});
    const manager = new MultiClusterManager({ providers: [secrets], ...quiet });
    expect(manager.readiness()).toMatchObject({ ok: false, providers: [{ name: 'kubeconfig-secrets', ready: false }] });
    const running = manager.run(stop.signal);
    await until(() => manager.ready(), 'the Secrets listed');
    expect(Object.keys(secrets.health())).toEqual(['v1/secrets']);
    expect(Object.keys(manager.health())).toEqual(['provider kubeconfig-secrets/v1/secrets']);
    expect(probeReport('readyz', { informers: manager.probeInformers() }).ok).toBe(true); // no cluster yet: the Secrets informer alone
    stop.abort();
    await running;
  });

  it('shardedClusters forwards its provider’s health (the Secrets still gate readiness); a wrapped static provider has none', () => {
    const ring = () => new ShardRing({ store: new InMemoryRingStore(), name: 'fleet', identity: 'a', logger: false });
    const health = { 'v1/secrets in fleet': { ready: false } } as unknown as Record<string, InformerHealth>;
    const watching: ClusterProvider = { name: 'secrets', run: () => Promise.resolve(), health: () => health };
    expect(shardedClusters(watching, ring(), { logger: false }).health?.()).toBe(health);
    expect(shardedClusters(staticClusters({ east: east.kubeConfig }), ring(), { logger: false }).health).toBeUndefined();
  });

  it('a provider without informers (staticClusters) does not gate readiness', async () => {
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig })], controllers: [configMapsEverywhere()], factoryOptions: quiet, ...quiet });
    const running = manager.run(stop.signal);
    await until(() => manager.readiness().clusters.length === 1, 'east engaged');
    expect(manager.readiness()).toMatchObject({ ok: true, providers: [{ name: 'static', ready: true, problems: [] }] });
    stop.abort();
    await running;
  });
});

describe('the multi-cluster metrics', () => {
  it('clusters by state and each cluster’s readiness, providers’ readiness, engages, disengages and refusals by reason, through prom-client', async () => {
    const gone = await startFakeApiServer();
    await gone.close(); // its port now refuses connections
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: east.kubeConfig, west: west.kubeConfig, gone: gone.kubeConfig })], controllers: [configMapsEverywhere()], factoryOptions: fastRetry, ...quiet });
    const registry = new promClient.Registry();
    const registration = registerInformerMetrics(promClient, manager, { registry, multiCluster: manager });
    const running = manager.run(stop.signal);
    await until(() => manager.readiness().clusters.filter((c) => c.ready).length === 2 && manager.clusters().length === 3, 'east and west ready, gone engaged');
    const n = informerMetricNames;
    expect(await metricValue(registry, n.multiClusterClusters, { state: 'ready' })).toBe(2);
    expect(await metricValue(registry, n.multiClusterClusters, { state: 'unready' })).toBe(1);
    expect(await metricValue(registry, n.multiClusterClusterReady, { cluster: 'east' })).toBe(1);
    expect(await metricValue(registry, n.multiClusterClusterReady, { cluster: 'gone' })).toBe(0);
    expect(await metricValue(registry, n.multiClusterProviderReady, { provider: 'static' })).toBe(1);
    expect(await metricValue(registry, n.multiClusterEngages)).toBe(3);
    expect(await metricValue(registry, n.multiClusterDisengages)).toBe(0);
    manager.disengage('gone', 'test');
    expect(await metricValue(registry, n.multiClusterDisengages)).toBe(1);
    expect(await metricValue(registry, n.multiClusterClusterReady, { cluster: 'gone' })).toBeUndefined();
    expect(await metricValue(registry, n.multiClusterClusters, { state: 'unready' })).toBe(0);
    registration.close();
    stop.abort();
    await running;
  });

  it('refusals are counted by reason: a ClusterRefusedError’s, else other', async () => {
    const refusing: ClusterProvider = {
      name: 'refusing',
      run: async (signal, sink) => {
        sink.refuse('x', new ClusterRefusedError('missing-key', 'secret fleet/x has no key kubeconfig'), 'secret fleet/x');
        sink.refuse(undefined, new ClusterRefusedError('unparsable', 'secret fleet/y: no server'), 'secret fleet/y');
        sink.refuse('z', new ClusterRefusedError('unparsable', 'secret fleet/z: no context'), 'secret fleet/z');
        sink.refuse('w', new Error('something else'), 'secret fleet/w');
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    };
    const manager = new MultiClusterManager({ providers: [refusing], ...quiet });
    const registry = new promClient.Registry();
    const registration = registerInformerMetrics(promClient, manager, { registry, multiCluster: manager });
    const running = manager.run(stop.signal);
    await until(() => manager.stats().refused === 4, 'four refusals');
    expect(manager.stats().refusedByReason).toEqual({ 'missing-key': 1, unparsable: 2, other: 1 });
    const n = informerMetricNames;
    expect(await metricValue(registry, n.multiClusterRefused, { reason: 'unparsable' })).toBe(2);
    expect(await metricValue(registry, n.multiClusterRefused, { reason: 'missing-key' })).toBe(1);
    expect(await metricValue(registry, n.multiClusterRefused, { reason: 'other' })).toBe(1);
    expect(await metricValue(registry, n.multiClusterProviderReady, { provider: 'refusing' })).toBe(1);
    registration.close();
    stop.abort();
    await running;
  });
});
