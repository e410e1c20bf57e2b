// Issue 26's differences of the fake, on both servers with one set of expectations: a CRD's status subresource
// (status dropped from main-resource writes, /status writes only status, the generation), a CRD without it,
// the CRD's answer and its Established condition, a custom resource's PUT without resourceVersion, a write that changes nothing, and the two kinds of 404 a client sees.
// Run with `npx vitest run -c test/apiserver/vitest.config.ts test/apiserver/fake-status.test.ts` (the fake half needs no build).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { newListWatch, newResourceClient, type ResourceClient } from '../../src/index.js';
import { isNotFound } from '../../src/objects.js';
import { ensureCustomResourceDefinitions } from '../../src/crd/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/core/types.js';
import { freshNamespace, startRealApiServer } from './harness.js';

interface Obj extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}
interface Target {
  kubeConfig: KubeConfig;
  namespace: string;
  stop(): Promise<void>;
}

const GROUP = 'status.example.com';
const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false } as const;
const WIDGETS = { group: GROUP, version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true } as const;
const GADGETS = { group: GROUP, version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true } as const;

function crd(plural: string, kind: string, status: boolean): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          ...(status ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}

const targets: Record<string, () => Promise<Target>> = {
  fake: async () => {
    const server = await startFakeApiServer();
    return { kubeConfig: server.kubeConfig, namespace: 'default', stop: () => server.close() };
  },
  'kube-apiserver v1.37.2': async () => {
    const server = await startRealApiServer();
    return { kubeConfig: server.kubeConfig, namespace: await freshNamespace(server, 'status'), stop: () => server.stop() };
  },
};

