// The fake API server's status subresource and declarations, held to kube-apiserver v1.37.2's rules (issue 26, differences 1 and 2).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { sendJson } from './helpers.js';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const GADGETS = '/apis/example.com/v1/namespaces/default/gadgets';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);
const merge = (path: string, body: unknown) => send('PATCH', path, body, 'application/merge-patch+json');
const apply = (path: string, body: unknown, manager = 'm') => send('PATCH', `${path}?fieldManager=${manager}`, body, 'application/apply-patch+yaml');

/** A CRD for `<plural>.example.com`, v1, namespaced, with or without the status subresource. */
function crd(plural: string, kind: string, status: boolean): KubeObject {
  return {
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, ...(status ? { subresources: { status: {} } } : {}) }],
    },
  } as KubeObject;
}

describe('fake API server: the status subresource of a CRD (kube-apiserver v1.37.2 rules)', () => {
  beforeEach(() => {
    server.create(CRDS, crd('widgets', 'Widget', true));
  });

  it('drops a status sent with a POST', async () => {
    const created = await send('POST', WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 }, status: { ready: true } });
    expect(created.status).toBe(201);
    expect(created.body.status).toBeUndefined();
    expect(server.get<Obj>('widgets.example.com', 'w')?.status).toBeUndefined();
  });

  it('drops a status change sent with a PUT or a merge patch of the main resource, keeping spec and metadata changes', async () => {
    const created = (await send('POST', WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } })).body;
    const put = await send('PUT', `${WIDGETS}/w`, { ...created, metadata: { ...created.metadata, labels: { a: 'b' } }, spec: { size: 2 }, status: { ready: true } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ metadata: { generation: 2, labels: { a: 'b' } }, spec: { size: 2 } });
    expect(put.body.status).toBeUndefined();
    await merge(`${WIDGETS}/w/status`, { status: { ready: false } });
    const patched = await merge(`${WIDGETS}/w`, { status: { ready: true }, spec: { size: 3 } });
    expect(patched.body).toMatchObject({ metadata: { generation: 3 }, spec: { size: 3 }, status: { ready: false } });
  });

  it('applies only status through /status: spec, labels, annotations and finalizers sent there are dropped, and the generation stays', async () => {
    const created = (await send('POST', WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { a: 'b' } }, spec: { size: 1 } })).body;
    const body = { ...created, metadata: { ...created.metadata, labels: { c: 'd' }, annotations: { x: 'y' }, finalizers: ['example.com/f'] }, spec: { size: 9 }, status: { ready: true } };
    const put = await send('PUT', `${WIDGETS}/w/status`, body);
    expect(put.body).toMatchObject({ metadata: { generation: 1, labels: { a: 'b' } }, spec: { size: 1 }, status: { ready: true } });
    expect(put.body.metadata.annotations).toBeUndefined();
    expect(put.body.metadata.finalizers).toBeUndefined();
    const patched = await merge(`${WIDGETS}/w/status`, { metadata: { labels: { e: 'f' } }, spec: { size: 10 }, status: { n: 1 } });
    expect(patched.body).toMatchObject({ metadata: { generation: 1, labels: { a: 'b' } }, spec: { size: 1 }, status: { ready: true, n: 1 } });
  });

  it('ignores status in a server-side apply of the main resource (no 501, not owned), and applies it through /status', async () => {
    const created = await apply(`${WIDGETS}/w`, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3 }, status: { applied: true } }, 'm1');
    expect(created.status).toBe(201);
    expect(created.body.status).toBeUndefined();
    expect(created.body.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'm1', fieldsV1: { 'f:spec': { 'f:size': {} } } })]);
    const status = await apply(`${WIDGETS}/w/status`, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { l: '1' } }, spec: { size: 4 }, status: { s: 1 } }, 'm2');
    expect(status.body).toMatchObject({ metadata: { generation: 1 }, spec: { size: 3 }, status: { s: 1 } });
    expect(status.body.metadata.labels).toBeUndefined();
  });

  it('keeps the in-process state operations as the test\'s back door: server.create and server.update store status as given', () => {
    const w = server.create<Obj>('widgets.example.com', { metadata: { name: 'w' }, spec: { size: 1 }, status: { ready: true } });
    expect(w.status).toEqual({ ready: true });
    expect(server.update<Obj>('widgets.example.com', { ...w, status: { ready: false } })).toMatchObject({ metadata: { generation: 1 }, status: { ready: false } });
  });
});

