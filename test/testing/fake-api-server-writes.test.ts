import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { openWatch, pod, sendJson } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);

describe('fake API server: write verbs', () => {
  it('creates with POST (201), fills server fields, and answers 409 AlreadyExists for a taken name', async () => {
    const created = await send('POST', LEASES, { metadata: { name: 'lock' }, spec: { holderIdentity: 'a' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lock', namespace: 'kube-system', resourceVersion: server.resourceVersion(), uid: expect.any(String) },
    });
    const again = await send('POST', LEASES, { metadata: { name: 'lock' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      kind: 'Status',
      reason: 'AlreadyExists',
      code: 409,
      details: { name: 'lock', group: 'coordination.k8s.io', kind: 'leases' },
    });
    const generated = await send('POST', '/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'cm-' } });
    expect(generated.body.metadata.name).toMatch(/^cm-.{5}$/);
  });

  it('reads one object with GET and answers 404 NotFound with a Status', async () => {
    server.create('leases.coordination.k8s.io', { metadata: { name: 'lock', namespace: 'kube-system' } });
    expect((await send('GET', `${LEASES}/lock`)).body.metadata.name).toBe('lock');
    const missing = await send('GET', `${LEASES}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('replaces with PUT and answers 409 Conflict for a stale resourceVersion, 404 for a missing object', async () => {
    const v1 = (await send('POST', LEASES, { metadata: { name: 'lock' }, spec: { holderIdentity: 'a' } })).body;
    const v2 = await send('PUT', `${LEASES}/lock`, { ...v1, spec: { holderIdentity: 'b' } });
    expect(v2.status).toBe(200);
    expect(v2.body.spec.holderIdentity).toBe('b');
    expect(v2.body.metadata.uid).toBe(v1.metadata.uid);
    const stale = await send('PUT', `${LEASES}/lock`, { ...v1, spec: { holderIdentity: 'c' } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ reason: 'Conflict', message: expect.stringContaining('the object has been modified') });
    expect((await send('PUT', `${LEASES}/other`, { metadata: { name: 'other' } })).status).toBe(404);
    expect((await send('PUT', `${LEASES}/lock`, { metadata: { name: 'different' } })).status).toBe(400);
  });

  it('applies merge patches (RFC 7386): objects merge, null removes, arrays replace', async () => {
    server.create('configmaps', { metadata: { name: 'cm', labels: { a: '1', b: '2' } }, data: { k: 'v' }, list: [1, 2] } as any);
    const res = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cm',
      { metadata: { labels: { a: null, c: '3' } }, data: { k2: 'v2' }, list: [3] },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(200);
    expect(res.body.metadata.labels).toEqual({ b: '2', c: '3' });
    expect(res.body.data).toEqual({ k: 'v', k2: 'v2' });
    expect(res.body.list).toEqual([3]);
    const stale = await send('PATCH', '/api/v1/namespaces/default/configmaps/cm', { metadata: { resourceVersion: '1' } }, 'application/merge-patch+json');
    expect(stale.status).toBe(409);
    expect((await send('PATCH', '/api/v1/namespaces/default/configmaps/x', {}, 'application/merge-patch+json')).status).toBe(404);
    // Server-side apply is served (test/testing/fake-api-server-apply.test.ts); without a fieldManager it is 400, as on kube-apiserver.
    expect((await send('PATCH', '/api/v1/namespaces/default/configmaps/cm', {}, 'application/apply-patch+yaml')).status).toBe(400);
  });

  it('applies JSON patches (RFC 6902) and rejects a failed test operation', async () => {
    server.create('configmaps', { metadata: { name: 'cm' }, data: { k: 'v' } } as any);
    const path = '/api/v1/namespaces/default/configmaps/cm';
    const ok = await send('PATCH', path, [
      { op: 'test', path: '/data/k', value: 'v' },
      { op: 'add', path: '/data/n', value: 'x' },
      { op: 'move', from: '/data/k', path: '/data/m' },
    ], 'application/json-patch+json');
    expect(ok.body.data).toEqual({ n: 'x', m: 'v' });
    const failed = await send('PATCH', path, [{ op: 'test', path: '/data/n', value: 'nope' }], 'application/json-patch+json');
    expect(failed.status).toBe(422);
  });

  it('deletes with DELETE (the final state, with a new resourceVersion), 404 when missing, 409 on a failed precondition', async () => {
    const created = server.create('pods', pod('a'));
    const pre = await send('DELETE', '/api/v1/namespaces/default/pods/a', { preconditions: { uid: 'someone-else' } });
    expect(pre.status).toBe(409);
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`);
    const del = await send('DELETE', '/api/v1/namespaces/default/pods/a');
    expect(del.status).toBe(200);
    expect(del.body.metadata.uid).toBe(created.metadata?.uid);
    expect((await w.next())).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'a', resourceVersion: server.resourceVersion() } } });
    w.close();
    expect((await send('DELETE', '/api/v1/namespaces/default/pods/a')).status).toBe(404);
  });

  it('updates only the status on the status subresource', async () => {
    server.create('pods', { ...pod('a'), status: { phase: 'Pending' } });
    const res = await send('PUT', '/api/v1/namespaces/default/pods/a/status', {
      metadata: { name: 'a' },
      spec: { nodeName: 'ignored' },
      status: { phase: 'Running' },
    });
    expect(res.body.status.phase).toBe('Running');
    expect(res.body.spec.nodeName).toBe('node-1');
  });

  it('answers 405 for a verb the path does not support (501 for deletecollection, which the fake does not model)', async () => {
    expect((await send('DELETE', '/api/v1/namespaces/default/pods')).status).toBe(501);
    expect((await send('PUT', '/api/v1/namespaces/default/pods')).status).toBe(405);
  });
});

