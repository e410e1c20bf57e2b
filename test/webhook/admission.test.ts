import { afterEach, describe, expect, it, vi } from 'vitest';
import { allow, deny, mutatingWebhook, validatingWebhook, type AdmissionRequest, type Webhook } from '../../src/webhook/index.js';
import { applyJsonPatch } from '../../src/core/index.js';
import { admissionReview, post, startServer } from './helpers.js';

type ConfigMap = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; data?: Record<string, string> };

const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

async function serve(webhook: Webhook, options: Parameters<typeof startServer>[1] = {}) {
  const s = await startServer((server) => server.register('/hook', webhook), options);
  running.push(s.stop);
  return { ...s, review: (overrides: Record<string, unknown> = {}, query = '') => post(s.port, `/hook${query}`, admissionReview(overrides), s.ca) };
}

describe('validating webhooks', () => {
  it('sends a denial with its code, message and field errors as details.causes', async () => {
    const s = await serve(
      validatingWebhook<ConfigMap>({ name: 'v.example.com' }, (req) =>
        req.object?.data?.a === '1' ? deny('bad data', { fieldErrors: [{ field: 'data.a', type: 'FieldValueInvalid', message: 'must not be 1' }], warnings: ['careful'] }) : allow(),
      ),
    );
    const reply = await s.review();
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(reply.body.response).toEqual({
      uid: 'uid-1',
      allowed: false,
      status: { code: 422, reason: 'Invalid', message: 'bad data: data.a: must not be 1', details: { causes: [{ field: 'data.a', message: 'must not be 1', reason: 'FieldValueInvalid' }] } },
      warnings: ['careful'],
    });
  });

  it('admits with warnings', async () => {
    const s = await serve(validatingWebhook({ name: 'v.example.com' }, () => allow({ warnings: ['deprecated field'] })));
    expect((await s.review()).body.response).toEqual({ uid: 'uid-1', allowed: true, warnings: ['deprecated field'] });
  });

  it('denies with a generic message and logs the error when the handler throws (never allowed)', async () => {
    const error = vi.fn();
    const s = await serve(
      validatingWebhook({ name: 'v.example.com' }, () => {
        throw new Error('secret detail: db down');
      }),
      { logger: { debug() {}, info() {}, warn() {}, error } },
    );
    const reply = await s.review();
    expect(reply.status).toBe(200);
    expect(reply.body.response.allowed).toBe(false);
    expect(reply.body.response.status).toMatchObject({ code: 500, reason: 'InternalError' });
    expect(reply.body.response.status.message).not.toContain('secret detail');
    expect(error).toHaveBeenCalledWith(expect.stringContaining('secret detail: db down'));
  });

  it('denies when a handler returns something that is not allow() or deny()', async () => {
    const s = await serve(validatingWebhook({ name: 'v.example.com' }, (() => ({ allowed: true })) as never), { logger: false });
    const reply = await s.review();
    expect(reply.body.response.allowed).toBe(false);
  });

  it('answers before the API server gives up: at its ?timeout= minus the margin, denied by default, and aborts the handler', async () => {
    let signal: AbortSignal | undefined;
    const s = await serve(
      validatingWebhook({ name: 'slow.example.com' }, (_req, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      }),
      { timeoutMarginMs: 1_000 },
    );
    const reply = s.review({}, '?timeout=5s');
    await vi.waitFor(() => expect(signal).toBeDefined());
    await s.clock.advance(3_999);
    expect(signal!.aborted).toBe(false);
    await s.clock.advance(1);
    const body = (await reply).body;
    expect(body.response).toMatchObject({ uid: 'uid-1', allowed: false, status: { code: 504, reason: 'Timeout', message: expect.stringContaining('slow.example.com did not answer within 4000 ms') } });
    expect(signal!.aborted).toBe(true);
  });

  it('admits on a deadline with a warning when onTimeout is allow, and uses the default 10 s without ?timeout=', async () => {
    let entered = false;
    const s = await serve(
      validatingWebhook({ name: 'slow.example.com', onTimeout: 'allow' }, () => {
        entered = true;
        return new Promise(() => {});
      }),
    );
    const reply = s.review();
    await vi.waitFor(() => expect(entered).toBe(true));
    await s.clock.advance(9_000);
    const body = (await reply).body;
    expect(body.response.allowed).toBe(true);
    expect(body.response.warnings[0]).toContain('onTimeout: allow');
  });

  it('denies a resource it has no handler for, naming it; or admits it with unhandled: allow', async () => {
    const only = { group: 'example.com', resource: 'widgets' };
    const strict = await serve(validatingWebhook({ name: 'v.example.com', resources: [only] }, () => deny('never')));
    const denied = (await strict.review()).body.response;
    expect(denied).toMatchObject({ allowed: false, status: { code: 403, message: 'webhook v.example.com has no handler for v1/configmaps' } });
    const lenient = await serve(validatingWebhook({ name: 'v2.example.com', resources: [only], unhandled: 'allow' }, () => deny('never')));
    expect((await lenient.review()).body.response.allowed).toBe(true);
  });

  it('passes the operation, oldObject, dryRun and userInfo to the handler', async () => {
    const seen: AdmissionRequest[] = [];
    const s = await serve(
      validatingWebhook({ name: 'v.example.com' }, (req) => {
        seen.push(req);
        return allow();
      }),
    );
    const old = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '0' } };
    await s.review({ operation: 'UPDATE', oldObject: old, dryRun: true });
    await s.review({ operation: 'DELETE', object: undefined, oldObject: old });
    await s.review({ operation: 'CONNECT', dryRun: undefined });
    expect(seen[0]).toMatchObject({ operation: 'UPDATE', oldObject: old, dryRun: true, userInfo: { username: 'alice' } });
    expect(seen[1]).toMatchObject({ operation: 'DELETE', oldObject: old, dryRun: false });
    expect(seen[1]!.object).toBeUndefined();
    expect(seen[2]).toMatchObject({ operation: 'CONNECT', dryRun: false });
  });

  it('refuses a webhook without a name or with a bad option at construction', () => {
    expect(() => validatingWebhook({ name: '' }, () => allow())).toThrow(/name/);
    expect(() => validatingWebhook({ name: 'x', unhandled: 'maybe' as never }, () => allow())).toThrow(/unhandled/);
  });
});

