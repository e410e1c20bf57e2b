// ctx.client on the fake API server: the bound signal and field manager, writes recorded for read-your-writes (a delayed watch proves it), deletes, dryRun, unwatched resources, and no client left open.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { flushPromises } from '../../src/core/clock.js';
import { resources, type KubeObject } from '../../src/core/index.js';
import { Action, Controller, ObservedWrites, type ReconcileContext } from '../../src/controller/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { newListWatch, ResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { memoryLog, widget, widgets, type Widget } from './fixture.js';
import { delayable } from '../helpers/delayable.js';

let server: FakeApiServer;
let stop: AbortController;
let running: Array<Promise<unknown>>;
beforeEach(async () => {
  server = await startFakeApiServer({ resources: [{ ...widgets, generation: true }] });
  stop = new AbortController();
  running = [];
});
afterEach(async () => {
  stop.abort();
  await Promise.allSettled(running);
  await server.close();
});

/** Lets I/O and promise chains run (setImmediate turns, never a timer) until `cond()` holds. */
async function until(cond: () => boolean, what: string, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function setup() {
  const gates = new Map<string, ReturnType<typeof delayable>>();
  const factory = new SharedInformerFactory(server.kubeConfig, {
    logger: false,
    listWatchFor: (gvr) => {
      const gate = delayable(newListWatch(server.kubeConfig, gvr));
      gates.set(gvr.resource, gate);
      return gate.lw;
    },
  });
  factory.start(stop.signal);
  return { factory, gate: (resource: string) => gates.get(resource)! };
}

function child(owner: Widget, name: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: 'ns',
      ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true }],
    },
    data: { k: 'v' },
  };
}

function run(controller: Controller<Widget>): { outcome: { error?: unknown; done: boolean } } {
  const outcome: { error?: unknown; done: boolean } = { done: false };
  running.push(controller.run(stop.signal).then(() => void (outcome.done = true), (error: unknown) => Object.assign(outcome, { done: true, error })));
  return { outcome };
}

const configMapsOnServer = (): ConfigMap[] => server.list<ConfigMap & KubeObject>('configmaps', 'ns');

