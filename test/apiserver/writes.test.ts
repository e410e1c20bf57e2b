// The writing API on both servers, one set of expectations: delete's answer, apply conflicts naming both
// managers, force, removal of a dropped field, applyStatus, extract, createOrUpdate under 8 writers.
// Run with `npm run test:apiserver -- writes` (the fake half needs no build).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import type { ApplyConfiguration } from '../../src/objects.js';
import { ApplyConflictError, extract, isNotFound } from '../../src/objects.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/core/types.js';
import { configMapSets, installCrd, type ConfigMapSet } from '../../examples/configmapset/crd.js';
import { freshNamespace, startRealApiServer } from './harness.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}
interface Target {
  kubeConfig: KubeConfig;
  namespace: string;
  stop(): Promise<void>;
}

const targets: Record<string, () => Promise<Target>> = {
  fake: async () => {
    const server = await startFakeApiServer();
    server.resource({ ...configMapSets, generation: true });
    return { kubeConfig: server.kubeConfig, namespace: 'default', stop: () => server.close() };
  },
  'kube-apiserver v1.37.2': async () => {
    const server = await startRealApiServer();
    await installCrd(server.kubeConfig, AbortSignal.timeout(60_000));
    return { kubeConfig: server.kubeConfig, namespace: await freshNamespace(server, 'writes'), stop: () => server.stop() };
  },
};

