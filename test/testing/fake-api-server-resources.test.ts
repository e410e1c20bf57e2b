// The fake API server serves only the resources it knows (built in, declared, or from a CRD), like kube-apiserver.

import { afterEach, describe, expect, it } from 'vitest';
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { newListWatch } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from '../../src/testing/index.js';
import { getJson, openWatch } from './helpers.js';

let server: FakeApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  server = await startFakeApiServer(options);
  return server;
}

/** The Status kube-apiserver answers for a path it does not serve. */
const NOT_FOUND = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  reason: 'NotFound',
  code: 404,
  message: 'the server could not find the requested resource',
};

/** The plain text kube-apiserver answers for a path under an API group it does not serve (no CRD, not its own). */
const PAGE_NOT_FOUND = '404 page not found\n';

/** Whether kube-apiserver answers a 404 for `path` as plain text (a group it does not serve) rather than a Status. */
const isPlainText = (path: string): boolean => /^\/apis\/(example\.com|extensions|core|x\.[^/]*)\//.test(path);

/** GET (or another method) of `path`: the status and the body, parsed when it is JSON. */
async function fetchBody(s: FakeApiServer, path: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${s.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.startsWith('text/plain') ? text : JSON.parse(text) };
}

/** kube-apiserver's 404 for `path`: the NotFound Status under the core group and its own groups, else the plain text. */
const notFound = (path: string): { status: number; body: unknown } => ({ status: 404, body: isPlainText(path) ? PAGE_NOT_FOUND : expect.objectContaining(NOT_FOUND) });

/** A GVR typo a controller could make: wrong group, wrong version, unknown plural, a Kind instead of a plural. */
const TYPOS = [
  '/apis/apps/v1/pods',
  '/api/v2/pods',
  '/api/v1/widgets',
  '/api/v1/Pod',
  '/api/v1/pod',
  '/api/v1/deployments',
  '/apis/extensions/v1beta1/deployments',
  '/apis/apps/v1beta1/deployments',
  '/apis/coordination.k8s.io/v1beta1/leases',
  '/api/v1/leases',
  '/apis/example.com/v1/widgets',
];

