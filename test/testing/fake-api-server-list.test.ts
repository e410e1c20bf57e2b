import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { getJson, pod } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const names = (body: any): string[] => body.items.map((i: any) => `${i.metadata.namespace ?? ''}/${i.metadata.name}`);

describe('fake API server: LIST', () => {
  it('lists core resources across namespaces and in one, items without apiVersion/kind', async () => {
    server.create('pods', pod('b', 'ns1'));
    server.create('pods', pod('a', 'ns2'));
    server.create('pods', pod('c', 'ns1'));
    const all = await getJson(`${server.url}/api/v1/pods`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: server.resourceVersion() } });
    expect(names(all.body)).toEqual(['ns1/b', 'ns1/c', 'ns2/a']);
    expect(all.body.items[0].apiVersion).toBeUndefined();
    expect(all.body.items[0].kind).toBeUndefined();
    expect(names((await getJson(`${server.url}/api/v1/namespaces/ns2/pods`)).body)).toEqual(['ns2/a']);
  });

  it('serves named groups, cluster-scoped kinds and declared custom resources', async () => {
    server.create('deployments.apps', { metadata: { name: 'd', namespace: 'x' } });
    server.create('nodes', { metadata: { name: 'n1' } });
    server.resource({ group: 'example.com', version: 'v1alpha1', resource: 'widgets', kind: 'Widget', namespaced: false });
    server.create({ group: 'example.com', version: 'v1alpha1', resource: 'widgets' }, { metadata: { name: 'w' } });
    const deps = await getJson(`${server.url}/apis/apps/v1/namespaces/x/deployments`);
    expect(deps.body).toMatchObject({ apiVersion: 'apps/v1', kind: 'DeploymentList' });
    expect(names(deps.body)).toEqual(['x/d']);
    const nodes = await getJson(`${server.url}/api/v1/nodes`);
    expect(nodes.body.items[0].metadata.namespace).toBeUndefined();
    const widgets = await getJson(`${server.url}/apis/example.com/v1alpha1/widgets`);
    expect(widgets.body).toMatchObject({ apiVersion: 'example.com/v1alpha1', kind: 'WidgetList' });
    expect(widgets.body.items).toHaveLength(1);
    expect((await getJson(`${server.url}/api/v1/namespaces/x/nodes`)).status).toBe(404);
  });

  it('infers kind and list kind for undeclared resources in permissive mode (inferUnknownResources)', async () => {
    const permissive = await startFakeApiServer({ inferUnknownResources: true });
    try {
      const res = await getJson(`${permissive.url}/apis/example.com/v1/namespaces/a/networkpolicies`);
      expect(res.body.kind).toBe('NetworkpolicyList');
      expect((await getJson(`${permissive.url}/apis/example.com/v1/classes`)).body.kind).toBe('ClassList');
    } finally {
      await permissive.close();
    }
  });

  it('pages with limit and an opaque continue token pinned to the first page version', async () => {
    for (let i = 0; i < 7; i++) server.create('pods', pod(`p${i}`));
    const p1 = await getJson(`${server.url}/api/v1/pods?limit=3`);
    expect(names(p1.body)).toEqual(['default/p0', 'default/p1', 'default/p2']);
    expect(p1.body.metadata.remainingItemCount).toBe(4);
    const listRv = p1.body.metadata.resourceVersion;
    server.delete('pods', 'p4');
    server.create('pods', pod('p9'));
    const p2 = await getJson(`${server.url}/api/v1/pods?limit=3&continue=${p1.body.metadata.continue}`);
    expect(names(p2.body)).toEqual(['default/p3', 'default/p4', 'default/p5']);
    expect(p2.body.metadata.resourceVersion).toBe(listRv);
    const p3 = await getJson(`${server.url}/api/v1/pods?limit=3&continue=${p2.body.metadata.continue}`);
    expect(names(p3.body)).toEqual(['default/p6']);
    expect(p3.body.metadata.continue).toBeUndefined();
  });

  it('answers 410 Expired with a Status for a continue token whose version was compacted', async () => {
    for (let i = 0; i < 3; i++) server.create('pods', pod(`p${i}`));
    const p1 = await getJson(`${server.url}/api/v1/pods?limit=1`);
    server.create('pods', pod('late'));
    server.compact();
    const p2 = await getJson(`${server.url}/api/v1/pods?limit=1&continue=${p1.body.metadata.continue}`);
    expect(p2.status).toBe(410);
    expect(p2.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
  });

  it('rejects a bad continue token and a resourceVersion given with continue', async () => {
    expect((await getJson(`${server.url}/api/v1/pods?continue=garbage`)).status).toBe(400);
    server.create('pods', pod('a'));
    server.create('pods', pod('b'));
    const p1 = await getJson(`${server.url}/api/v1/pods?limit=1`);
    const res = await getJson(`${server.url}/api/v1/pods?limit=1&resourceVersion=2&continue=${p1.body.metadata.continue}`);
    expect(res.status).toBe(400);
  });

  it('ignores limit for resourceVersion=0 (watch cache) unless the watch cache is off', async () => {
    for (let i = 0; i < 3; i++) server.create('pods', pod(`p${i}`));
    const cached = await getJson(`${server.url}/api/v1/pods?limit=1&resourceVersion=0`);
    expect(cached.body.items).toHaveLength(3);
    expect(cached.body.metadata.continue).toBeUndefined();
    const raw = await startFakeApiServer({ watchCache: false });
    try {
      for (let i = 0; i < 3; i++) raw.create('pods', pod(`p${i}`));
      const paged = await getJson(`${raw.url}/api/v1/pods?limit=1&resourceVersion=0`);
      expect(paged.body.items).toHaveLength(1);
      expect(paged.body.metadata.continue).toBeDefined();
    } finally {
      await raw.close();
    }
  });

  it('reads Exact versions from history and answers 410 once compacted', async () => {
    server.create('pods', pod('a', 'default', { v: '1' }));
    const rvA = server.resourceVersion();
    server.update('pods', pod('a', 'default', { v: '2' }));
    server.create('pods', pod('b'));
    const exact = await getJson(`${server.url}/api/v1/pods?resourceVersion=${rvA}&resourceVersionMatch=Exact`);
    expect(exact.body.metadata.resourceVersion).toBe(rvA);
    expect(exact.body.items.map((i: any) => i.metadata.labels.v)).toEqual(['1']);
    // legacy: a limited list at a non-zero version without a match rule is Exact too
    const legacy = await getJson(`${server.url}/api/v1/pods?resourceVersion=${rvA}&limit=10`);
    expect(legacy.body.items).toHaveLength(1);
    server.compact();
    const gone = await getJson(`${server.url}/api/v1/pods?resourceVersion=${rvA}&resourceVersionMatch=Exact`);
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
    expect((await getJson(`${server.url}/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact`)).status).toBe(400);
  });

  it('serves NotOlderThan at the current version and answers a too-large version like kube-apiserver', async () => {
    server.create('pods', pod('a'));
    const now = server.resourceVersion();
    const ok = await getJson(`${server.url}/api/v1/pods?resourceVersion=2&resourceVersionMatch=NotOlderThan`);
    expect(ok.body.metadata.resourceVersion).toBe(now);
    const big = await getJson(`${server.url}/api/v1/pods?resourceVersion=999`);
    expect(big.status).toBe(504);
    expect(big.body).toMatchObject({
      kind: 'Status',
      reason: 'Timeout',
      code: 504,
      details: { causes: [{ reason: 'ResourceVersionTooLarge' }] },
    });
    expect((await getJson(`${server.url}/api/v1/pods?resourceVersion=abc`)).status).toBe(400);
    expect((await getJson(`${server.url}/api/v1/pods?resourceVersionMatch=NotOlderThan`)).status).toBe(400);
  });

  it('filters by label selectors (equality and set-based) and field selectors', async () => {
    server.create('pods', pod('a', 'ns1', { app: 'web', tier: 'front' }));
    server.create('pods', pod('b', 'ns1', { app: 'db' }));
    server.create('pods', pod('c', 'ns2', { app: 'web' }));
    const q = (s: string) => getJson(`${server.url}/api/v1/pods?${s}`).then((r) => names(r.body));
    expect(await q('labelSelector=app%3Dweb')).toEqual(['ns1/a', 'ns2/c']);
    expect(await q('labelSelector=app%20in%20(db,x)')).toEqual(['ns1/b']);
    expect(await q('labelSelector=app!%3Dweb')).toEqual(['ns1/b']);
    expect(await q('labelSelector=!tier')).toEqual(['ns1/b', 'ns2/c']);
    expect(await q('fieldSelector=metadata.name%3Dc')).toEqual(['ns2/c']);
    expect(await q('fieldSelector=metadata.namespace!%3Dns1')).toEqual(['ns2/c']);
    expect(await q('fieldSelector=spec.nodeName%3Dnode-1,metadata.namespace%3D%3Dns1')).toEqual(['ns1/a', 'ns1/b']);
    expect((await getJson(`${server.url}/api/v1/pods?labelSelector=a%20in%20x`)).status).toBe(400);
  });

  it('answers metadata-only lists as PartialObjectMetadataList', async () => {
    server.create('pods', pod('a', 'default', { app: 'web' }));
    const res = await getJson(`${server.url}/api/v1/pods`, {
      headers: { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json' },
    });
    // kube-apiserver v1.37 names the plain media type (the body's kind says the rest): test/apiserver/cache-options.test.ts
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.body).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' });
    expect(res.body.items).toEqual([
      { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: expect.objectContaining({ name: 'a', labels: { app: 'web' } }) },
    ]);
    expect(res.body.items[0].spec).toBeUndefined();
  });

  it('serves discovery documents for the known resources', async () => {
    expect((await getJson(`${server.url}/api/v1`)).body.resources).toContainEqual(
      expect.objectContaining({ name: 'pods', kind: 'Pod', namespaced: true }),
    );
    const groups = (await getJson(`${server.url}/apis`)).body.groups.map((g: any) => g.name);
    expect(groups).toContain('coordination.k8s.io');
    expect((await getJson(`${server.url}/version`)).body.major).toBe('1');
  });

  it('logs every request with its method, path, query and verb', async () => {
    await getJson(`${server.url}/api/v1/namespaces/x/pods?resourceVersion=0&limit=5`);
    expect(server.requests()).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/api/v1/namespaces/x/pods',
        query: { resourceVersion: '0', limit: '5' },
        verb: 'list',
        resource: 'pods',
        namespace: 'x',
      }),
    ]);
    server.clearRequests();
    expect(server.requests()).toEqual([]);
  });

  it('answers 401 without the bearer token when the token is required', async () => {
    const strict = await startFakeApiServer({ requireToken: true, token: 't0k' });
    try {
      expect((await getJson(`${strict.url}/api/v1/pods`)).status).toBe(401);
      expect((await getJson(`${strict.url}/api/v1/pods`, { headers: { Authorization: 'Bearer t0k' } })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
