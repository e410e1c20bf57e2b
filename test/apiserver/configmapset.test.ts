// The configmapset operator on the real kube-apiserver: its CRD, the scenario's convergence, a restart mid-cleanup, no orphaned ConfigMaps.
//
// Only the apiserver runs here — no kube-controller-manager, so no garbage collector: ConfigMaps whose
// owner is gone stay unless the operator's finalizer deletes them, which is exactly what is checked.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import { awaitConverged, fetchSnapshot, type ConfigMapSetSnapshot } from '../../examples/configmapset/consistency.js';
import { configMapSets, CRD_NAME, FINALIZER, GROUP, installCrd, type ConfigMapSet } from '../../examples/configmapset/crd.js';
import { ConfigMapSetOperator, type ConfigMapSetOperatorOptions } from '../../examples/configmapset/operator.js';
import { FileRegistry } from '../../examples/configmapset/registry.js';
import { configMapSet, runScenario } from '../../examples/configmapset/scenario.js';
import { HangingRegistry, runExample } from '../examples/helpers.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

/** ConfigMaps controlled by some ConfigMapSet. */
const ownedBySets = (s: ConfigMapSetSnapshot): string[] =>
  s.configMaps.filter((cm) => cm.metadata?.ownerReferences?.some((r) => r.kind === 'ConfigMapSet')).map((cm) => cm.metadata?.name ?? '');

