// ResourceClient against the fake API server: list, update, patch, dryRun, status and scale subresources, createOrUpdate.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newResourceClient, resources, type ResourceClient, type ResourceDescriptor } from '../../src/index.js';
import { isConflict } from '../../src/objects.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/core/types.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}
const widgets: ResourceDescriptor<KubeObject> = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };

let server: FakeApiServer;
let cms: ResourceClient<Cm>;
beforeEach(async () => {
  server = await startFakeApiServer();
  cms = newResourceClient<Cm>(server.kubeConfig, resources.configmaps, { fieldManager: 'test' });
});
afterEach(async () => {
  cms.close();
  await server.close();
});
const cm = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}): Cm => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels }, data });

describe('ResourceClient.list', () => {
  it('lists with selectors, pages with limit/continue, and reads at a resourceVersion', async () => {
    for (const n of ['a', 'b', 'c']) await cms.create(cm(n, {}, { app: n === 'c' ? 'db' : 'web' }));
    const all = await cms.list({ namespace: 'default' });
    expect(all.items.map((i) => i.metadata?.name)).toEqual(['a', 'b', 'c']);
    expect((await cms.list({ namespace: 'default', labelSelector: 'app=web' })).items.map((i) => i.metadata?.name)).toEqual(['a', 'b']);
    expect((await cms.list({ fieldSelector: 'metadata.name=c' })).items.map((i) => i.metadata?.name)).toEqual(['c']);
    const first = await cms.list({ namespace: 'default', limit: 2 });
    expect(first.items).toHaveLength(2);
    const rest = await cms.list({ namespace: 'default', limit: 2, continue: first.metadata.continue });
    expect(rest.items.map((i) => i.metadata?.name)).toEqual(['c']);
    await cms.delete('a', 'default');
    const then = await cms.list({ namespace: 'default', resourceVersion: all.metadata.resourceVersion, resourceVersionMatch: 'Exact' });
    expect(then.items).toHaveLength(3);
    const q = server.requests().filter((r) => r.verb === 'list').map((r) => r.query);
    expect(q[1]).toEqual({ labelSelector: 'app=web' });
    expect(q.at(-1)).toEqual({ resourceVersion: all.metadata.resourceVersion, resourceVersionMatch: 'Exact' });
  });

  it('refuses a selector that does not parse, before sending', async () => {
    await expect(cms.list({ labelSelector: 'a in (' })).rejects.toMatchObject({ code: 'INVALID_SELECTOR' });
    expect(server.requests()).toHaveLength(0);
  });
});

describe('ResourceClient.update and replace', () => {
  it('update needs metadata.resourceVersion and is a compare-and-swap (409 when stale)', async () => {
    const created = await cms.create(cm('c', { k: '1' }));
    await expect(cms.update(cm('c', { k: '2' }))).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expect.stringMatching(/resourceVersion/) });
    const updated = await cms.update({ ...created, data: { k: '2' } });
    expect(updated.data).toEqual({ k: '2' });
    const stale = await cms.update({ ...created, data: { k: '3' } }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    expect((await cms.replace(cm('c', { k: '4' }))).data).toEqual({ k: '4' }); // replace: no version, no check
  });
});

describe('ResourceClient.patch', () => {
  it('sends json, merge and strategic merge patches with their media types', async () => {
    await cms.create(cm('c', { a: '1' }));
    await cms.patch('c', 'default', [{ op: 'add', path: '/data/b', value: '2' }], 'json');
    await cms.patch('c', 'default', { data: { c: '3' } }, 'merge');
    const last = await cms.patch('c', 'default', { data: { d: '4' } }, 'strategic');
    expect(last.data).toEqual({ a: '1', b: '2', c: '3', d: '4' });
    expect(server.requests().filter((r) => r.verb === 'patch').map((r) => r.contentType)).toEqual([
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ]);
  });

  it('refuses a strategic merge patch of a custom resource before sending (the server would answer 415)', async () => {
    server.resource(widgets);
    const client = newResourceClient(server.kubeConfig, widgets);
    await expect(client.patch('w', 'default', { spec: {} }, 'strategic')).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expect.stringMatching(/strategic merge patch works on built-in resources only/) });
    await expect(client.patch('w', 'default', { spec: {} }, 'yaml' as never)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    client.close();
    expect(server.requests()).toHaveLength(0);
  });
});

