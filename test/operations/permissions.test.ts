// Manager.permissions(): everything the process needs (informers, controllers, runnables, lock, webhook configurations, CRDs), and rbacManifests' objects.

import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../../src/core/index.js';
import { Action, Controller } from '../../src/controller/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { LeaseLock, type LeaseClient } from '../../src/leaderelection/index.js';
import { DriftAudit, EventRecorder, Manager, rbacManifests, type Permission } from '../../src/operations/index.js';
import { LeaseRingStore, ShardRing } from '../../src/sharding/index.js';
import { validatingWebhookConfiguration, WebhookServer } from '../../src/webhook/index.js';
import { widgets } from '../controller/fixture.js';

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'c', cluster: 'c', user: 'u' }], currentContext: 'c' });
  return kc;
}

const noop = (): Promise<Action> => Promise.resolve(Action.done());
const leaseClient = {} as LeaseClient;

function operator() {
  const kc = kubeConfig();
  const factory = new SharedInformerFactory(kc, { namespace: 'ns', logger: false });
  const controller = Controller.for(factory, widgets)
    .owns(resources.configmaps)
    .uses(resources.configmaps, ['get', 'create', 'patch', 'delete'])
    .uses(widgets, ['patch'], { subresource: 'status' })
    .build(noop, { name: 'widgets', logger: false });
  const events = new EventRecorder(kc, { reportingController: 'example.com/widgets', namespaces: ['ns'], logger: false });
  const audit = new DriftAudit(kc, factory.forResource(resources.configmaps), { resource: resources.configmaps, namespace: 'ns', logger: false });
  const ring = new ShardRing({ store: new LeaseRingStore(kc, { namespace: 'ns', ring: 'r', leaseDurationSeconds: 15 }), name: 'r', identity: 'a', logger: false });
  const webhookServer = new WebhookServer({
    tls: { selfSigned: true },
    port: 0,
    logger: false,
    configurations: { kubeConfig: kc, objects: [validatingWebhookConfiguration({ name: 'widgets', endpoint: { url: 'https://x' }, webhooks: [] })] },
  });
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: {} };
  return new Manager(factory, {
    controllers: [controller],
    runnables: [events, audit],
    rings: [ring],
    leaderElection: { lock: new LeaseLock({ client: leaseClient, namespace: 'ns', name: 'widgets-lock', identity: 'a' }) },
    webhookServer,
    crds: [crd as never],
    logger: false,
  });
}

const brief = (ps: Permission[]): string[] => ps.map((p) => `${p.namespace ?? '*'} ${p.group}/${p.resource}${p.subresource === undefined ? '' : `/${p.subresource}`} ${p.verbs.join(',')}${p.resourceNames === undefined ? '' : ` [${p.resourceNames.join(',')}]`}`);

describe('Manager.permissions', () => {
  it('gathers the informers, the controller, the runnables, the ring, the lock, the webhook configurations and the CRDs', () => {
    const manager = operator();
    expect(brief(manager.permissions())).toEqual([
      '* admissionregistration.k8s.io/validatingwebhookconfigurations create,patch [widgets]',
      '* apiextensions.k8s.io/customresourcedefinitions get,create,patch [widgets.example.com]',
      'ns /configmaps get,list,watch,create,patch,delete',
      'ns coordination.k8s.io/leases list,create,update',
      'ns coordination.k8s.io/leases get,update [widgets-lock]',
      'ns events.k8s.io/events create,patch',
      'ns example.com/widgets list,watch',
      'ns example.com/widgets/status patch',
    ]);
    expect(manager.permissionReport().warnings).toEqual([]);
    const leases = manager.permissions().find((p) => p.resource === 'leases' && p.resourceNames === undefined)!;
    expect(leases.reason).toBe('shard ring r (Lease store); leader election lock ns/widgets-lock');
    const configmaps = manager.permissions().find((p) => p.resource === 'configmaps')!;
    expect(configmaps.reason).toBe('informer of v1/configmaps; informer of v1/configmaps (owns) of controller widgets; ctx.client of controller widgets (uses); drift audit of v1/configmaps');
  });

  it('warns about a controller that declares no uses, and a runnable or lock without permissions()', () => {
    const factory = new SharedInformerFactory(kubeConfig(), { logger: false });
    const controller = Controller.for(factory, widgets).build(noop, { name: 'bare', logger: false });
    const lock = { describe: () => 'custom', identity: () => 'a', get: () => Promise.reject(new Error()), create: () => Promise.resolve(), update: () => Promise.resolve() };
    const manager = new Manager(factory, { controllers: [controller], runnables: [{ name: 'mine', run: () => Promise.resolve() }], leaderElection: { lock }, logger: false });
    expect(manager.permissionReport().warnings).toEqual([
      'controller bare declares no uses: what its reconcile does through ctx.client (beyond listing what it watches) is not in the rules and is not checked — declare it with .uses(resource, verbs) on its builder',
      'runnable mine has no permissions(): what it sends to the API server is not in the rules — grant it by hand',
      'leader election lock custom has no permissions(): what it sends to the API server is not in the rules — grant it by hand',
    ]);
    expect(brief(manager.permissions())).toEqual(['* example.com/widgets list,watch']);
  });
});

