// The ConfigMapSet scenario: what a user does to sets and their ConfigMaps, each step followed by a wait for the operator to converge.
//
// Not run on its own: main.ts, the demo and the tests run it while an operator runs.

import type { KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import { awaitConverged, type ConfigMapSetSnapshot } from './consistency.js';
import { isInvalid } from '../../src/objects.js';
import { API_VERSION, configMapSetDefinition, configMapSets, GROUP, type ConfigMapSet, type ConfigMapSetSpec, type ConfigMapSetV2 } from './crd.js';
import type { ExternalRegistry } from './registry.js';

/** Options of {@link runScenario}. */
export interface ScenarioOptions {
  /** The cluster (the operator must be running against it, on `namespace`). */
  kubeConfig: KubeConfig;
  /** Where the sets are created. It must exist (on a real cluster). */
  namespace: string;
  /** The operator's registry, which the checks read. */
  registry: ExternalRegistry;
  /** Where each step is reported. Default `console.log`. */
  log?: (line: string) => void;
  /** How long each step may take to converge, in ms. Default 10 000. */
  stepTimeoutMs?: number;
  /** Stops the scenario between steps (the result is then not passed). */
  signal?: AbortSignal;
  /**
   * The webhooks are registered (a real cluster, `registerConfigMapSetWebhooks`): three more steps show
   * them at work — a set the validating webhook denies, a set written at v2 and read at v1 through the
   * conversion webhook, its deletion. Default false.
   */
  webhooks?: boolean;
}

/** The outcome of one step. */
export interface ScenarioStep {
  /** What the user did. */
  name: string;
  /** Whether the operator converged in time (and the step's own expectation held). */
  converged: boolean;
  /** How long convergence took, in ms. */
  ms: number;
  /** The difference left when it did not converge. */
  difference?: string;
}

/** The outcome of {@link runScenario}. */
export interface ScenarioResult {
  /** Every step converged. */
  passed: boolean;
  /** The steps run (the scenario stops at the first that did not converge). */
  steps: ScenarioStep[];
}

/** A user's ConfigMapSet body. */
export function configMapSet(name: string, namespace: string, spec: ConfigMapSetSpec): ConfigMapSet {
  return { apiVersion: API_VERSION, kind: 'ConfigMapSet', metadata: { name, namespace }, spec };
}

interface Step {
  name: string;
  act: () => Promise<void>;
  expect?: (snapshot: ConfigMapSetSnapshot) => string | undefined;
}

const cmNamed = (s: ConfigMapSetSnapshot, name: string): ConfigMap | undefined => s.configMaps.find((cm) => cm.metadata?.name === name);
const named = (s: ConfigMapSetSnapshot, name: string): ConfigMapSet | undefined => s.sets.find((set) => set.metadata?.name === name);

/** The steps that show the webhooks, on clients acting as the user. */
function webhookSteps(namespace: string, sets: ResourceClient<ConfigMapSet>, v2: ResourceClient<ConfigMapSetV2>, log: (line: string) => void): Step[] {
  let denied: string | undefined;
  let readAtV1: string[] | undefined;
  return [
    {
      name: 'create set dup with names a, a: the validating webhook denies it',
      act: async () => {
        try {
          await sets.create(configMapSet('dup', namespace, { names: ['a', 'a'] }));
        } catch (err) {
          if (!isInvalid(err)) throw err;
          denied = (err as Error).message;
          log(`      denied: ${denied}`);
        }
      },
      expect: (s) => (denied === undefined ? 'the set with duplicate names was admitted' : named(s, 'dup') !== undefined ? 'set dup exists' : undefined),
    },
    {
      name: 'create set conv at v2 (configMaps x, y): the conversion webhook stores it, it reads at v1 as names x, y',
      act: async () => {
        await v2.create({ apiVersion: `${GROUP}/v2`, kind: 'ConfigMapSet', metadata: { name: 'conv', namespace }, spec: { configMaps: [{ name: 'x' }, { name: 'y' }], data: { via: 'v2' } } });
        readAtV1 = (await sets.get('conv', namespace)).spec.names;
        log(`      read at v1: spec.names ${JSON.stringify(readAtV1)}`);
      },
      expect: (s) => (JSON.stringify(readAtV1) !== '["x","y"]' ? `read at v1: ${JSON.stringify(readAtV1)}` : cmNamed(s, 'conv-y') === undefined ? 'conv-y not written yet' : undefined),
    },
    {
      name: 'delete set conv',
      act: async () => {
        await sets.delete('conv', namespace);
      },
      expect: (s) => (s.sets.length > 0 ? `${s.sets.length} sets left` : undefined),
    },
  ];
}

/** The steps, on clients acting as the user. */
function steps(namespace: string, sets: ResourceClient<ConfigMapSet>, configMaps: ResourceClient<ConfigMap>): Step[] {
  let replacedUid: string | undefined;
  return [
    {
      name: 'create sets web (frontend, backend; color=blue) and db (primary; engine=postgres)',
      act: async () => {
        await sets.create(configMapSet('web', namespace, { names: ['frontend', 'backend'], data: { color: 'blue' } }));
        await sets.create(configMapSet('db', namespace, { names: ['primary'], data: { engine: 'postgres' } }));
      },
      expect: (s) => (s.sets.length === 2 ? undefined : `${s.sets.length} sets, expected 2`),
    },
    {
      name: 'edit web: names frontend, worker (backend dropped); color=green',
      act: async () => {
        await sets.patch('web', namespace, { spec: { names: ['frontend', 'worker'], data: { color: 'green' } } }, 'merge');
      },
      expect: (s) => (named(s, 'web')?.spec.data?.color === 'green' ? undefined : 'the edit of web is not visible yet'),
    },
    {
      name: 'delete ConfigMap web-frontend by hand',
      act: async () => {
        replacedUid = (await configMaps.get('web-frontend', namespace)).metadata?.uid;
        await configMaps.delete('web-frontend', namespace);
      },
      expect: (s) => (cmNamed(s, 'web-frontend')?.metadata?.uid !== replacedUid ? undefined : 'web-frontend was not recreated'),
    },
    {
      name: 'edit ConfigMap web-worker by hand (color=red, extra key)',
      act: async () => {
        await configMaps.patch('web-worker', namespace, { data: { color: 'red', extra: 'x' } }, 'merge');
      },
    },
    {
      name: 'delete set db',
      act: async () => {
        await sets.delete('db', namespace);
      },
      expect: (s) =>
        named(s, 'db') !== undefined
          ? 'db still exists'
          : cmNamed(s, 'db-primary') !== undefined
            ? 'db-primary is still there'
            : `${namespace}/db` in s.registry
              ? 'the registry still has db'
              : undefined,
    },
    {
      name: 'delete set web',
      act: async () => {
        await sets.delete('web', namespace);
      },
      expect: (s) =>
        s.sets.length > 0
          ? `${s.sets.length} sets left`
          : Object.keys(s.registry).length > 0
            ? `registry not empty: ${Object.keys(s.registry).join(', ')}`
            : s.configMaps.some((cm) => cm.metadata?.ownerReferences?.some((r) => r.kind === 'ConfigMapSet'))
              ? 'ConfigMaps of sets are left'
              : undefined,
    },
  ];
}

/**
 * Runs the scenario: creates two sets, edits one, deletes and edits a ConfigMap by hand, deletes one
 * set, then the other. After each step it waits until the server state is converged
 * (`firstDifference` of `consistency.ts`, plus the step's own expectation) and logs how long that
 * took; it stops at the first step that does not converge within `stepTimeoutMs`.
 */
export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const log = options.log ?? console.log;
  const { kubeConfig, namespace, registry } = options;
  const sets = newResourceClient(kubeConfig, configMapSets, { fieldManager: 'scenario-user' });
  const configMaps = newResourceClient(kubeConfig, resources.configmaps, { fieldManager: 'scenario-user' });
  const v2 = newResourceClient(kubeConfig, configMapSetDefinition.descriptors.v2, { fieldManager: 'scenario-user' });
  const done: ScenarioStep[] = [];
  try {
    const all = [...steps(namespace, sets, configMaps), ...(options.webhooks === true ? webhookSteps(namespace, sets, v2, log) : [])];
    for (const [i, step] of all.entries()) {
      if (options.signal?.aborted) return { passed: false, steps: done };
      log(`[${i + 1}/${all.length}] ${step.name}`);
      await step.act();
      const result = await awaitConverged({ kubeConfig, namespace, registry, timeoutMs: options.stepTimeoutMs, signal: options.signal, expect: step.expect });
      const converged = result.difference === undefined;
      done.push({ name: step.name, converged, ms: result.ms, difference: result.difference });
      if (!converged) {
        log(`      NOT converged after ${result.ms} ms: ${result.difference}`);
        return { passed: false, steps: done };
      }
      const records = Object.values(await registry.all(options.signal)).filter((r) => r.namespace === namespace);
      const inRegistry = records.map((r) => `${r.name} (${r.configMaps.length})`).join(', ') || 'empty';
      log(`      converged in ${result.ms} ms; registry: ${inRegistry}`);
    }
    return { passed: true, steps: done };
  } finally {
    sets.close();
    configMaps.close();
    v2.close();
  }
}
