// The fake API server: CRDs become Established, unknown groups are plain-text 404s, and what it does not model answers 501 (issue 26).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/index.js';
import { ensureCustomResourceDefinitions } from '../../src/crd/index.js';
import { newResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { getJson, openWatch } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function crd(plural: string, kind: string, subresources?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        { name: 'v1beta1', served: true, storage: false },
        { name: 'v1', served: true, storage: true, ...(subresources ? { subresources } : {}) },
      ],
    },
  } as KubeObject;
}

const send = (method: string, path: string, body?: unknown, contentType = 'application/json', headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { method, headers: { 'Content-Type': contentType, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

/** kube-apiserver v1.37.2's answer for a path under a group it does not serve: not a Status, plain text. */
async function expectPageNotFound(res: Response): Promise<void> {
  expect(res.status).toBe(404);
  expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(await res.text()).toBe('404 page not found\n');
}

async function expect501(res: Response, names: RegExp): Promise<void> {
  const body = (await res.json()) as { message: string };
  expect(res.status).toBe(501);
  expect(body).toMatchObject({ kind: 'Status', code: 501, reason: 'NotImplemented' });
  expect(body.message).toMatch(names);
}

describe('fake API server: CRDs become Established, as kube-apiserver makes them', () => {
  it('answers the POST as kube-apiserver does, then reports NamesAccepted and Established with the accepted names', async () => {
    const res = await send('POST', CRD_PATH, { ...crd('widgets', 'Widget'), status: { conditions: [{ type: 'Bogus', status: 'True' }] } });
    const created = (await res.json()) as { status: unknown; metadata: { resourceVersion: string } };
    expect(res.status).toBe(201);
    expect(created.status).toEqual({ conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });
    const got = await getJson(`${server.url}${CRD_PATH}/widgets.example.com`);
    expect(Number(got.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect(got.body.status).toMatchObject({
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
      ],
      acceptedNames: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      storedVersions: ['v1'],
    });
    expect(got.body.metadata.managedFields.map((e: { manager: string; subresource?: string }) => [e.manager, e.subresource])).toContainEqual(['kube-apiserver', 'status']);
  });

  it('reports Established for a CRD created in-process too, and a watch sees ADDED then MODIFIED', async () => {
    const watch = await openWatch(`${server.url}${CRD_PATH}?watch=true`);
    try {
      server.create(CRDS, crd('gadgets', 'Gadget'));
      const [added, modified] = await watch.take(2);
      expect(added.type).toBe('ADDED');
      expect(modified).toMatchObject({ type: 'MODIFIED', object: { status: { conditions: [{ type: 'NamesAccepted' }, { type: 'Established', status: 'True' }] } } });
    } finally {
      watch.close();
    }
  });

  it('lets ensureCustomResourceDefinitions install on the fake', async () => {
    const client = newResourceClient(server.kubeConfig, { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false });
    const installed = await ensureCustomResourceDefinitions(client as never, [crd('sprockets', 'Sprocket') as never], { timeoutMs: 1000, pollIntervalMs: 10 });
    expect(installed).toHaveLength(1);
  });
});

describe('fake API server: a group it does not serve is a plain-text 404, as on kube-apiserver', () => {
  it.each([
    ['a list', 'GET', '/apis/nope.example.com/v1/namespaces/default/widgets'],
    ['discovery', 'GET', '/apis/nope.example.com/v1'],
    ['a POST', 'POST', '/apis/nope.example.com/v1/namespaces/default/widgets'],
    ['a removed group', 'GET', '/apis/extensions/v1beta1/deployments'],
    ['an unknown top-level path', 'GET', '/nope'],
  ])('answers %s there with "404 page not found"', async (_what, method, path) => {
    await expectPageNotFound(await send(method, path, method === 'POST' ? { metadata: { name: 'w' } } : undefined));
  });

  it('serves the discovery of a group it serves (APIGroup), and the text for one it does not', async () => {
    server.create(CRDS, crd('widgets', 'Widget'));
    expect(await getJson(`${server.url}/apis/example.com`)).toMatchObject({ status: 200, body: { kind: 'APIGroup', name: 'example.com', versions: [{ groupVersion: 'example.com/v1' }, { groupVersion: 'example.com/v1beta1' }] } });
    await expectPageNotFound(await send('GET', '/apis/nope.example.com'));
  });

  it('answers the namespaced path of a cluster-scoped custom resource with the text (found by the differential suite)', async () => {
    const gadgets = crd('gadgets', 'Gadget') as KubeObject & { spec: { scope: string } };
    gadgets.spec.scope = 'Cluster';
    server.create(CRDS, gadgets);
    await expectPageNotFound(await send('GET', '/apis/example.com/v1/namespaces/default/gadgets'));
  });

  it('answers a watch there with the same text, not a stream', async () => {
    await expectPageNotFound(await fetch(`${server.url}/apis/nope.example.com/v1/widgets?watch=true`));
    expect(server.openWatches()).toBe(0);
  });

  it('answers an unserved version or plural of a CRD\'s group with the text too; a built-in group answers a Status', async () => {
    server.create(CRDS, crd('widgets', 'Widget'));
    await expectPageNotFound(await send('GET', '/apis/example.com/v2/widgets'));
    await expectPageNotFound(await send('GET', '/apis/example.com/v1/gizmos'));
    for (const path of ['/apis/apps/v9/deployments', '/apis/apps/v1/widgets', '/api/v1/widgets', '/api/v2/pods']) {
      const res = await send('GET', path);
      expect(res.headers.get('content-type'), path).toBe('application/json');
      expect(await res.json(), path).toMatchObject({ kind: 'Status', code: 404, message: 'the server could not find the requested resource' });
    }
  });
});

describe('fake API server: what it does not model answers 501 naming it, never a silent success', () => {
  it('a subresource kube-apiserver serves and the fake does not model', async () => {
    server.create('pods', { metadata: { name: 'p' } });
    await expect501(await send('GET', '/api/v1/namespaces/default/pods/p/log'), /pods\/log/);
    await expect501(await send('POST', '/api/v1/namespaces/default/pods/p/eviction', { metadata: { name: 'p' } }), /pods\/eviction/);
    server.create('serviceaccounts', { metadata: { name: 's' } });
    await expect501(await send('POST', '/api/v1/namespaces/default/serviceaccounts/s/token', {}), /serviceaccounts\/token/);
  });

  it('the scale subresource a CRD declares', async () => {
    server.create(CRDS, crd('widgets', 'Widget', { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } }));
    server.create('widgets.example.com', { metadata: { name: 'w' } });
    await expect501(await send('GET', '/apis/example.com/v1/namespaces/default/widgets/w/scale'), /widgets\/scale/);
  });

  it('a subresource kube-apiserver does not serve is 404 (a custom resource names the object, as kube-apiserver does)', async () => {
    server.create(CRDS, crd('widgets', 'Widget'));
    server.create('widgets.example.com', { metadata: { name: 'w' } });
    const res = await send('GET', '/apis/example.com/v1/namespaces/default/widgets/w/scale');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ reason: 'NotFound', message: 'widgets.example.com "w" not found' });
    expect((await send('GET', '/api/v1/namespaces/default/pods/p/nope')).status).toBe(404);
  });

  it('DELETE of a collection (deletecollection)', async () => {
    server.create('configmaps', { metadata: { name: 'c' } });
    await expect501(await send('DELETE', '/api/v1/namespaces/default/configmaps'), /deletecollection/);
    expect(server.list('configmaps')).toHaveLength(1);
  });

  it('DELETE with propagationPolicy Foreground or Orphan (the fake runs no garbage collector)', async () => {
    server.create('configmaps', { metadata: { name: 'c' } });
    await expect501(await send('DELETE', '/api/v1/namespaces/default/configmaps/c', { propagationPolicy: 'Foreground' }), /propagationPolicy.*Foreground/);
    await expect501(await send('DELETE', '/api/v1/namespaces/default/configmaps/c?propagationPolicy=Orphan'), /propagationPolicy.*Orphan/);
    expect(server.list('configmaps')).toHaveLength(1);
    expect((await send('DELETE', '/api/v1/namespaces/default/configmaps/c', { propagationPolicy: 'Background' })).status).toBe(200);
  });

  it('a strategic merge patch with a list or a $ directive on a built-in resource; on a custom resource 415, as on kube-apiserver', async () => {
    server.create('configmaps', { metadata: { name: 'c' } });
    const smp = 'application/strategic-merge-patch+json';
    await expect501(await send('PATCH', '/api/v1/namespaces/default/configmaps/c', { metadata: { finalizers: ['a'] } }, smp), /strategic merge patch.*metadata\.finalizers/);
    await expect501(await send('PATCH', '/api/v1/namespaces/default/configmaps/c', { data: { $patch: 'replace' } }, smp), /\$patch/);
    expect((await send('PATCH', '/api/v1/namespaces/default/configmaps/c', { data: { a: 'b' } }, smp)).status).toBe(200);
    server.create(CRDS, crd('widgets', 'Widget'));
    server.create('widgets.example.com', { metadata: { name: 'w' } });
    const cr = await send('PATCH', '/apis/example.com/v1/namespaces/default/widgets/w', { spec: { a: 1 } }, smp);
    expect(cr.status).toBe(415);
    expect(((await cr.json()) as { message: string }).message).toMatch(/accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/);
  });

  it('a POST or PUT body in YAML or protobuf', async () => {
    const yaml = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: 'metadata:\n  name: c\n' });
    await expect501(yaml, /application\/yaml/);
    expect(server.list('configmaps')).toEqual([]);
  });

  it('the deprecated /watch/ paths', async () => {
    await expect501(await send('GET', '/api/v1/watch/namespaces/default/pods'), /deprecated watch path/);
  });

  it('a Table or protobuf-only answer', async () => {
    await expect501(await send('GET', '/api/v1/namespaces/default/configmaps', undefined, 'application/json', { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }), /Table/);
    await expect501(await send('GET', '/api/v1/namespaces/default/configmaps', undefined, 'application/json', { Accept: 'application/vnd.kubernetes.protobuf' }), /protobuf/);
    expect((await send('GET', '/api/v1/namespaces/default/configmaps', undefined, 'application/json', { Accept: 'application/vnd.kubernetes.protobuf, application/json' })).status).toBe(200);
  });
});
