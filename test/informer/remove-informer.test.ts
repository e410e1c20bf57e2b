// SharedInformerFactory.removeInformer over the fake API server: one informer stops alone (waiters told
// why, no socket left), the factory runs on, a later forResource makes a new one; bad asks are loud.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/clock.js';
import { ErrorCodes } from '../../src/core/errors.js';
import type { KubeObject } from '../../src/core/types.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { Action, Controller } from '../../src/controller/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { leftoverHandles, openHandles } from '../helpers/handles.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgets' };

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}


describe('SharedInformerFactory.removeInformer', () => {
  let server: FakeApiServer;
  beforeEach(async () => {
    server = await startFakeApiServer({ logger: false });
  });
  afterEach(async () => {
    await server.close();
  });

  it('stops one informer alone: its waiters reject naming the removal, it leaves informers/health/permissions, no socket stays open, the others run on', async () => {
    server.create('configmaps', { metadata: { name: 'c1', namespace: 'default' } } as KubeObject);
    server.create('pods', { metadata: { name: 'p1', namespace: 'default' } } as KubeObject);
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const configMaps = factory.forResource<KubeObject>(CONFIGMAPS);
    const ac = new AbortController();
    let failed: unknown;
    const running = factory.run(ac.signal).catch((err: unknown) => (failed = err));
    await factory.waitForCacheSync(ac.signal);
    await until(() => server.openWatches() === 1, 'the configmaps watch');
    const before = openHandles();

    const pods = factory.forResource<KubeObject>(PODS);
    const deletes: string[] = [];
    const reg = pods.addEventHandler({ onDelete: (p) => void deletes.push((p as KubeObject).metadata?.name ?? '') });
    await pods.whenSynced(ac.signal);
    await reg.whenSynced();
    // A write the cache will never see: its read-your-write waiter is pending when the informer goes.
    const observed = pods.awaitObserved({ metadata: { name: 'never', namespace: 'default', resourceVersion: '999999' } }).catch((e: unknown) => e);
    expect(Object.keys(factory.informers()).sort()).toEqual(['v1/configmaps', 'v1/pods']);

    await factory.removeInformer(PODS);
    const err = (await observed) as Error & { code?: string };
    expect(err.code).toBe(ErrorCodes.INFORMER_STOPPED);
    expect(err.message).toContain('removeInformer(v1/pods)');
    // A stopped informer never counts as synced: its registration's waits reject with the removal.
    await expect(reg.whenSynced()).rejects.toMatchObject({ code: ErrorCodes.INFORMER_STOPPED, message: expect.stringContaining('removeInformer(v1/pods)') as unknown });
    expect(pods.isStopped()).toBe(true);
    expect(deletes).toEqual([]); // a removal is no deletion: the objects are not gone from the server
    expect(Object.keys(factory.informers())).toEqual(['v1/configmaps']);
    expect(Object.keys(factory.health())).toEqual(['v1/configmaps']);
    expect(factory.permissions().map((p) => p.resource)).toEqual(['configmaps']);
    await until(() => server.openWatches() === 1, 'the server to see the pods watch closed');
    expect(await leftoverHandles(before)).toEqual([]);

    // The factory runs on (a removal is no failure), and its other informer still follows changes.
    server.create('configmaps', { metadata: { name: 'c2', namespace: 'default' } } as KubeObject);
    await until(() => configMaps.getIndexer().getByKey('default/c2') !== undefined, 'the configmap c2');
    expect(failed).toBeUndefined();

    // A later forResource makes a new informer, started at once.
    const again = factory.forResource<KubeObject>(PODS);
    expect(again).not.toBe(pods);
    await again.whenSynced(ac.signal);
    expect(again.getIndexer().listKeys()).toEqual(['default/p1']);
    ac.abort();
    await running;
    expect(failed).toBeUndefined();
  });

  it('rejects the sync waiters of an informer that never synced with INFORMER_STOPPED naming the removal, also before start', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const widgets = factory.forResource<KubeObject>(WIDGETS); // no CRD: 404, retried (never synced)
    const reg = widgets.addEventHandler({});
    const waiting = reg.whenSynced().catch((e: unknown) => e);
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    await until(() => server.requests().some((r) => r.path.startsWith('/apis/example.com/v1/widgets')), 'a list of widgets');
    await factory.removeInformer(WIDGETS);
    const err = (await waiting) as Error & { code?: string };
    expect(err.code).toBe(ErrorCodes.INFORMER_STOPPED);
    expect(err.message).toContain('was removed from its SharedInformerFactory');
    ac.abort();
    await running;

    // Never started: the waiters hear it too, and nothing is sent.
    const idle = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const pods = idle.forResource<KubeObject>(PODS);
    const pending = pods.whenSynced().catch((e: unknown) => e);
    server.clearRequests();
    await idle.removeInformer(PODS);
    expect(((await pending) as { code?: string }).code).toBe(ErrorCodes.INFORMER_STOPPED);
    expect(server.requests()).toEqual([]);
    expect(idle.informers()).toEqual({});
  });

  it('refuses a resource it has no informer of, naming it and the ones it has', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    factory.forResource(CONFIGMAPS);
    factory.forResource(PODS);
    const err = (await factory.removeInformer(WIDGETS).catch((e: unknown) => e)) as Error & { code?: string };
    expect(err.code).toBe(ErrorCodes.INVALID_OPTION);
    expect(err.message).toBe(
      'SharedInformerFactory.removeInformer: the factory has no informer of example.com/v1/widgets (nobody asked for it with forResource, or it was removed); its informers: v1/configmaps, v1/pods',
    );
    await factory.removeInformer(PODS);
    await expect(factory.removeInformer(PODS)).rejects.toThrow(/no informer of v1\/pods .*its informers: v1\/configmaps$/);
    await expect(factory.removeInformer({ group: '', version: 'v1', resource: 'Pod' })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION });
  });

  it('refuses the source of a running controller, naming it, and removes it once the controller stopped', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const controller = Controller.for(factory, { ...CONFIGMAPS, kind: 'ConfigMap', namespaced: true }).build(async () => Action.done(), { name: 'cm-sync', logger: false });
    const ac = new AbortController();
    const factoryRun = factory.run(ac.signal);
    const stopController = new AbortController();
    const controllerRun = controller.run(stopController.signal);
    await until(() => factory.informers()['v1/configmaps']?.handlerCount() === 1, 'the controller handler');
    const err = (await factory.removeInformer(CONFIGMAPS).catch((e: unknown) => e)) as Error & { code?: string };
    expect(err.code).toBe(ErrorCodes.INVALID_OPTION);
    expect(err.message).toBe('SharedInformerFactory.removeInformer: informer v1/configmaps is a source of running controller cm-sync: stop it first (its reconciles would no longer see changes)');
    expect(Object.keys(factory.informers())).toEqual(['v1/configmaps']);
    stopController.abort();
    await controllerRun;
    await factory.removeInformer(CONFIGMAPS);
    expect(factory.informers()).toEqual({});
    ac.abort();
    await factoryRun;
  });
});
