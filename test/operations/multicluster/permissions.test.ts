// A fleet's RBAC is two documents: what each TARGET cluster grants (the controllers' reads and uses, as a
// single-cluster Controller derives them) and what the MANAGEMENT cluster grants (the providers' Secrets).
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../../../src/core/index.js';
import { Action, Controller } from '../../../src/controller/index.js';
import { SharedInformerFactory } from '../../../src/index.js';
import { clusterApiKubeconfigSecrets, kubeconfigSecrets, MultiClusterController, MultiClusterManager, shardedClusters, staticClusters } from '../../../src/operations/index.js';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:6443' }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'c', cluster: 'c', user: 'u' }], currentContext: 'c' });
const done = (): Promise<Action> => Promise.resolve(Action.done());

describe('MultiClusterController.permissions (what each target cluster grants)', () => {
  it('is what a single-cluster Controller of the same description needs, in every namespace or the given one', () => {
    const fleet = MultiClusterController.for(resources.deployments).owns(resources.configmaps).uses(resources.configmaps, ['create', 'patch']).build(done, { name: 'deployments', logger: false });
    const one = (namespace?: string) =>
      Controller.for(new SharedInformerFactory(kubeConfig, { namespace, logger: false }), resources.deployments)
        .owns(resources.configmaps)
        .uses(resources.configmaps, ['create', 'patch'])
        .build(done, { name: 'deployments', logger: false });
    expect(fleet.permissions()).toEqual(one().permissions());
    expect(fleet.permissions({ namespace: 'apps' })).toEqual(one('apps').permissions());
    expect(fleet.permissions({ namespace: 'apps' }).every((p) => p.namespace === 'apps')).toBe(true);
    expect(fleet.declaresUses).toBe(true);
  });

  it('follows the option namespaces as a Controller does, and says when the builder declared no uses', () => {
    const fleet = MultiClusterController.for(resources.configmaps).build(done, { name: 'cms', namespaces: ['a', 'b'], logger: false });
    expect(fleet.permissions().map((p) => `${p.namespace}/${p.resource} ${p.verbs.join(',')}`)).toEqual(['a/configmaps list,watch', 'b/configmaps list,watch']);
    expect(fleet.declaresUses).toBe(false);
  });
});

describe('providers: what the management cluster grants', () => {
  it("kubeconfigSecrets needs list and watch of Secrets in its namespace (the factory's, or every one); staticClusters nothing", () => {
    const factory = new SharedInformerFactory(kubeConfig, { logger: false });
    expect(kubeconfigSecrets({ factory, namespace: 'fleet' }).permissions()).toEqual([
      { group: '', resource: 'secrets', namespace: 'fleet', verbs: ['list', 'watch'], reason: 'kubeconfig Secrets of provider kubeconfig-secrets' },
    ]);
    expect(clusterApiKubeconfigSecrets({ factory }).permissions()).toEqual([{ group: '', resource: 'secrets', verbs: ['list', 'watch'], reason: 'kubeconfig Secrets of provider cluster-api-kubeconfigs' }]);
    const scoped = new SharedInformerFactory(kubeConfig, { namespace: 'capi', logger: false });
    expect(kubeconfigSecrets({ factory: scoped }).permissions()[0]?.namespace).toBe('capi');
    expect(staticClusters({ east: kubeConfig }).permissions()).toEqual([]);
  });
});

describe('MultiClusterManager.permissionReport({ cluster })', () => {
  const build = () => {
    const factory = new SharedInformerFactory(kubeConfig, { logger: false });
    const labeler = MultiClusterController.for(resources.configmaps).uses(resources.configmaps, ['patch']).build(done, { name: 'labeler', logger: false });
    const watcher = MultiClusterController.for(resources.nodes).build(done, { name: 'nodes', logger: false });
    return new MultiClusterManager({
      providers: [kubeconfigSecrets({ factory, namespace: 'fleet' }), staticClusters({ east: kubeConfig })],
      controllers: [labeler, watcher],
      factoryOptions: { namespace: 'apps' },
      logger: false,
    });
  };

  it("target: the controllers' permissions in the factoryOptions namespace, and a warning for one that declares no uses", () => {
    const report = build().permissionReport({ cluster: 'target' });
    expect(report.permissions.map((p) => `${p.namespace ?? '*'}/${p.resource} ${p.verbs.join(',')}`)).toEqual(['*/nodes list,watch', 'apps/configmaps list,watch,patch']);
    expect(report.warnings).toEqual([expect.stringMatching(/^controller nodes declares no uses: /)]);
  });

  it("management: the providers' permissions; none of the controllers'", () => {
    const report = build().permissionReport({ cluster: 'management' });
    expect(report).toEqual({ permissions: [{ group: '', resource: 'secrets', namespace: 'fleet', verbs: ['list', 'watch'], reason: 'kubeconfig Secrets of provider kubeconfig-secrets' }], warnings: [] });
  });

  it('warns about a provider or cluster-aware component without permissions(), and refuses a missing or unknown cluster', () => {
    const provider = { name: 'mine', run: () => Promise.resolve() };
    const aware = { name: 'aware', engage: () => undefined, disengage: () => undefined, run: () => Promise.resolve() };
    const manager = new MultiClusterManager({ providers: [provider], controllers: [aware], logger: false });
    expect(manager.permissionReport({ cluster: 'management' }).warnings).toEqual(["provider mine has no permissions(): what it reads from the management cluster is not in the rules — grant it by hand"]);
    expect(manager.permissionReport({ cluster: 'target' }).warnings).toEqual(["controller aware has no permissions(): what it sends to each target cluster is not in the rules — grant it by hand"]);
    expect(() => manager.permissionReport({} as never)).toThrow(/MultiClusterManager.permissionReport: option cluster must be 'management' or 'target', got undefined/);
  });

  it("shardedClusters: the wrapped provider's permissions and its ring's Leases", async () => {
    const { LeaseRingStore, ShardRing } = await import('../../../src/sharding/index.js');
    const factory = new SharedInformerFactory(kubeConfig, { logger: false });
    const store = new LeaseRingStore(kubeConfig, { namespace: 'fleet', ring: 'clusters', leaseDurationSeconds: 15 });
    const ring = new ShardRing({ store, name: 'clusters', identity: 'r1', logger: false });
    const sharded = shardedClusters(kubeconfigSecrets({ factory, namespace: 'fleet' }), ring);
    const resourcesOf = sharded.permissions().map((p) => `${p.namespace}/${p.group}/${p.resource}`);
    expect(resourcesOf).toContain('fleet//secrets');
    expect(resourcesOf).toContain('fleet/coordination.k8s.io/leases');
  });

  it("a controller sharded by object: its ring's Leases are the management cluster's rules, not every target's", async () => {
    const { LeaseRingStore, ShardRing } = await import('../../../src/sharding/index.js');
    const store = new LeaseRingStore(kubeConfig, { namespace: 'fleet', ring: 'objects', leaseDurationSeconds: 15 });
    const ring = new ShardRing({ store, name: 'objects', identity: 'r1', logger: false });
    const fleet = MultiClusterController.for(resources.configmaps).build(done, { name: 'cms', sharded: ring, logger: false });
    const manager = new MultiClusterManager({ providers: [staticClusters({ east: kubeConfig })], controllers: [fleet], logger: false });
    const rules = (cluster: 'management' | 'target') => manager.permissionReport({ cluster }).permissions.map((p) => `${p.namespace ?? '*'}/${p.group}/${p.resource}`);
    expect(rules('target')).toEqual(['*//configmaps']);
    expect(rules('management')).toEqual(['fleet/coordination.k8s.io/leases']);
  });
});
