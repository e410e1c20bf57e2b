// The fake API server validates, prunes and defaults custom resources against their CRD's schema, as kube-apiserver v1.37.2 does (issue 47, defect 4).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { ApiStatusError } from '../../src/core/errors.js';
import { getJson, sendJson } from './helpers.js';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);
const merge = (path: string, body: unknown) => send('PATCH', path, body, 'application/merge-patch+json');
const apply = (path: string, body: unknown) => send('PATCH', `${path}?fieldManager=m`, body, 'application/apply-patch+yaml');

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', default: 1, minimum: 0 },
        color: { type: 'string', enum: ['red', 'blue'] },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        tags: { type: 'array', items: { type: 'string' } },
        replicas: { type: 'integer' },
      },
    },
    status: { type: 'object', properties: { phase: { type: 'string' }, ready: { type: 'boolean' }, replicas: { type: 'integer' } } },
  },
};

function crd(extra: Record<string, unknown> = {}, versionSchema: unknown = schema): KubeObject {
  return {
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: versionSchema }, subresources: { status: {} }, ...extra }],
    },
  } as KubeObject;
}

const widget = (name: string, spec: unknown, more: Record<string, unknown> = {}) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec, ...more });

/** kube-apiserver's 422 for one field error of a custom resource (apimachinery's NewInvalid). */
function invalid(name: string, field: string, reason: string, body: string) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `Widget.example.com "${name}" is invalid: ${field}: ${body}`,
    reason: 'Invalid',
    details: { name, group: 'example.com', kind: 'Widget', causes: [{ reason, message: body, field }] },
    code: 422,
  };
}