describe('dryRun', () => {
  it('sends dryRun=All on every write; the fake server checks and answers but stores nothing', async () => {
    const dry = await cms.create(cm('c', { k: '1' }), { dryRun: true });
    expect(dry.metadata?.name).toBe('c');
    expect(server.get('configmaps', 'c', 'default')).toBeUndefined();
    const real = await cms.create(cm('c', { k: '1' }));
    const rv = server.resourceVersion();
    await cms.update({ ...real, data: { k: '2' } }, { dryRun: true });
    await cms.patch('c', 'default', { data: { k: '3' } }, 'merge', { dryRun: true });
    await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { k: '4' } }, { fieldManager: 'm', dryRun: true, force: true });
    expect(await cms.delete('c', 'default', { dryRun: true })).toMatchObject({ gone: true });
    expect(server.resourceVersion()).toBe(rv);
    expect(server.get<Cm>('configmaps', 'c', 'default')?.data).toEqual({ k: '1' });
    const writes = server.requests().filter((r) => r.verb !== 'get' && r.verb !== 'list');
    expect(writes.map((r) => r.query.dryRun)).toEqual(['All', undefined, 'All', 'All', 'All', 'All']);
  });
});

describe('status and scale subresources', () => {
  it('getStatus, updateStatus (compare-and-swap), replaceStatus and patchStatus go through /status', async () => {
    server.create('pods', { metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'n1' }, status: { phase: 'Pending' } });
    const pods = newResourceClient<KubeObject & { status?: { phase?: string }; spec?: { nodeName?: string } }>(server.kubeConfig, resources.pods);
    const read = await pods.getStatus('p', 'default');
    const written = await pods.updateStatus({ ...read, spec: { nodeName: 'ignored' }, status: { phase: 'Running' } });
    expect(written.status?.phase).toBe('Running');
    expect(written.spec?.nodeName).toBe('n1');
    await expect(pods.updateStatus({ ...read, status: { phase: 'Failed' } })).rejects.toMatchObject({ statusCode: 409 });
    expect((await pods.patchStatus('p', 'default', { status: { phase: 'Succeeded' } }, 'merge')).status?.phase).toBe('Succeeded');
    pods.close();
    expect(server.requests().map((r) => `${r.method} ${r.path}`).every((l) => l.endsWith('/pods/p/status'))).toBe(true);
  });

  it('getScale and updateScale read and write spec.replicas of a workload', async () => {
    server.create('deployments.apps', { metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } } }, status: { replicas: 2 } });
    const deployments = newResourceClient(server.kubeConfig, resources.deployments);
    const scale = await deployments.getScale('web', 'default');
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 2, selector: 'app=web' } });
    const scaled = await deployments.updateScale({ ...scale, spec: { replicas: 5 } });
    expect(scaled.spec?.replicas).toBe(5);
    expect((server.get('deployments.apps', 'web', 'default') as { spec?: { replicas?: number } } | undefined)?.spec?.replicas).toBe(5);
    await expect(deployments.updateScale({ ...scale, spec: { replicas: 1 } })).rejects.toMatchObject({ statusCode: 409 });
    deployments.close();
  });
});

describe('ResourceClient.createOrUpdate (controllerutil.CreateOrUpdate)', () => {
  it('created, then unchanged when mutate changes nothing, then updated', async () => {
    const mutate = (v: string) => (obj: Cm) => {
      obj.data = { ...obj.data, k: v };
    };
    const first = await cms.createOrUpdate(cm('c'), mutate('1'));
    expect(first.result).toBe('created');
    const rv = server.resourceVersion();
    expect((await cms.createOrUpdate(cm('c'), mutate('1'))).result).toBe('unchanged');
    expect(server.resourceVersion()).toBe(rv);
    const third = await cms.createOrUpdate(cm('c'), mutate('2'));
    expect(third).toMatchObject({ result: 'updated', object: { data: { k: '2' } } });
  });

  it('refuses a mutate that renames the object', async () => {
    await expect(cms.createOrUpdate(cm('c'), (o) => void (o.metadata!.name = 'd'))).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expect.stringMatching(/must not change the name/) });
  });

  it('under 8 concurrent writers with conflictRetries: one object, no lost update', async () => {
    const writers = Array.from({ length: 8 }, (_, i) =>
      cms.createOrUpdate(cm('shared'), (o) => void (o.data = { ...o.data, [`w${i}`]: String(i) }), { conflictRetries: 20 }),
    );
    const results = await Promise.all(writers);
    expect(results.filter((r) => r.result === 'created')).toHaveLength(1);
    expect(Object.keys(server.get<Cm>('configmaps', 'shared', 'default')?.data ?? {}).sort()).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7']);
  });
});
