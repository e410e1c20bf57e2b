// kubeconfigSecrets plugged into MultiClusterManager (issue 51): a cluster added and removed through a kubeconfig Secret while the manager runs; a Secret naming an engaged cluster twice refused, never reconciled against.

import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { resources } from '../../../src/core/index.js';
import { Action } from '../../../src/controller/index.js';
import { SharedInformerFactory } from '../../../src/index.js';
import { KUBECONFIG_SECRET_LABEL, kubeconfigSecrets, MultiClusterController, MultiClusterManager } from '../../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../../src/testing/index.js';
import { until } from './clusters.js';
import { kubeconfigText } from '../../helpers/kubeconfig.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});


async function server(): Promise<FakeApiServer> {
  const s = await startFakeApiServer({ logger: false });
  cleanups.push(() => s.close());
  return s;
}

const kubeconfig = (s: FakeApiServer): string => kubeconfigText({ server: `http://127.0.0.1:${s.port}` });

const secret = (name: string, target: FakeApiServer, cluster = name): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'fleet', labels: { [KUBECONFIG_SECRET_LABEL]: 'true', cluster } },
  data: { kubeconfig: Buffer.from(kubeconfig(target)).toString('base64') },
});

const cm = (name: string, from: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data: { from } });

describe('kubeconfigSecrets in a MultiClusterManager', () => {
  it('engages a cluster when its Secret is added and disengages it when the Secret is deleted, while the manager runs; a second Secret naming it is refused', async () => {
    const management = await server();
    const east = await server();
    const west = await server();
    east.create(resources.configmaps, cm('a', 'east'));
    west.create(resources.configmaps, cm('a', 'west'));
    const seen: string[] = [];
    const controller = MultiClusterController.for(resources.configmaps).build(
      async (_key, ctx) => {
        if (ctx.object !== undefined) seen.push(`${ctx.cluster} ${ctx.key} ${ctx.object.data?.from}`);
        return Action.done();
      },
      { name: 'see', logger: false },
    );
    const factory = new SharedInformerFactory(management.kubeConfig, { logger: false });
    const provider = kubeconfigSecrets({ factory, namespace: 'fleet', clusterName: (s) => s.metadata?.labels?.cluster });
    const manager = new MultiClusterManager({ providers: [provider], controllers: [controller], factoryOptions: { logger: false }, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
      await factory.shutdown();
    });

    management.create(resources.secrets, secret('east', east));
    await until(() => seen.includes('east ns/a east'), 'east reconciled');
    management.create(resources.secrets, secret('west', west));
    await until(() => seen.includes('west ns/a west'), 'west reconciled');
    expect(manager.clusters().sort()).toEqual(['east', 'west']);

    // A second Secret naming east, with west's kubeconfig: refused; nothing of west is reconciled as east.
    management.create(resources.secrets, secret('east-again', west, 'east'));
    await until(() => provider.stats().refused.duplicate === 1, 'the duplicate refused');
    expect(manager.readiness().refused).toBe(1);
    west.create(resources.configmaps, cm('b', 'west'));
    await until(() => seen.includes('west ns/b west'), 'west b reconciled');
    expect(seen.filter((s) => s.startsWith('east ')).every((s) => s.endsWith(' east'))).toBe(true);

    management.delete(resources.secrets, 'west', 'fleet');
    await until(() => !manager.clusters().includes('west'), 'west disengaged');
    expect(manager.clusters()).toEqual(['east']);
    expect(provider.stats()).toMatchObject({ engaged: { east: 'fleet/east' }, engages: 2, disengages: 1 });
  });
});