describe('fake API server: custom resources against their CRD schema', () => {
  beforeEach(() => {
    server.create(CRDS, crd());
  });

  it('refuses a create whose value has the wrong type with 422 Invalid, the field path and the server message', async () => {
    const res = await send('POST', WIDGETS, widget('bad', { size: 'big' }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual(invalid('bad', 'spec.size', 'FieldValueTypeInvalid', 'Invalid value: "string": spec.size in body must be of type integer: "string"'));
    expect(server.get('widgets.example.com', 'bad')).toBeUndefined();
  });

  it('lists every failing field, bracketed, in one 422', async () => {
    const res = await send('POST', WIDGETS, widget('bad', { tags: [1, 'a', true] }));
    expect(res.status).toBe(422);
    expect(res.body.message).toBe(
      'Widget.example.com "bad" is invalid: [spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer", spec.tags[2]: Invalid value: "boolean": spec.tags[2] in body must be of type string: "boolean"]',
    );
    // Errors of different properties come in kube-apiserver's map order, which is random: only the set is fixed.
    const two = await send('POST', WIDGETS, widget('bad', { size: -1, color: 'green' }));
    expect(two.body.details.causes.map((c: { field: string }) => c.field).sort()).toEqual(['spec.color', 'spec.size']);
  });

  it('prunes unknown fields (keeping those under x-kubernetes-preserve-unknown-fields) and applies defaults on create', async () => {
    const res = await send('POST', WIDGETS, widget('w', { color: 'red', extra: 'pruned', free: { kept: { deep: true } } }, { junk: 1 }));
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({ size: 1, color: 'red', free: { kept: { deep: true } } });
    expect(res.body.junk).toBeUndefined();
    expect(server.get<Obj>('widgets.example.com', 'w')?.spec).toEqual({ size: 1, color: 'red', free: { kept: { deep: true } } });
  });

  it('validates, prunes and defaults a PUT, a merge patch, a JSON patch and an apply', async () => {
    const created = (await send('POST', WIDGETS, widget('w', { size: 2 }))).body;
    const put = await send('PUT', `${WIDGETS}/w`, { ...created, spec: { size: 'x' } });
    expect(put.status).toBe(422);
    expect(put.body.details.causes).toEqual([{ reason: 'FieldValueTypeInvalid', message: 'Invalid value: "string": spec.size in body must be of type integer: "string"', field: 'spec.size' }]);
    const ok = await send('PUT', `${WIDGETS}/w`, { ...created, spec: { other: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.body.spec).toEqual({ size: 1 });
    expect((await merge(`${WIDGETS}/w`, { spec: { color: 'green' } })).status).toBe(422);
    const jsonPatch = await send('PATCH', `${WIDGETS}/w`, [{ op: 'add', path: '/spec/size', value: -5 }], 'application/json-patch+json');
    expect(jsonPatch.status).toBe(422);
    expect(jsonPatch.body.details.causes[0].field).toBe('spec.size');
    const applied = await apply(`${WIDGETS}/w2`, widget('w2', { color: 'purple' }));
    expect(applied.status).toBe(422);
    expect(applied.body.message).toBe('Widget.example.com "w2" is invalid: spec.color: Unsupported value: "purple": supported values: "red", "blue"');
    expect(server.get('widgets.example.com', 'w2')).toBeUndefined();
    // An apply is not pruned: a field the schema does not declare fails it, as kube-apiserver's field manager does.
    const undeclared = await apply(`${WIDGETS}/w2`, { ...widget('w2', { color: 'blue', gone: true }), metadata: { name: 'w2', namespace: 'default' } });
    expect(undeclared.status).toBe(500);
    expect(undeclared.body.message).toBe('failed to create typed patch object (default/w2; example.com/v1, Kind=Widget): .spec.gone: field not declared in schema');
    // A field named like an Object.prototype member is a field like any other: undeclared here too.
    const prototypeNamed = await apply(`${WIDGETS}/w2`, { ...widget('w2', { color: 'blue', toString: 'x' }), metadata: { name: 'w2', namespace: 'default' } });
    expect(prototypeNamed.status).toBe(500);
    expect(prototypeNamed.body.message).toBe('failed to create typed patch object (default/w2; example.com/v1, Kind=Widget): .spec.toString: field not declared in schema');
    const appliedOk = await apply(`${WIDGETS}/w2`, widget('w2', { color: 'blue', free: { anything: 1 } }));
    expect(appliedOk.status).toBe(201);
    expect(appliedOk.body.spec).toEqual({ size: 1, color: 'blue', free: { anything: 1 } });
    expect(server.get<Obj>('widgets.example.com', 'w')?.spec).toEqual({ size: 1 });
  });

  it('validates the status subresource against the status schema only, with status paths', async () => {
    await send('POST', WIDGETS, widget('w', { size: 1 }));
    const bad = await merge(`${WIDGETS}/w/status`, { status: { ready: 'yes' } });
    expect(bad.status).toBe(422);
    // The status schema is validated on its own: the message names the path below status, the field the whole path.
    expect(bad.body).toEqual(invalid('w', 'status.ready', 'FieldValueTypeInvalid', 'Invalid value: "string": ready in body must be of type boolean: "string"'));
    const good = await merge(`${WIDGETS}/w/status`, { status: { ready: true, unknown: 1 } });
    expect(good.status).toBe(200);
    expect(good.body.status).toEqual({ ready: true });
  });

  it('holds state operations to the schema too: pruned and defaulted, an invalid object thrown as a 422 ApiStatusError', () => {
    const w = server.create<Obj>('widgets.example.com', { metadata: { name: 'w' }, spec: { extra: 1 } } as Obj);
    expect(w.spec).toEqual({ size: 1 });
    let thrown: unknown;
    try {
      server.create('widgets.example.com', { metadata: { name: 'x' }, spec: { size: 'big' } } as Obj);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiStatusError);
    expect((thrown as ApiStatusError).statusCode).toBe(422);
    expect((thrown as ApiStatusError).message).toBe('Widget.example.com "x" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"');
  });

  it('checks the replicas paths of a scale subresource on every write, as kube-apiserver does', async () => {
    const stored = server.get(CRDS, 'widgets.example.com') as KubeObject;
    const scale = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
    server.update(CRDS, { ...stored, spec: (crd({ subresources: scale }) as { spec: unknown }).spec } as KubeObject);
    const res = await send('POST', WIDGETS, widget('bad', { replicas: 'many' }));
    expect(res.status).toBe(422);
    expect(res.body.details.causes).toEqual([
      { reason: 'FieldValueTypeInvalid', message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"', field: 'spec.replicas' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: 0: .spec.replicas accessor error: many is of the type string, expected int64', field: '.spec.replicas' },
    ]);
    await send('POST', WIDGETS, widget('w', { replicas: 1 }));
    const negative = await merge(`${WIDGETS}/w/status`, { status: { replicas: -1 } });
    expect(negative.body.message).toBe('Widget.example.com "w" is invalid: .status.replicas: Invalid value: -1: should be a non-negative integer');
  });

  it('lets an update keep an invalid value it does not change (ratcheting), and refuses a new one', async () => {
    await send('POST', WIDGETS, widget('w', { size: 3 }));
    // The schema tightens after the object was stored: size 3 is now above the maximum.
    const stored = server.get(CRDS, 'widgets.example.com') as KubeObject;
    const tighter = structuredClone(schema) as typeof schema & { properties: { spec: { properties: { size: Record<string, unknown> } } } };
    tighter.properties.spec.properties.size.maximum = 2;
    server.update(CRDS, { ...stored, spec: (crd({}, tighter) as { spec: unknown }).spec } as KubeObject);
    expect((await merge(`${WIDGETS}/w`, { metadata: { labels: { a: 'b' } } })).status).toBe(200);
    expect((await merge(`${WIDGETS}/w`, { spec: { color: 'red' } })).status).toBe(200);
    const raised = await merge(`${WIDGETS}/w`, { spec: { size: 4 } });
    expect(raised.status).toBe(422);
    expect(raised.body.details.causes[0].message).toBe('Invalid value: 4: spec.size in body should be less than or equal to 2');
  });

  it('applies a default added to the schema later when an object is read, as the server does on reads from storage', async () => {
    await send('POST', WIDGETS, widget('w', { size: 2 }));
    const stored = server.get(CRDS, 'widgets.example.com') as KubeObject;
    const withDefault = structuredClone(schema) as typeof schema & { properties: { spec: { properties: { color: Record<string, unknown> } } } };
    withDefault.properties.spec.properties.color.default = 'blue';
    server.update(CRDS, { ...stored, spec: (crd({}, withDefault) as { spec: unknown }).spec } as KubeObject);
    const rv = server.get('widgets.example.com', 'w')?.metadata?.resourceVersion;
    const got = await getJson(`${server.url}${WIDGETS}/w`);
    expect(got.body.spec).toEqual({ size: 2, color: 'blue' });
    expect(got.body.metadata.resourceVersion).toBe(rv);
    expect((await getJson(`${server.url}${WIDGETS}`)).body.items[0].spec).toEqual({ size: 2, color: 'blue' });
  });
});

describe('fake API server: field selectors on custom resources', () => {
  it('supports metadata.name, metadata.namespace and the CRD selectableFields; anything else is 400, as kube-apiserver answers', async () => {
    server.create(CRDS, crd({ selectableFields: [{ jsonPath: '.spec.color' }] }));
    await send('POST', WIDGETS, widget('r', { color: 'red' }));
    await send('POST', WIDGETS, widget('b', { color: 'blue' }));
    const byName = await getJson(`${server.url}${WIDGETS}?fieldSelector=metadata.name%3Dr`);
    expect(byName.body.items.map((i: KubeObject) => i.metadata?.name)).toEqual(['r']);
    expect((await getJson(`${server.url}${WIDGETS}?fieldSelector=metadata.namespace%3Ddefault`)).status).toBe(200);
    const byColor = await getJson(`${server.url}${WIDGETS}?fieldSelector=spec.color%3Dblue`);
    expect(byColor.body.items.map((i: KubeObject) => i.metadata?.name)).toEqual(['b']);
    const unsupported = await getJson(`${server.url}${WIDGETS}?fieldSelector=spec.size%3D1`);
    expect(unsupported.status).toBe(400);
    expect(unsupported.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message: 'field label not supported: spec.size' });
    const watch = await getJson(`${server.url}${WIDGETS}?watch=true&fieldSelector=status.phase%3DReady`);
    expect(watch.status).toBe(400);
    expect(watch.body.message).toBe('field label not supported: status.phase');
  });

  it('refuses metadata.namespace on a cluster-scoped custom resource', async () => {
    const c = crd() as KubeObject & { spec: { scope: string } };
    c.spec.scope = 'Cluster';
    server.create(CRDS, c);
    const res = await getJson(`${server.url}/apis/example.com/v1/widgets?fieldSelector=metadata.namespace%3Ddefault`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('field label not supported: metadata.namespace');
  });
});
