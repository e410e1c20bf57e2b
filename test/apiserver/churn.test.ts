// Real churn: kube-controller-manager's own controllers write, a seeded workload scales, rolls and deletes
// whole namespaces; every informer's cache must then equal the server exactly, and every handler's history end in it.
//
// Pods stay Pending (no scheduler, no kubelet): the deployment, replicaset, endpointslice, namespace and
// garbage-collector controllers still make the churn — ReplicaSets and Pods created and deleted, owner
// references followed on namespace deletion, Events for all of it. The configmapset operator then runs
// its scenario on the same cluster.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prng } from '../../soak/prng.js';
import type { KubeObject } from '../../src/core/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, SharedInformerFactory, type ResourceClient } from '../../src/index.js';
import { installCrd } from '../../examples/configmapset/crd.js';
import { ConfigMapSetOperator } from '../../examples/configmapset/operator.js';
import { FileRegistry } from '../../examples/configmapset/registry.js';
import { runScenario } from '../../examples/configmapset/scenario.js';
import { checkExact, HandlerHistory } from '../../soak/real/exact.js';
import { startRealApiServer, type RealApiServer } from './harness.js';

const SEED = Number(process.env.CHURN_SEED ?? 1);
const WATCHED = [resources.pods, resources.replicasets, resources.endpointslices, resources.events, resources.namespaces, resources.deployments] as const;

function deployment(name: string, namespace: string, replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } },
    },
  } as KubeObject;
}

function service(name: string, namespace: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { selector: { app: name }, ports: [{ port: 80 }] } } as KubeObject;
}

describe('real churn from kube-controller-manager', () => {
  let server: RealApiServer;
  let namespaces: ResourceClient<KubeObject>;
  let deployments: ResourceClient<KubeObject>;
  let services: ResourceClient<KubeObject>;

  beforeAll(async () => {
    server = await startRealApiServer({ controllerManager: true });
    namespaces = newResourceClient<KubeObject>(server.kubeConfig, resources.namespaces);
    deployments = newResourceClient<KubeObject>(server.kubeConfig, resources.deployments, { fieldManager: 'churn' });
    services = newResourceClient<KubeObject>(server.kubeConfig, resources.services, { fieldManager: 'churn' });
  });
  afterAll(async () => {
    namespaces?.close();
    deployments?.close();
    services?.close();
    await server?.stop();
  });

  it(`every cache equals a list at its own resource version after a seeded workload (seed ${SEED})`, async () => {
    const rng = new Prng(SEED);
    const stop = new AbortController();
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const histories = new Map<string, HandlerHistory>();
    for (const resource of WATCHED) {
      const history = new HandlerHistory();
      factory.forResource<unknown>(resource).addEventHandler(history.handler);
      histories.set(resource.resource, history);
    }
    const running = factory.run(stop.signal);
    try {
      await factory.waitForCacheSync(stop.signal);

      // The workload: namespaces with Deployments and Services; scale, roll, delete whole namespaces.
      const live: Array<{ ns: string; apps: string[] }> = [];
      let made = 0;
      const newNamespace = async (): Promise<void> => {
        const ns = `churn-${SEED}-${made++}`;
        await namespaces.create({ metadata: { name: ns } });
        const apps = ['web', 'api'];
        for (const app of apps) {
          await deployments.create(deployment(app, ns, rng.int(1, 4)));
          await services.create(service(app, ns));
        }
        live.push({ ns, apps });
      };
      for (let i = 0; i < 4; i++) await newNamespace();
      for (let step = 0; step < 60; step++) {
        const target = rng.pick(live);
        const app = rng.pick(target.apps);
        const roll = rng.next();
        if (roll < 0.5) {
          await deployments.patch(app, target.ns, { spec: { replicas: rng.int(0, 6) } }, 'merge');
        } else if (roll < 0.85) {
          const stamp = { metadata: { annotations: { 'churn/rollout': String(step) } } };
          await deployments.patch(app, target.ns, { spec: { template: stamp } }, 'merge');
        } else if (live.length > 1) {
          live.splice(live.indexOf(target), 1);
          await namespaces.delete(target.ns); // the namespace controller and the garbage collector do the rest
          await newNamespace();
        }
        await new Promise((resolve) => setTimeout(resolve, rng.int(50, 400)));
      }

      // Quiescence: every namespace deleted is gone (its objects with it), the controllers have settled.
      const nsInformer = factory.forResource<KubeObject>(resources.namespaces);
      const deadline = Date.now() + 120_000;
      while (nsInformer.getIndexer().listKeys().some((k) => k.startsWith(`churn-${SEED}-`) && !live.some((l) => l.ns === k))) {
        if (Date.now() > deadline) throw new Error('deleted namespaces did not go within 120 s');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await new Promise((resolve) => setTimeout(resolve, 5_000));

      const results = [];
      for (const resource of WATCHED) {
        const lw = newListWatch<unknown>(server.kubeConfig, resource, { metadataOnly: true });
        results.push(await checkExact(factory.forResource<unknown>(resource), histories.get(resource.resource)!, lw, AbortSignal.timeout(60_000)));
        lw.close();
      }
      const summary = results.map((r) => `${r.name}: ${r.objects} objects at ${r.resourceVersion}, ${histories.get(r.name.split('/').at(-1) ?? '')?.events ?? 0} handler events`);
      console.log(`churn seed ${SEED}:\n  ${summary.join('\n  ')}`);
      expect(results.map((r) => ({ name: r.name, cacheDiff: r.cacheDiff, handlerDiff: r.handlerDiff }))).toEqual(
        results.map((r) => ({ name: r.name, cacheDiff: [], handlerDiff: [] })),
      );
      // The churn was real: the controllers made pods and replicasets, and deleted some.
      expect(results.find((r) => r.name === 'apps/v1/replicasets')!.objects).toBeGreaterThan(3);
      expect(histories.get('pods')!.events).toBeGreaterThan(20);
      for (const r of Object.values(factory.health())) expect(r.counters.regressions, r.name).toBe(0);
    } finally {
      stop.abort();
      await running;
    }
  }, 300_000);

  it('the configmapset operator converges on this cluster, with the garbage collector following its owner references too', async () => {
    expect(await installCrd(server.kubeConfig, AbortSignal.timeout(60_000))).toBe('created');
    const namespace = `churn-cms-${SEED}`;
    await namespaces.create({ metadata: { name: namespace } });
    const registry = await FileRegistry.temporary();
    const operator = new ConfigMapSetOperator(server.kubeConfig, { registry, namespace, logger: false });
    const stop = new AbortController();
    const running = operator.run(stop.signal);
    try {
      const lines: string[] = [];
      const result = await runScenario({ kubeConfig: server.kubeConfig, namespace, registry, log: (l) => lines.push(l), stepTimeoutMs: 30_000 });
      expect(result.steps.filter((s) => !s.converged), lines.join('\n')).toEqual([]);
      expect(result.passed).toBe(true);
      expect(operator.stats()).toMatchObject({ failed: 0, cleanups: 2 });
    } finally {
      stop.abort();
      await running;
      await registry.dispose();
    }
  }, 200_000);
});
