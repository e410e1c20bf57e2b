// The network-policy controller against the fake API server: churn, the weave-npc event order, missed events, the check.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SharedInformerFactory } from '../../src/index.js';
import type { FakeApiServer } from '../../src/testing/index.js';
import { checkConsistency, firstRuleDifference, snapshotView } from '../../examples/network-policy/consistency.js';
import { NetworkPolicyController } from '../../examples/network-policy/controller.js';
import { computeAllRules, type Namespace, type NetworkPolicy, type Pod } from '../../examples/network-policy/rules.js';
import { ChurnWorkload } from '../../examples/network-policy/workload.js';
import { startExampleCluster, until } from './helpers.js';

const POLICIES = 'networkpolicies.networking.k8s.io';

describe('the network-policy controller', () => {
  let server: FakeApiServer;
  let stop: AbortController;
  let controller: NetworkPolicyController;
  let outcome: { done: boolean; error: unknown };

  beforeEach(async () => {
    server = await startExampleCluster();
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    await server.close();
  });

  function start(labelSelector?: string): void {
    // A relist after a 410 waits out the reflector's backoff (800 ms by default): make it immediate.
    const informerOptions = { reflector: { backoff: { initialMs: 1, maxMs: 5 } } };
    controller = new NetworkPolicyController(new SharedInformerFactory(server.kubeConfig, { labelSelector, informerOptions }));
    outcome = { done: false, error: undefined };
    controller.run(stop.signal).then(
      () => (outcome.done = true),
      (error: unknown) => Object.assign(outcome, { done: true, error }),
    );
  }

  /** The first difference between the controller and the server's state read in-process (no HTTP), or undefined. */
  function difference(): string | undefined {
    const state = { namespaces: server.list<Namespace>('namespaces'), pods: server.list<Pod>('pods'), policies: server.list<NetworkPolicy>(POLICIES) };
    return firstRuleDifference(computeAllRules(snapshotView(state)), controller.rules);
  }

  async function converged(what: string): Promise<void> {
    await until(async () => {
      if (outcome.done) return true;
      await controller.idle();
      return difference() === undefined;
    }, what);
    expect(outcome).toEqual({ done: false, error: undefined });
    expect(difference()).toBeUndefined();
  }

  it.each([1, 2, 3])('matches computeAllRules(server state) after a churn workload that creates and deletes namespaces (seed %i)', async (seed) => {
    const workload = new ChurnWorkload({ kubeConfig: server.kubeConfig, seed, runId: `t${seed}` });
    start(workload.labelSelector);
    await controller.idle();
    // 300 operations; after every 30, once the controller is idle, its rules must match the server.
    for (let round = 0; round < 10; round++) {
      await workload.run(stop.signal, 30);
      await converged(`convergence after round ${round}`);
    }

    const stats = workload.stats();
    expect(stats.failures).toBe(0);
    // The workload did what the scenario needs: namespaces deleted while they held pods, in the weave-npc order.
    const deletes = server.requests().filter((r) => r.method === 'DELETE');
    const nsDeletes = deletes.filter((r) => r.resource === 'namespaces');
    expect(nsDeletes.length).toBeGreaterThan(3);
    const podDeletedAfterItsNamespace = deletes.some(
      (r, i) => r.resource === 'pods' && deletes.slice(0, i).some((d) => d.resource === 'namespaces' && d.name === r.namespace),
    );
    expect(podDeletedAfterItsNamespace).toBe(true);
    expect(server.requests().filter((r) => r.method === 'POST' && r.resource === 'networkpolicies').length).toBeGreaterThan(3);

    await converged('the controller to converge after the churn');
    expect(controller.stats().reconciles).toBeGreaterThan(0);
    // The same verdict from the demo's check, which reads the server over HTTP.
    const result = await checkConsistency({
      kubeConfig: server.kubeConfig,
      labelSelector: workload.labelSelector,
      rules: () => controller.rules,
      idle: () => controller.idle(),
      timeoutMs: 0,
    });
    expect(result).toMatchObject({ passed: true, difference: undefined, attempts: 1 });
  });

  it('follows creates, relabels and deletes of namespaces, pods and policies', async () => {
    server.create('namespaces', { metadata: { name: 'shop', labels: { team: 'red' } } });
    server.create('pods', { metadata: { name: 'db-1', namespace: 'shop', labels: { app: 'db' } } });
    start();
    await converged('the initial (empty) rules');
    expect(controller.rules.size).toBe(0);

    const steps: Array<[string, () => void, Record<string, unknown>]> = [
      ['a policy is created', () => server.create(POLICIES, { metadata: { name: 'db', namespace: 'shop' }, spec: { podSelector: { matchLabels: { app: 'db' } }, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }] }] } }), { targets: ['shop/db-1'], allowedPeers: [] }],
      ['a peer pod is created', () => server.create('pods', { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } } }), { allowedPeers: ['shop/web-1'] }],
      ['the peer is relabelled away', () => server.update('pods', { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'cache' } } }), { allowedPeers: [] }],
      ['the peer is relabelled back', () => server.update('pods', { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } } }), { allowedPeers: ['shop/web-1'] }],
      ['the peer is deleted', () => server.delete('pods', 'web-1', 'shop'), { allowedPeers: [] }],
      ['the target is deleted', () => server.delete('pods', 'db-1', 'shop'), { targets: [] }],
    ];
    for (const [what, change, expected] of steps) {
      change();
      await converged(what);
      expect(controller.rules.get('shop')?.[0], what).toMatchObject(expected);
    }
    server.delete(POLICIES, 'db', 'shop');
    await converged('the policy deleted');
    expect(controller.rules.size).toBe(0);
  });

  it('updates the peers of a policy when pods come and go in the namespaces it selects, and when namespace labels change', async () => {
    server.create('namespaces', { metadata: { name: 'shop', labels: { team: 'red' } } });
    server.create('namespaces', { metadata: { name: 'ops', labels: { team: 'blue' } } });
    server.create('pods', { metadata: { name: 'db-1', namespace: 'shop', labels: { app: 'db' } } });
    server.create(POLICIES, { metadata: { name: 'from-blue', namespace: 'shop' }, spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'blue' } } }] }] } });
    start();
    await converged('the initial rules');
    const peers = (): string[] | undefined => controller.rules.get('shop')?.[0]?.allowedPeers;
    expect(peers()).toEqual([]);

    server.create('pods', { metadata: { name: 'probe-1', namespace: 'ops', labels: { app: 'probe' } } });
    await converged('a pod added in a selected namespace');
    expect(peers()).toEqual(['ops/probe-1']);
    server.update('namespaces', { metadata: { name: 'ops', labels: { team: 'green' } } });
    await converged('the namespace relabelled out of the selector');
    expect(peers()).toEqual([]);
    server.update('namespaces', { metadata: { name: 'ops', labels: { team: 'blue' } } });
    await converged('the namespace relabelled back');
    expect(peers()).toEqual(['ops/probe-1']);
    server.delete('pods', 'probe-1', 'ops');
    await converged('the pod deleted');
    expect(peers()).toEqual([]);
  });

  it('survives pod and policy deletes that arrive after their namespace was deleted, and keeps no rules for it', async () => {
    server.create('namespaces', { metadata: { name: 'shop', labels: { team: 'red' } } });
    server.create('namespaces', { metadata: { name: 'ops', labels: { team: 'blue' } } });
    server.create('pods', { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } } });
    server.create('pods', { metadata: { name: 'probe-1', namespace: 'ops', labels: { app: 'probe' } } });
    server.create(POLICIES, { metadata: { name: 'from-blue', namespace: 'shop' }, spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'blue' } } }] }] } });
    server.create(POLICIES, { metadata: { name: 'from-red', namespace: 'ops' }, spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'red' } } }] }] } });
    start();
    await converged('the initial rules');
    expect(controller.rules.get('ops')).toEqual([{ policy: 'ops/from-red', targets: ['ops/probe-1'], allowedPeers: ['shop/web-1'] }]);

    // The namespace goes first; its pod and policy events come after (weave-npc dereferenced the
    // namespace here). Then an update for a pod of the deleted namespace, for good measure.
    server.delete('namespaces', 'shop');
    server.update('pods', { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web', v: '2' } } });
    server.delete('pods', 'web-1', 'shop');
    server.delete(POLICIES, 'from-blue', 'shop');
    await converged('the rules after the namespace went away');
    expect(controller.rules.has('shop')).toBe(false);
    expect(controller.rules.get('ops')).toEqual([{ policy: 'ops/from-red', targets: ['ops/probe-1'], allowedPeers: [] }]);
  });

  it('catches up on deletes it never saw as events, through a relist and tombstones', async () => {
    server.create('namespaces', { metadata: { name: 'a', labels: { team: 'red' } } });
    server.create('namespaces', { metadata: { name: 'b', labels: { team: 'red' } } });
    server.create('pods', { metadata: { name: 'p', namespace: 'a', labels: { app: 'web' } } });
    server.create(POLICIES, { metadata: { name: 'x', namespace: 'a' }, spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: {} }] }] } });
    server.create(POLICIES, { metadata: { name: 'y', namespace: 'b' }, spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'red' } } }] }] } });
    start();
    await converged('the initial rules');
    expect([...controller.rules.keys()].sort()).toEqual(['a', 'b']);
    const listsBefore = controller.namespaces.health().counters.lists;

    // Missed events, then history compacted and the watches closed: only a relist can tell.
    server.delete('namespaces', 'a', undefined, { broadcast: false });
    server.delete('pods', 'p', 'a', { broadcast: false });
    server.delete(POLICIES, 'x', 'a', { broadcast: false });
    server.compact();
    server.endWatches();
    await until(() => controller.namespaces.health().counters.lists > listsBefore, 'the namespaces informer to relist');
    await converged('the rules after the relist');
    expect([...controller.rules.keys()]).toEqual(['b']);
    expect(controller.rules.get('b')![0]!.allowedPeers).toEqual([]);
  });

  it('fails the consistency check, naming the first difference, when its rules are wrong', async () => {
    server.create('namespaces', { metadata: { name: 'a' } });
    server.create('pods', { metadata: { name: 'p', namespace: 'a', labels: { app: 'web' } } });
    server.create(POLICIES, { metadata: { name: 'x', namespace: 'a' }, spec: { podSelector: {}, ingress: [] } });
    start();
    await converged('the initial rules');
    const tampered = new Map(controller.rules);
    tampered.set('a', [{ policy: 'a/x', targets: [], allowedPeers: [] }]);
    const result = await checkConsistency({ kubeConfig: server.kubeConfig, rules: () => tampered, idle: () => controller.idle(), timeoutMs: 0 });
    expect(result).toEqual({ passed: false, difference: 'namespace a: expected a/x targets [a/p] from [], controller has a/x targets [] from []', attempts: 1, rules: 1 });
  });

  it('stops cleanly: run() resolves and every watch is closed', async () => {
    start();
    await until(() => server.openWatches() === 3, 'three watches');
    stop.abort();
    await until(() => outcome.done, 'run() to settle');
    expect(outcome.error).toBeUndefined();
    await until(() => server.openWatches() === 0, 'the server to see the watches closed');
  });
});
