// The multi-cluster manager with kube-apiserver as one of its clusters (the suite's shared server) and
// the fake API server as the other: per-cluster read-your-writes against real conflicts (a reconcile on
// a stale cache would get 409s), and a cluster whose credentials the real server refuses (401) reported
// unready with its reason while the others run. Run with `npm run test:apiserver -- multicluster`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources } from '../../src/index.js';
import { Action } from '../../src/controller.js';
import { MultiClusterController, MultiClusterManager, probeReport, staticClusters } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

let real: RealApiServer;
let fake: FakeApiServer;
let namespace: string;
beforeAll(async () => {
  real = await startRealApiServer();
  fake = await startFakeApiServer();
  namespace = await freshNamespace(real, 'multicluster');
});
afterAll(async () => {
  await fake.close();
  await real.stop();
});

/** Polls `cond` (a real server: real time) until it holds, for at most `ms`. */
async function eventually(cond: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The real server's kubeconfig with a token it does not know: every request is answered 401. */
function refusedKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'real', server: real.server, caData: Buffer.from(real.ca).toString('base64') }],
    users: [{ name: 'nobody', token: 'not-a-token-this-server-knows' }],
    contexts: [{ name: 'refused', cluster: 'real', user: 'nobody' }],
    currentContext: 'refused',
  });
  return kc;
}

const cm = (n: number, resourceVersion?: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counter', namespace, ...(resourceVersion === undefined ? {} : { resourceVersion }) }, data: { n: String(n) } });

describe('MultiClusterManager on kube-apiserver v1.37.2 and the fake API server', () => {
  it('counts to 5 on each cluster without a conflict, and reports the cluster whose credentials are refused', async () => {
    const client = newResourceClient(real.kubeConfig, resources.configmaps);
    await client.create(cm(0));
    client.close();
    fake.create(resources.configmaps, cm(0));
    const failures: string[] = [];
    const controller = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        if (ctx.object === undefined) return Action.done();
        const n = Number(ctx.object.data?.n);
        if (n >= 5) return Action.done();
        try {
          await ctx.client(resources.configmaps).update(cm(n + 1, ctx.object.metadata?.resourceVersion));
        } catch (err) {
          failures.push(`${ctx.cluster}: ${(err as Error).message}`);
          throw err;
        }
        return Action.requeueAfter(0);
      },
      { name: 'counter', logger: false, concurrency: 2 },
    );
    const manager = new MultiClusterManager({
      providers: [staticClusters({ real: real.kubeConfig, fake: fake.kubeConfig, refused: refusedKubeConfig() })],
      controllers: [controller],
      factoryOptions: { namespace, logger: false },
      logger: false,
    });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      const counted = async (): Promise<boolean> => {
        const c = newResourceClient(real.kubeConfig, resources.configmaps);
        try {
          return (await c.get('counter', namespace)).data?.n === '5' && fake.get<ConfigMap>(resources.configmaps, 'counter', namespace)?.data?.n === '5';
        } finally {
          c.close();
        }
      };
      await eventually(counted, 'n = 5 on both clusters');
      expect(failures).toEqual([]);
      await eventually(() => manager.readiness().clusters.find((c) => c.name === 'refused')!.problems.length > 0, 'the 401 reported');
      const refused = manager.readiness().clusters.find((c) => c.name === 'refused')!;
      expect(refused.ready).toBe(false);
      expect(refused.problems.join(' ')).toMatch(/401|Unauthorized/i);
      expect(manager.readiness().clusters.filter((c) => c.ready).map((c) => c.name).sort()).toEqual(['fake', 'real']);
      expect(probeReport('readyz', { informers: manager.probeInformers() }).ok).toBe(true);
    } finally {
      stop.abort();
      await running;
    }
  });
});