describe('mutating webhooks', () => {
  const decode = (patch: string) => JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));

  it('sends the JSON Patch from the object sent to the object returned', async () => {
    const s = await serve(
      mutatingWebhook<ConfigMap>({ name: 'm.example.com' }, (req) => {
        const cm = req.object!;
        cm.metadata.labels = { ...cm.metadata.labels, 'example.com/defaulted': 'true' };
        cm.data = { ...cm.data, b: '2' };
        return cm;
      }),
    );
    const review = admissionReview();
    const reply = await post(s.port, '/hook', review, s.ca);
    const response = reply.body.response;
    expect(response).toMatchObject({ uid: 'uid-1', allowed: true, patchType: 'JSONPatch' });
    const ops = decode(response.patch);
    expect(ops).toEqual([
      { op: 'add', path: '/metadata/labels', value: { 'example.com/defaulted': 'true' } },
      { op: 'add', path: '/data/b', value: '2' },
    ]);
    const object = (review.request as { object: unknown }).object;
    expect(applyJsonPatch(object, ops)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'default', labels: { 'example.com/defaulted': 'true' } },
      data: { a: '1', b: '2' },
    });
  });

  it('takes the copy changed in place when the handler returns nothing or allow(), and sends no patch when nothing changed', async () => {
    const inPlace = await serve(
      mutatingWebhook<ConfigMap>({ name: 'm.example.com' }, (req) => {
        delete req.object!.data;
      }),
    );
    expect(decode((await inPlace.review()).body.response.patch)).toEqual([{ op: 'remove', path: '/data' }]);
    const untouched = await serve(mutatingWebhook({ name: 'm2.example.com' }, () => allow({ warnings: ['looked'] })));
    expect((await untouched.review()).body.response).toEqual({ uid: 'uid-1', allowed: true, warnings: ['looked'] });
  });

  it('sends a denial without a patch', async () => {
    const s = await serve(
      mutatingWebhook<ConfigMap>({ name: 'm.example.com' }, (req) => {
        req.object!.data = {};
        return deny('no');
      }),
    );
    const response = (await s.review()).body.response;
    expect(response).toMatchObject({ allowed: false, status: { code: 403, message: 'no' } });
    expect(response.patch).toBeUndefined();
  });

  it('denies (never a partial patch) when a mutating handler throws', async () => {
    const s = await serve(
      mutatingWebhook<ConfigMap>({ name: 'm.example.com' }, (req) => {
        req.object!.data = {};
        throw new Error('boom');
      }),
      { logger: false },
    );
    const response = (await s.review()).body.response;
    expect(response.allowed).toBe(false);
    expect(response.patch).toBeUndefined();
  });
});
