// The fake API server's PATCH bodies over the one JSON toolkit (issue 47): RFC 6902 in detail, keys named like
// Object.prototype members, equality that ignores key order — each as kube-apiserver (evanphx/json-patch) answers.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { sendJson } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const JSON_PATCH = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const CM = '/api/v1/namespaces/default/configmaps/cm';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);
const stored = (): any => server.get('configmaps', 'cm', 'default');

describe('fake API server: JSON patch and merge patch over the JSON toolkit', () => {
  it('tests an object value whatever the order of its keys', async () => {
    server.create('configmaps', { metadata: { name: 'cm', labels: { a: '1', b: '2' } }, data: {} } as any);
    const res = await send('PATCH', CM, [{ op: 'test', path: '/metadata/labels', value: { b: '2', a: '1' } }, { op: 'add', path: '/data/ok', value: 'y' }], JSON_PATCH);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ok: 'y' });
  });

  it('adds and removes data keys named __proto__, constructor and toString as own members', async () => {
    server.create('configmaps', { metadata: { name: 'cm' }, data: { constructor: 'c' } } as any);
    const res = await send('PATCH', CM, [
      { op: 'add', path: '/data/__proto__', value: 'p' },
      { op: 'add', path: '/data/toString', value: 't' },
      { op: 'remove', path: '/data/constructor' },
    ], JSON_PATCH);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(JSON.parse('{"__proto__":"p","toString":"t"}'));
    expect(Object.keys(stored().data)).toEqual(['__proto__', 'toString']);
    // A member Object.prototype has but the object does not is missing: removing it is 422.
    expect((await send('PATCH', CM, [{ op: 'remove', path: '/data/hasOwnProperty' }], JSON_PATCH)).status).toBe(422);
  });

  it('keeps a merge-patch key named __proto__ as a data key', async () => {
    server.create('configmaps', { metadata: { name: 'cm' }, data: { a: '1' } } as any);
    const res = await send('PATCH', CM, JSON.parse('{"data":{"__proto__":"p"}}'), MERGE);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data)).toEqual(['a', '__proto__']);
    expect(Object.getPrototypeOf(stored().data)).toBe(Object.prototype);
  });

  it('inserts into a list at an index and appends at -', async () => {
    server.create('configmaps', { metadata: { name: 'cm', finalizers: ['a/b', 'c/d'] } } as any);
    const res = await send('PATCH', CM, [
      { op: 'add', path: '/metadata/finalizers/0', value: 'x/first' },
      { op: 'add', path: '/metadata/finalizers/-', value: 'x/last' },
    ], JSON_PATCH);
    expect(res.body.metadata.finalizers).toEqual(['x/first', 'a/b', 'c/d', 'x/last']);
  });

  it('answers 422 for a path that does not exist, naming the operation and the path, and for an unknown op; 400 for a body that is no list', async () => {
    server.create('configmaps', { metadata: { name: 'cm' }, data: {} } as any);
    const missing = await send('PATCH', CM, [{ op: 'add', path: '/data/k', value: 'v' }, { op: 'add', path: '/spec/x/y', value: 1 }], JSON_PATCH);
    expect(missing.status).toBe(422);
    expect(missing.body.message).toContain('operation 1');
    expect(missing.body.message).toContain('/spec/x/y');
    expect((await send('PATCH', CM, { op: 'add' }, JSON_PATCH)).status).toBe(400);
    expect((await send('PATCH', CM, ['add'], JSON_PATCH)).status).toBe(400);
    expect((await send('PATCH', CM, [{ op: 'frobnicate', path: '/data' }], JSON_PATCH)).status).toBe(422);
    expect(stored().data).toEqual({});
  });

  it('reads a patch as kube-apiserver v1.37.2 does: negative and zero-padded indexes, replace of a missing member, add without value', async () => {
    server.create('configmaps', { metadata: { name: 'cm', finalizers: ['a/1', 'b/2', 'c/3'] }, data: {} } as any);
    const res = await send('PATCH', CM, [
      { op: 'remove', path: '/metadata/finalizers/-1' },
      { op: 'remove', path: '/metadata/finalizers/01' },
      { op: 'replace', path: '/data/absent', value: 'r' },
      { op: 'add', path: '/data/novalue' },
    ], JSON_PATCH);
    expect(res.status).toBe(200);
    expect(res.body.metadata.finalizers).toEqual(['a/1']);
    expect(res.body.data.absent).toBe('r');
    expect(Object.keys(res.body.data)).toEqual(['absent', 'novalue']); // kube-apiserver then decodes the null as "" (a string map); the fake keeps null
  });
});

describe('fake API server: field ownership compares values, not their spelling', () => {
  it('gives no field to a manager whose update only reorders the keys inside a list', async () => {
    const created = await send('POST', '/api/v1/namespaces/default/pods?fieldManager=first', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i:1' }] } });
    expect(created.status).toBe(201);
    const body = { ...created.body, spec: { ...created.body.spec, containers: [{ image: 'i:1', name: 'c' }] }, metadata: { ...created.body.metadata, labels: { x: 'y' } } };
    const updated = await send('PUT', '/api/v1/namespaces/default/pods/p?fieldManager=second', body);
    expect(updated.status).toBe(200);
    const second = updated.body.metadata.managedFields.find((e: { manager: string }) => e.manager === 'second');
    expect(second.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:x': {} } } });
  });
});
