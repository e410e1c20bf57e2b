// Issue 51's proof: the configmapset operator over two kube-apiservers of its own (east, west) under one
// MultiClusterManager, the clusters' kubeconfigs Secrets in a management cluster — the suite's shared
// kube-apiserver (real, never killed here, and a third cluster for the add/remove). Each cluster's
// scenario converges; east's kube-apiserver killed and restarted: west reconciles on meanwhile, east is
// reported unready while /readyz stays ok, and converges after; a cluster added and removed through a
// Secret while running. Run with `npm run test:apiserver -- multicluster-fleet`.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Secret } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources, SharedInformerFactory, stripManagedFields, type ResourceClient } from '../../src/index.js';
import { KUBECONFIG_SECRET_LABEL, kubeconfigSecrets, MultiClusterManager, probeReport } from '../../src/operations/index.js';
import { awaitConverged, fetchSnapshot } from '../../examples/configmapset/consistency.js';
import { configMapSets, FINALIZER, installCrd, type ConfigMapSet } from '../../examples/configmapset/crd.js';
import { ConfigMapSetFleet } from '../../examples/configmapset/fleet.js';
import { clusterRegistry, FileRegistry } from '../../examples/configmapset/registry.js';
import { configMapSet, runScenario } from '../../examples/configmapset/scenario.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { kubeconfigText } from '../helpers/kubeconfig.js';

let east: RealApiServer;
let west: RealApiServer;
/** The management cluster (the suite's shared server): the Secrets; later a cluster of the fleet too, as `hub`. */
let hub: RealApiServer;
/** The sets' namespace, the same name on every cluster (the fleet's factories watch it). */
const namespace = `ki-fleet-${randomBytes(3).toString('hex')}`;
/** The Secrets' namespace on the management cluster. */
let secretsNamespace: string;

beforeAll(async () => {
  [east, west, hub] = await Promise.all([startRealApiServer({ private: true }), startRealApiServer({ private: true }), startRealApiServer()]);
  secretsNamespace = await freshNamespace(hub, 'ki-fleet-secrets');
  await Promise.all(
    [east, west, hub].map(async (server) => {
      const namespaces = newResourceClient(server.kubeConfig, resources.namespaces);
      await namespaces.create({ metadata: { name: namespace } }).finally(() => namespaces.close());
      await installCrd(server.kubeConfig, AbortSignal.timeout(60_000));
    }),
  );
});
afterAll(async () => {
  await Promise.all([east?.stop(), west?.stop(), hub?.stop()]);
});

/** A kubeconfig Secret for `server` (as kubeconfigSecrets reads it: the CA inline, a bearer token — no file paths). */
function kubeconfigSecret(name: string, server: RealApiServer): Secret {
  const kubeconfig = kubeconfigText({ server: server.server, ca: server.ca, user: server.token, name });
  return { metadata: { name, namespace: secretsNamespace, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } }, data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') } };
}