describe.each(Object.keys(targets))('issue 26 differences on %s', (which) => {
  let target: Target;
  let crds: ResourceClient<Obj>;
  let widgets: ResourceClient<Obj>;
  let gadgets: ResourceClient<Obj>;
  beforeAll(async () => {
    target = await targets[which]();
    crds = newResourceClient<Obj>(target.kubeConfig, CRDS, { fieldManager: 'test' });
    await ensureCustomResourceDefinitions(crds as never, [crd('widgets', 'Widget', true), crd('gadgets', 'Gadget', false)] as never, { timeoutMs: 30_000, pollIntervalMs: 50 });
    widgets = newResourceClient<Obj>(target.kubeConfig, WIDGETS, { fieldManager: 'test' });
    gadgets = newResourceClient<Obj>(target.kubeConfig, GADGETS, { fieldManager: 'test' });
  });
  afterAll(async () => {
    crds?.close();
    widgets?.close();
    gadgets?.close();
    await target?.stop();
  });
  const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: target.namespace, ...extra });

  it('a CRD is answered with the initial status, then becomes NamesAccepted and Established', async () => {
    const created = await crds.create({ ...crd('sprockets', 'Sprocket', true), status: { conditions: [{ type: 'Bogus', status: 'True' }] } });
    expect(created.status).toEqual({ conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });
    let got = await crds.get(`sprockets.${GROUP}`);
    // kube-apiserver passes through Established False (Installing) on its way; the fake goes straight to True.
    const established = (o: Obj): boolean => ((o.status?.conditions ?? []) as Array<{ type: string; status: string }>).some((c) => c.type === 'Established' && c.status === 'True');
    for (let i = 0; i < 200 && !established(got); i++) {
      await new Promise((r) => setTimeout(r, 25));
      got = await crds.get(`sprockets.${GROUP}`);
    }
    expect(got.status).toMatchObject({
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
      ],
      acceptedNames: { plural: 'sprockets', singular: 'sprocket', kind: 'Sprocket', listKind: 'SprocketList' },
      storedVersions: ['v1'],
    });
  });

  it('status subresource: a status sent with create, replace, merge patch or apply of the main resource is dropped', async () => {
    const created = await widgets.create({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: meta('w1'), spec: { size: 1 }, status: { ready: true } });
    expect(created.status).toBeUndefined();
    expect(created.metadata?.generation).toBe(1);
    const replaced = await widgets.replace({ ...created, metadata: { ...created.metadata, labels: { a: 'b' } }, spec: { size: 2 }, status: { ready: true } });
    expect(replaced).toMatchObject({ metadata: { generation: 2, labels: { a: 'b' } }, spec: { size: 2 } });
    expect(replaced.status).toBeUndefined();
    // A status-only patch of the main resource changes nothing: nothing is stored (same resourceVersion).
    const noop = await widgets.patch('w1', target.namespace, { status: { ready: true } }, 'merge');
    expect(noop.status).toBeUndefined();
    expect(noop.metadata?.resourceVersion).toBe(replaced.metadata?.resourceVersion);
    const applied = await widgets.apply({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: meta('w2'), spec: { size: 3 }, status: { applied: true } } as never, { fieldManager: 'm1' });
    expect(applied.status).toBeUndefined();
    // Owned by the applier: spec.size, nothing of status. (kube-apiserver also lists `".": {}` under f:spec; the fake's ownership does not.)
    expect(applied.metadata?.managedFields?.map((e) => e.manager)).toEqual(['m1']);
    expect(applied.metadata?.managedFields?.[0].fieldsV1).toMatchObject({ 'f:spec': { 'f:size': {} } });
    expect(applied.metadata?.managedFields?.[0].fieldsV1).not.toHaveProperty('f:status');
  });

  it('status subresource: /status writes only status (spec, labels, annotations, finalizers dropped), the generation stays', async () => {
    const created = await widgets.create({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: meta('w3', { labels: { a: 'b' } }), spec: { size: 1 } });
    const written = await widgets.replaceStatus({
      ...created,
      metadata: { ...created.metadata, labels: { c: 'd' }, annotations: { x: 'y' }, finalizers: ['example.com/f'] },
      spec: { size: 9 },
      status: { ready: true },
    });
    expect(written).toMatchObject({ metadata: { generation: 1, labels: { a: 'b' } }, spec: { size: 1 }, status: { ready: true } });
    expect(written.metadata?.annotations).toBeUndefined();
    expect(written.metadata?.finalizers).toBeUndefined();
    // No unconditional update of a custom resource: a PUT without metadata.resourceVersion is 422.
    const { resourceVersion: _rv, ...noRv } = written.metadata ?? {};
    await expect(widgets.replace({ ...written, metadata: noRv })).rejects.toMatchObject({ statusCode: 422, message: expect.stringMatching(/metadata\.resourceVersion: Invalid value: 0: must be specified for an update/) });
    const patched = await widgets.patchStatus('w3', target.namespace, { metadata: { labels: { e: 'f' } }, spec: { size: 10 }, status: { n: 1 } }, 'merge');
    expect(patched).toMatchObject({ metadata: { generation: 1, labels: { a: 'b' } }, spec: { size: 1 }, status: { ready: true, n: 1 } });
  });

  it('no status subresource: status is written with the object and counts for the generation; /status is 404', async () => {
    const created = await gadgets.create({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: meta('g1'), spec: { size: 1 }, status: { ready: true } });
    expect(created).toMatchObject({ metadata: { generation: 1 }, status: { ready: true } });
    expect(await gadgets.patch('g1', target.namespace, { status: { ready: false } }, 'merge')).toMatchObject({ metadata: { generation: 2 }, status: { ready: false } });
    expect((await gadgets.patch('g1', target.namespace, { metadata: { labels: { a: 'b' } } }, 'merge')).metadata?.generation).toBe(2);
    const err = await gadgets.patchStatus('g1', target.namespace, { status: { ready: 1 } }, 'merge').catch((e: unknown) => e);
    expect(isNotFound(err)).toBe(true);
    expect((err as Error).message).toMatch(new RegExp(`gadgets.${GROUP.replace(/\./g, '\\.')} "g1" not found`));
  });

  it('a group no CRD serves is the plain-text 404; a built-in group answers the NotFound Status', async () => {
    const signal = new AbortController().signal;
    const unknownGroup = await newListWatch(target.kubeConfig, { group: 'nope.example.com', version: 'v1', resource: 'widgets' }).list({}, signal).catch((e: unknown) => e);
    expect((err(unknownGroup)).message).toMatch(/HTTP 404: 404 page not found$/);
    const unservedVersion = await newListWatch(target.kubeConfig, { group: GROUP, version: 'v2', resource: 'widgets' }).list({}, signal).catch((e: unknown) => e);
    expect((err(unservedVersion)).message).toMatch(/HTTP 404: 404 page not found$/);
    const builtIn = await newListWatch(target.kubeConfig, { group: 'apps', version: 'v1', resource: 'widgets' }).list({}, signal).catch((e: unknown) => e);
    expect((err(builtIn)).message).toMatch(/HTTP 404 NotFound: the server could not find the requested resource$/);
    expect([unknownGroup, unservedVersion, builtIn].every(isNotFound)).toBe(true);
  });
});

function err(e: unknown): Error {
  expect(e).toBeInstanceOf(Error);
  return e as Error;
}