describe.each(Object.keys(targets))('writing on %s', (which) => {
  let target: Target;
  let cms: ResourceClient<Cm>;
  let sets: ResourceClient<ConfigMapSet>;
  beforeAll(async () => {
    target = await targets[which]();
    cms = newResourceClient<Cm>(target.kubeConfig, resources.configmaps, { fieldManager: 'test-user' });
    sets = newResourceClient(target.kubeConfig, configMapSets, { fieldManager: 'test-user' });
  });
  afterAll(async () => {
    cms?.close();
    sets?.close();
    await target?.stop();
  });
  const cm = (name: string, data: Record<string, string>): ApplyConfiguration<Cm> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: target.namespace }, data });

  it('delete: a Status (gone) without finalizers, the marked object while finalizers hold it', async () => {
    const created = await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'del-a', namespace: target.namespace } });
    const gone = await cms.delete('del-a', target.namespace);
    expect(gone).toEqual({ gone: true, status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'del-a', kind: 'configmaps', uid: created.metadata?.uid } } });
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'del-b', namespace: target.namespace, finalizers: ['example.com/hold'] } });
    const held = await cms.delete('del-b', target.namespace);
    expect(held.gone).toBe(false);
    expect(held.object?.metadata?.deletionTimestamp).toEqual(expect.any(String));
    await cms.patch('del-b', target.namespace, { metadata: { finalizers: null } }, 'merge');
    expect(isNotFound(await cms.get('del-b', target.namespace).catch((e: unknown) => e))).toBe(true);
  });

  it('delete of a pod answers its final state; dryRun writes nothing; a map no manager owns any more goes', async () => {
    const pods = newResourceClient<KubeObject>(target.kubeConfig, resources.pods);
    // No kube-controller-manager here: the namespace's default ServiceAccount, which pod admission looks up, is made by hand.
    const accounts = newResourceClient(target.kubeConfig, resources.serviceaccounts);
    await accounts.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: target.namespace } }).catch((e: unknown) => {
      if ((e as { statusCode?: number }).statusCode !== 409) throw e;
    });
    accounts.close();
    await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: target.namespace }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } } as KubeObject);
    const deleted = await pods.delete('p', target.namespace, { gracePeriodSeconds: 0 });
    pods.close();
    expect(deleted).toMatchObject({ gone: true, object: { kind: 'Pod', metadata: { name: 'p' } } });

    const dry = await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', namespace: target.namespace } }, { dryRun: true });
    expect(dry.metadata?.name).toBe('dry');
    expect(isNotFound(await cms.get('dry', target.namespace).catch((e: unknown) => e))).toBe(true);
    await cms.apply(cm('maps', { a: '1' }), { fieldManager: 'only' });
    expect((await cms.delete('maps', target.namespace, { dryRun: true })).gone).toBe(true);
    const released = await cms.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'maps', namespace: target.namespace } }, { fieldManager: 'only' });
    expect(released.data).toBeUndefined();
    const emptyMap = await cms.apply(cm('maps', {}), { fieldManager: 'only' });
    expect(emptyMap.metadata?.managedFields?.find((e) => e.manager === 'only')?.fieldsV1).toEqual({ 'f:data': {} }); // an empty map is a leaf, no '.'
  });

  it('two managers conflict and the error names both; force takes the field; a dropped field is removed', async () => {
    await cms.apply(cm('ssa', { a: '1', b: '1', c: '1' }), { fieldManager: 'first' });
    const err = await cms.apply(cm('ssa', { a: '2', b: '2' }), { fieldManager: 'second' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplyConflictError);
    const conflict = err as ApplyConflictError;
    expect(conflict.fieldManager).toBe('second');
    expect(conflict.conflicts.map((c) => `${c.manager} ${c.field} ${c.message}`).sort()).toEqual(['first .data.a conflict with "first"', 'first .data.b conflict with "first"']);
    expect(conflict.message).toMatch(/"second"/);
    expect(conflict.message).toMatch(/first/);
    const forced = await cms.apply(cm('ssa', { a: '2', b: '2' }), { fieldManager: 'second', force: true });
    expect(forced.data).toEqual({ a: '2', b: '2', c: '1' });
    const dropped = await cms.apply(cm('ssa', { c: '1' }), { fieldManager: 'first' }); // first no longer owns a, b; drops nothing else
    expect(dropped.data).toEqual({ a: '2', b: '2', c: '1' });
    const removed = await cms.apply(cm('ssa', { a: '2' }), { fieldManager: 'second' }); // second drops b: nobody else owns it
    expect(removed.data).toEqual({ a: '2', c: '1' });
    const owners = (removed.metadata?.managedFields ?? []).map((e) => [e.manager, e.operation, e.fieldsV1]);
    expect(owners).toEqual(
      expect.arrayContaining([
        ['first', 'Apply', { 'f:data': { 'f:c': {} } }],
        ['second', 'Apply', { 'f:data': { 'f:a': {} } }],
      ]),
    );
  });

  it('a conflict with a manager that wrote by update says "using v1"', async () => {
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'upd', namespace: target.namespace }, data: { a: '1' } });
    const err = (await cms.apply(cm('upd', { a: '2' }), { fieldManager: 'ctl' }).catch((e: unknown) => e)) as ApplyConflictError;
    expect(err.conflicts).toEqual([{ manager: 'test-user', field: '.data.a', message: 'conflict with "test-user" using v1' }]);
  });

  it('applyStatus writes status through the subresource; extract round-trips', async () => {
    const base = { apiVersion: 'examples.kube-informer.dev/v1' as const, kind: 'ConfigMapSet' as const, metadata: { name: 'st', namespace: target.namespace } };
    await sets.apply({ ...base, spec: { names: ['a'], data: { k: 'v' } } }, { fieldManager: 'user' });
    const written = await sets.applyStatus({ ...base, spec: { names: ['ignored'] }, status: { ready: 1, observedGeneration: 1 } }, { fieldManager: 'operator' });
    expect(written.status).toEqual({ ready: 1, observedGeneration: 1 });
    expect(written.spec?.names).toEqual(['a']);
    expect(written.metadata?.managedFields?.find((e) => e.manager === 'operator')).toMatchObject({ operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:ready': {}, 'f:observedGeneration': {} } } });
    const mine = extract(written, 'user');
    expect(mine).toEqual({ ...base, spec: { names: ['a'], data: { k: 'v' } } });
    mine.spec = { ...mine.spec, data: { k: 'w' } };
    const back = await sets.apply(mine, { fieldManager: 'user' });
    expect(back.spec).toEqual({ names: ['a'], data: { k: 'w' } });
    expect(extract(back, 'operator', { subresource: 'status' }).status).toEqual({ ready: 1, observedGeneration: 1 });
  });

  it('createOrUpdate under 8 concurrent writers: one object, no lost update', async () => {
    const base: Cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: target.namespace } };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => cms.createOrUpdate(base, (o) => void (o.data = { ...o.data, [`w${i}`]: String(i) }), { conflictRetries: 30 })),
    );
    expect(results.filter((r) => r.result === 'created')).toHaveLength(1);
    const live = await cms.get('shared', target.namespace);
    expect(Object.keys(live.data ?? {}).sort()).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7']);
  });
});
