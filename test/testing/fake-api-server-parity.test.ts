// Differences the differential suite (test/apiserver/differential) found between the fake API server and kube-apiserver v1.37.2, fixed in the fake: each a test that failed before its fix.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { getJson, openWatch, sendJson } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const CMS = '/api/v1/namespaces/default/configmaps';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);

describe('fake API server: as kube-apiserver answers it', () => {
  it('a write that changes nothing is not stored: same resourceVersion, no watch event', async () => {
    const applied = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { x: '1' } }, data: { k: 'v' } };
    const created = await send('PATCH', `${CMS}/a?fieldManager=ctl`, applied, 'application/apply-patch+yaml');
    const rv = created.body.metadata.resourceVersion as string;
    const watch = await openWatch(`${server.url}${CMS}?watch=true&resourceVersion=${rv}`);
    try {
      const put = await send('PUT', `${CMS}/a?fieldManager=ctl`, created.body);
      expect(put.status).toBe(200);
      expect(put.body.metadata.resourceVersion).toBe(rv);
      const merge = await send('PATCH', `${CMS}/a?fieldManager=ctl`, { data: { k: 'v' } }, 'application/merge-patch+json');
      expect(merge.body.metadata.resourceVersion).toBe(rv);
      const apply = await send('PATCH', `${CMS}/a?fieldManager=ctl`, applied, 'application/apply-patch+yaml');
      expect(apply.status).toBe(200);
      expect(apply.body.metadata.resourceVersion).toBe(rv);
      // A stale precondition is still a conflict, even when the write would change nothing.
      const stale = await send('PUT', `${CMS}/a?fieldManager=ctl`, { ...created.body, metadata: { ...created.body.metadata, resourceVersion: '1' } });
      expect(stale.status).toBe(409);
      expect(server.resourceVersion()).toBe(rv);
      // The first event the watch sees is the next real change.
      const changed = await send('PATCH', `${CMS}/a`, { data: { k: 'w' } }, 'application/merge-patch+json');
      const event = await watch.next();
      expect(event.type).toBe('MODIFIED');
      expect(event.object.metadata.resourceVersion).toBe(changed.body.metadata.resourceVersion);
    } finally {
      watch.close();
    }
  });

  it('empty metadata.labels, annotations, finalizers and ownerReferences are left out, as Go omits them', async () => {
    const created = await send('POST', CMS, { metadata: { name: 'e', labels: {}, annotations: {}, finalizers: ['example.com/x'], ownerReferences: [] } });
    expect(Object.keys(created.body.metadata)).not.toContain('labels');
    expect(Object.keys(created.body.metadata)).not.toContain('annotations');
    expect(Object.keys(created.body.metadata)).not.toContain('ownerReferences');
    const released = await send('PATCH', `${CMS}/e`, { metadata: { finalizers: [] } }, 'application/merge-patch+json');
    expect(Object.keys(released.body.metadata)).not.toContain('finalizers');
    await send('DELETE', `${CMS}/e`);
    await send('POST', CMS, { metadata: { name: 'f', finalizers: ['example.com/x'] } });
    await send('DELETE', `${CMS}/f`);
    const last = await send('PATCH', `${CMS}/f`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    expect(last.status).toBe(200);
    expect(Object.keys(last.body.metadata)).not.toContain('finalizers');
  });

  it('a namespace gets its name label, the kubernetes finalizer and phase Active', async () => {
    const created = await send('POST', '/api/v1/namespaces', { metadata: { name: 'team-a' } });
    expect(created.status).toBe(201);
    expect(created.body.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a' });
    expect(created.body.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(created.body.status).toEqual({ phase: 'Active' });
    expect(created.body.metadata.managedFields[0].fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:kubernetes.io/metadata.name': {} } } });
    // The label follows the name: a write cannot change or drop it.
    const relabelled = await send('PATCH', '/api/v1/namespaces/team-a', { metadata: { labels: { 'kubernetes.io/metadata.name': 'other', team: 'a' } } }, 'application/merge-patch+json');
    expect(relabelled.body.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a', team: 'a' });
    expect(server.get('namespaces', 'team-a')?.metadata?.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a', team: 'a' });
  });
  it('a 404 of a grouped resource names its group in details', async () => {
    const missing = await send('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.details).toEqual({ name: 'nope', group: 'coordination.k8s.io', kind: 'leases' });
  });

  it('DELETE of a ServiceAccount answers the deleted object, as for pods', async () => {
    await send('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'sa' } });
    const deleted = await send('DELETE', '/api/v1/namespaces/default/serviceaccounts/sa');
    expect(deleted.body).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'sa' } });
  });

  it('a list of custom resources keeps apiVersion and kind on its items and an empty continue, as unstructured lists do', async () => {
    server.resource({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' });
    await send('POST', '/apis/example.com/v1/namespaces/default/widgets', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } });
    const list = await send('GET', '/apis/example.com/v1/namespaces/default/widgets');
    expect(list.body.metadata.continue).toBe('');
    expect(list.body.items[0]).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } });
    // Built-in lists still leave them out.
    await send('POST', CMS, { metadata: { name: 'c' } });
    const cms = await send('GET', CMS);
    expect(cms.body.items[0].kind).toBeUndefined();
    expect(cms.body.metadata.continue).toBeUndefined();
  });
  it('an object leaving a watch\'s selection is DELETED as it last matched, at the new resourceVersion', async () => {
    const created = await send('POST', CMS, { metadata: { name: 'sel', labels: { in: 'yes' } } });
    const watch = await openWatch(`${server.url}${CMS}?watch=true&labelSelector=in%3Dyes&resourceVersion=${created.body.metadata.resourceVersion}`);
    try {
      const left = await send('PATCH', `${CMS}/sel`, { metadata: { labels: { in: 'no' } } }, 'application/merge-patch+json');
      const event = await watch.next();
      expect(event.type).toBe('DELETED');
      expect(event.object.metadata.labels).toEqual({ in: 'yes' });
      expect(event.object.metadata.resourceVersion).toBe(left.body.metadata.resourceVersion);
    } finally {
      watch.close();
    }
  });
  it('a create clears a deletionTimestamp the client sent: it is the server\'s alone', async () => {
    const created = await send('POST', CMS, { metadata: { name: 'early', deletionTimestamp: '2020-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 } });
    expect(created.status).toBe(201);
    expect(created.body.metadata.deletionTimestamp).toBeUndefined();
    expect(created.body.metadata.deletionGracePeriodSeconds).toBeUndefined();
    expect((await send('DELETE', `${CMS}/early`)).body).toMatchObject({ kind: 'Status', status: 'Success' });
  });
  it('sendInitialEvents without allowWatchBookmarks streams the initial events (and no end bookmark), as kube-apiserver v1.37.2 does', async () => {
    await send('POST', CMS, { metadata: { name: 'first' } });
    const watch = await openWatch(`${server.url}${CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
    try {
      expect(watch.status).toBe(200);
      const event = await watch.next();
      expect(event).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'first' } } });
      const later = await send('POST', CMS, { metadata: { name: 'second' } });
      expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'second', resourceVersion: later.body.metadata.resourceVersion } } });
    } finally {
      watch.close();
    }
  });
  it('a PATCH whose content type is no patch type is 415 UnsupportedMediaType, whatever its body', async () => {
    await send('POST', CMS, { metadata: { name: 'p' } });
    const answer = await getJson(`${server.url}${CMS}/p`, { method: 'PATCH', headers: { 'Content-Type': 'text/plain' }, body: 'not json' });
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
  });
});
