// FakeApiServer.usedPermissions: each request served, as kube-apiserver's authorizer names it, per token — and uncoveredUses over it.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resources } from '../../src/core/index.js';
import { newListWatch, newResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, uncoveredUses, type FakeApiServer } from '../../src/testing/index.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer({ resources: [{ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true, statusSubresource: true }] });
});
afterEach(async () => {
  await server.close();
});

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true } as const;

describe('FakeApiServer.usedPermissions', () => {
  it('records verb, group, resource, subresource, namespace and name of each request, an apply that created also as create', async () => {
    const kc = server.kubeConfigFor('operator');
    const cms = newResourceClient(kc, resources.configmaps);
    const ws = newResourceClient(kc, widgets);
    await cms.get('missing', 'a').catch(() => undefined); // a 404 was still authorized
    await cms.list({ namespace: 'a' });
    await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'a' } });
    await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'a' }, data: { k: 'v' } });
    await ws.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'a' } });
    await ws.patchStatus('w', 'a', { status: { ok: true } }, 'merge');
    await cms.delete('c', 'a');
    const lw = newListWatch(kc, resources.namespaces);
    await lw.list({}, new AbortController().signal);
    lw.close();
    cms.close();
    ws.close();
    expect(server.usedPermissions({ token: 'operator' })).toEqual([
      { verb: 'list', group: '', resource: 'namespaces' },
      { verb: 'list', group: '', resource: 'configmaps', namespace: 'a' },
      { verb: 'create', group: '', resource: 'configmaps', namespace: 'a', name: 'c' },
      { verb: 'delete', group: '', resource: 'configmaps', namespace: 'a', name: 'c' },
      { verb: 'patch', group: '', resource: 'configmaps', namespace: 'a', name: 'c' },
      { verb: 'get', group: '', resource: 'configmaps', namespace: 'a', name: 'missing' },
      { verb: 'create', group: 'example.com', resource: 'widgets', namespace: 'a' },
      { verb: 'patch', group: 'example.com', resource: 'widgets', subresource: 'status', namespace: 'a', name: 'w' },
    ]);
    expect(server.usedPermissions({ token: 'fake-token' })).toEqual([]);
    expect(server.usedPermissions()).toHaveLength(8);
  });

  it("keeps each token's uses apart, and clearRequests forgets them", async () => {
    const mine = newResourceClient(server.kubeConfigFor('operator'), resources.secrets);
    const theirs = newResourceClient(server.kubeConfig, resources.configmaps);
    await mine.list({ namespace: 'a' });
    await theirs.list({ namespace: 'b' });
    mine.close();
    theirs.close();
    expect(server.usedPermissions({ token: 'operator' })).toEqual([{ verb: 'list', group: '', resource: 'secrets', namespace: 'a' }]);
    expect(server.usedPermissions({ token: 'fake-token' })).toEqual([{ verb: 'list', group: '', resource: 'configmaps', namespace: 'b' }]);
    server.clearRequests();
    expect(server.usedPermissions()).toEqual([]);
  });

  it('feeds uncoveredUses: what the rules miss', async () => {
    const cms = newResourceClient(server.kubeConfigFor('operator'), resources.configmaps);
    await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'a' } });
    cms.close();
    const used = server.usedPermissions({ token: 'operator' });
    expect(uncoveredUses(used, [{ group: '', resource: 'configmaps', namespace: 'a', verbs: ['patch'], reason: 'uses' }])).toEqual([{ verb: 'create', group: '', resource: 'configmaps', namespace: 'a', name: 'c' }]);
    expect(uncoveredUses(used, [{ group: '', resource: 'configmaps', namespace: 'a', verbs: ['create', 'patch'], reason: 'uses' }])).toEqual([]);
  });

  it('refuses an empty token for kubeConfigFor, and an unknown option', () => {
    expect(() => server.kubeConfigFor('')).toThrow(/token must be a non-empty string/);
    expect(() => server.usedPermissions({ tokn: 'x' } as never)).toThrow(/tokn/);
  });
});
