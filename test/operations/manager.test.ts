// The manager: probes before sync, sync then controllers, the ordered stop with reconciles in flight, and every failure it cannot recover from rejecting run().

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { Action, Controller, type Runnable } from '../../src/controller.js';
import { InMemoryLock, InMemoryLockStore } from '../../src/leaderelection/index.js';
import { EventRecorder, eventsV1Resource, Manager } from '../../src/operations/index.js';
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

const fastRetry = { reflector: { backoff: { initialMs: 1, maxMs: 5 } } };
const newFactory = () => new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: fastRetry });

describe('Manager', () => {
  it('serves probes from the start, syncs, runs the controllers, and stops in order: reconciles drained, then informers, then probes', async () => {
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
    const factory = newFactory();
    const order: string[] = [];
    const controller = Controller.for(factory, resources.configmaps).build(
      async (key, ctx) => {
        order.push(`reconcile ${key}`);
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        order.push(`drained ${key} (watches open: ${server.openWatches()})`);
        return Action.done();
      },
      { name: 'cms', logger: false },
    );
    const log = memoryLog();
    const manager = new Manager(factory, { controllers: [controller], probes: { port: 0, host: '127.0.0.1' }, logger: log.logger });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => manager.phase === 'running' && order.length === 1, 'the first reconcile');
    expect(manager.isLeading()).toBe(true);
    const url = manager.probeUrl!;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(server.openWatches()).toBe(1);
    stop.abort();
    await running;
    expect(manager.phase).toBe('stopped');
    expect(order).toEqual(['reconcile ns/a', 'drained ns/a (watches open: 1)']);
    await until(() => server.openWatches() === 0, 'the server to see the watch closed'); // the client closed it; the server hears it an I/O turn later
    await expect(fetch(`${url}/livez`)).rejects.toThrow();
    expect(log.lines).toContain('info: manager: caches synced; running cms');
    expect(log.lines.at(-1)).toBe('info: manager stopped');
  });

  it('rejects with the reason when a cache cannot sync (403) and cacheSyncTimeoutMs is 0, after stopping everything', async () => {
    for (let i = 0; i < 3; i++) server.injectFault({ verb: ['list', 'watch'], resource: 'configmaps', type: 'status', code: 403, message: 'configmaps is forbidden' });
    const factory = newFactory();
    const controller = Controller.for(factory, resources.configmaps).build(async () => Action.done(), { logger: false });
    const manager = new Manager(factory, { controllers: [controller], probes: { port: 0, host: '127.0.0.1' }, cacheSyncTimeoutMs: 0, logger: false });
    await expect(manager.run(new AbortController().signal)).rejects.toMatchObject({ code: 'CACHE_SYNC_FAILED', cause: { code: 'API_STATUS', statusCode: 403 } });
    expect(manager.phase).toBe('stopped');
    expect(manager.probeUrl).toBeUndefined();
    expect(server.openWatches()).toBe(0);
  });

  it('rejects when an informer fails while running (a handler threw: incident 1)', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, onError: () => undefined });
    const informer = factory.forResource(resources.configmaps);
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    const controller = Controller.for(factory, resources.configmaps).build(async () => Action.done(), { logger: false });
    const manager = new Manager(factory, { controllers: [controller], logger: false });
    const running = manager.run(new AbortController().signal);
    await until(() => manager.phase === 'running', 'running');
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
    await expect(running).rejects.toMatchObject({ code: 'HANDLER_FAILED' });
    await until(() => server.openWatches() === 0, 'the server to see the watch closed');
  });

  it('rejects when a runnable rejects, stopping the controllers first', async () => {
    const factory = newFactory();
    let controllerStopped = false;
    const controller: Runnable = {
      name: 'waits',
      run: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve((controllerStopped = true) && undefined), { once: true })),
    };
    factory.forResource(resources.configmaps);
    const broken: Runnable = { name: 'audit', run: () => Promise.reject(new Error('audit broke')) };
    const manager = new Manager(factory, { controllers: [controller], runnables: [broken], logger: false });
    await expect(manager.run(new AbortController().signal)).rejects.toThrow('audit broke');
    expect(controllerStopped).toBe(true);
  });

  it('stops the runnables after the controllers drained: an Event recorded by a draining reconcile is written', async () => {
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns', uid: 'u-a' } });
    const factory = newFactory();
    const recorder = new EventRecorder(server.kubeConfig, { reportingController: 'example.com/cms', logger: false });
    let started = false;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const controller = Controller.for(factory, resources.configmaps).build(
      async (_key, ctx) => {
        started = true;
        await gate; // still draining after the stop
        recorder.event(ctx.object!, { type: 'Normal', reason: 'Drained', action: 'Reconcile' });
        return Action.done();
      },
      { name: 'cms', logger: false },
    );
    const manager = new Manager(factory, { controllers: [controller], runnables: [recorder], logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => started, 'the reconcile');
    stop.abort();
    await until(() => manager.phase === 'stopping', 'the stop');
    await new Promise((resolve) => setImmediate(resolve)); // a runnable stopped with the controllers would have finished its drain by now
    release();
    await running;
    expect(recorder.stats()).toMatchObject({ emitted: 1, created: 1, dropped: 0 });
    expect(server.list(eventsV1Resource, 'ns').map((e) => (e as { reason?: string }).reason)).toEqual(['Drained']);
  });

  it('runs the controllers only while leading, and reports leadership in /readyz without gating it', async () => {
    const store = new InMemoryLockStore();
    const factory = newFactory();
    factory.forResource(resources.configmaps);
    let runs = 0;
    const controller: Runnable = { name: 'c', run: (s) => new Promise<void>((resolve) => (runs++, s.addEventListener('abort', () => resolve(), { once: true }))) };
    const manager = new Manager(factory, {
      controllers: [controller],
      leaderElection: { lock: new InMemoryLock('me', store), logger: false },
      probes: { port: 0, host: '127.0.0.1' },
      logger: false,
    });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => manager.isLeading(), 'leadership');
    expect(runs).toBe(1);
    const ready = (await (await fetch(`${manager.probeUrl}/readyz`)).json()) as { ok: boolean; leader: boolean };
    expect(ready).toMatchObject({ ok: true, leader: true });
    stop.abort();
    await running;
    expect(manager.isLeading()).toBe(false);
  });

  it('validates its options and runs once', async () => {
    const factory = newFactory();
    expect(() => new Manager(factory, { controllers: [{ name: 'x' } as unknown as Runnable] })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    const manager = new Manager(factory, { logger: false });
    const stop = new AbortController();
    stop.abort();
    await manager.run(stop.signal);
    await expect(manager.run(stop.signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
  });

  it('stops cleanly when its signal aborts while the probe server starts', async () => {
    const factory = newFactory();
    factory.forResource(resources.configmaps);
    const manager = new Manager(factory, { probes: { port: 0, host: '127.0.0.1' }, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    stop.abort();
    await running;
    expect(manager.phase).toBe('stopped');
    expect(server.openWatches()).toBe(0);
  });
});