describe('WebhookServer.permissions', () => {
  it("adds delete by name with onStop 'delete' out of a cluster, and nothing for 'ignore' (a patch) or in a cluster", () => {
    const kc = kubeConfig();
    const objects = [validatingWebhookConfiguration({ name: 'widgets', endpoint: { url: 'https://x' }, webhooks: [] })];
    const verbs = (configurations: object): string[] => new WebhookServer({ tls: { selfSigned: true }, port: 0, logger: false, configurations: { kubeConfig: kc, objects, ...configurations } }).permissions().flatMap((p) => p.verbs);
    expect(verbs({ onStop: 'delete', inCluster: false })).toEqual(['create', 'patch', 'delete']);
    expect(verbs({ onStop: 'delete', inCluster: true })).toEqual(['create', 'patch']);
    expect(verbs({ onStop: 'ignore', inCluster: false })).toEqual(['create', 'patch']);
    expect(new WebhookServer({ tls: { selfSigned: true }, port: 0, logger: false }).permissions()).toEqual([]);
  });
});

describe('rbacManifests', () => {
  it('makes a ClusterRole for what spans namespaces and a Role per namespace, bound to one ServiceAccount, every rule needed', () => {
    const objects = rbacManifests(
      [
        { group: '', resource: 'configmaps', verbs: ['list', 'watch'], reason: 'cluster informer' },
        { group: '', resource: 'configmaps', namespace: 'b', verbs: ['get', 'list'], reason: 'uses' },
        { group: 'coordination.k8s.io', resource: 'leases', namespace: 'a', verbs: ['get', 'update'], resourceNames: ['lock'], reason: 'lock' },
        { group: 'example.com', resource: 'widgets', subresource: 'status', namespace: 'b', verbs: ['patch'], reason: 'status' },
      ],
      { name: 'op', namespace: 'sys', serviceAccount: true },
    );
    const subjects = [{ kind: 'ServiceAccount', name: 'op', namespace: 'sys' }];
    const roleRef = (kind: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name: 'op' });
    expect(objects).toEqual([
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op', namespace: 'sys' } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'op' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'op' }, roleRef: roleRef('ClusterRole'), subjects },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'op', namespace: 'a' }, rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: ['lock'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'op', namespace: 'a' }, roleRef: roleRef('Role'), subjects },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'op', namespace: 'b' },
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
          { apiGroups: ['example.com'], resources: ['widgets/status'], verbs: ['patch'] },
        ],
      },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'op', namespace: 'b' }, roleRef: roleRef('Role'), subjects },
    ]);
  });

  it('names the ServiceAccount serviceAccountName, and makes no ClusterRole when every rule is namespaced', () => {
    const objects = rbacManifests([{ group: '', resource: 'configmaps', namespace: 'a', verbs: ['get'], reason: 'r' }], { name: 'op', namespace: 'sys', serviceAccountName: 'runner' });
    expect(objects.map((o) => o.kind)).toEqual(['Role', 'RoleBinding']);
    expect((objects[1] as { subjects: unknown }).subjects).toEqual([{ kind: 'ServiceAccount', name: 'runner', namespace: 'sys' }]);
  });

  it('refuses a name that is not a DNS subdomain, and an unknown option (INVALID_OPTION)', () => {
    expect(() => rbacManifests([], { name: 'Op_1', namespace: 'sys' })).toThrow(/option name must be a DNS subdomain name.*"Op_1"/);
    expect(() => rbacManifests([], { name: 'op', namespace: 'sys', serviceAcount: true } as never)).toThrow(/serviceAcount/);
  });
});