describe('ctx.client', () => {
  it("writes with the controller's name as field manager, and every request carries the reconcile's signal (the stop aborts a stalled write)", async () => {
    const { factory } = setup();
    const failures: unknown[] = [];
    const controller = Controller.for(factory, widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx) => {
          const client = ctx.client(resources.configmaps);
          expect(ctx.client(resources.configmaps)).toBe(client); // one per reconcile and resource
          const w = ctx.object as Widget;
          await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: 'ns' }, data: { a: '1' } });
          await client.create(child(w, 'created'), { signal: new AbortController().signal });
          server.injectFault({ type: 'stall', verb: 'create', resource: 'configmaps' });
          await client.create(child(w, 'stalled')).catch((err: unknown) => void failures.push(err));
          return Action.done();
        },
        { name: 'widget-controller', logger: false },
      );
    server.create(widgets, widget('w'));
    const stopOne = new AbortController();
    const done = controller.run(stopOne.signal);
    await until(() => server.requests().filter((r) => r.method === 'POST').length === 2, 'the stalled create');
    const writes = server.requests().filter((r) => r.method !== 'GET' && r.path.includes('configmaps'));
    expect(writes.map((r) => r.query.fieldManager)).toEqual(['widget-controller', 'widget-controller', 'widget-controller']);
    stopOne.abort();
    await done;
    expect(failures).toMatchObject([{ code: 'ABORTED' }]);
  });

  it('refuses a field manager (the name, by default) longer than 128 bytes when the controller is built', () => {
    const { factory } = setup();
    const builder = () => Controller.for(factory, widgets);
    expect(() => builder().build(async () => Action.done(), { name: 'x'.repeat(129) })).toThrow(/field manager must be 1 to 128 bytes/);
    expect(() => builder().build(async () => Action.done(), { fieldManager: 'y'.repeat(129) })).toThrow(/option fieldManager/);
    expect(() => builder().build(async () => Action.done(), { name: 'x'.repeat(129), fieldManager: 'short' })).not.toThrow();
  });

  it('a delayed watch: a reconcile after a write through ctx.client waits until the cache holds it (no second child)', async () => {
    const { factory, gate } = setup();
    const seen: number[] = [];
    const controller = Controller.for(factory, widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx: ReconcileContext<Widget>) => {
          const children = ctx.children(resources.configmaps);
          seen.push(children.length);
          if (children.length === 0) await ctx.client(resources.configmaps).create(child(ctx.object as Widget, `w-${seen.length}`));
          return Action.done();
        },
        { logger: false },
      );
    run(controller);
    await until(() => factory.informers()['v1/configmaps']?.hasSynced() === true, 'the ConfigMap cache');
    gate('configmaps').hold();
    server.create(widgets, widget('w'));
    await until(() => configMapsOnServer().length === 1, 'the first child');
    controller.schedule('ns/w');
    await until(() => controller.stats().running === 1, 'the second reconcile to start');
    for (let i = 0; i < 50; i++) await flushPromises(1);
    expect(seen).toEqual([0]); // waiting for the cache to see its write, not reconciling on a stale one
    gate('configmaps').release();
    // The second reconcile, and the one the child's add event asks for: both see it.
    await until(() => seen.length === 3 && controller.stats().running === 0, 'the second reconcile');
    expect(seen).toEqual([0, 1, 1]);
    expect(configMapsOnServer()).toHaveLength(1);
  });

  it('a key waiting for its writes to be observed holds no worker slot: with concurrency 1 another key reconciles meanwhile', async () => {
    const { factory, gate } = setup();
    const seen: string[] = [];
    const controller = Controller.for(factory, widgets)
      .owns(resources.configmaps)
      .build(
        async (key, ctx: ReconcileContext<Widget>) => {
          const children = ctx.children(resources.configmaps);
          seen.push(`${key}:${children.length}`);
          if (children.length === 0) await ctx.client(resources.configmaps).create(child(ctx.object as Widget, `${ctx.object!.metadata!.name}-child`));
          return Action.done();
        },
        { logger: false, concurrency: 1 },
      );
    run(controller);
    await until(() => factory.informers()['v1/configmaps']?.hasSynced() === true, 'the ConfigMap cache');
    gate('configmaps').hold();
    const w = server.create(widgets, widget('w'));
    await until(() => configMapsOnServer().length === 1, 'the first child');
    await until(() => controller.stats().running === 0, 'the first reconcile to end');
    // A change of w asks for a reconcile while its child is not in the cache yet: it waits for the
    // write, and without holding the one worker slot.
    server.update(widgets, { ...w, spec: { size: 2 }, metadata: { ...w.metadata, generation: 2 } });
    server.create(widgets, widget('v'));
    await until(() => seen.includes('ns/v:0'), 'v reconciled while w waits for its write');
    expect(seen).toEqual(['ns/w:0', 'ns/v:0']);
    gate('configmaps').release();
    // Both children arrive: each key is reconciled once more, on a cache holding its child.
    await until(() => seen.includes('ns/w:1') && seen.includes('ns/v:1') && controller.stats().running === 0 && controller.stats().queued === 0, 'the reconciles after the release');
    expect(seen.filter((s) => s.startsWith('ns/w:'))).toEqual(['ns/w:0', 'ns/w:1']);
    expect(configMapsOnServer()).toHaveLength(2);
  });

  it('the same scenario with an unbound client and no ctx.wrote reconciles on the stale cache and creates a second child (the test above can fail)', async () => {
    const { factory, gate } = setup();
    const unbound = new ResourceClient(server.kubeConfig, resources.configmaps);
    const seen: number[] = [];
    const controller = Controller.for(factory, widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx: ReconcileContext<Widget>) => {
          const children = ctx.children(resources.configmaps);
          seen.push(children.length);
          if (children.length === 0) await unbound.create(child(ctx.object as Widget, `w-${seen.length}`), ctx.signal);
          return Action.done();
        },
        { logger: false },
      );
    run(controller);
    await until(() => factory.informers()['v1/configmaps']?.hasSynced() === true, 'the ConfigMap cache');
    gate('configmaps').hold();
    server.create(widgets, widget('w'));
    await until(() => configMapsOnServer().length === 1, 'the first child');
    controller.schedule('ns/w');
    await until(() => seen.length === 2, 'the second reconcile');
    gate('configmaps').release();
    expect(seen).toEqual([0, 0]);
    await until(() => configMapsOnServer().length === 2, 'the second child');
    unbound.close();
  });

  it('records a delete: the next reconcile waits until the cache no longer holds the child', async () => {
    const { factory, gate } = setup();
    const seen: string[][] = [];
    const results: unknown[] = [];
    const controller = Controller.for(factory, widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx: ReconcileContext<Widget>) => {
          const children = ctx.children(resources.configmaps);
          seen.push(children.map((c) => c.metadata!.name!));
          const stale = children.find((c) => c.metadata?.name === 'old');
          if (stale !== undefined) results.push(await ctx.client(resources.configmaps).delete('old', 'ns'));
          return Action.done();
        },
        { logger: false },
      );
    const w = server.create(widgets, widget('w'));
    server.create('configmaps', child(w, 'old'));
    run(controller);
    await until(() => seen.length === 1, 'the first reconcile');
    gate('configmaps').hold();
    await until(() => results.length === 1, 'the delete');
    expect(results[0]).toMatchObject({ gone: true });
    controller.schedule('ns/w');
    await until(() => controller.stats().running === 1, 'the second reconcile to start');
    for (let i = 0; i < 50; i++) await flushPromises(1);
    expect(seen).toHaveLength(1);
    gate('configmaps').release();
    await until(() => seen.length >= 2, 'the second reconcile');
    expect(seen.slice(0, 2)).toEqual([['old'], []]);
    expect(results).toHaveLength(1);
  });

  it('does not record dryRun writes nor writes to a resource the controller does not watch, and says nothing about them', async () => {
    const { factory } = setup();
    const log = memoryLog();
    let calls = 0;
    const controller = Controller.for(factory, widgets)
      .uses(resources.secrets, ['create'])
      .uses(widgets, ['patch'])
      .build(
      async (_key, ctx: ReconcileContext<Widget>) => {
        calls++;
        if (calls === 1) {
          await ctx.client(resources.secrets).create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } });
          await ctx.client(widgets).patch('w', 'ns', { spec: { size: 2 } }, 'merge', { dryRun: true });
        }
        return Action.done();
      },
      { logger: log.logger, observeTimeoutMs: 60_000 },
    );
    server.create(widgets, widget('w'));
    const { outcome } = run(controller);
    await until(() => calls === 1 && controller.stats().running === 0, 'the first reconcile');
    expect(server.get<Widget>(widgets, 'w', 'ns')?.spec?.size).toBe(1);
    controller.schedule('ns/w');
    await until(() => calls === 2, 'the second reconcile, at once');
    expect(outcome.done).toBe(false);
    expect(log.lines.filter((l) => l.startsWith('warn') || l.startsWith('error'))).toEqual([]);
  });

  it('closes its clients when the controller stops, and makes none for a reconcile that never asks', async () => {
    const { factory } = setup();
    const close = vi.spyOn(ResourceClient.prototype, 'close');
    try {
      let calls = 0;
      const controller = Controller.for(factory, widgets)
        .owns(resources.configmaps)
        .build(
          async (key, ctx: ReconcileContext<Widget>) => {
            calls++;
            if (key !== 'ns/c') await ctx.client(resources.configmaps).list({ namespace: 'ns' });
            return Action.done();
          },
          { logger: false },
        );
      server.create(widgets, widget('a'));
      server.create(widgets, widget('b'));
      const stopOne = new AbortController();
      const done = controller.run(stopOne.signal);
      await until(() => calls === 2 && controller.stats().running === 0, 'both reconciles');
      expect(close).not.toHaveBeenCalled();
      stopOne.abort();
      await done;
      expect(close).toHaveBeenCalledTimes(1); // one client for the resource, shared by both reconciles
      // A run whose reconciles never ask makes no client, so closes none.
      server.delete(widgets, 'a', 'ns');
      server.delete(widgets, 'b', 'ns');
      server.create(widgets, widget('c'));
      await until(() => factory.informers()['example.com/v1/widgets']?.getIndexer().listKeys().join() === 'ns/c', 'only c in the cache');
      const stopTwo = new AbortController();
      const again = controller.run(stopTwo.signal);
      await until(() => calls === 3 && controller.stats().running === 0, 'the reconcile of c');
      stopTwo.abort();
      await again;
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      close.mockRestore();
    }
  });

  it('ctx.wrote takes a DeleteResult and a Status (what kube-apiserver answers a DELETE with)', async () => {
    const { factory, gate } = setup();
    const plain = new ResourceClient(server.kubeConfig, resources.configmaps);
    const seen: string[][] = [];
    const controller = Controller.for(factory, widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx: ReconcileContext<Widget>) => {
          const names = ctx.children(resources.configmaps).map((c) => c.metadata!.name!);
          seen.push(names);
          if (names.includes('a')) ctx.wrote(await plain.delete('a', 'ns'));
          if (names.includes('b')) {
            const result = await plain.delete('b', 'ns');
            ctx.wrote({ kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'b', kind: 'configmaps', uid: result.gone ? result.status?.details?.uid : undefined } });
          }
          return Action.done();
        },
        { logger: false },
      );
    const w = server.create(widgets, widget('w'));
    server.create('configmaps', child(w, 'a'));
    server.create('configmaps', child(w, 'b'));
    run(controller);
    await until(() => seen.length === 1, 'the first reconcile');
    gate('configmaps').hold();
    await until(() => configMapsOnServer().length === 0, 'the deletes');
    controller.schedule('ns/w');
    await until(() => controller.stats().running === 1, 'the second reconcile to start');
    for (let i = 0; i < 50; i++) await flushPromises(1);
    expect(seen).toHaveLength(1);
    gate('configmaps').release();
    await until(() => seen.length >= 2, 'the second reconcile');
    expect(seen[1]).toEqual([]);
    plain.close();
  });

  it('without a KubeConfig (a listWatchFor factory, no kubeConfig option) ctx.client stops the controller with INVALID_OPTION', async () => {
    const factory = new SharedInformerFactory(undefined, { logger: false, listWatchFor: (gvr) => newListWatch(server.kubeConfig, gvr) });
    factory.start(stop.signal);
    const controller = Controller.for(factory, widgets).build(async (_key, ctx) => {
      ctx.client(resources.configmaps);
      return Action.done();
    }, { logger: false });
    server.create(widgets, widget('w'));
    await expect(controller.run(stop.signal)).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expect.stringMatching(/ControllerOptions.kubeConfig/) as string });
    const withOption = Controller.for(factory, widgets).build(
      async (_key, ctx) => {
        await ctx.client(resources.configmaps).list({ namespace: 'ns' });
        stop.abort();
        return Action.done();
      },
      { logger: false, kubeConfig: server.kubeConfig },
    );
    await withOption.run(stop.signal);
  });

  it('ctx.wrote refuses what it cannot record, naming why: a Failure Status, a Status without details, a Status in a cluster-scoped reconcile', () => {
    const writes = new ObservedWrites('controller c', [{ resource: resources.configmaps, informer: {} as never }]);
    expect(() => writes.record('ns/w', { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, details: { name: 'x', kind: 'configmaps' } })).toThrow(/Failure Status \(NotFound\)/);
    expect(() => writes.record('ns/w', { kind: 'Status', status: 'Success' })).toThrow(/without details/);
    expect(() => writes.record('w', { kind: 'Status', status: 'Success', details: { name: 'x', kind: 'configmaps' } })).toThrow(/names no namespace/);
    expect(() => writes.record('ns/w', { kind: 'Status', status: 'Success', details: { name: 'x', kind: 'secrets' } })).toThrow(/does not watch/);
    writes.record('ns/w', { kind: 'Status', status: 'Success', details: { name: 'x', kind: 'configmaps' } });
    writes.record('ns/w', { gone: true, status: { kind: 'Status', status: 'Success', details: { name: 'y', kind: 'configmaps' } } });
    expect(writes.size).toBe(1);
  });
});
