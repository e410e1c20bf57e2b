// The demo's consistency check: the controller's rules against computeAllRules of the server's own state, read over HTTP.
//
// Not run on its own: `npm run demo` and the example tests use it.

import type { KubeConfig } from '@kubernetes/client-node';
import { newListWatch, realClock, sleep, type Clock, type DeepReadonly, type ObjectOf, type ResourceDescriptor } from '../../src/index.js';
import { NETWORK_POLICY_RESOURCES } from './controller.js';
import { computeAllRules, type ClusterView, type Namespace, type NetworkPolicy, type Pod, type Rule } from './rules.js';

/** The objects of the three kinds as the API server has them now. */
export interface ClusterSnapshot {
  /** Every namespace. */
  namespaces: Namespace[];
  /** Every pod. */
  pods: Pod[];
  /** Every network policy. */
  policies: NetworkPolicy[];
}

/**
 * Lists namespaces, pods and network policies from the API server (one consistent read each, no
 * cache involved), optionally by label. Objects come as the server sends them: client-node's typed
 * clients would rename fields on the way (a policy peer list `from` becomes `_from`).
 */
export async function fetchClusterSnapshot(kubeConfig: KubeConfig, labelSelector?: string, signal = new AbortController().signal): Promise<ClusterSnapshot> {
  const list = async <D extends ResourceDescriptor>(resource: D): Promise<Array<ObjectOf<D>>> => {
    const lw = newListWatch<ObjectOf<D>>(kubeConfig, resource, { labelSelector });
    try {
      return (await lw.list({ resourceVersion: '' }, signal)).items;
    } finally {
      lw.close();
    }
  };
  const [namespaces, pods, policies] = await Promise.all([
    list(NETWORK_POLICY_RESOURCES.namespaces),
    list(NETWORK_POLICY_RESOURCES.pods),
    list(NETWORK_POLICY_RESOURCES.policies),
  ]);
  return { namespaces, pods, policies };
}

/** A {@link ClusterView} over a snapshot. */
export function snapshotView(snapshot: ClusterSnapshot): ClusterView {
  const inNamespace = <T extends Pod | NetworkPolicy>(items: T[], ns: string): DeepReadonly<T>[] =>
    items.filter((o) => o.metadata?.namespace === ns) as DeepReadonly<T>[];
  return {
    namespaces: () => snapshot.namespaces as DeepReadonly<Namespace>[],
    pods: (ns) => inNamespace(snapshot.pods, ns),
    policies: (ns) => inNamespace(snapshot.policies, ns),
  };
}

const ruleText = (r: Rule): string => `${r.policy} targets [${r.targets.join(' ')}] from [${r.allowedPeers.join(' ')}]`;

/**
 * The first difference between the rules expected and the rules a controller holds, as one readable
 * line, or `undefined` when they are equal. Namespaces are compared in sorted order.
 */
export function firstRuleDifference(expected: ReadonlyMap<string, readonly Rule[]>, actual: ReadonlyMap<string, readonly Rule[]>): string | undefined {
  const namespaces = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  for (const ns of namespaces) {
    const want = expected.get(ns) ?? [];
    const got = actual.get(ns) ?? [];
    for (let i = 0; i < Math.max(want.length, got.length); i++) {
      const w = want[i] === undefined ? undefined : ruleText(want[i]!);
      const g = got[i] === undefined ? undefined : ruleText(got[i]!);
      if (w !== g) return `namespace ${ns}: expected ${w ?? '(no rule)'}, controller has ${g ?? '(no rule)'}`;
    }
  }
  return undefined;
}

/** What {@link checkConsistency} found. */
export interface ConsistencyResult {
  /** The controller's rules equal the rules of the server's state. */
  passed: boolean;
  /** The first difference of the last attempt, when it failed. */
  difference: string | undefined;
  /** Comparisons made (one per snapshot). */
  attempts: number;
  /** Rules expected (over all namespaces) at the last attempt. */
  rules: number;
}

/** Options of {@link checkConsistency}. */
export interface ConsistencyCheckOptions {
  /** The cluster to read. Required. */
  kubeConfig: KubeConfig;
  /** The controller's rules (a live map). Required. */
  rules: () => ReadonlyMap<string, readonly Rule[]>;
  /** Resolves once the controller has nothing left to do (e.g. `queue.onIdle()`). Required. */
  idle: () => Promise<void>;
  /** Only objects with these labels (as the controller's informers). Default: everything. */
  labelSelector?: string;
  /**
   * How long to keep comparing while they differ, in ms: a watch delivers a change a moment after the
   * server made it, so a difference only counts once it persists. Default 10 000; 0 = one comparison.
   */
  timeoutMs?: number;
  /** Pause between comparisons, in ms. Default 200. */
  intervalMs?: number;
  /** The clock of timeouts and pauses. Default `realClock`. */
  clock?: Clock;
}

/**
 * Compares the controller's rules with `computeAllRules` of the server's state (listed over HTTP),
 * after the controller went idle; retries while they differ, up to `timeoutMs`. Passes as soon as one
 * comparison matches; fails with the first difference of the last comparison.
 */
export async function checkConsistency(options: ConsistencyCheckOptions): Promise<ConsistencyResult> {
  const clock = options.clock ?? realClock;
  const deadline = clock.now() + (options.timeoutMs ?? 10_000);
  for (let attempts = 1; ; attempts++) {
    await options.idle();
    const snapshot = await fetchClusterSnapshot(options.kubeConfig, options.labelSelector);
    await options.idle();
    const expected = computeAllRules(snapshotView(snapshot));
    const difference = firstRuleDifference(expected, options.rules());
    let rules = 0;
    for (const r of expected.values()) rules += r.length;
    if (difference === undefined) return { passed: true, difference, attempts, rules };
    if (clock.now() >= deadline) return { passed: false, difference, attempts, rules };
    await sleep(clock, options.intervalMs ?? 200);
  }
}
