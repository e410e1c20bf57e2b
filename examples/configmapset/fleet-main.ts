// configmapset over many clusters: the operator's fleet form (fleet.ts) under one MultiClusterManager, its clusters named by kubeconfig Secrets in a management cluster, each cluster running the scenario.
//
// Run it (from the repository root, after `npm install`):
//   npx tsx examples/configmapset/fleet-main.ts
// Three embedded fake API servers: a management cluster holding one kubeconfig Secret per cluster
// (`kubeconfigSecrets`), and the clusters east and west. It runs the scenario on both at once (each
// line prefixed with its cluster), then deletes west's Secret — west is disengaged, east runs on — and
// prints `fleet: PASSED` (exit 0) or `FAILED` (exit 1). Ctrl-C stops it cleanly (`fleet: stopped`, exit 0).
// On real clusters: test/apiserver/multicluster-fleet.test.ts runs the same over two kube-apiservers,
// kills one and restarts it.

import { realClock, resources, sleep } from '../../src/index.js';
import { KUBECONFIG_SECRET_LABEL, kubeconfigSecrets, MultiClusterManager, shutdownSignal } from '../../src/operations/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { exitWhenIdle, isMain } from '../lib/cluster.js';
import { configMapSets } from './crd.js';
import { ConfigMapSetFleet } from './fleet.js';
import { clusterRegistry, FileRegistry } from './registry.js';
import { runScenario } from './scenario.js';

const NAMESPACE = 'demo';
const SECRETS = 'fleet';

/** The kubeconfig a Secret holds for the fake server `server` (no file paths: the provider refuses them). */
function kubeconfigOf(name: string, server: FakeApiServer): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters:\n- name: ${name}\n  cluster:\n    server: http://127.0.0.1:${server.port}`,
    'users:\n- name: operator\n  user:\n    token: fake-token',
    `contexts:\n- name: ${name}\n  context:\n    cluster: ${name}\n    user: operator`,
    `current-context: ${name}`,
    '',
  ].join('\n');
}

/** Polls `cond` every 20 ms until it holds or `signal` aborts (then false). */
async function whenTrue(cond: () => boolean, signal: AbortSignal): Promise<boolean> {
  while (!cond()) if (!(await sleep(realClock, 20, signal))) return false;
  return true;
}

/**
 * Runs the example: the fleet over east and west, both scenarios, then west's Secret deleted. Resolves
 * with whether every step converged, the registry ended empty and west was disengaged; stops early
 * (not passed) when `signal` aborts.
 */
export async function runFleetExample(log: (line: string) => void, signal: AbortSignal): Promise<boolean> {
  const [management, east, west] = await Promise.all([1, 2, 3].map(() => startFakeApiServer({ logger: false })));
  for (const cluster of [east, west]) cluster.resource({ ...configMapSets, generation: true });
  const registry = await FileRegistry.temporary();
  const fleet = new ConfigMapSetFleet({ registry, logger: false });
  const secrets = new SharedInformerFactory(management.kubeConfig, { logger: false });
  const manager = new MultiClusterManager({
    providers: [kubeconfigSecrets({ factory: secrets, namespace: SECRETS })],
    controllers: [fleet],
    factoryOptions: { namespace: NAMESPACE, logger: false },
    logger: false,
  });
  const stop = new AbortController();
  const running = manager.run(AbortSignal.any([signal, stop.signal]));
  try {
    for (const [name, server] of [['east', east], ['west', west]] as const) {
      management.create(resources.secrets, {
        metadata: { name, namespace: SECRETS, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
        data: { kubeconfig: Buffer.from(kubeconfigOf(name, server)).toString('base64') },
      });
    }
    if (!(await whenTrue(() => manager.clusters().length === 2, signal))) return false;
    log(`engaged from Secrets in ${SECRETS}: ${manager.clusters().join(', ')}`);
    const results = await Promise.all(
      (['east', 'west'] as const).map((name) =>
        runScenario({ kubeConfig: (name === 'east' ? east : west).kubeConfig, namespace: NAMESPACE, registry: clusterRegistry(registry, name), log: (line) => log(`[${name}] ${line}`), signal }),
      ),
    );
    const converged = results.every((r) => r.passed);
    const leftOver = Object.keys(await registry.all());
    const done = (i: number): number => results[i].steps.filter((step) => step.converged).length;
    log(`scenarios: east ${done(0)}/6, west ${done(1)}/6 steps converged; registry ${leftOver.length === 0 ? 'empty' : leftOver.join(', ')}`);

    management.delete(resources.secrets, 'west', SECRETS);
    if (!(await whenTrue(() => !fleet.stats().clusters.includes('west'), signal))) return false;
    log(`deleted Secret ${SECRETS}/west: engaged now ${manager.clusters().join(', ')}`);
    const stats = fleet.stats();
    log(`fleet: ${stats.succeeded} reconciles succeeded, ${stats.failed} failed; ${stats.cleanups} cleanups; ${stats.configMaps.created} ConfigMaps created`);
    return converged && leftOver.length === 0 && manager.clusters().join() === 'east';
  } finally {
    stop.abort();
    await running;
    await secrets.shutdown();
    await Promise.all([management, east, west].map((s) => s.close()));
    await registry.dispose();
  }
}

if (isMain(import.meta.url)) {
  const signal = shutdownSignal({ logger: false });
  runFleetExample((line) => console.log(line), signal).then(
    (passed) => {
      // Ctrl-C is a clean stop, not a failure.
      console.log(`fleet: ${passed ? 'PASSED' : signal.aborted ? 'stopped' : 'FAILED'}`);
      exitWhenIdle(passed || signal.aborted ? 0 : 1);
    },
    (err: unknown) => {
      // A request cut short by Ctrl-C is the stop, not a failure.
      if (signal.aborted) console.log('fleet: stopped');
      else console.error(`configmapset fleet: ${err instanceof Error ? err.message : String(err)}`);
      exitWhenIdle(signal.aborted ? 0 : 1);
    },
  );
}
