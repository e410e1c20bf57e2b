// The manager's wait for its caches (issue 24, finding 5): it keeps waiting for a CRD installed later, warns every interval with /readyz 503, and gives up naming every informer that cannot sync.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import { resources, SharedInformerFactory } from '../../src/index.js';
import type { Runnable } from '../../src/controller.js';
import { Manager } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { memoryLog } from '../controller/fixture.js';
import { until } from '../examples/helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets' };
const widgetsCrd = {
  metadata: { name: 'widgets.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true }] },
};
const newFactory = (backoffMs = 5) =>
  new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: backoffMs } } } });
/** A runnable that counts its runs and runs until its signal aborts. */
const waiter = (runs: { n: number }): Runnable => ({ name: 'c', run: (s) => new Promise<void>((resolve) => (runs.n++, s.addEventListener('abort', () => resolve(), { once: true }))) });

describe('Manager: waiting for caches', () => {
  it('keeps waiting for a CRD installed later — a warning every interval, /readyz 503 meanwhile — then runs the controllers', async () => {
    const clock = new FakeClock();
    const factory = newFactory();
    factory.forResource(widgets);
    const log = memoryLog();
    const runs = { n: 0 };
    const manager = new Manager(factory, { controllers: [waiter(runs)], probes: { port: 0, host: '127.0.0.1' }, clock, logger: log.logger });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    let failed: unknown;
    running.catch((err: unknown) => (failed = err));
    await until(() => failed !== undefined || log.lines.some((l) => l.startsWith('warn: manager: informer example.com/v1/widgets cannot sync')), 'the manager to say it waits');
    expect(failed).toBeUndefined();
    expect(manager.phase).toBe('syncing');
    expect(log.lines.find((l) => l.startsWith('warn: manager: informer example.com/v1/widgets cannot sync'))).toContain('the manager stops if a cache still cannot sync 120000 ms after the start');
    const readyz = await fetch(`${manager.probeUrl}/readyz`);
    expect(readyz.status).toBe(503);
    expect(((await readyz.json()) as { informers: Array<{ name: string; ready: boolean }> }).informers).toEqual([expect.objectContaining({ name: 'example.com/v1/widgets', ready: false })]);

    await clock.advance(30_000);
    expect(log.lines.filter((l) => l.startsWith('warn: manager: still waiting for the caches after 30000 ms'))).toHaveLength(1);
    expect(log.lines.find((l) => l.includes('still waiting'))).toMatch(/example\.com\/v1\/widgets cannot sync: .*404/);
    await clock.advance(30_000);
    expect(log.lines.filter((l) => l.startsWith('warn: manager: still waiting for the caches'))).toHaveLength(2);

    server.create('customresourcedefinitions.apiextensions.k8s.io', widgetsCrd as never);
    server.create('widgets.example.com', { metadata: { name: 'w', namespace: 'ns' } });
    const informer = factory.informers()['example.com/v1/widgets'];
    await until(() => informer.hasSynced(), 'the informer to sync (it retries on its own clock)');
    expect(manager.phase).toBe('syncing');
    await clock.advance(1_000); // the manager asks a cache that could not sync again every second
    await until(() => manager.phase === 'running' && runs.n === 1, 'the controllers to run');
    expect(informer.getIndexer().listKeys()).toEqual(['ns/w']);
    expect((await fetch(`${manager.probeUrl}/readyz`)).status).toBe(200);
    stop.abort();
    await running;
    expect(failed).toBeUndefined();
  });

  it('gives up after cacheSyncTimeoutMs naming every informer that cannot sync, each with its reason', async () => {
    const clock = new FakeClock();
    for (let i = 0; i < 1000; i++) server.injectFault({ verb: ['list', 'watch'], resource: 'configmaps', type: 'status', code: 403, message: 'configmaps is forbidden' });
    const factory = newFactory(20);
    factory.forResource(resources.configmaps);
    factory.forResource(widgets);
    factory.forResource(resources.secrets);
    const log = memoryLog();
    const runs = { n: 0 };
    const manager = new Manager(factory, { controllers: [waiter(runs)], clock, logger: log.logger });
    const running = manager.run(new AbortController().signal);
    let failed: unknown;
    running.catch((err: unknown) => (failed = err));
    await until(() => log.lines.filter((l) => /^warn: manager: informer .* cannot sync/.test(l)).length === 2, 'both informers to give up');
    expect(failed).toBeUndefined();
    await clock.advance(120_000);
    await until(() => failed !== undefined, 'the manager to give up');
    expect(failed).toMatchObject({
      code: 'CACHE_SYNC_FAILED',
      cause: { code: 'API_STATUS', statusCode: 403 },
      informers: [
        { informer: 'v1/configmaps', error: expect.objectContaining({ code: 'API_STATUS', statusCode: 403 }) },
        { informer: 'example.com/v1/widgets', error: expect.objectContaining({ code: 'API_STATUS', statusCode: 404 }) },
      ],
    });
    const message = (failed as Error).message;
    expect(message).toContain('2 informers cannot sync');
    expect(message).toContain('configmaps is forbidden');
    expect(message).toContain('example.com/v1/widgets');
    expect(runs.n).toBe(0);
    expect(manager.phase).toBe('stopped');
    expect(log.lines.at(-1)).toMatch(/^error: manager stopped, and its informers with it: manager: gave up waiting for the caches after 120000 ms/);
    await until(() => server.openWatches() === 0, 'every watch closed');
  });

  it('with cacheSyncTimeoutMs: 0 gives up as soon as an informer cannot sync; Infinity never gives up', async () => {
    for (let i = 0; i < 3; i++) server.injectFault({ verb: ['list', 'watch'], resource: 'configmaps', type: 'status', code: 403, message: 'configmaps is forbidden' });
    const factory = newFactory();
    factory.forResource(resources.configmaps);
    const manager = new Manager(factory, { cacheSyncTimeoutMs: 0, logger: false });
    await expect(manager.run(new AbortController().signal)).rejects.toMatchObject({ code: 'CACHE_SYNC_FAILED', informers: [{ informer: 'v1/configmaps' }] });
    expect(() => new Manager(newFactory(), { cacheSyncTimeoutMs: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new Manager(newFactory(), { cacheSyncTimeoutMs: Infinity })).not.toThrow();
  });
  it('waits for a namespace set too: its controllers start only once every namespace of it synced', async () => {
    server.create('configmaps', { metadata: { name: 'c', namespace: 'open' } } as never);
    // The slow namespace's first list never answers (both requests a list can be: the streaming list's watch, the paged list).
    for (const verb of ['watch', 'list'] as const) server.injectFault({ verb, resource: 'configmaps', namespace: 'slow', type: 'stall' });
    const factory = newFactory();
    const set = factory.forResource(resources.configmaps, { namespaces: ['open', 'slow'] });
    const log = memoryLog();
    const runs = { n: 0 };
    const manager = new Manager(factory, { controllers: [waiter(runs)], clock: new FakeClock(), logger: log.logger });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => set.health().open?.synced === true, 'the open namespace to sync');
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(manager.phase).toBe('syncing');
    expect(runs.n).toBe(0);
    stop.abort();
    await running;
  });
});
