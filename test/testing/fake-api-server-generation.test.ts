// The fake API server's metadata.generation: kept for custom resources and declared resources that ask for it, as kube-apiserver keeps it.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

type Obj = KubeObject & { spec?: unknown; data?: unknown; status?: unknown };
import { sendJson } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);
const merge = (path: string, body: unknown) => send('PATCH', path, body, 'application/merge-patch+json');

describe('fake API server: metadata.generation', () => {
  it('a resource declared with generation: 1 on create (whatever was sent), +1 per spec change, none for status or metadata writes', async () => {
    server.resource({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', generation: true });
    const created = await send('POST', WIDGETS, { metadata: { name: 'w', generation: 7 }, spec: { size: 1 } });
    expect(created.body.metadata.generation).toBe(1);
    expect((await merge(`${WIDGETS}/w`, { spec: { size: 2 } })).body.metadata.generation).toBe(2);
    expect((await merge(`${WIDGETS}/w`, { spec: { size: 2 } })).body.metadata.generation).toBe(2); // no change
    expect((await merge(`${WIDGETS}/w`, { metadata: { labels: { a: 'b' } } })).body.metadata.generation).toBe(2);
    expect((await merge(`${WIDGETS}/w/status`, { status: { ready: true } })).body.metadata).toMatchObject({ generation: 2 });
    const current = (await send('GET', `${WIDGETS}/w`)).body;
    // A PUT with the same spec written in another key order is no change; a generation sent by the client is ignored.
    const put = await send('PUT', `${WIDGETS}/w`, { ...current, metadata: { ...current.metadata, generation: 40 }, spec: { size: 2 } });
    expect(put.body.metadata.generation).toBe(2);
    expect((await send('PUT', `${WIDGETS}/w`, { ...put.body, spec: { size: 3 } })).body.metadata.generation).toBe(3);
  });

  it('in-process create and update follow the same rule, and a DELETE held by a finalizer bumps it', async () => {
    server.resource({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', generation: true });
    const w = server.create<Obj>('widgets.example.com', { metadata: { name: 'w', finalizers: ['example.com/f'] }, spec: { size: 1 } });
    expect(w.metadata?.generation).toBe(1);
    expect(server.update('widgets.example.com', { ...w, status: { ready: true } }).metadata?.generation).toBe(1);
    expect(server.update('widgets.example.com', { ...w, spec: { size: 5 } }).metadata?.generation).toBe(2);
    expect(server.delete('widgets.example.com', 'w').metadata?.generation).toBe(3);
  });

  it('the built-in kinds with a spec keep it as kube-apiserver does: a Deployment 1 on create, +1 on a spec or annotation change', async () => {
    const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
    const spec = { replicas: 1, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } };
    const created = await send('POST', DEPLOYMENTS, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', generation: 7 }, spec });
    expect(created.body.metadata.generation).toBe(1);
    expect((await merge(`${DEPLOYMENTS}/d`, { spec: { replicas: 3 } })).body.metadata.generation).toBe(2);
    expect((await merge(`${DEPLOYMENTS}/d`, { metadata: { labels: { x: 'y' } } })).body.metadata.generation).toBe(2);
    expect((await merge(`${DEPLOYMENTS}/d`, { metadata: { annotations: { x: 'y' } } })).body.metadata.generation).toBe(3);
    expect((await merge(`${DEPLOYMENTS}/d/status`, { status: { replicas: 3 } })).body.metadata.generation).toBe(3);
    // In-process writes follow the same rule; a ConfigMap (no spec) has none.
    const job = server.create<Obj>('jobs.batch', { metadata: { name: 'j', generation: 5 }, spec: { template: {} } });
    expect(job.metadata?.generation).toBe(1);
    expect(server.update<Obj>('jobs.batch', { ...job, metadata: { ...job.metadata, labels: { a: 'b' } } }).metadata?.generation).toBe(1);
    expect(server.update<Obj>('jobs.batch', { ...job, spec: { template: {}, suspend: true } }).metadata?.generation).toBe(2);
    expect(server.create<Obj>('pods', { metadata: { name: 'p' }, spec: { containers: [] } }).metadata?.generation).toBe(1);
    // A ConfigMap has no generation rule: a create keeps what was sent, an update the stored one (kube-apiserver's BeforeUpdate).
    const cm = await send('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'c', generation: 3 }, data: {} });
    expect(cm.body.metadata.generation).toBe(3);
    expect((await send('PUT', '/api/v1/namespaces/default/configmaps/c', { ...cm.body, metadata: { ...cm.body.metadata, generation: 9 }, data: { a: 'b' } })).body.metadata.generation).toBe(3);
  });

  it('resources served from a CustomResourceDefinition keep it; a ConfigMap created in-process and plain declarations keep what was sent', async () => {
    server.create('customresourcedefinitions.apiextensions.k8s.io', {
      metadata: { name: 'gadgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'gadgets', kind: 'Gadget' }, versions: [{ name: 'v1', served: true, storage: true }] },
    });
    expect(server.create<Obj>('gadgets.example.com', { metadata: { name: 'g' }, spec: {} }).metadata?.generation).toBe(1);
    expect(server.create<Obj>('configmaps', { metadata: { name: 'c' }, data: {} }).metadata?.generation).toBeUndefined();
    server.resource({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' });
    expect(server.create<Obj>('widgets.example.com', { metadata: { name: 'w', generation: 4 }, spec: {} }).metadata?.generation).toBe(4);
    // Redeclaring without `generation` (a descriptor passed to a state operation does) keeps what the resource had.
    server.resource({ group: 'example.com', version: 'v1', resource: 'sprockets', kind: 'Sprocket', generation: true });
    const descriptor = { group: 'example.com', version: 'v1', resource: 'sprockets', kind: 'Sprocket', namespaced: true };
    expect(server.create<Obj>(descriptor, { metadata: { name: 's', generation: 9 }, spec: {} }).metadata?.generation).toBe(1);
  });
});