/** Polls `cond` (real servers: real time) until it holds, for at most `ms`. */
async function eventually(cond: () => boolean | Promise<boolean>, what: () => string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the configmapset operator over two kube-apiservers, clusters from kubeconfig Secrets', () => {
  it('converges on each, rides out a kube-apiserver kill on one, and follows a cluster added and removed by its Secret', async () => {
    const registry = await FileRegistry.temporary();
    /** Every reconcile's start, in order: `cluster key`. */
    const reconciles: string[] = [];
    const fleet = new ConfigMapSetFleet({ registry, logger: false, onReconcile: (key, phase, cluster) => (phase === 'start' ? reconciles.push(`${cluster} ${key}`) : undefined) });
    const management = new SharedInformerFactory(hub.kubeConfig, { logger: false });
    const provider = kubeconfigSecrets({ factory: management, namespace: secretsNamespace });
    const manager = new MultiClusterManager({
      providers: [provider],
      controllers: [fleet],
      factoryOptions: {
        namespace,
        transform: stripManagedFields,
        logger: false,
        // A killed server is retried within a second, and reported unready once its watch was down for 200 ms.
        informerOptions: { reflector: { backoff: { initialMs: 50, maxMs: 1000 } }, health: { watchDisconnectedMs: 200 } },
      },
      logger: false,
    });
    const secrets = newResourceClient(hub.kubeConfig, resources.secrets);
    const configMaps = newResourceClient(hub.kubeConfig, resources.configmaps, { fieldManager: 'test-user' });
    const clients = new Map<RealApiServer, ResourceClient<ConfigMapSet>>();
    const sets = (server: RealApiServer): ResourceClient<ConfigMapSet> => {
      if (!clients.has(server)) clients.set(server, newResourceClient(server.kubeConfig, configMapSets, { fieldManager: 'test-user' }));
      return clients.get(server)!;
    };
    const converged = async (server: RealApiServer, cluster: string, expectation?: Parameters<typeof awaitConverged>[0]['expect']): Promise<void> => {
      const result = await awaitConverged({ kubeConfig: server.kubeConfig, namespace, registry: clusterRegistry(registry, cluster), timeoutMs: 30_000, expect: expectation });
      expect(result.difference, `${cluster} converged`).toBeUndefined();
    };
    const verdict = (cluster: string) => manager.readiness().clusters.find((c) => c.name === cluster);
    const stop = new AbortController();
    await secrets.create(kubeconfigSecret('east', east));
    await secrets.create(kubeconfigSecret('west', west));
    const running = manager.run(stop.signal);
    try {
      // 1. Each cluster's scenario, both at once: every step converges on its own cluster.
      await eventually(() => manager.clusters().length === 2, () => `east and west engaged (engaged: ${manager.clusters().join(', ')})`);
      const lines: Record<string, string[]> = { east: [], west: [] };
      const [onEast, onWest] = await Promise.all(
        (['east', 'west'] as const).map((cluster) =>
          runScenario({ kubeConfig: (cluster === 'east' ? east : west).kubeConfig, namespace, registry: clusterRegistry(registry, cluster), log: (l) => lines[cluster].push(l), stepTimeoutMs: 30_000 }),
        ),
      );
      expect(onEast.passed, lines.east.join('\n')).toBe(true);
      expect(onWest.passed, lines.west.join('\n')).toBe(true);
      expect(fleet.stats()).toMatchObject({ cleanups: 4, finalizers: { added: 4, removed: 4 } });
      expect(await registry.all()).toEqual({}); // both clusters' sets deleted: their records removed from the one registry

      // 2. east's kube-apiserver killed (SIGKILL, ours: the outage lasts as long as the checks need), then
      // started again by the harness's restart (its kill finds the process gone and starts a new one).
      await sets(east).create(configMapSet('steady', namespace, { names: ['a'], data: { k: 'v1' } }));
      await converged(east, 'east');
      const killedPid = east.pids.apiServer;
      process.kill(killedPid, 'SIGKILL');
      await eventually(() => verdict('east')?.ready === false, () => `east reported unready (${JSON.stringify(verdict('east'))})`);
      const outage = reconciles.length;
      // While east is down: /readyz is ok, west is ready, and a set created on west converges.
      expect(probeReport('readyz', { informers: manager.probeInformers() }).ok).toBe(true);
      expect(verdict('west')).toMatchObject({ ready: true, problems: [] });
      expect(manager.stats()).toMatchObject({ engaged: 2, unready: 1 });
      await sets(west).create(configMapSet('meanwhile', namespace, { names: ['x', 'y'], data: { k: 'w' } }));
      await converged(west, 'west', (s) => (s.sets.length === 1 ? undefined : 'meanwhile not seen yet'));
      expect(reconciles.slice(outage)).toContain(`west ${namespace}/meanwhile`);
      expect(reconciles.slice(outage).filter((r) => r.startsWith('east '))).toEqual([]);
      const eastDown = verdict('east');
      expect(eastDown?.ready).toBe(false);
      expect(eastDown?.problems.join('; ')).toMatch(/ECONNREFUSED|disconnected/);
      expect(probeReport('readyz', { informers: manager.probeInformers() }).ok).toBe(true);
      await east.restart('kube-apiserver');
      expect(east.pids.apiServer).not.toBe(killedPid);
      // Back: a change to east's old set and a new set both converge; east is ready again.
      await sets(east).patch('steady', namespace, { spec: { names: ['a', 'b'], data: { k: 'v2' } } }, 'merge');
      await sets(east).create(configMapSet('after', namespace, { names: ['z'] }));
      await converged(east, 'east', (s) => (s.sets.length === 2 && s.configMaps.some((cm) => cm.metadata?.name === 'steady-b' && cm.data?.k === 'v2') ? undefined : 'the changes after the restart'));
      await eventually(() => verdict('east')?.ready === true, () => `east ready again (${JSON.stringify(verdict('east'))})`);

      // 3. A cluster added through a Secret while running (hub: the management server itself), then removed.
      await secrets.create(kubeconfigSecret('hub', hub));
      await eventually(() => fleet.stats().clusters.includes('hub'), () => `hub engaged (fleet: ${fleet.stats().clusters.join(', ')})`);
      await sets(hub).create(configMapSet('joined', namespace, { names: ['h'], data: { on: 'hub' } }));
      await converged(hub, 'hub', (s) => (s.sets.length === 1 ? undefined : 'joined not seen yet'));
      await sets(hub).delete('joined', namespace);
      await converged(hub, 'hub', (s) => (s.sets.length === 0 ? undefined : 'joined not deleted yet'));
      // A set whose ConfigMap name is taken (by the user) is looked at again in 10 s: its key waits in the scheduler.
      await configMaps.create({ metadata: { name: 'waiting-t', namespace } });
      await sets(hub).create(configMapSet('waiting', namespace, { names: ['t'] }));
      await eventually(
        async () => (await sets(hub).get('waiting', namespace)).status?.conditions?.some((c) => c.reason === 'NameTaken') === true,
        () => 'waiting reported NameTaken',
      );
      // Its reconcile wrote the status, then returned the requeue: the key is queued once it has returned.
      await eventually(() => fleet.stats().queued === 1 && fleet.stats().running === 0, () => `waiting queued (${JSON.stringify(fleet.stats())})`);
      await secrets.delete('hub', secretsNamespace);
      await eventually(() => !fleet.stats().clusters.includes('hub') && !manager.clusters().includes('hub'), () => `hub disengaged (fleet: ${fleet.stats().clusters.join(', ')})`);
      expect(fleet.stats().queued).toBe(0); // its key left the scheduler with it
      const removed = reconciles.length;
      // Disengaged: a set created on hub now is never reconciled, while west's new set is.
      await sets(hub).create(configMapSet('unseen', namespace, { names: ['u'] }));
      await sets(west).create(configMapSet('later', namespace, { names: ['l'] }));
      await converged(west, 'west', (s) => (s.sets.length === 2 ? undefined : 'later not seen yet'));
      expect(reconciles.slice(removed).filter((r) => r.startsWith('hub '))).toEqual([]);
      const untouched = await fetchSnapshot(hub.kubeConfig, namespace, clusterRegistry(registry, 'hub'));
      expect(untouched.sets.map((s) => [s.metadata?.name, s.metadata?.finalizers ?? []])).toEqual([['unseen', []], ['waiting', [FINALIZER]]]);
      expect(untouched.configMaps.filter((cm) => cm.metadata?.name === 'unseen-u')).toEqual([]);
      expect(provider.stats()).toMatchObject({ engages: 3, disengages: 1 });
      expect(manager.stats()).toMatchObject({ engaged: 2, unready: 0, refused: 0 });
    } finally {
      stop.abort();
      await running;
      await management.shutdown();
      // The shared server keeps no finalizer of a stopped operator.
      await sets(hub).patch('waiting', namespace, { metadata: { finalizers: null } }, 'merge').catch(() => undefined);
      secrets.close();
      configMaps.close();
      for (const client of clients.values()) client.close();
      await registry.dispose();
    }
    expect(fleet.stats()).toMatchObject({ failed: 0 });
  });
});
