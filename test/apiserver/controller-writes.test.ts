// A controller writing through ctx.client, on both servers. Behind `predicates.generationChanged` with
// finalizer(): a new object gets past adding the finalizer (the runtime always passes the primary's
// finalizer and deletionTimestamp changes), its child is applied, and its deletion runs the cleanup, whose
// delete of the child (kube-apiserver answers a Status) is recorded without error. And a delayed watch: a
// reconcile after a write through ctx.client waits until the cache holds it. Run with
// `npm run test:apiserver -- controller-writes`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { type DeleteResult, newListWatch, newResourceClient, resources, SharedInformerFactory } from '../../src/index.js';
import { Action, Controller, finalizer, predicates } from '../../src/controller.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { freshNamespace, startRealApiServer } from './harness.js';
import { delayable } from '../helpers/delayable.js';

interface Target {
  kubeConfig: KubeConfig;
  namespace: string;
  stop(): Promise<void>;
}

const targets: Record<string, () => Promise<Target>> = {
  fake: async () => {
    const server = await startFakeApiServer();
    // kube-apiserver keeps a generation for Deployments; the fake does for the resources declared so.
    server.resource({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, generation: true });
    return { kubeConfig: server.kubeConfig, namespace: 'default', stop: () => server.close() };
  },
  'kube-apiserver v1.37.2': async () => {
    const server = await startRealApiServer();
    return { kubeConfig: server.kubeConfig, namespace: await freshNamespace(server, 'finalizer'), stop: () => server.stop() };
  },
};

const FINALIZER = 'example.com/cleanup';

/** Polls `cond` (a real server: real time) until it holds, for at most `ms`. */
async function eventually(cond: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

const deployment = (name: string, namespace: string): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace },
  spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } } },
});

async function configMapsOf(namespace: string): Promise<ConfigMap[]> {
  const client = newResourceClient<ConfigMap>(kubeConfigOf(), resources.configmaps);
  try {
    return (await client.list({ namespace })).items;
  } finally {
    client.close();
  }
}

let currentKubeConfig: KubeConfig | undefined;
const kubeConfigOf = (): KubeConfig => currentKubeConfig!;

describe.each(Object.keys(targets))('a controller writing through ctx.client on %s', (which) => {
  let target: Target;
  beforeAll(async () => {
    target = await targets[which]();
    currentKubeConfig = target.kubeConfig;
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('behind generationChanged, finalizer() converges: the finalizer, then the child and the apply; on deletion the cleanup deletes the child and the object goes', async () => {
    const ns = target.namespace;
    const stop = new AbortController();
    const factory = new SharedInformerFactory(target.kubeConfig, { namespace: ns, logger: false });
    const calls: string[] = [];
    const deletes: Array<DeleteResult<ConfigMap>> = [];
    const controller = Controller.for(factory, resources.deployments, { predicates: [predicates.generationChanged] })
      .owns(resources.configmaps)
      .build(
        (_key, ctx) =>
          finalizer(ctx.client(resources.deployments), FINALIZER, ctx, {
            apply: async (d) => {
              await ctx.client(resources.configmaps).apply({
                apiVersion: 'v1',
                kind: 'ConfigMap',
                metadata: { name: `${d.metadata!.name!}-config`, namespace: ns, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata!.name!, uid: d.metadata!.uid!, controller: true }] },
                data: { replicas: String(d.spec?.replicas ?? 1) },
              });
              // Told once the apply answered: the test reads the ConfigMap as soon as it sees this.
              calls.push('apply');
              return Action.done();
            },
            cleanup: async (d) => {
              calls.push('cleanup');
              const name = `${d.metadata!.name!}-config`;
              if (ctx.children(resources.configmaps).some((c) => c.metadata?.name === name)) deletes.push(await ctx.client(resources.configmaps).delete(name, ns));
              return Action.done();
            },
          }),
        { name: 'finalizer-test', logger: false },
      );
    factory.start(stop.signal);
    const running = controller.run(stop.signal);
    const deployments = newResourceClient<Deployment>(target.kubeConfig, resources.deployments);
    const configMaps = newResourceClient<ConfigMap>(target.kubeConfig, resources.configmaps);
    try {
      await deployments.create(deployment('app', ns));
      await eventually(() => calls.includes('apply'), 'the apply handler (past adding the finalizer)');
      expect((await deployments.get('app', ns)).metadata?.finalizers).toEqual([FINALIZER]);
      expect((await configMaps.get('app-config', ns)).data).toEqual({ replicas: '2' });
      expect(controller.stats()).toMatchObject({ failed: 0 });

      await deployments.delete('app', ns);
      await eventually(async () => (await deployments.list({ namespace: ns })).items.length === 0, 'the deployment to go');
      expect(calls).toContain('cleanup');
      expect(deletes).toHaveLength(1);
      // kube-apiserver answers the DELETE of an object without finalizers with a Status; the fake with the object.
      expect(deletes[0].gone).toBe(true);
      expect((await configMaps.list({ namespace: ns })).items.filter((c) => c.metadata?.name === 'app-config')).toEqual([]);
      expect(controller.stats()).toMatchObject({ failed: 0 });
    } finally {
      deployments.close();
      configMaps.close();
      stop.abort();
      await running;
    }
  });

  it('a delayed watch: the reconcile after a write through ctx.client waits until the cache holds it (no second child)', async () => {
    const ns = target.namespace;
    const stop = new AbortController();
    const gates = new Map<string, ReturnType<typeof delayable>>();
    const factory = new SharedInformerFactory(target.kubeConfig, {
      namespace: ns,
      logger: false,
      listWatchFor: (gvr) => {
        const gate = delayable(newListWatch(target.kubeConfig, gvr, { namespace: ns }));
        gates.set(gvr.resource, gate);
        return gate.lw;
      },
    });
    const seen: number[] = [];
    const controller = Controller.for(factory, resources.deployments)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx) => {
          const children = ctx.children(resources.configmaps);
          seen.push(children.length);
          const d = ctx.object;
          if (d !== undefined && children.length === 0) {
            await ctx.client(resources.configmaps).create({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `${d.metadata!.name!}-${seen.length}`, namespace: ns, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata!.name!, uid: d.metadata!.uid!, controller: true }] },
            });
          }
          return Action.done();
        },
        { name: 'delayed-watch-test', logger: false },
      );
    factory.start(stop.signal);
    const running = controller.run(stop.signal);
    const deployments = newResourceClient<Deployment>(target.kubeConfig, resources.deployments);
    const children = async (): Promise<number> => (await configMapsOf(ns)).filter((c) => c.metadata?.name?.startsWith('lagging-')).length;
    try {
      await factory.waitForCacheSync(AbortSignal.timeout(30_000));
      gates.get('configmaps')!.hold();
      await deployments.create(deployment('lagging', ns));
      await eventually(async () => (await children()) === 1, 'the first child');
      controller.schedule(`${ns}/lagging`);
      // Running (waiting for the write to be observed), or — were the write not recorded — done already.
      await eventually(() => controller.stats().running === 1 || seen.length >= 2, 'the second reconcile to start');
      await new Promise((resolve) => setTimeout(resolve, 300)); // time for a reconcile on a stale cache to do its harm
      expect(seen).toEqual([0]);
      gates.get('configmaps')!.release();
      await eventually(() => seen.length >= 2 && controller.stats().running === 0, 'the second reconcile');
      expect(seen[1]).toBe(1);
      expect(await children()).toBe(1);
      expect(controller.stats()).toMatchObject({ failed: 0 });
    } finally {
      deployments.close();
      stop.abort();
      await running;
    }
  });
});
