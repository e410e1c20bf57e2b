// The network-policy example's pure parts: rule computation and the consistency check's comparison.

import { describe, expect, it } from 'vitest';
import { firstRuleDifference, snapshotView, type ClusterSnapshot } from '../../examples/network-policy/consistency.js';
import { computeAllRules, computeNamespaceRules, selectsPeerNamespace, type NetworkPolicy, type Pod } from '../../examples/network-policy/rules.js';

const ns = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels } });
const pod = (namespace: string, name: string, labels: Record<string, string>): Pod => ({ metadata: { namespace, name, labels } });
// `podSelector` may be left out: the rules treat an absent one as all pods, as Kubernetes does.
const policy = (namespace: string, name: string, spec: Partial<NonNullable<NetworkPolicy['spec']>>): NetworkPolicy => ({
  metadata: { namespace, name },
  spec: spec as NetworkPolicy['spec'],
});

function snapshot(): ClusterSnapshot {
  return {
    namespaces: [ns('shop', { team: 'red' }), ns('ops', { team: 'blue' })],
    pods: [
      pod('shop', 'web-1', { app: 'web' }),
      pod('shop', 'db-1', { app: 'db' }),
      pod('ops', 'probe-1', { app: 'probe' }),
      pod('ops', 'web-9', { app: 'web' }),
    ],
    policies: [
      policy('shop', 'db-from-web', {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }] }],
      }),
      policy('shop', 'all-from-blue', { ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'blue' } } }] }] }),
    ],
  };
}

describe('computeNamespaceRules', () => {
  it('isolates the selected pods and allows peers from the same namespace for a plain podSelector', () => {
    const rules = computeNamespaceRules(snapshotView(snapshot()), 'shop');
    expect(rules.find((r) => r.policy === 'shop/db-from-web')).toEqual({ policy: 'shop/db-from-web', targets: ['shop/db-1'], allowedPeers: ['shop/web-1'] });
  });

  it('takes peers from every namespace whose labels match a namespaceSelector, and treats an absent podSelector as all pods', () => {
    const rules = computeNamespaceRules(snapshotView(snapshot()), 'shop');
    expect(rules.find((r) => r.policy === 'shop/all-from-blue')).toEqual({
      policy: 'shop/all-from-blue',
      targets: ['shop/db-1', 'shop/web-1'],
      allowedPeers: ['ops/probe-1', 'ops/web-9'],
    });
  });

  it('gives a namespace that no longer exists no rules, even while its pods and policies are still around', () => {
    // The weave-npc order: the namespace's delete arrived before its pods' and policies'.
    const s = snapshot();
    s.namespaces = s.namespaces.filter((n) => n.metadata?.name !== 'shop');
    expect(computeNamespaceRules(snapshotView(s), 'shop')).toEqual([]);
    expect(computeAllRules(snapshotView(s)).has('shop')).toBe(false);
  });

  it('stops allowing peers of a namespace once that namespace is gone', () => {
    const s = snapshot();
    s.namespaces = s.namespaces.filter((n) => n.metadata?.name !== 'ops');
    const rules = computeNamespaceRules(snapshotView(s), 'shop');
    expect(rules.find((r) => r.policy === 'shop/all-from-blue')?.allowedPeers).toEqual([]);
  });

  it('omits namespaces without policies from computeAllRules', () => {
    expect([...computeAllRules(snapshotView(snapshot())).keys()]).toEqual(['shop']);
  });
});

describe('selectsPeerNamespace', () => {
  const [sameNamespace, fromBlue] = snapshot().policies;

  it('is true only for a namespaceSelector matching the labels', () => {
    expect(selectsPeerNamespace(fromBlue!, { team: 'blue' })).toBe(true);
    expect(selectsPeerNamespace(fromBlue!, { team: 'red' })).toBe(false);
    expect(selectsPeerNamespace(fromBlue!, undefined)).toBe(false);
  });

  it('is false for a policy whose peers all come from its own namespace', () => {
    expect(selectsPeerNamespace(sameNamespace!, { team: 'blue' })).toBe(false);
  });
});

describe('firstRuleDifference', () => {
  const expected = computeAllRules(snapshotView(snapshot()));

  it('finds no difference between equal rule sets', () => {
    expect(firstRuleDifference(expected, computeAllRules(snapshotView(snapshot())))).toBeUndefined();
  });

  it('names the namespace, the expected rule and the one the controller has', () => {
    const actual = new Map(expected);
    const [first, second] = expected.get('shop')!;
    actual.set('shop', [first!, { ...second!, allowedPeers: [] }]);
    expect(firstRuleDifference(expected, actual)).toBe(
      'namespace shop: expected shop/db-from-web targets [shop/db-1] from [shop/web-1], controller has shop/db-from-web targets [shop/db-1] from []',
    );
  });

  it('reports rules the controller keeps for a namespace that should have none', () => {
    const actual = new Map(expected);
    actual.set('gone', [{ policy: 'gone/p', targets: [], allowedPeers: [] }]);
    expect(firstRuleDifference(expected, actual)).toBe('namespace gone: expected (no rule), controller has gone/p targets [] from []');
  });
});
