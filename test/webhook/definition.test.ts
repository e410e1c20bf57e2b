import { afterEach, describe, expect, it } from 'vitest';
import { defineCustomResource, Type } from '../../src/crd/index.js';
import { defaultingWebhook, deny, validationWebhook, type Webhook } from '../../src/webhook/index.js';
import { applyJsonPatch } from '../../src/core/index.js';
import { admissionReview, post, startServer } from './helpers.js';

const widgets = defineCustomResource({
  group: 'example.com',
  names: { kind: 'Widget' },
  versions: {
    v1: {
      storage: true,
      spec: Type.Object({
        size: Type.Integer({ minimum: 1, default: 1 }),
        color: Type.Optional(Type.Union([Type.Literal('red'), Type.Literal('blue')], { default: 'red' })),
        min: Type.Optional(Type.Integer()),
        max: Type.Optional(Type.Integer()),
        owner: Type.Optional(Type.String()),
      }),
    },
    v2: { spec: Type.Object({ dimensions: Type.Object({ size: Type.Integer({ minimum: 2, default: 2 }) }, { default: { size: 2 } }) }) },
  },
});

const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

async function serve(webhook: Webhook) {
  const s = await startServer((server) => server.register('/hook', webhook));
  running.push(s.stop);
  return (object: unknown, overrides: Record<string, unknown> = {}) =>
    post(
      s.port,
      '/hook',
      admissionReview({
        kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
        resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
        name: 'w',
        object,
        ...overrides,
      }),
      s.ca,
    );
}

const widget = (spec: Record<string, unknown>, apiVersion = 'example.com/v1') => ({ apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec });

