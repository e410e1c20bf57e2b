// A controller's permissions (its informers' reads, its builder's uses) and ctx.client's local refusal of what it did not declare.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/clock.js';
import { ErrorCodes, resources } from '../../src/core/index.js';
import { Action, Controller, PermissionNotDeclaredError, type ReconcileContext } from '../../src/controller/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { InMemoryRingStore, LeaseRingStore, ShardRing } from '../../src/sharding/index.js';
import { memoryLog, widget, widgets, type Widget } from './fixture.js';

let server: FakeApiServer;
let stop: AbortController;
beforeEach(async () => {
  server = await startFakeApiServer({ resources: [{ ...widgets, generation: true }] });
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

async function until(cond: () => boolean, what: string, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const noop = (): Promise<Action> => Promise.resolve(Action.done());

describe('Controller.permissions', () => {
  it("lists and watches each watched resource in the factory's namespace, and adds what uses declares", () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace: 'ns', logger: false });
    const controller = Controller.for(factory, widgets)
      .owns(resources.configmaps)
      .watches(resources.namespaces, () => [])
      .uses(resources.configmaps, ['patch', 'create', 'get'])
      .uses(widgets, ['patch'], { subresource: 'status' })
      .uses(resources.secrets, ['get'], { namespace: 'other' })
      .build(noop, { name: 'w' });
    expect(controller.declaresUses).toBe(true);
    expect(controller.permissions()).toEqual([
      { group: '', resource: 'namespaces', verbs: ['list', 'watch'], reason: 'informer of v1/namespaces (watches) of controller w' },
      { group: '', resource: 'configmaps', namespace: 'ns', verbs: ['get', 'list', 'watch', 'create', 'patch'], reason: 'informer of v1/configmaps (owns) of controller w; ctx.client of controller w (uses)' },
      { group: 'example.com', resource: 'widgets', namespace: 'ns', verbs: ['list', 'watch'], reason: 'informer of example.com/v1/widgets (for) of controller w' },
      { group: 'example.com', resource: 'widgets', subresource: 'status', namespace: 'ns', verbs: ['patch'], reason: 'ctx.client of controller w (uses)' },
      { group: '', resource: 'secrets', namespace: 'other', verbs: ['get'], reason: 'ctx.client of controller w (uses)' },
    ]);
  });

  it('asks for every namespace when the factory has none', () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const controller = Controller.for(factory, widgets).build(noop, { name: 'w' });
    expect(controller.declaresUses).toBe(false);
    expect(controller.permissions()).toEqual([{ group: 'example.com', resource: 'widgets', verbs: ['list', 'watch'], reason: 'informer of example.com/v1/widgets (for) of controller w' }]);
  });

  it("adds a sharded controller's ring Leases; the factory asks for a cluster-scoped resource everywhere even when namespaced", () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace: 'ns', logger: false });
    const ring = new ShardRing({ store: new LeaseRingStore(server.kubeConfig, { namespace: 'shards', ring: 'r', leaseDurationSeconds: 15 }), name: 'r', identity: 'a', logger: false });
    const controller = Controller.for(factory, widgets).build(noop, { name: 'w', sharded: ring });
    expect(controller.permissions()).toContainEqual({ group: 'coordination.k8s.io', resource: 'leases', namespace: 'shards', verbs: ['list', 'create', 'update'], reason: 'shard ring r (Lease store)' });
    factory.forResource(resources.nodes);
    expect(factory.permissions()).toEqual([{ group: '', resource: 'nodes', verbs: ['list', 'watch'], reason: 'informer of v1/nodes' }]);
    expect(new ShardRing({ store: new InMemoryRingStore(), name: 'm', identity: 'a', logger: false }).permissions()).toEqual([]);
  });

  it('refuses an unknown verb, an empty list and a subresource with a slash (INVALID_OPTION)', () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const builder = Controller.for(factory, widgets);
    expect(() => builder.uses(resources.configmaps, ['apply' as 'patch'])).toThrow(/verbs must be a non-empty array of get, list, watch/);
    expect(() => builder.uses(resources.configmaps, [])).toThrow(/non-empty/);
    expect(() => builder.uses(widgets, ['patch'], { subresource: 'status/x' })).toThrow(/one path segment/);
    expect(() => builder.uses(widgets, ['patch'], { subresorce: 'status' } as never)).toThrow(/subresorce.*subresource/s);
  });
});