describe('fake API server with @kubernetes/client-node 1.4 generated clients', () => {
  it('serves CoreV1Api create, list, read, replace, patch and delete', async () => {
    const core = server.kubeConfig.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'p1', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    });
    expect(created.metadata?.resourceVersion).toBe(server.resourceVersion());
    const list = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['p1']);
    expect(list.metadata?.resourceVersion).toBe(server.resourceVersion());
    const read = await core.readNamespacedPod({ name: 'p1', namespace: 'default' });
    read.metadata!.labels = { app: 'api' };
    const replaced = await core.replaceNamespacedPod({ name: 'p1', namespace: 'default', body: read });
    expect(replaced.metadata?.labels).toEqual({ app: 'api' });
    const patched = await core.patchNamespacedPod(
      { name: 'p1', namespace: 'default', body: { metadata: { annotations: { a: 'b' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.annotations).toEqual({ a: 'b' });
    await core.createNamespacedEndpoints({ namespace: 'default', body: { metadata: { name: 'svc' }, subsets: [] } });
    expect(server.get('endpoints', 'svc')?.metadata?.name).toBe('svc');
    await core.deleteNamespacedPod({ name: 'p1', namespace: 'default' });
    await expect(core.readNamespacedPod({ name: 'p1', namespace: 'default' })).rejects.toMatchObject({ code: 404 });
    expect(server.requests().every((r) => r.authorization === 'Bearer fake-token')).toBe(true);
  });

  it('serves CoordinationV1Api the way a leader elector uses it, including 409 on a lost race', async () => {
    const leases = server.kubeConfig.makeApiClient(CoordinationV1Api);
    const namespace = 'kube-system';
    await expect(leases.readNamespacedLease({ name: 'ctl', namespace })).rejects.toMatchObject({ code: 404 });
    await leases.createNamespacedLease({
      namespace,
      body: { metadata: { name: 'ctl' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
    });
    await expect(
      leases.createNamespacedLease({ namespace, body: { metadata: { name: 'ctl' }, spec: { holderIdentity: 'b' } } }),
    ).rejects.toMatchObject({ code: 409 });
    const mine = await leases.readNamespacedLease({ name: 'ctl', namespace });
    const theirs = await leases.readNamespacedLease({ name: 'ctl', namespace });
    theirs.spec!.holderIdentity = 'b';
    await leases.replaceNamespacedLease({ name: 'ctl', namespace, body: theirs });
    mine.spec!.leaseTransitions = 1;
    const lost = await leases.replaceNamespacedLease({ name: 'ctl', namespace, body: mine }).catch((e: any) => e);
    expect(lost.code).toBe(409);
    expect(JSON.parse(lost.body).reason).toBe('Conflict');
    const jsonPatched = await leases.patchNamespacedLease({
      name: 'ctl',
      namespace,
      body: [{ op: 'replace', path: '/spec/holderIdentity', value: 'c' }],
    });
    expect(jsonPatched.spec?.holderIdentity).toBe('c');
  });
});
