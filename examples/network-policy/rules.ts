// The network-policy example's pure core: the rules a set of namespaces, pods and policies imply.
//
// Not run on its own: the controller (examples/network-policy/main.ts, `npm run demo`) and the demo's
// consistency check both call it; test/examples/rules.test.ts shows it on small inputs.

import type { Namespace, Pod } from 'kubernetes-types/core/v1.js';
import type { LabelSelector as ApiLabelSelector } from 'kubernetes-types/meta/v1.js';
import type { NetworkPolicy } from 'kubernetes-types/networking/v1.js';
import { labelSelectorFromObject, type DeepReadonly, type KubeObject } from '../../src/index.js';

// The objects are typed as the JSON the API server sends (kubernetes-types), as the informers' are.
export type { ApiLabelSelector, Namespace, NetworkPolicy, Pod };

/**
 * One computed rule: for the policy `policy`, the pods it isolates (`targets`) and the pods allowed to
 * reach them (`allowedPeers`), each as sorted `namespace/name` keys. A real network plugin would turn
 * these into iptables or eBPF entries.
 */
export interface Rule {
  policy: string;
  targets: string[];
  allowedPeers: string[];
}

/** Read-only views of the three kinds, as listers hand them out. */
export interface ClusterView {
  namespaces(): ReadonlyArray<DeepReadonly<Namespace>>;
  pods(namespace: string): ReadonlyArray<DeepReadonly<Pod>>;
  policies(namespace: string): ReadonlyArray<DeepReadonly<NetworkPolicy>>;
}

const key = (o: DeepReadonly<KubeObject>): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function matches(selector: DeepReadonly<ApiLabelSelector> | undefined, labels: DeepReadonly<Record<string, string>> | undefined): boolean {
  // An absent podSelector selects every pod in the namespace, as in Kubernetes.
  return labelSelectorFromObject(selector ?? {}).matches(labels ?? {});
}

/**
 * Whether `policy` may allow peers from a namespace labelled `namespaceLabels` other than its own:
 * true when one of its ingress peers has a `namespaceSelector` matching them.
 */
export function selectsPeerNamespace(policy: DeepReadonly<NetworkPolicy>, namespaceLabels: DeepReadonly<Record<string, string>> | undefined): boolean {
  return (policy.spec?.ingress ?? []).some((i) => (i.from ?? []).some((f) => f.namespaceSelector !== undefined && matches(f.namespaceSelector, namespaceLabels)));
}

/**
 * The rules for one namespace, computed from nothing but `view`: level-triggered, so calling it again
 * after any change gives the right answer no matter which events were missed or merged. A namespace
 * that no longer exists has no rules (the weave-npc incident came from keeping per-namespace state
 * alive past its delete handler).
 */
export function computeNamespaceRules(view: ClusterView, namespace: string): Rule[] {
  const namespaces = view.namespaces();
  if (!namespaces.some((ns) => ns.metadata?.name === namespace)) return [];
  const pods = view.pods(namespace);
  const rules: Rule[] = [];
  for (const policy of view.policies(namespace)) {
    const targets = pods.filter((p) => matches(policy.spec?.podSelector, p.metadata?.labels)).map(key);
    const peers = new Set<string>();
    for (const ingress of policy.spec?.ingress ?? []) {
      for (const from of ingress.from ?? []) {
        const peerNamespaces = from.namespaceSelector
          ? namespaces.filter((ns) => matches(from.namespaceSelector, ns.metadata?.labels)).map((ns) => ns.metadata?.name ?? '')
          : [namespace];
        for (const ns of peerNamespaces) {
          for (const p of view.pods(ns)) {
            if (!from.podSelector || matches(from.podSelector, p.metadata?.labels)) peers.add(key(p));
          }
        }
      }
    }
    rules.push({ policy: key(policy), targets: targets.sort(), allowedPeers: [...peers].sort() });
  }
  return rules.sort((a, b) => (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0));
}

/** The rules of every namespace in `view`, keyed by namespace (namespaces without policies omitted). */
export function computeAllRules(view: ClusterView): Map<string, Rule[]> {
  const all = new Map<string, Rule[]>();
  for (const ns of view.namespaces()) {
    const name = ns.metadata?.name ?? '';
    const rules = computeNamespaceRules(view, name);
    if (rules.length > 0) all.set(name, rules);
  }
  return all;
}