describe("ctx.client's check", () => {
  function start(build: (factory: SharedInformerFactory) => Controller<Widget>): { controller: Controller<Widget>; outcome: { error?: unknown; done: boolean } } {
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace: 'ns', logger: false });
    const controller = build(factory);
    factory.start(stop.signal);
    const outcome: { error?: unknown; done: boolean } = { done: false };
    void controller.run(stop.signal).then(
      () => void (outcome.done = true),
      (error: unknown) => Object.assign(outcome, { done: true, error }),
    );
    return { controller, outcome };
  }

  it('refuses a request the controller did not declare before sending it, naming the rule and the .uses line, and stops the controller', async () => {
    server.create(widgets, widget('w'));
    const log = memoryLog();
    const { outcome } = start((factory) =>
      Controller.for(factory, widgets)
        .uses(resources.configmaps, ['get'])
        .build(async (_key, ctx: ReconcileContext<Widget>) => {
          await ctx.client(resources.configmaps).create({ metadata: { name: 'c', namespace: 'ns' } });
          return Action.done();
        }, { name: 'w', logger: log.logger }),
    );
    await until(() => outcome.done, 'the controller to stop');
    const error = outcome.error as PermissionNotDeclaredError;
    expect(error).toBeInstanceOf(PermissionNotDeclaredError);
    expect(error.code).toBe(ErrorCodes.PERMISSION_NOT_DECLARED);
    expect(error.message).toBe(
      'controller w: ctx.client(v1/configmaps) create in namespace ns is not declared: it needs apiGroups: [""], resources: ["configmaps"], verbs: ["create"] in namespace ns; add .uses(resources.configmaps, [\'create\']) to the builder (refused before sending)',
    );
    expect(error.use).toEqual({ verb: 'create', group: '', resource: 'configmaps', namespace: 'ns' });
    expect(server.requests().filter((r) => r.resource === 'configmaps')).toEqual([]);
  });

  it('names the subresource, and a namespace outside the factory\'s', async () => {
    server.create(widgets, widget('w'));
    const { outcome } = start((factory) =>
      Controller.for(factory, widgets)
        .uses(widgets, ['patch'])
        .build(async (_key, ctx: ReconcileContext<Widget>) => {
          await ctx.client(widgets).applyStatus({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'elsewhere' } });
          return Action.done();
        }, { name: 'w', logger: false }),
    );
    await until(() => outcome.done, 'the controller to stop');
    expect((outcome.error as Error).message).toContain(`verbs: ["patch"] in namespace elsewhere; add .uses(<the Widget descriptor>, ['patch'], { subresource: 'status', namespace: 'elsewhere' })`);
  });

  it('lets declared requests and the informers\' list through, apply with patch alone', async () => {
    server.create(widgets, widget('w'));
    let done = false;
    const { outcome } = start((factory) =>
      Controller.for(factory, widgets)
        .owns(resources.configmaps)
        .uses(resources.configmaps, ['patch', 'create', 'get', 'delete'])
        .uses(widgets, ['patch'], { subresource: 'status' })
        .build(async (_key, ctx: ReconcileContext<Widget>) => {
          const cms = ctx.client(resources.configmaps);
          await cms.list({ namespace: 'ns' });
          await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' }, data: { a: '1' } });
          await cms.get('c', 'ns');
          await cms.delete('c', 'ns');
          await ctx.client(widgets).patchStatus('w', 'ns', { status: { ok: true } }, 'merge');
          done = true;
          return Action.done();
        }, { name: 'w', logger: false }),
    );
    await until(() => done || outcome.done, 'the reconcile');
    expect(outcome.error).toBeUndefined();
    expect(done).toBe(true);
  });

  it('leaves a namespaced request without a namespace to the client, which refuses it with INVALID_OPTION', async () => {
    server.create(widgets, widget('w'));
    let caught: unknown;
    start((factory) =>
      Controller.for(factory, widgets)
        .uses(resources.configmaps, ['get'])
        .build(async (_key, ctx: ReconcileContext<Widget>) => {
          caught = await ctx.client(resources.configmaps).delete('c').catch((e: unknown) => e);
          return Action.done();
        }, { name: 'w', logger: false }),
    );
    await until(() => caught !== undefined, 'the reconcile');
    expect(caught).toMatchObject({ code: ErrorCodes.INVALID_OPTION, message: expect.stringContaining('configmaps are namespaced; give a namespace') });
  });

  it('checks get, create and update for createOrUpdate before it reads', async () => {
    server.create(widgets, widget('w'));
    const { outcome } = start((factory) =>
      Controller.for(factory, widgets)
        .uses(resources.configmaps, ['get', 'create'])
        .build(async (_key, ctx: ReconcileContext<Widget>) => {
          await ctx.client(resources.configmaps).createOrUpdate({ metadata: { name: 'c', namespace: 'ns' } }, () => undefined);
          return Action.done();
        }, { name: 'w', logger: false }),
    );
    await until(() => outcome.done, 'the controller to stop');
    expect((outcome.error as PermissionNotDeclaredError).use).toEqual({ verb: 'update', group: '', resource: 'configmaps', namespace: 'ns', name: 'c' });
    expect(server.requests().filter((r) => r.resource === 'configmaps')).toEqual([]);
  });

  it('lets everything through for a controller that declares nothing, with one warning per kind of request naming the .uses line', async () => {
    server.create(widgets, widget('w'));
    const log = memoryLog();
    let calls = 0;
    const { controller, outcome } = start((factory) =>
      Controller.for(factory, widgets).build(async (_key, ctx: ReconcileContext<Widget>) => {
        calls++;
        await ctx.client(resources.configmaps).apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } });
        return Action.done();
      }, { name: 'w', logger: log.logger }),
    );
    await until(() => calls === 1 && controller.stats().running === 0, 'the first reconcile');
    controller.schedule('ns/w');
    await until(() => calls === 2 && controller.stats().running === 0, 'the second reconcile');
    expect(outcome.done).toBe(false);
    expect(server.list('configmaps', 'ns')).toHaveLength(1);
    expect(log.lines.filter((l) => l.startsWith('warn'))).toEqual([
      `warn: controller w: ctx.client(v1/configmaps) patch in namespace ns is not declared (it needs apiGroups: [""], resources: ["configmaps"], verbs: ["patch"] in namespace ns): this controller declares no uses, so nothing is refused, but kube-informer rbac cannot grant it — add .uses(resources.configmaps, ['patch']) to the builder`,
    ]);
  });
});
