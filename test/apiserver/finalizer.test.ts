// A controller behind `predicates.generationChanged` with finalizer() and ctx.client, on both servers: a
// new object gets past adding the finalizer (the runtime always passes the primary's finalizer and
// deletionTimestamp changes), its child is applied, and its deletion runs the cleanup, whose delete of the
// child (kube-apiserver answers a Status) is recorded without error. Run with `npm run test:apiserver -- finalizer`.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { Action, Controller, SharedInformerFactory, finalizer, newResourceClient, predicates, resources, type DeleteResult } from '../../src/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { freshNamespace, startRealApiServer } from './harness.js';

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

describe.each(Object.keys(targets))('finalizer behind generationChanged on %s', (which) => {
  let target: Target;
  beforeAll(async () => {
    target = await targets[which]();
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('converges: the finalizer, then the child and the apply; on deletion the cleanup deletes the child and the object goes', async () => {
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
              calls.push('apply');
              await ctx.client(resources.configmaps).apply({
                apiVersion: 'v1',
                kind: 'ConfigMap',
                metadata: { name: `${d.metadata!.name!}-config`, namespace: ns, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata!.name!, uid: d.metadata!.uid!, controller: true }] },
                data: { replicas: String(d.spec?.replicas ?? 1) },
              });
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
      await deployments.create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'app', namespace: ns },
        spec: { replicas: 2, selector: { matchLabels: { app: 'app' } }, template: { metadata: { labels: { app: 'app' } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } } },
      });
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
});
