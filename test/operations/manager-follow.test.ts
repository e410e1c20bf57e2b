// The Manager's followCustomResources on the fake API server: a CRD deleted under a running manager makes
// its informer absent (/readyz 200 with a detail, the controller sees deletes), and the CRD established
// again wakes it through the manager's CRD watch: the controller reconciles every re-created object.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import type { KubeObject } from '../../src/core/types.js';
import { SharedInformerFactory } from '../../src/index.js';
import { Action, Controller } from '../../src/controller.js';
import { Manager } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { memoryLog } from '../controller/fixture.js';
import { until } from '../examples/helpers.js';

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true } as const;
const crd: KubeObject = {
  metadata: { name: 'widgets.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' }, versions: [{ name: 'v1', served: true, storage: true }] },
} as KubeObject;
const widget = (name: string): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' } }) as KubeObject;

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer({ logger: false });
});
afterEach(async () => {
  await server.close();
});

describe('Manager: followCustomResources', () => {
  it('stays ready while a CRD is deleted, then reconciles every object again once it is Established again (woken by the CRD watch, not the backoff)', async () => {
    server.create(CRDS, crd);
    for (const n of ['a', 'b']) server.create('widgets.example.com', widget(n));
    const clock = new FakeClock(); // never advanced: only the CRD watch can wake the absent informer
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { clock } });
    const reconciled: string[] = [];
    const controller = Controller.for<KubeObject>(factory, widgets).build(async (key, ctx) => {
      reconciled.push(`${key} ${ctx.object === undefined ? 'gone' : 'present'}`);
      return Action.done();
    });
    const configMaps = factory.forResource({ group: '', version: 'v1', resource: 'configmaps' });
    const log = memoryLog();
    const manager = new Manager(factory, { controllers: [controller], followCustomResources: true, probes: { port: 0, host: '127.0.0.1' }, logger: log.logger });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => reconciled.length === 2, 'the first reconciles');
    const informer = factory.informers()['example.com/v1/widgets'];
    expect(informer.onResourceMissing).toBe('absent');
    expect(configMaps.onResourceMissing).toBe('retry'); // a built-in resource is not followed
    await until(() => informer.health().watch.connected, 'the widgets watch');

    server.delete(CRDS, 'widgets.example.com');
    await until(() => informer.health().state === 'absent', 'absent');
    await until(() => reconciled.length === 4, 'the reconciles of the deletes');
    expect(reconciled.slice(2).sort()).toEqual(['default/a gone', 'default/b gone']);
    const readyz = await fetch(`${manager.probeUrl}/readyz`);
    expect(readyz.status).toBe(200);
    const body = (await readyz.json()) as { informers: Array<{ name: string; ready: boolean; detail?: string }> };
    expect(body.informers.find((i) => i.name === 'example.com/v1/widgets')).toMatchObject({ ready: true, detail: expect.stringContaining('its resource is not served') as unknown });

    server.create(CRDS, crd);
    for (const n of ['a', 'b', 'c']) server.create('widgets.example.com', widget(n));
    await until(() => reconciled.length === 7, 'the full reconcile');
    expect(reconciled.slice(4).sort()).toEqual(['default/a present', 'default/b present', 'default/c present']);
    expect(informer.health().state).toBe('running');
    expect(log.lines.some((l) => l.includes('CustomResourceDefinition widgets.example.com is Established: informer example.com/v1/widgets lists again'))).toBe(true);
    stop.abort();
    await running;
  });

  it('asks for the list and watch of each followed CRD by name in permissions()', () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    factory.forResource(widgets);
    factory.forResource({ group: 'apps', version: 'v1', resource: 'deployments' });
    const followed = new Manager(factory, { followCustomResources: true, logger: false }).permissions();
    expect(followed.filter((p) => p.resource === 'customresourcedefinitions')).toEqual([
      expect.objectContaining({ group: 'apiextensions.k8s.io', verbs: ['list', 'watch'], resourceNames: ['widgets.example.com'] }),
    ]);
    expect(new Manager(factory, { logger: false }).permissions().filter((p) => p.resource === 'customresourcedefinitions')).toEqual([]);
    expect(() => new Manager(factory, { followCustomResources: 'yes' as never })).toThrow(/option followCustomResources/);
  });
});
