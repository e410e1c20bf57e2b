// Informer metrics read from health() at scrape time, on a real prom-client registry against the fake API server.

import * as promClient from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { registerInformerMetrics } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';
import { metricValue } from './prom.js';

let server: FakeApiServer;
let stop: AbortController;
beforeEach(async () => {
  server = await startFakeApiServer();
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

describe('registerInformerMetrics', () => {
  it('exports lists, watches, events applied, handler backlog and the health gauges per informer, read at scrape time', async () => {
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const configMaps = factory.forResource(resources.configmaps);
    configMaps.addEventHandler({ onAdd: () => undefined }, { name: 'noop' });
    const registry = new promClient.Registry();
    const registration = registerInformerMetrics(promClient, factory, { registry });
    const i = { informer: 'v1/configmaps' };
    expect(await metricValue(registry, 'kube_informer_synced', i)).toBe(0); // made, not started
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    expect(await metricValue(registry, 'kube_informer_lists_total', i)).toBe(1);
    expect(await metricValue(registry, 'kube_informer_synced', i)).toBe(1);
    expect(await metricValue(registry, 'kube_informer_ready', i)).toBe(1);
    expect(await metricValue(registry, 'kube_informer_live', i)).toBe(1);
    await until(() => configMaps.health().watch.connected, 'the watch');
    expect(await metricValue(registry, 'kube_informer_watches_total', i)).toBe(1);
    expect(await metricValue(registry, 'kube_informer_watch_connected', i)).toBe(1);
    server.create('configmaps', { metadata: { name: 'b', namespace: 'ns' } });
    server.create('configmaps', { metadata: { name: 'c', namespace: 'ns' } });
    await until(() => configMaps.getStore().listKeys().length === 3, 'the two adds');
    expect(await metricValue(registry, 'kube_informer_events_total', i)).toBe(2);
    expect(await metricValue(registry, 'kube_informer_last_event_age_seconds', i)).toBeGreaterThanOrEqual(0);
    expect(await metricValue(registry, 'kube_informer_handler_backlog', { ...i, handler: 'noop' })).toBe(0);
    registration.close();
  });

  it('counts reflector errors by phase and reason from registration on, and stops counting after close()', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: 5 } } } });
    const configMaps = factory.forResource(resources.configmaps);
    const registry = new promClient.Registry();
    const registration = registerInformerMetrics(promClient, [configMaps], { registry });
    // The streaming list (a watch) fails; a paged list follows.
    server.injectFault({ verb: 'watch', resource: 'configmaps', type: 'status', code: 500 });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    expect(await metricValue(registry, 'kube_informer_errors_total', { informer: 'v1/configmaps', phase: 'watch-list', reason: 'API_STATUS_500' })).toBe(1);
    registration.close();
    server.injectFault({ verb: 'watch', resource: 'configmaps', type: 'status', code: 410 });
    server.endWatches();
    await until(() => configMaps.health().counters.relists === 1, 'the relist after the 410');
    expect(await metricValue(registry, 'kube_informer_errors_total', { informer: 'v1/configmaps', phase: 'watch' })).toBeUndefined();
    expect(await metricValue(registry, 'kube_informer_relists_total', { informer: 'v1/configmaps' })).toBe(1);
  });

  it('registering twice in one registry keeps the first registration', () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const registry = new promClient.Registry();
    const a = registerInformerMetrics(promClient, factory, { registry });
    const b = registerInformerMetrics(promClient, factory, { registry });
    a.close();
    b.close();
    expect(registry.getMetricsAsArray().length).toBe(15);
  });
});