/** Every built-in resource at its exact group, version and plural, and whether it is namespaced. */
const BUILT_IN: Array<[group: string, version: string, resource: string, kind: string, namespaced: boolean]> = [
  ['', 'v1', 'pods', 'Pod', true],
  ['', 'v1', 'services', 'Service', true],
  ['', 'v1', 'endpoints', 'Endpoints', true],
  ['', 'v1', 'configmaps', 'ConfigMap', true],
  ['', 'v1', 'secrets', 'Secret', true],
  ['', 'v1', 'events', 'Event', true],
  ['', 'v1', 'serviceaccounts', 'ServiceAccount', true],
  ['', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true],
  ['', 'v1', 'replicationcontrollers', 'ReplicationController', true],
  ['', 'v1', 'namespaces', 'Namespace', false],
  ['', 'v1', 'nodes', 'Node', false],
  ['', 'v1', 'persistentvolumes', 'PersistentVolume', false],
  ['apps', 'v1', 'deployments', 'Deployment', true],
  ['apps', 'v1', 'replicasets', 'ReplicaSet', true],
  ['apps', 'v1', 'statefulsets', 'StatefulSet', true],
  ['apps', 'v1', 'daemonsets', 'DaemonSet', true],
  ['batch', 'v1', 'jobs', 'Job', true],
  ['batch', 'v1', 'cronjobs', 'CronJob', true],
  ['coordination.k8s.io', 'v1', 'leases', 'Lease', true],
  ['discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true],
  ['networking.k8s.io', 'v1', 'ingresses', 'Ingress', true],
  ['events.k8s.io', 'v1', 'events', 'Event', true],
  ['rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true],
  ['rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true],
  ['rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false],
  ['rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false],
  ['apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false],
  ['storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false],
];

const prefix = (group: string, version: string): string => (group === '' ? `/api/${version}` : `/apis/${group}/${version}`);

const send = (s: FakeApiServer, method: string, path: string, body?: unknown) =>
  getJson(`${s.url}${path}`, {
    method,
    headers: { 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('fake API server: unknown resources are 404, like kube-apiserver', () => {
  it.each(TYPOS)('answers a list of %s with a 404 NotFound Status', async (path) => {
    const s = await start();
    expect(await fetchBody(s, path)).toEqual(notFound(path));
  });

  it.each(TYPOS)('answers a watch of %s with a 404 NotFound Status, not a stream', async (path) => {
    const s = await start();
    const watch = await openWatch(`${s.url}${path}?watch=true&resourceVersion=0`);
    try {
      expect(watch.status).toBe(404);
      if (isPlainText(path)) expect(await watch.nextLine()).toBe('404 page not found');
      else expect(await watch.next()).toMatchObject(NOT_FOUND);
      expect(await watch.nextLine()).toBeUndefined();
    } finally {
      watch.close();
    }
    expect(s.openWatches()).toBe(0);
  });

  it('answers a namespaced list and a GET of an unknown resource with 404 too', async () => {
    const s = await start();
    expect(await getJson(`${s.url}/apis/apps/v1/namespaces/default/pods`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await getJson(`${s.url}/api/v1/namespaces/default/widgets/w1`)).toMatchObject({ status: 404, body: NOT_FOUND });
  });

  it('answers every write to an unknown resource with 404 and stores nothing', async () => {
    const s = await start();
    const base = '/apis/apps/v1/namespaces/default/pods';
    const obj = { metadata: { name: 'p1' } };
    expect(await send(s, 'POST', base, obj)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await send(s, 'PUT', `${base}/p1`, obj)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await send(s, 'PATCH', `${base}/p1`, { metadata: { labels: { a: 'b' } } })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await send(s, 'DELETE', `${base}/p1`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await send(s, 'PUT', `${base}/p1/status`, obj)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(s.resourceVersion()).toBe('1');
    expect(s.list('pods')).toEqual([]);
  });

  it('logs a request for an unknown resource with its verb, group and resource', async () => {
    const s = await start();
    (await openWatch(`${s.url}/apis/apps/v1/namespaces/default/pods?watch=true`)).close();
    expect(s.requests().at(-1)).toMatchObject({ verb: 'watch', group: 'apps', resource: 'pods', namespace: 'default' });
  });

  it('answers discovery for a group/version it does not serve with 404', async () => {
    const s = await start();
    expect(await getJson(`${s.url}/api/v2`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await fetchBody(s, '/apis/example.com/v1')).toEqual({ status: 404, body: PAGE_NOT_FOUND });
    expect(await getJson(`${s.url}/apis/apps/v1beta1`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await getJson(`${s.url}/apis/apps/v1`)).body.resources.map((r: { name: string }) => r.name)).toContain('deployments');
  });

  it('makes a reflector on a mistyped resource fail to list instead of syncing empty', async () => {
    const s = await start();
    const lw = newListWatch(s.kubeConfig, { group: 'apps', version: 'v1', resource: 'pods' });
    await expect(lw.list({}, new AbortController().signal)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('throws a 404 naming the resource and how to declare it from a state operation on an unknown resource', async () => {
    const s = await start();
    const attempt = (): unknown => s.create('widgets', { metadata: { name: 'w1' } });
    expect(attempt).toThrow(/widgets/);
    expect(attempt).toThrow(/resource\(/);
    expect(attempt).toThrowError(expect.objectContaining({ statusCode: 404 }));
    expect(() => s.list({ group: 'apps', version: 'v1', resource: 'pods' })).toThrow(/pods/);
    expect(() => s.get('deployments', 'd1')).toThrow(/deployments/);
  });
});

describe('fake API server: the built-in resources', () => {
  it.each(BUILT_IN)('serves %s/%s %s (kind %s) at its exact group and version', async (group, version, resource, kind, namespaced) => {
    const s = await start();
    const ref = { group, version, resource };
    const created = s.create(ref, { metadata: { name: 'one', ...(namespaced ? { namespace: 'ns1' } : {}) } });
    expect(created).toMatchObject({ apiVersion: group === '' ? version : `${group}/${version}`, kind });
    expect(created.metadata?.namespace).toBe(namespaced ? 'ns1' : undefined);

    const list = await getJson(`${s.url}${prefix(group, version)}/${resource}`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ kind: `${kind}List`, items: [{ metadata: { name: 'one' } }] });
    const nsList = await getJson(`${s.url}${prefix(group, version)}/namespaces/ns1/${resource}`);
    expect(nsList.status).toBe(namespaced ? 200 : 404);

    const watch = await openWatch(`${s.url}${prefix(group, version)}/${resource}?watch=true&resourceVersion=0`);
    try {
      expect(watch.status).toBe(200);
      expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { kind, metadata: { name: 'one' } } });
    } finally {
      watch.close();
    }
  });

  it.each(BUILT_IN)('does not serve %s/%s %s under another group or version', async (group, version, resource) => {
    const s = await start();
    const elsewhere = [
      group === '' ? `/apis/apps/v1/${resource}` : `/api/v1/${resource}`,
      `${prefix(group, version === 'v1' ? 'v1beta1' : 'v1')}/${resource}`,
      `/apis/${group === '' ? 'core' : `x.${group}`}/${version}/${resource}`,
    ].filter((p) => !(resource === 'events' && (p === '/api/v1/events' || p === '/apis/events.k8s.io/v1/events')));
    for (const path of elsewhere) {
      expect(await fetchBody(s, path), path).toEqual(notFound(path));
    }
  });

  it('serves events in both the core group and events.k8s.io, as different resources', async () => {
    const s = await start();
    s.create('events', { metadata: { name: 'core-event' } });
    s.create('events.events.k8s.io', { metadata: { name: 'new-event' } });
    const core = await getJson(`${s.url}/api/v1/events`);
    const named = await getJson(`${s.url}/apis/events.k8s.io/v1/events`);
    expect(core.body.items.map((e: { metadata: { name: string } }) => e.metadata.name)).toEqual(['core-event']);
    expect(named.body).toMatchObject({ apiVersion: 'events.k8s.io/v1', items: [{ metadata: { name: 'new-event' } }] });
  });

  it('serves string refs at the version the built-in has (leases.coordination.k8s.io → coordination.k8s.io/v1)', async () => {
    const s = await start();
    expect(s.create('leases.coordination.k8s.io', { metadata: { name: 'l' } })).toMatchObject({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' });
    expect(s.create('deployments.apps', { metadata: { name: 'd' } })).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
  });
});

describe('fake API server: declared resources', () => {
  it('serves a resource declared with the resources option', async () => {
    const s = await start({ resources: [{ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' }] });
    s.create({ group: 'example.com', version: 'v1', resource: 'widgets' }, { metadata: { name: 'w1' } });
    const list = await getJson(`${s.url}/apis/example.com/v1/namespaces/default/widgets`);
    expect(list).toMatchObject({ status: 200, body: { apiVersion: 'example.com/v1', kind: 'WidgetList', items: [{ metadata: { name: 'w1' } }] } });
    expect(await fetchBody(s, '/apis/example.com/v2/widgets')).toEqual({ status: 404, body: PAGE_NOT_FOUND });
    expect((await getJson(`${s.url}/apis/example.com/v1`)).body.resources).toEqual([expect.objectContaining({ name: 'widgets', kind: 'Widget' })]);
  });

  it('serves a resource declared with server.resource(), from then on', async () => {
    const s = await start();
    expect((await getJson(`${s.url}/api/v1/gadgets`)).status).toBe(404);
    s.resource({ resource: 'gadgets', kind: 'Gadget', namespaced: false });
    const created = await send(s, 'POST', '/api/v1/gadgets', { metadata: { name: 'g1' } });
    expect(created).toMatchObject({ status: 201, body: { apiVersion: 'v1', kind: 'Gadget', metadata: { name: 'g1' } } });
    expect(s.list('gadgets')).toHaveLength(1);
  });

  it('declares a resource from a state operation given a full definition (kind or namespaced)', async () => {
    const s = await start();
    s.create({ group: 'example.com', version: 'v1alpha1', resource: 'gizmos', kind: 'Gizmo' }, { metadata: { name: 'z' } });
    expect(await getJson(`${s.url}/apis/example.com/v1alpha1/namespaces/default/gizmos/z`)).toMatchObject({ status: 200, body: { kind: 'Gizmo' } });
  });

  it('serves the resource of a CustomResourceDefinition while it exists, at each served version', async () => {
    const s = await start();
    const crds = s.kubeConfig.makeApiClient(ApiextensionsV1Api);
    await crds.createCustomResourceDefinition({
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Cluster',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            { name: 'v1', served: true, storage: true },
            { name: 'v1beta1', served: true, storage: false },
            { name: 'v1alpha1', served: false, storage: false },
          ],
        },
      },
    });
    const custom = s.kubeConfig.makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' } } });
    expect(s.get('widgets.example.com', 'w1')).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
    expect((await getJson(`${s.url}/apis/example.com/v1beta1/widgets`)).status).toBe(200);
    expect(await fetchBody(s, '/apis/example.com/v1alpha1/widgets')).toEqual({ status: 404, body: PAGE_NOT_FOUND });
    expect(await fetchBody(s, '/apis/example.com/v1/namespaces/default/widgets')).toEqual({ status: 404, body: PAGE_NOT_FOUND }); // as kube-apiserver (the differential suite)
    expect((await getJson(`${s.url}/apis/example.com/v1`)).body.resources).toEqual([expect.objectContaining({ name: 'widgets', namespaced: false })]);

    await crds.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
    expect(await fetchBody(s, '/apis/example.com/v1/widgets')).toEqual({ status: 404, body: PAGE_NOT_FOUND });
  });

  it('serves a CRD created with a state operation', async () => {
    const s = await start();
    s.create('customresourcedefinitions.apiextensions.k8s.io', {
      metadata: { name: 'gadgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'gadgets', kind: 'Gadget' }, versions: [{ name: 'v2', served: true, storage: true }] },
    } as never);
    expect(s.create('gadgets.example.com', { metadata: { name: 'g' } })).toMatchObject({ apiVersion: 'example.com/v2', kind: 'Gadget', metadata: { namespace: 'default' } });
  });
});

describe('fake API server: inferUnknownResources (permissive mode)', () => {
  it('infers an unknown resource (kind from the plural, namespaced) when asked to', async () => {
    const s = await start({ inferUnknownResources: true });
    const list = await getJson(`${s.url}/api/v1/widgets`);
    expect(list).toMatchObject({ status: 200, body: { kind: 'WidgetList', items: [] } });
    expect(s.create('widgets', { metadata: { name: 'w' } })).toMatchObject({ apiVersion: 'v1', kind: 'Widget', metadata: { namespace: 'default' } });
  });

  it('keeps strictResources working as a deprecated alias (strictResources: false infers)', async () => {
    const s = await start({ strictResources: false });
    expect((await getJson(`${s.url}/apis/apps/v1/pods`)).status).toBe(200);
  });

  it('is strict with strictResources: true, and inferUnknownResources wins over the alias', async () => {
    const strict = await startFakeApiServer({ strictResources: true });
    const both = await startFakeApiServer({ strictResources: false, inferUnknownResources: false });
    try {
      expect((await getJson(`${strict.url}/api/v1/widgets`)).status).toBe(404);
      expect((await getJson(`${both.url}/api/v1/widgets`)).status).toBe(404);
    } finally {
      await strict.close();
      await both.close();
    }
  });
});