describe('the configmapset operator against the real kube-apiserver', () => {
  let server: RealApiServer;
  let sets: ResourceClient<ConfigMapSet>;

  beforeAll(async () => {
    // Its own server: it expects to create the example's fixed-name CRD (writes.test.ts installs it on the
    // shared one), and main.ts --webhooks reconfigures that CRD and registers a cluster-wide webhook.
    server = await startRealApiServer({ private: true });
    expect(await installCrd(server.kubeConfig, AbortSignal.timeout(60_000))).toBe('created');
    sets = newResourceClient(server.kubeConfig, configMapSets, { fieldManager: 'test-user' });
  });
  afterAll(async () => {
    sets?.close();
    await server?.stop();
  });

  const newNamespace = (prefix: string): Promise<string> => freshNamespace(server, prefix);

  function start(options: ConfigMapSetOperatorOptions): { operator: ConfigMapSetOperator; stop: AbortController; running: Promise<void> } {
    const operator = new ConfigMapSetOperator(server.kubeConfig, { logger: false, ...options });
    const stop = new AbortController();
    return { operator, stop, running: operator.run(stop.signal) };
  }

  it('main.ts with --kubeconfig and --leader-elect finds its CRD Established, converges after every step on a Lease and exits 0', async () => {
    const result = await runExample('examples/configmapset/main.ts', ['--kubeconfig', server.kubeConfigPath, '--leader-elect'], undefined, 110_000);
    expect(result.exitedInTime).toBe(true);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('CustomResourceDefinition configmapsets.examples.kube-informer.dev: existed, Established');
    expect(result.stdout).toContain('operator: leading (term 1)');
    expect(result.stdout).toMatch(/scenario +6\/6 steps converged/);
    expect(result.stdout).toContain('consistency check: PASSED');
    expect(result.code).toBe(0);
  });

  it('main.ts --webhooks: the API server calls its validating webhook (a denial) and its conversion webhook (a v2 set read at v1), 9/9 steps, and they are unregistered at the end', async () => {
    const result = await runExample('examples/configmapset/main.ts', ['--kubeconfig', server.kubeConfigPath, '--webhooks', '--webhook-port', '0'], undefined, 110_000);
    expect(result.exitedInTime).toBe(true);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/webhooks: serving on https:\/\/127\.0\.0\.1:\d+ under the operator's Manager; ValidatingWebhookConfiguration and CRD conversion registered/);
    expect(result.stdout).toMatch(/denied: .*spec\.names\[1\]: .*duplicate name a/);
    expect(result.stdout).toContain('read at v1: spec.names ["x","y"]');
    expect(result.stdout).toMatch(/scenario +9\/9 steps converged/);
    expect(result.stdout).toContain('webhooks: unregistered');
    expect(result.stdout).toContain('consistency check: PASSED');
    expect(result.code).toBe(0);
    const crds = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const configurations = newResourceClient(server.kubeConfig, { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false });
    try {
      const crd = await crds.get(CRD_NAME);
      expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage]).sort()).toEqual([['v1', true, true], ['v2', false, false]]);
      expect(crd.spec.conversion?.strategy ?? 'None').toBe('None');
      await expect(configurations.get(`configmapsets.${GROUP}`)).rejects.toMatchObject({ statusCode: 404 });
    } finally {
      crds.close();
      configurations.close();
    }
  });

  it('runs the scenario in-process: after each step the ConfigMaps equal spec.names, observedGeneration equals the generation, nothing is orphaned', async () => {
    const namespace = await newNamespace('ki-cms');
    const registry = await FileRegistry.temporary();
    const { operator, stop, running } = start({ registry, namespace });
    try {
      const lines: string[] = [];
      const result = await runScenario({ kubeConfig: server.kubeConfig, namespace, registry, log: (l) => lines.push(l), stepTimeoutMs: 30_000 });
      expect(result.steps.filter((s) => !s.converged), lines.join('\n')).toEqual([]);
      expect(result.passed).toBe(true);
      const after = await fetchSnapshot(server.kubeConfig, namespace, registry);
      expect(after.sets).toEqual([]);
      expect(ownedBySets(after)).toEqual([]);
      expect(after.registry).toEqual({});
      expect(operator.stats()).toMatchObject({ cleanups: 2, finalizers: { added: 2, removed: 2 } });
    } finally {
      stop.abort();
      await running;
      await registry.dispose();
    }
  });

  it('the operator restarted mid-cleanup: a new instance finishes the cleanup, the finalizer goes, no ConfigMap is orphaned', async () => {
    const namespace = await newNamespace('ki-cms-restart');
    const registry = await FileRegistry.temporary();
    const hanging = new HangingRegistry(registry);
    const first = start({ registry: hanging, namespace });
    let second: ReturnType<typeof start> | undefined;
    try {
      await sets.create(configMapSet('web', namespace, { names: ['a', 'b', 'c'], data: { k: 'v' } }));
      const ready = await awaitConverged({ kubeConfig: server.kubeConfig, namespace, registry, timeoutMs: 30_000 });
      expect(ready.difference).toBeUndefined();
      // The real server keeps the generation: 1 for the spec as created; status and finalizer writes left it alone.
      const live = await sets.get('web', namespace);
      expect(live.metadata?.generation).toBe(1);
      expect(live.status?.observedGeneration).toBe(1);

      const marked = await sets.delete('web', namespace);
      expect(marked.gone).toBe(false);
      expect(marked.object?.metadata?.deletionTimestamp).toBeDefined();
      for (let i = 0; hanging.removeCalls === 0 && i < 600; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(hanging.removeCalls).toBeGreaterThan(0);
      first.stop.abort();
      await first.running;
      expect(first.operator.stats().cleanups).toBe(0);
      const held = await sets.get('web', namespace);
      expect(held.metadata?.finalizers).toEqual([FINALIZER]);
      expect(held.metadata?.generation).toBe(2); // kube-apiserver bumps it when it sets deletionTimestamp
      const halfway = await fetchSnapshot(server.kubeConfig, namespace, registry);
      expect(ownedBySets(halfway)).toEqual(['web-a', 'web-b', 'web-c']);
      expect(Object.keys(halfway.registry)).toEqual([`${namespace}/web`]);

      second = start({ registry, namespace });
      const done = await awaitConverged({
        kubeConfig: server.kubeConfig,
        namespace,
        registry,
        timeoutMs: 30_000,
        expect: (s) => (s.sets.length === 0 ? undefined : 'the set is still there'),
      });
      expect(done.difference).toBeUndefined();
      const after = await fetchSnapshot(server.kubeConfig, namespace, registry);
      expect(after.sets).toEqual([]);
      expect(ownedBySets(after)).toEqual([]);
      expect(after.registry).toEqual({});
      expect(second.operator.stats()).toMatchObject({ cleanups: 1, finalizers: { added: 0, removed: 1 }, failed: 0 });
    } finally {
      first.stop.abort();
      second?.stop.abort();
      await Promise.all([first.running, second?.running]);
      await registry.dispose();
    }
  });
});
