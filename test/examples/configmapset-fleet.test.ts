// The configmapset operator over many clusters (fleet.ts) on two fake API servers: each cluster's scenario, one registry keyed by cluster, Events written to the set's own cluster.
//
// test/apiserver/multicluster-fleet.test.ts runs the same fleet over two kube-apiservers with a kill and a Secret-driven add/remove.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type KubeObject } from '../../src/index.js';
import { eventsV1Resource, MultiClusterManager, staticClusters } from '../../src/operations/index.js';
import type { FakeApiServer } from '../../src/testing/index.js';
import { awaitConverged } from '../../examples/configmapset/consistency.js';
import { configMapSets } from '../../examples/configmapset/crd.js';
import { ConfigMapSetFleet } from '../../examples/configmapset/fleet.js';
import { clusterRegistry, FileRegistry } from '../../examples/configmapset/registry.js';
import { configMapSet, runScenario } from '../../examples/configmapset/scenario.js';
import { runExample, startExampleCluster, until } from './helpers.js';

const NS = 'demo';

describe('the configmapset operator over two clusters', () => {
  let east: FakeApiServer;
  let west: FakeApiServer;
  let registry: FileRegistry & { dispose(): Promise<void> };
  let fleet: ConfigMapSetFleet;
  let reconciles: string[];
  let stop: AbortController;
  let running: Promise<void>;

  beforeEach(async () => {
    [east, west] = await Promise.all([startExampleCluster(), startExampleCluster()]);
    for (const server of [east, west]) server.resource({ ...configMapSets, generation: true });
    registry = await FileRegistry.temporary();
    reconciles = [];
    fleet = new ConfigMapSetFleet({ registry, logger: false, onReconcile: (key, phase, cluster) => void (phase === 'start' && reconciles.push(`${cluster} ${key}`)) });
    const manager = new MultiClusterManager({
      providers: [staticClusters({ east: east.kubeConfig, west: west.kubeConfig })],
      controllers: [fleet],
      factoryOptions: { namespace: NS, logger: false, informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: 5 } } } },
      logger: false,
    });
    stop = new AbortController();
    running = manager.run(stop.signal);
  });
  afterEach(async () => {
    stop.abort();
    await running;
    await Promise.all([east.close(), west.close()]);
    await registry.dispose();
  });

  it("runs each cluster's scenario at once: every step converges on its cluster, and the one registry ends empty", async () => {
    const lines: Record<string, string[]> = { east: [], west: [] };
    const results = await Promise.all(
      (['east', 'west'] as const).map((cluster) =>
        runScenario({ kubeConfig: (cluster === 'east' ? east : west).kubeConfig, namespace: NS, registry: clusterRegistry(registry, cluster), log: (l) => lines[cluster].push(l), stepTimeoutMs: 10_000 }),
      ),
    );
    expect(results.map((r) => r.passed), [...lines.east, ...lines.west].join('\n')).toEqual([true, true]);
    expect(await registry.all()).toEqual({});
    expect(fleet.stats()).toMatchObject({ clusters: ['east', 'west'], cleanups: 4, finalizers: { added: 4, removed: 4 }, failed: 0 });
    // Each cluster's reconciles are of its own sets; both clusters' `demo/web` and `demo/db` are reconciled.
    for (const cluster of ['east', 'west']) expect(new Set(reconciles.filter((r) => r.startsWith(`${cluster} `)))).toEqual(new Set([`${cluster} ${NS}/web`, `${cluster} ${NS}/db`]));
  });

  it('keeps one record per cluster for two sets of one name, and writes each Event to the cluster of its set', async () => {
    east.create(configMapSets, configMapSet('web', NS, { names: ['a'], data: { on: 'east' } }));
    west.create(configMapSets, configMapSet('web', NS, { names: ['a', 'b'], data: { on: 'west' } }));
    for (const [cluster, server] of [['east', east], ['west', west]] as const) {
      const result = await awaitConverged({ kubeConfig: server.kubeConfig, namespace: NS, registry: clusterRegistry(registry, cluster), timeoutMs: 10_000, intervalMs: 5, expect: (s) => (s.sets.length === 1 ? undefined : 'web not seen yet') });
      expect(result.difference).toBeUndefined();
    }
    const records = await registry.all();
    expect(Object.keys(records).sort()).toEqual([`east/${NS}/web`, `west/${NS}/web`]);
    expect(records[`east/${NS}/web`].configMaps).toEqual(['web-a']);
    expect(records[`west/${NS}/web`].configMaps).toEqual(['web-a', 'web-b']);
    expect(east.get<KubeObject & { data?: Record<string, string> }>('configmaps', 'web-a', NS)?.data).toEqual({ on: 'east' });

    // Deleting east's set: its cleanup removes east's record only, and its CleanedUp Event is east's.
    east.delete(configMapSets, 'web', NS);
    await until(() => east.get(configMapSets, 'web', NS) === undefined, "east's web finalized");
    expect(Object.keys(await registry.all())).toEqual([`west/${NS}/web`]);
    const cleanedUp = (server: FakeApiServer): number => server.list<KubeObject & { reason?: string }>(eventsV1Resource, NS).filter((e) => e.reason === 'CleanedUp').length;
    await until(() => cleanedUp(east) === 1, 'the CleanedUp Event on east');
    expect(cleanedUp(west)).toBe(0);
    expect(west.get(configMapSets, 'web', NS)).toBeDefined();
  });
});

describe('examples/configmapset/fleet-main.ts', () => {
  it("runs as a program: clusters from Secrets, both scenarios converged, west disengaged by its Secret's delete, exit 0", async () => {
    const result = await runExample('examples/configmapset/fleet-main.ts', []);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('engaged from Secrets in fleet: east, west');
    expect(result.stdout).toContain('scenarios: east 6/6, west 6/6 steps converged; registry empty');
    expect(result.stdout).toContain('deleted Secret fleet/west: engaged now east');
    expect(result.stdout).toMatch(/fleet: \d+ reconciles succeeded, 0 failed; 4 cleanups/);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('fleet: PASSED');
    expect(result.code).toBe(0);
  });

  it('stops cleanly on Ctrl-C in the middle of the scenarios: exit 0', async () => {
    let sent = false;
    const result = await runExample('examples/configmapset/fleet-main.ts', [], (stdout, child) => {
      if (!sent && stdout.includes('[2/6]')) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    expect(sent).toBe(true);
    expect(result.stderr).toBe('');
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('fleet: stopped');
    expect(result.code).toBe(0);
  });
});
