// Server-side apply on the fake API server, through ResourceClient.apply: ownership, removal, conflicts, force, status, extract.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import type { ApplyConfiguration } from '../../src/objects.js';
import { ApplyConflictError, extract, isConflict } from '../../src/objects.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/core/types.js';
import { getJson } from './helpers.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}
let server: FakeApiServer;
let cms: ResourceClient<Cm>;
beforeEach(async () => {
  server = await startFakeApiServer({ now: () => new Date('2026-11-24T10:00:00.123Z') });
  cms = newResourceClient<Cm>(server.kubeConfig, resources.configmaps, { fieldManager: 'creator' });
});
afterEach(async () => {
  cms.close();
  await server.close();
});
const config = (data: Record<string, string>, labels?: Record<string, string>): ApplyConfiguration<Cm> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'default', ...(labels ? { labels } : {}) },
  data,
});
const managers = (obj: KubeObject) => (obj.metadata?.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`);

describe('fake API server: server-side apply', () => {
  it('creates the object when absent, and records the manager’s Apply entry in managedFields (FieldsV1)', async () => {
    const created = await cms.apply(config({ a: '1' }, { app: 'web' }), { fieldManager: 'ctl' });
    expect(created).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', labels: { app: 'web' } }, data: { a: '1' } });
    expect(created.metadata?.managedFields).toEqual([
      { manager: 'ctl', operation: 'Apply', apiVersion: 'v1', time: '2026-11-24T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:data': { 'f:a': {} } } },
    ]);
    const req = server.requests().at(-1)!;
    expect(req).toMatchObject({ method: 'PATCH', contentType: 'application/apply-patch+yaml', query: { fieldManager: 'ctl' } });
  });

  it('removes a field the manager stopped applying, and keeps one another manager owns', async () => {
    await cms.apply(config({ a: '1', b: '2' }), { fieldManager: 'ctl' });
    await cms.apply(config({ b: '2' }), { fieldManager: 'other' }); // shares b (same value: no conflict)
    const after = await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } }, { fieldManager: 'ctl' });
    expect(after.data).toEqual({ b: '2' });
    expect(managers(after)).toEqual(['other/Apply']); // ctl owns nothing now: its entry is gone
    await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } }, { fieldManager: 'other' });
    expect((await cms.get('c', 'default')).data).toBeUndefined(); // the last owner let go: the emptied map goes too
  });

  it('two managers conflict: the error names each manager and field; force takes the fields', async () => {
    await cms.apply(config({ a: '1', b: '1' }), { fieldManager: 'first' });
    const err = await cms.apply(config({ a: '2', b: '2' }), { fieldManager: 'second' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplyConflictError);
    expect(isConflict(err)).toBe(true);
    expect((err as ApplyConflictError).conflicts).toEqual([
      { manager: 'first', field: '.data.a', message: 'conflict with "first"' },
      { manager: 'first', field: '.data.b', message: 'conflict with "first"' },
    ]);
    expect((err as Error).message).toMatch(/Apply failed with 2 conflicts: conflicts with "first":\n- \.data\.a\n- \.data\.b/);
    expect((err as Error).message).toMatch(/the apply by "second" conflicts on \.data\.a \(owned by first\), \.data\.b \(owned by first\)/);
    expect((err as ApplyConflictError).fieldManager).toBe('second');
    const forced = await cms.apply(config({ a: '2', b: '2' }), { fieldManager: 'second', force: true });
    expect(forced.data).toEqual({ a: '2', b: '2' });
    expect(managers(forced)).toEqual(['second/Apply']);
    const forcedReq = server.requests().at(-1)!;
    expect(forcedReq.query).toEqual({ fieldManager: 'second', force: 'true' });
  });

  it('conflicts with a manager that wrote by update ("using v1"), and with fields created before any apply (before-first-apply)', async () => {
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: '1' } });
    const err = (await cms.apply(config({ a: '2' }), { fieldManager: 'ctl' }).catch((e: unknown) => e)) as ApplyConflictError;
    expect(err.conflicts).toEqual([{ manager: 'creator', field: '.data.a', message: 'conflict with "creator" using v1' }]);
    server.create('configmaps', { metadata: { name: 'old', namespace: 'default' }, data: { a: '1' } });
    const old = (await cms.apply({ ...config({ a: '2' }), metadata: { name: 'old', namespace: 'default' } }, { fieldManager: 'ctl' }).catch((e: unknown) => e)) as ApplyConflictError;
    expect(old.conflicts.map((c) => c.manager)).toEqual(['before-first-apply']);
  });

  it('applyStatus writes status through the subresource, owned by an Apply entry with subresource status', async () => {
    server.create('pods', { metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'n1' } });
    const pods = newResourceClient<KubeObject & { status?: { phase?: string }; spec?: { nodeName?: string } }>(server.kubeConfig, resources.pods);
    const written = await pods.applyStatus({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'ignored' }, status: { phase: 'Running' } }, { fieldManager: 'kubelet' });
    pods.close();
    expect(written.status?.phase).toBe('Running');
    expect(written.spec?.nodeName).toBe('n1');
    expect(server.requests().at(-1)?.path).toBe('/api/v1/namespaces/default/pods/p/status');
    expect(written.metadata?.managedFields?.find((e) => e.manager === 'kubelet')).toMatchObject({ operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:phase': {} } } });
  });

  it('extract returns what a manager owns; change it and apply it back: read-own-change-apply round-trips', async () => {
    await cms.apply(config({ a: '1' }, { app: 'web' }), { fieldManager: 'ctl' });
    const live = await cms.patch('c', 'default', { data: { other: 'x' } }, 'merge');
    const mine = extract(live, 'ctl');
    expect(mine).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', labels: { app: 'web' } }, data: { a: '1' } });
    mine.data = { ...mine.data, a: '2' };
    const back = await cms.apply(mine, { fieldManager: 'ctl' });
    expect(back.data).toEqual({ a: '2', other: 'x' });
    expect(extract(back, 'nobody')).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } });
  });

  it('refuses bad apply requests as kube-apiserver does, and answers 501 for what it does not model', async () => {
    const send = (body: string, query: string, path = '/api/v1/namespaces/default/configmaps/c') =>
      getJson(`${server.url}${path}?${query}`, { method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body });
    const body = JSON.stringify(config({ a: '1' }));
    expect((await send(body, '')).status).toBe(400); // fieldManager required
    expect((await send(body, `fieldManager=${'m'.repeat(129)}`)).status).toBe(422);
    expect((await send('apiVersion: v1\nkind: ConfigMap\n', 'fieldManager=m')).status).toBe(501);
    expect((await send(JSON.stringify({ ...config({}), metadata: { name: 'd', namespace: 'default' } }), 'fieldManager=m')).status).toBe(400);
    const withStatus = await send(JSON.stringify({ ...config({}), status: { x: 1 } }), 'fieldManager=m');
    expect(withStatus.status).toBe(501);
    expect(withStatus.body.message).toMatch(/applyStatus/);
    // A list kube-apiserver merges per element, owned by two managers: 501, never a silent atomic replace.
    await cms.apply({ ...config({}), metadata: { name: 'c', namespace: 'default', finalizers: ['a.example.com/x'] } }, { fieldManager: 'one' });
    const shared = await cms.apply({ ...config({}), metadata: { name: 'c', namespace: 'default', finalizers: ['b.example.com/y'] } }, { fieldManager: 'two' }).catch((e: unknown) => e);
    expect(shared).toMatchObject({ statusCode: 501, message: expect.stringMatching(/\.metadata\.finalizers is merged per element/) });
  });
});

describe('ResourceClient.apply: mistakes refused before sending (INVALID_OPTION)', () => {
  it.each([
    [{ kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } }, /needs apiVersion/],
    [{ apiVersion: 'v1', metadata: { name: 'c', namespace: 'default' } }, /needs kind/],
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default' } }, /needs metadata.name/],
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, /needs metadata.namespace/],
    [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'c', namespace: 'default' } }, /is a Deployment \(apps\/v1\) but this client writes ConfigMap \(v1\)/],
  ])('%j', async (bad, message) => {
    await expect(cms.apply(bad as never, { fieldManager: 'm' })).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expect.stringMatching(message) });
    expect(server.requests()).toHaveLength(0);
  });

  it('a field manager longer than 128 bytes, or an unknown option value', async () => {
    await expect(cms.apply(config({}), { fieldManager: 'm'.repeat(129) })).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expect.stringMatching(/1 to 128 bytes/) });
    await expect(cms.apply(config({}), { force: 'yes' } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    expect(() => newResourceClient(server.kubeConfig, resources.configmaps, { fieldManager: 'x'.repeat(200) })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(server.requests()).toHaveLength(0);
  });
});
