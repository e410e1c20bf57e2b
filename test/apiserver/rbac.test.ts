// The rules kube-informer derives, held to kube-apiserver's RBAC authorizer: the Backup operator (CRD with
// conversion, validating webhook configuration, controller) runs as a ServiceAccount bound only to
// rbacManifests(manager.permissions()), and the names in resourceNames hold for the server-side applies
// that create (the patch handler authorizes `create` with the object's name).

import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources, type ResourceDescriptor } from '../../src/index.js';
import { isForbidden } from '../../src/objects.js';
import { EventRecorder, Manager, mergePermissions, rbacManifests, type Permission, type RbacObject } from '../../src/operations/index.js';
import { LeaseLock } from '../../src/leaderelection/index.js';
import { LeaseRingStore } from '../../src/sharding/index.js';
import { backups, type Backup } from '../../examples/backup/crd.js';
import { backupOperator, planName } from '../../examples/backup/operator.js';
import { backupCrd, backupWebhookServer } from '../../examples/backup/webhooks.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

async function eventually<T>(attempt: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${String(last)}`);
    await sleep(200);
  }
}

const RBAC_KINDS: Record<string, ResourceDescriptor> = {
  ClusterRole: resources.clusterroles,
  ClusterRoleBinding: resources.clusterrolebindings,
  Role: resources.roles,
  RoleBinding: resources.rolebindings,
};

/** A ServiceAccount in `namespace` and a KubeConfig with a token of it (TokenRequest). */
async function serviceAccount(api: RealApiServer, namespace: string, name: string): Promise<KubeConfig> {
  const core = api.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const request = await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'api', server: api.server, caData: Buffer.from(api.ca).toString('base64') }],
    users: [{ name, token: request.status?.token ?? '' }],
    contexts: [{ name: 'api', cluster: 'api', user: name }],
    currentContext: 'api',
  });
  return kc;
}

/** Creates the RBAC objects as the admin. */
async function grant(api: RealApiServer, objects: readonly RbacObject[]): Promise<void> {
  for (const object of objects) {
    const client = newResourceClient(api.kubeConfig, RBAC_KINDS[object.kind!]);
    await client.create(object as never);
    client.close();
  }
}

describe('the leader-election Lease, a shard ring store and an Event recorder, with their rules alone', () => {
  it('acquires and renews the lock, writes and lists the ring, records an Event: each with a Role in its namespace', async () => {
    const api = await startRealApiServer();
    const namespace = await freshNamespace(api, 'rbac-leases');
    const sa = await serviceAccount(api, namespace, 'op');
    const lock = new LeaseLock({ client: sa.makeApiClient(CoordinationV1Api), namespace, name: 'op-lock', identity: 'a', watch: new Watch(sa) });
    const store = new LeaseRingStore(sa, { namespace, ring: 'r', leaseDurationSeconds: 15 });
    const events = new EventRecorder(sa, { reportingController: 'example.com/op', namespaces: [namespace], logger: false });
    const permissions: Permission[] = mergePermissions([...lock.permissions(), ...store.permissions(), ...events.permissions()]);
    const objects = rbacManifests(permissions, { name: 'op', namespace });
    expect(objects.map((o) => `${o.kind} ${o.metadata?.namespace ?? ''}`)).toEqual([`Role ${namespace}`, `RoleBinding ${namespace}`]);
    expect((objects[0] as { rules: unknown[] }).rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list', 'create', 'update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'watch'], resourceNames: ['op-lock'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
    await grant(api, objects);
    const now = new Date();
    const record = { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaderTransitions: 0 };
    await eventually(() => lock.create(record).then(() => true), 'the rules to apply');
    await lock.get();
    await lock.update({ ...record, renewTime: new Date() });
    // The watch of the one Lease (fieldSelector metadata.name) is authorized by name: resourceNames grant it.
    const watchStop = new AbortController();
    const holders: string[] = [];
    const watching = lock.watch!((r) => void holders.push(r.holderIdentity), watchStop.signal);
    await eventually(async () => (holders.length > 0 ? true : undefined), 'the watch to report the Lease');
    watchStop.abort();
    await watching;
    expect(holders[0]).toBe('a');
    await store.write('r-slot-0', 'a', undefined);
    const [slot] = await store.list();
    await store.write('r-slot-0', 'a', slot.version);
    store.close();
    const stop = new AbortController();
    const recording = events.run(stop.signal);
    const subject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace } };
    events.event(subject, { type: 'Normal', reason: 'Tested', action: 'Test', note: 'one' });
    await events.flush();
    events.event(subject, { type: 'Normal', reason: 'Tested', action: 'Test', note: 'one' });
    await events.flush();
    stop.abort();
    await recording;
    expect(events.stats()).toMatchObject({ created: 1, patched: 1, failed: 0, dropped: 0 });
    // And nothing more: another Lease by name, an Event in another namespace.
    const other = new LeaseLock({ client: sa.makeApiClient(CoordinationV1Api), namespace, name: 'other-lock', identity: 'a' });
    await expect(other.get()).rejects.toThrow(/HTTP 403/);
    const otherWatching = new LeaseLock({ client: sa.makeApiClient(CoordinationV1Api), namespace, name: 'other-lock', identity: 'a', watch: new Watch(sa) });
    await expect(otherWatching.watch!(() => {}, new AbortController().signal)).rejects.toThrow(`watch lease ${namespace}/other-lock failed: HTTP 403`);
    await api.stop();
  });
});

describe('the Backup operator as a ServiceAccount bound to its generated rules', () => {
  let api: RealApiServer;
  let namespace: string;
  let operatorConfig: KubeConfig;
  let objects: RbacObject[];
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let failure: unknown;

  beforeAll(async () => {
    api = await startRealApiServer();
    namespace = await freshNamespace(api, 'rbac');
    operatorConfig = await serviceAccount(api, namespace, 'backup-operator');
    const port = await freePort();
    const server = backupWebhookServer({ port, kubeConfig: operatorConfig });
    const { factory, controller } = backupOperator(operatorConfig, { logger: false });
    const manager = new Manager(factory, { crds: [backupCrd(`https://127.0.0.1:${port}`, server.caBundle())], webhookServer: server, controllers: [controller], logger: false });
    expect(manager.permissionReport().warnings).toEqual([]);
    objects = rbacManifests(manager.permissions(), { name: `backup-operator-${namespace}`, namespace, serviceAccountName: 'backup-operator' });
    await grant(api, objects);
    // The authorizer's caches see the bindings a moment later: wait until the CRD may be read (404 is allowed).
    const crds = newResourceClient(operatorConfig, resources.customresourcedefinitions);
    await eventually(() => crds.get('backups.backup.example.com').then(() => true, (err: unknown) => (isForbidden(err) ? undefined : true)), 'the rules to apply');
    crds.close();
    running = manager.run(stop.signal).catch((err: unknown) => void (failure = err));
  });
  afterAll(async () => {
    stop.abort();
    await running;
    const admin = (r: ResourceDescriptor) => newResourceClient(api.kubeConfig, r);
    for (const object of objects ?? []) {
      if (object.kind === 'ServiceAccount') continue;
      await admin(RBAC_KINDS[object.kind!]).delete(object.metadata!.name!, object.metadata?.namespace).catch(() => undefined);
    }
    await admin({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false }).delete('backups.backup.example.com').catch(() => undefined);
    await api?.stop();
  });

  it('generates a ClusterRole (it watches every namespace; CRDs and webhook configurations are cluster-scoped), rules narrowed by name where the code names its objects', () => {
    expect(objects.map((o) => o.kind)).toEqual(['ClusterRole', 'ClusterRoleBinding']);
    expect((objects[0] as { rules: unknown[] }).rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch', 'create', 'patch', 'delete'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], verbs: ['create', 'patch'], resourceNames: ['backups.backup.example.com'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'create', 'patch'], resourceNames: ['backups.backup.example.com'] },
      { apiGroups: ['backup.example.com'], resources: ['backups'], verbs: ['list', 'watch', 'patch'] },
      { apiGroups: ['backup.example.com'], resources: ['backups/status'], verbs: ['patch'] },
    ]);
  });

  it('runs its whole scenario with those rules alone: CRD and webhook configuration applied, plan written, Ready, cleaned up', async () => {
    const client = newResourceClient(api.kubeConfig, backups.descriptor);
    const configMaps = newResourceClient(api.kubeConfig, resources.configmaps);
    try {
      const nightly: Backup = { apiVersion: 'backup.example.com/v1', kind: 'Backup', metadata: { name: 'nightly', namespace }, spec: { schedule: '0 3 * * *', bucket: 'archive' } };
      await eventually(() => client.create(nightly), 'the CRD served and its webhooks answering');
      const plan: ConfigMap = await eventually(() => configMaps.get(planName('nightly'), namespace), 'the plan');
      expect(plan.data).toMatchObject({ bucket: 'archive' });
      await eventually(async () => ((await client.get('nightly', namespace)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined), 'Ready');
      await client.delete('nightly', namespace);
      await eventually(() => client.get('nightly', namespace).then(() => undefined, () => true), 'the Backup gone');
      await expect(configMaps.get(planName('nightly'), namespace)).rejects.toMatchObject({ statusCode: 404 });
      expect(failure).toBeUndefined();
    } finally {
      client.close();
      configMaps.close();
    }
  });

  it('refuses the same server-side apply for another name: the names hold (the apply is authorized as a patch first)', async () => {
    const hooks = newResourceClient(operatorConfig, { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false });
    try {
      const error = await hooks.apply({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: `other-${namespace}` } }, { fieldManager: 'x' }).catch((e: unknown) => e);
      expect(isForbidden(error)).toBe(true);
      expect((error as Error).message).toContain('cannot patch resource "validatingwebhookconfigurations"');
    } finally {
      hooks.close();
    }
  });
});
