// The fake API server's graceful deletion: finalizers hold a DELETE, the last one's removal deletes, as kube-apiserver.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { openWatch, sendJson } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer({ now: () => new Date('2026-11-24T10:00:00.123Z') });
});
afterEach(async () => {
  await server.close();
});

const CM = '/api/v1/namespaces/default/configmaps/c';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);
const withFinalizers = (...finalizers: string[]) => ({ metadata: { name: 'c', namespace: 'default', finalizers }, data: { k: 'v' } });

describe('fake API server: finalizers', () => {
  it('a DELETE of an object with finalizers only marks it; a second DELETE changes nothing', async () => {
    server.create('configmaps', withFinalizers('example.com/a'));
    const w = await openWatch(`${server.url}/api/v1/configmaps?watch=true&resourceVersion=${server.resourceVersion()}`);
    const del = await send('DELETE', CM);
    expect(del.status).toBe(200);
    expect(del.body.metadata).toMatchObject({ deletionTimestamp: '2026-11-24T10:00:00Z', deletionGracePeriodSeconds: 0, finalizers: ['example.com/a'] });
    const rv = server.resourceVersion();
    const again = await send('DELETE', CM);
    expect(again.body.metadata.resourceVersion).toBe(rv);
    expect(server.get('configmaps', 'c', 'default')).toMatchObject({ metadata: { deletionTimestamp: '2026-11-24T10:00:00Z' } });
    expect((await w.next()).type).toBe('MODIFIED');
    w.close();
  });

  it('removing the last finalizer deletes the object (DELETED with the final state); removing one of two does not', async () => {
    server.create('configmaps', withFinalizers('example.com/a', 'example.com/b'));
    await send('DELETE', CM);
    const w = await openWatch(`${server.url}/api/v1/configmaps?watch=true&resourceVersion=${server.resourceVersion()}`);
    const one = await send('PATCH', CM, [{ op: 'test', path: '/metadata/finalizers/0', value: 'example.com/a' }, { op: 'remove', path: '/metadata/finalizers/0' }], 'application/json-patch+json');
    expect(one.status).toBe(200);
    expect(one.body.metadata.finalizers).toEqual(['example.com/b']);
    const last = await send('PATCH', CM, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    expect(last.status).toBe(200);
    expect(server.get('configmaps', 'c', 'default')).toBeUndefined();
    expect((await w.next()).type).toBe('MODIFIED');
    const deleted = await w.next();
    expect(deleted.type).toBe('DELETED');
    // Without finalizers: an empty list is left out, as Go omits it (test/apiserver/differential checks it against kube-apiserver).
    expect(deleted.object.metadata).toMatchObject({ name: 'c', deletionTimestamp: '2026-11-24T10:00:00Z' });
    expect(Object.keys(deleted.object.metadata)).not.toContain('finalizers');
    w.close();
  });

  it('answers the write that removed the last finalizer as kube-apiserver does: the object as written, at its previous resourceVersion', async () => {
    // kube-apiserver's Store.Update → deleteWithoutFinalizers returns the request's object, whose
    // resourceVersion is the one it was read at; only the DELETED event carries the deletion's version.
    server.create('configmaps', withFinalizers('example.com/a'));
    const marked = await send('DELETE', CM);
    const w = await openWatch(`${server.url}/api/v1/configmaps?watch=true&resourceVersion=${server.resourceVersion()}`);
    const last = await send('PATCH', CM, [{ op: 'test', path: '/metadata/finalizers/0', value: 'example.com/a' }, { op: 'remove', path: '/metadata/finalizers/0' }], 'application/json-patch+json');
    expect(last.status).toBe(200);
    expect(last.body.metadata).toMatchObject({ resourceVersion: marked.body.metadata.resourceVersion, deletionTimestamp: '2026-11-24T10:00:00Z' });
    expect(Object.keys(last.body.metadata)).not.toContain('finalizers');
    const deleted = await w.next();
    expect(deleted.type).toBe('DELETED');
    expect(Number(deleted.object.metadata.resourceVersion)).toBeGreaterThan(Number(marked.body.metadata.resourceVersion));
    w.close();
  });

  it('refuses a new finalizer on an object being deleted (422), and keeps deletionTimestamp out of clients’ hands', async () => {
    server.create('configmaps', withFinalizers('example.com/a'));
    const put = await send('PUT', CM, { ...withFinalizers('example.com/a'), metadata: { ...withFinalizers('example.com/a').metadata, deletionTimestamp: '2020-01-01T00:00:00Z' } });
    expect(put.status).toBe(200);
    expect(put.body.metadata.deletionTimestamp).toBeUndefined();
    await send('DELETE', CM);
    const added = await send('PATCH', CM, [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/late' }], 'application/json-patch+json');
    expect(added.status).toBe(422);
    expect(added.body.message).toMatch(/no new finalizers can be added if the object is being deleted/);
    const cleared = await send('PATCH', CM, { metadata: { deletionTimestamp: null } }, 'application/merge-patch+json');
    expect(cleared.body.metadata.deletionTimestamp).toBe('2026-11-24T10:00:00Z');
  });

  it('a JSON patch guarded by test on a changed finalizer list fails with 422 and changes nothing', async () => {
    server.create('configmaps', withFinalizers('example.com/a'));
    const guarded = await send('PATCH', CM, [{ op: 'test', path: '/metadata/finalizers', value: [] }, { op: 'add', path: '/metadata/finalizers/-', value: 'example.com/mine' }], 'application/json-patch+json');
    expect(guarded.status).toBe(422);
    expect(server.get('configmaps', 'c', 'default')).toMatchObject({ metadata: { finalizers: ['example.com/a'] } });
  });

  it('the in-process server.delete follows the same rule', () => {
    server.create('configmaps', withFinalizers('example.com/a'));
    expect(server.delete('configmaps', 'c', 'default')).toMatchObject({ metadata: { deletionTimestamp: '2026-11-24T10:00:00Z' } });
    expect(server.get('configmaps', 'c', 'default')).toBeDefined();
  });
});

describe('fake API server: the answer to a DELETE (kube-apiserver v1.37.2)', () => {
  it('answers a Status (Success, details name/group/kind/uid) for an object without finalizers', async () => {
    const created = server.create('configmaps', { metadata: { name: 'c', namespace: 'default' } });
    const del = await send('DELETE', CM);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'c', kind: 'configmaps', uid: (created.metadata as { uid?: string }).uid } });
    server.create('leases.coordination.k8s.io', { metadata: { name: 'l', namespace: 'default' } });
    const lease = await send('DELETE', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l');
    expect(lease.body.details).toMatchObject({ name: 'l', group: 'coordination.k8s.io', kind: 'leases' });
  });

  it('answers the object (with deletionTimestamp) when finalizers hold it', async () => {
    server.create('configmaps', withFinalizers('example.com/a'));
    const del = await send('DELETE', CM);
    expect(del.body).toMatchObject({ kind: 'ConfigMap', metadata: { deletionTimestamp: '2026-11-24T10:00:00Z' } });
  });
});