describe('fake API server: a CRD without the status subresource (kube-apiserver v1.37.2 rules)', () => {
  beforeEach(() => {
    server.create(CRDS, crd('gadgets', 'Gadget', false));
  });

  it('stores status with the main resource, counts a status change in the generation, and answers /status with 404', async () => {
    const created = await send('POST', GADGETS, { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1 }, status: { ready: true } });
    expect(created.body).toMatchObject({ metadata: { generation: 1 }, status: { ready: true } });
    expect((await merge(`${GADGETS}/g`, { status: { ready: false } })).body).toMatchObject({ metadata: { generation: 2 }, status: { ready: false } });
    expect((await merge(`${GADGETS}/g`, { metadata: { labels: { a: 'b' } } })).body.metadata.generation).toBe(2);
    const status = await merge(`${GADGETS}/g/status`, { status: { ready: 1 } });
    expect(status).toMatchObject({ status: 404, body: { reason: 'NotFound', message: 'gadgets.example.com "g" not found', details: { name: 'g', group: 'example.com', kind: 'gadgets' } } });
    expect(server.get<Obj>('gadgets.example.com', 'g')?.status).toEqual({ ready: false });
  });

  it('applies status in a server-side apply of the main resource', async () => {
    const created = await apply(`${GADGETS}/g`, { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1 }, status: { ready: true } });
    expect(created).toMatchObject({ status: 201, body: { status: { ready: true } } });
  });
});

describe('fake API server: declared resources and the status subresource', () => {
  it('a declared resource has the status subresource by default (as most CRDs do); statusSubresource: false has none', async () => {
    server.resource({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' });
    server.resource({ group: 'example.com', version: 'v1', resource: 'gadgets', kind: 'Gadget', statusSubresource: false });
    expect((await send('POST', WIDGETS, { metadata: { name: 'w' }, status: { ready: true } })).body.status).toBeUndefined();
    expect((await merge(`${WIDGETS}/w/status`, { status: { ready: true } })).body.status).toEqual({ ready: true });
    expect((await send('POST', GADGETS, { metadata: { name: 'g' }, status: { ready: true } })).body.status).toEqual({ ready: true });
    expect((await merge(`${GADGETS}/g/status`, { status: { ready: false } })).status).toBe(404);
  });

  it('a built-in resource without a status subresource answers /status with 404', async () => {
    server.create('configmaps', { metadata: { name: 'c' } });
    expect((await merge('/api/v1/namespaces/default/configmaps/c/status', { status: {} })).status).toBe(404);
  });
});

describe('fake API server: a full ResourceDescriptor does not re-declare a served resource', () => {
  const descriptor = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true } as const;

  it('keeps the CRD\'s declaration (generation and status subresource), on that call and on later HTTP writes', async () => {
    server.create(CRDS, crd('widgets', 'Widget', true));
    const w = server.create<Obj>(descriptor, { metadata: { name: 'w', generation: 9 }, spec: { size: 1 } });
    expect(w.metadata?.generation).toBe(1);
    const posted = await send('POST', WIDGETS, { metadata: { name: 'x' }, spec: { size: 1 }, status: { ready: true } });
    expect(posted.body.metadata.generation).toBe(1);
    expect(posted.body.status).toBeUndefined();
    expect(server.get<Obj>(descriptor, 'x')?.metadata?.generation).toBe(1);
  });

  it('refuses loudly a descriptor that conflicts with the served resource (kind, scope)', () => {
    server.create(CRDS, crd('widgets', 'Widget', true));
    expect(() => server.create({ ...descriptor, kind: 'Gizmo' }, { metadata: { name: 'w' } })).toThrow(/widgets.*Widget.*Gizmo/s);
    expect(() => server.list({ ...descriptor, namespaced: false })).toThrow(/namespaced/);
    expect(() => server.create({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: false }, { metadata: { name: 'p' } })).toThrow(/namespaced/);
    expect(server.list(descriptor)).toEqual([]);
  });

  it('still declares a resource that is not served yet', () => {
    expect(server.create<Obj>({ ...descriptor, resource: 'gizmos', kind: 'Gizmo' }, { metadata: { name: 'z' } })).toMatchObject({ kind: 'Gizmo' });
  });
});

describe('fake API server: a custom resource is never updated unconditionally (kube-apiserver v1.37.2)', () => {
  it('answers a PUT without metadata.resourceVersion with 422, on the main resource and on /status', async () => {
    server.create(CRDS, crd('widgets', 'Widget', true));
    await send('POST', WIDGETS, { metadata: { name: 'w' }, spec: { size: 1 } });
    const put = await send('PUT', `${WIDGETS}/w`, { metadata: { name: 'w' }, spec: { size: 2 } });
    expect(put).toMatchObject({ status: 422, body: { reason: 'Invalid', message: 'widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update' } });
    expect((await send('PUT', `${WIDGETS}/w/status`, { metadata: { name: 'w' }, status: { ready: true } })).status).toBe(422);
    expect(server.get<Obj>('widgets.example.com', 'w')).toMatchObject({ spec: { size: 1 } });
    // A built-in kind allows it, as kube-apiserver does.
    server.create('configmaps', { metadata: { name: 'c' } });
    expect((await send('PUT', '/api/v1/namespaces/default/configmaps/c', { metadata: { name: 'c' }, data: { a: 'b' } })).status).toBe(200);
  });
});