describe('defaultingWebhook', () => {
  it("patches in the schema's defaults of the object's version", async () => {
    const review = await serve(defaultingWebhook(widgets));
    const object = widget({});
    const response = (await review(object)).body.response;
    expect(response.allowed).toBe(true);
    const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    expect(applyJsonPatch(object, patch)).toEqual(widget({ size: 1, color: 'red' }));
    const v2 = widget({}, 'example.com/v2');
    const atV2 = (await review(v2, { kind: { group: 'example.com', version: 'v2', kind: 'Widget' }, resource: { group: 'example.com', version: 'v2', resource: 'widgets' } })).body.response;
    expect(applyJsonPatch(v2, JSON.parse(Buffer.from(atV2.patch, 'base64').toString('utf8')))).toEqual(widget({ dimensions: { size: 2 } }, 'example.com/v2'));
  });

  it('sends no patch when every default is already there', async () => {
    const review = await serve(defaultingWebhook(widgets));
    expect((await review(widget({ size: 3, color: 'blue' }))).body.response).toEqual({ uid: 'uid-1', allowed: true });
  });

  it('hands the typed defaulter the object with the schema defaults applied, and patches its changes too', async () => {
    const seen: unknown[] = [];
    const review = await serve(
      defaultingWebhook(widgets, (req) => {
        seen.push(structuredClone(req.object));
        const o = req.object!;
        if (o.apiVersion === 'example.com/v1' && 'size' in o.spec) o.spec.owner ??= req.userInfo.username;
      }),
    );
    const object = widget({});
    const response = (await review(object)).body.response;
    expect(seen).toEqual([widget({ size: 1, color: 'red' })]);
    expect(applyJsonPatch(object, JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')))).toEqual(widget({ size: 1, color: 'red', owner: 'alice' }));
  });

  it("a defaulter's deny() refuses the request", async () => {
    const review = await serve(defaultingWebhook(widgets, () => deny('no widgets today')));
    expect((await review(widget({}))).body.response).toMatchObject({ allowed: false, status: { code: 403, message: 'no widgets today' } });
  });

  it("names itself after the resource and gives the configuration's rules", () => {
    const hook = defaultingWebhook(widgets);
    expect(hook.name).toBe('default.widgets.example.com');
    expect(hook.type).toBe('mutating');
    expect(hook.rules).toEqual([{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v2', 'v1'], resources: ['widgets'] }]);
    expect(defaultingWebhook(widgets, undefined, { name: 'd.example.com' }).name).toBe('d.example.com');
  });
});

describe('validationWebhook', () => {
  it("denies an object its version's schema refuses, with every field error in the API server's paths", async () => {
    const review = await serve(validationWebhook(widgets));
    const response = (await review(widget({ size: 0, color: 'green' }))).body.response;
    expect(response.allowed).toBe(false);
    expect(response.status).toEqual({
      code: 422,
      reason: 'Invalid',
      message:
        'Widget "w" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1, spec.color: Unsupported value: "green": supported values: "red", "blue"',
      details: {
        causes: [
          { field: 'spec.size', reason: 'FieldValueInvalid', message: 'Invalid value: 0: spec.size in body should be greater than or equal to 1' },
          { field: 'spec.color', reason: 'FieldValueNotSupported', message: 'Unsupported value: "green": supported values: "red", "blue"' },
        ],
      },
    });
  });

  it('validates after defaulting, as the server does: a missing field with a default is not an error', async () => {
    const review = await serve(validationWebhook(widgets));
    expect((await review(widget({}))).body.response).toEqual({ uid: 'uid-1', allowed: true });
    const v2 = await review(widget({ dimensions: { size: 1 } }, 'example.com/v2'), { kind: { group: 'example.com', version: 'v2', kind: 'Widget' }, resource: { group: 'example.com', version: 'v2', resource: 'widgets' } });
    expect(v2.body.response.status.details.causes).toEqual([{ field: 'spec.dimensions.size', reason: 'FieldValueInvalid', message: 'Invalid value: 1: spec.dimensions.size in body should be greater than or equal to 2' }]);
  });

  it("runs the typed validator only once the schema passed, and denies with its field errors", async () => {
    let calls = 0;
    const review = await serve(
      validationWebhook(widgets, (req) => {
        calls++;
        const spec = req.object!.spec;
        return 'size' in spec && spec.min !== undefined && spec.max !== undefined && spec.min > spec.max ? [{ field: 'spec.min', type: 'FieldValueInvalid', message: 'must not exceed spec.max' }] : [];
      }),
    );
    expect((await review(widget({ size: 0 }))).body.response.allowed).toBe(false);
    expect(calls).toBe(0);
    expect((await review(widget({ min: 1, max: 2 }))).body.response).toEqual({ uid: 'uid-1', allowed: true });
    expect((await review(widget({ min: 3, max: 2 }))).body.response.status).toEqual({
      code: 422,
      reason: 'Invalid',
      message: 'Widget "w" is invalid: spec.min: must not exceed spec.max',
      details: { causes: [{ field: 'spec.min', reason: 'FieldValueInvalid', message: 'must not exceed spec.max' }] },
    });
  });

  it('admits a DELETE (no object) without calling the validator', async () => {
    let calls = 0;
    const review = await serve(validationWebhook(widgets, () => (calls++, [{ field: 'spec', type: 'FieldValueForbidden', message: 'no' }])));
    expect((await review(undefined, { operation: 'DELETE', oldObject: widget({ size: 1 }) })).body.response).toEqual({ uid: 'uid-1', allowed: true });
    expect(calls).toBe(0);
  });

  it('denies a review for another resource (unhandled: deny)', async () => {
    const review = await serve(validationWebhook(widgets));
    const response = (await review(widget({}), { resource: { group: 'example.com', version: 'v1', resource: 'gadgets' } })).body.response;
    expect(response).toMatchObject({ allowed: false, status: { code: 403, message: 'webhook validate.widgets.example.com has no handler for example.com/v1/gadgets' } });
  });

  it('refuses what is not a definition, and unknown options', () => {
    expect(() => validationWebhook({} as never)).toThrow('validationWebhook: the first argument must be a definition from defineCustomResource');
    expect(() => validationWebhook(widgets, undefined, { nmae: 'x' } as never)).toThrow('unknown option nmae (did you mean name?)');
  });
});
