// The probe endpoints over HTTP: ready only once synced, not live once an informer failed, /metrics from the registry.

import * as promClient from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { startProbeServer, type ProbeServer } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';
import { memoryLog } from '../controller/fixture.js';

let server: FakeApiServer;
let probes: ProbeServer | undefined;
let stop: AbortController;
beforeEach(async () => {
  server = await startFakeApiServer();
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await probes?.close();
  probes = undefined;
  await server.close();
});

const get = async (path: string, method = 'GET') => {
  const res = await fetch(`${probes!.url}${path}`, { method });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
};

describe('probes', () => {
  it('/readyz is 503 until every informer synced, then 200; /livez 200 all along; the body names each informer', async () => {
    // The first request (a streaming list: a watch) is held unanswered.
    server.injectFault({ verb: 'watch', resource: 'configmaps', type: 'stall' });
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: 5 } } } });
    factory.forResource(resources.configmaps);
    probes = await startProbeServer({ port: 0, host: '127.0.0.1', informers: factory, isLeader: () => false });
    factory.start(stop.signal);
    const before = await get('/readyz');
    expect(before.status).toBe(503);
    expect(JSON.parse(before.body)).toMatchObject({ ok: false, leader: false, informers: [{ name: 'v1/configmaps', ready: false }] });
    expect((await get('/livez')).status).toBe(200);
    server.endWatches();
    await server.restart(); // drops the stalled list; the reflector lists again
    await factory.waitForCacheSync(stop.signal);
    const after = await get('/readyz');
    expect(after.status).toBe(200);
    expect(after.type).toBe('application/json');
    expect(JSON.parse(after.body)).toMatchObject({ ok: true, informers: [{ name: 'v1/configmaps', ready: true, problems: [] }] });
  });

  it('an informer that fails (a handler threw: incident 1) turns /livez and /readyz to 503 with the reason', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, onError: () => undefined });
    factory.forResource(resources.configmaps).addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    probes = await startProbeServer({ port: 0, host: '127.0.0.1', informers: factory });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal).catch(() => undefined);
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
    await until(async () => (await get('/livez')).status === 503, 'livez to fail');
    const live = JSON.parse((await get('/livez')).body) as { informers: Array<{ problems: string[] }> };
    expect(live.informers[0].problems.join(' ')).toContain('handler bug');
    expect((await get('/readyz')).status).toBe(503);
  });

  it('serves /metrics from the registry, 404 without one or for another path, 405 for POST', async () => {
    const registry = new promClient.Registry();
    new promClient.Counter({ name: 'demo_total', help: 'demo', registers: [registry] }).inc(3);
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    probes = await startProbeServer({ port: 0, host: '127.0.0.1', informers: factory, metrics: registry });
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toBe(registry.contentType);
    expect(metrics.body).toContain('demo_total 3');
    expect((await get('/other')).status).toBe(404);
    expect((await get('/livez', 'POST')).status).toBe(405);
    expect((await get('/readyz')).status).toBe(503); // no informer started: never ready
    await probes.close();
    probes = await startProbeServer({ port: 0, host: '127.0.0.1', informers: factory });
    expect((await get('/metrics')).status).toBe(404);
  });

  it('rejects when the port is taken', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    probes = await startProbeServer({ port: 0, host: '127.0.0.1', informers: factory });
    await expect(startProbeServer({ port: probes.port, host: '127.0.0.1', informers: factory })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('serves /healthz as an alias of /livez (kubebuilder manifests probe /healthz and /readyz)', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, onError: () => undefined });
    factory.forResource(resources.configmaps).addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    probes = await startProbeServer({ port: 0, host: '127.0.0.1', informers: factory, logger: false });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    const healthz = await get('/healthz');
    expect(healthz.status).toBe(200);
    expect(healthz.body).toBe((await get('/livez')).body);
    expect((await get('/healthz', 'HEAD')).status).toBe(200);
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
    await until(async () => (await get('/healthz')).status === 503, '/healthz to fail with /livez');
    expect((await get('/livez')).status).toBe(503);
  });

  it('binds loopback by default and logs the address it serves at', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const log = memoryLog();
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
    try {
      probes = await startProbeServer({ port: 0, informers: factory, logger: log.logger });
    } finally {
      vi.unstubAllEnvs();
    }
    expect(probes.url).toBe(`http://127.0.0.1:${probes.port}`);
    expect(log.lines).toEqual([`info: probe server: serving /livez, /healthz, /readyz at http://127.0.0.1:${probes.port} (loopback only: set host to '0.0.0.0' or the pod IP for the kubelet to reach it)`]);
  });

  it('warns at start when it listens on loopback inside a cluster, where the kubelet probes the pod IP', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const log = memoryLog();
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '10.96.0.1');
    try {
      probes = await startProbeServer({ port: 0, informers: factory, metrics: new promClient.Registry(), logger: log.logger });
    } finally {
      vi.unstubAllEnvs();
    }
    expect(log.lines).toEqual([
      `warn: probe server: serving /livez, /healthz, /readyz, /metrics at http://127.0.0.1:${probes.port} — loopback only, inside a Kubernetes pod: the kubelet probes the pod IP and will fail; set host to '0.0.0.0' or the pod IP (status.podIP)`,
    ]);
    await probes.close();
    probes = await startProbeServer({ port: 0, host: '0.0.0.0', informers: factory, logger: log.logger });
    expect(log.lines.at(-1)).toBe(`info: probe server: serving /livez, /healthz, /readyz at http://0.0.0.0:${probes.port} (every interface)`);
  });

  it('refuses a bad port or host', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    await expect(startProbeServer({ port: -1, informers: factory })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(startProbeServer({ host: 8081 as never, informers: factory })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
});
