// reviewAdmission: an admission webhook answered in-process, as the server would answer it, its response decoded.

import { describe, expect, it } from 'vitest';
import { resources } from '../../src/core/resources.js';
import { defineCustomResource, Type } from '../../src/crd/index.js';
import { allow, conversionWebhook, defaultingWebhook, deny, mutatingWebhook, reviewAdmission, validatingWebhook, type AdmissionRequest } from '../../src/webhook/index.js';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';

const cm = (data: Record<string, string> = {}): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } }, data });

describe('reviewAdmission', () => {
  it('builds the request a handler gets: kind and resource from the descriptor, name and namespace from the object, CREATE', async () => {
    let seen: AdmissionRequest<ConfigMap> | undefined;
    const webhook = validatingWebhook<ConfigMap>({ name: 'v.example.com' }, (req) => ((seen = req), allow()));
    const object = cm({ a: '1' });
    await reviewAdmission(webhook, { resource: resources.configmaps, object });
    expect(seen).toEqual({
      uid: 'kube-informer-review',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'web',
      namespace: 'shop',
      operation: 'CREATE',
      userInfo: {},
      object,
      dryRun: false,
    });
    expect(seen?.object).not.toBe(object); // through JSON, as from the API server
  });

  it('takes the operation from the objects it is given: UPDATE with both, DELETE with the old one alone', async () => {
    const ops: string[] = [];
    const webhook = validatingWebhook({ name: 'v.example.com' }, (req) => (ops.push(req.operation), allow()));
    await reviewAdmission(webhook, { resource: resources.configmaps, object: cm(), oldObject: cm() });
    await reviewAdmission(webhook, { resource: resources.configmaps, oldObject: cm() });
    await reviewAdmission(webhook, { resource: resources.configmaps, object: cm(), operation: 'CONNECT', userInfo: { username: 'ann' } });
    expect(ops).toEqual(['UPDATE', 'DELETE', 'CONNECT']);
  });

  it('decodes a denial: allowed false, the status with its field errors, the warnings', async () => {
    const webhook = validatingWebhook<ConfigMap>({ name: 'v.example.com' }, () => deny('bad data', { fieldErrors: [{ field: 'data.a', type: 'FieldValueInvalid', message: 'data.a: must not be 1' }], warnings: ['careful'] }));
    const result = await reviewAdmission(webhook, { resource: resources.configmaps, object: cm({ a: '1' }) });
    expect(result).toMatchObject({
      allowed: false,
      status: { code: 422, reason: 'Invalid', message: 'bad data: data.a: must not be 1', details: { causes: [{ field: 'data.a', message: 'must not be 1', reason: 'FieldValueInvalid' }] } },
      warnings: ['careful'],
      patch: [],
    });
  });

  it("decodes a mutating webhook's patch and applies it to the object", async () => {
    const webhook = mutatingWebhook<ConfigMap>({ name: 'm.example.com' }, (req) => {
      req.object!.metadata!.labels!.team = 'a';
      req.object!.data!.b = '2';
    });
    const object = cm({ a: '1' });
    const result = await reviewAdmission(webhook, { resource: resources.configmaps, object });
    expect(result.allowed).toBe(true);
    expect(result.patch).toEqual([
      { op: 'add', path: '/metadata/labels/team', value: 'a' },
      { op: 'add', path: '/data/b', value: '2' },
    ]);
    expect(result.object).toEqual({ ...object, metadata: { ...object.metadata, labels: { app: 'web', team: 'a' } }, data: { a: '1', b: '2' } });
    expect(object.data).toEqual({ a: '1' }); // the test's own object is left alone
    expect(result.review).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'kube-informer-review', patchType: 'JSONPatch' } });
  });

  it("answers a resource a webhook does not handle as the server would (the webhook's unhandled policy)", async () => {
    const webhook = validatingWebhook({ name: 'v.example.com', resources: [{ group: '', resource: 'secrets' }] }, () => allow());
    const result = await reviewAdmission(webhook, { resource: resources.configmaps, object: cm() });
    expect(result).toMatchObject({ allowed: false, status: { code: 403, message: 'webhook v.example.com has no handler for v1/configmaps' } });
  });

  it("runs a definition's defaulting webhook: the schema's defaults come back as the patched object", async () => {
    const widgets = defineCustomResource({
      group: 'example.com',
      names: { kind: 'Widget' },
      versions: { v1: { storage: true, spec: Type.Object({ size: Type.Integer({ default: 1 }), owner: Type.Optional(Type.String()) }) } },
    });
    const webhook = defaultingWebhook(widgets, (req) => {
      req.object!.spec.owner ??= req.userInfo.username;
    });
    const result = await reviewAdmission(webhook, {
      resource: widgets.descriptor,
      object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec: {} },
      userInfo: { username: 'ann' },
    });
    expect(result.object).toMatchObject({ spec: { size: 1, owner: 'ann' } });
  });

  it('rejects with what the handler threw', async () => {
    const webhook = validatingWebhook({ name: 'v.example.com' }, () => {
      throw new Error('the handler broke');
    });
    await expect(reviewAdmission(webhook, { resource: resources.configmaps, object: cm() })).rejects.toThrow('the handler broke');
  });

  it('refuses a misspelt field, a missing resource and a conversion webhook, naming them', () => {
    const webhook = validatingWebhook({ name: 'v.example.com' }, () => allow());
    const js = (input: Record<string, unknown>) => input as never;
    expect(() => reviewAdmission(webhook, js({ resource: resources.configmaps, oldObj: cm() }))).toThrow('reviewAdmission: unknown option oldObj (did you mean oldObject?)');
    expect(() => reviewAdmission(webhook, js({ object: cm() }))).toThrow(/^reviewAdmission: option resource is required/);
    const conversion = conversionWebhook<{ v1: object }, 'v1'>({ name: 'c.example.com', group: 'example.com', hub: 'v1', spokes: {} });
    expect(() => reviewAdmission(conversion, { resource: resources.configmaps })).toThrow(/c\.example\.com is not an admission webhook \(type conversion\); test a conversion webhook with its convert\(\)/);
  });
});
