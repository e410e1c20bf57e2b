// The API error tests (isNotFound, isConflict …) on every error shape the library and client-node produce.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiException } from '@kubernetes/client-node';
import { ApiStatusError, KubeInformerError, ErrorCodes, AbortedError, retryAfterMs } from '../../src/core/index.js';
import { apiStatusOf, isAlreadyExists, isConflict, isForbidden, isGone, isInvalid, isNotFound, isTooManyRequests } from '../../src/objects.js';
import { ApplyConflictError, NetworkError } from '../../src/listwatch/index.js';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/core/types.js';

const status = (code: number, reason?: string) => new ApiStatusError(code, `HTTP ${code}`, { reason, status: { kind: 'Status', code, reason } });
const all = { isNotFound, isConflict, isAlreadyExists, isInvalid, isForbidden, isGone, isTooManyRequests };
const which = (err: unknown) => Object.entries(all).filter(([, f]) => f(err)).map(([n]) => n);

describe('API error tests', () => {
  it.each([
    [status(404, 'NotFound'), ['isNotFound']],
    [status(404), ['isNotFound']],
    [status(409, 'Conflict'), ['isConflict']],
    [status(409, 'AlreadyExists'), ['isAlreadyExists']],
    [status(409), ['isConflict']],
    [status(422, 'Invalid'), ['isInvalid']],
    [status(403, 'Forbidden'), ['isForbidden']],
    [status(410, 'Expired'), ['isGone']],
    [status(410, 'Gone'), ['isGone']],
    [status(429, 'TooManyRequests'), ['isTooManyRequests']],
    [status(500, 'InternalError'), []],
    // The reason decides, as in apimachinery: a 404 that says MethodNotAllowed is not a NotFound.
    [status(404, 'MethodNotAllowed'), []],
  ])('an ApiStatusError %s is exactly %j', (err, expected) => {
    expect(which(err)).toEqual(expected);
  });

  it('reads an ApplyConflictError, a wrapped error’s cause chain, client-node’s ApiException and a Status object', () => {
    const conflict = new ApplyConflictError(409, 'apply conflict', [{ manager: 'a', field: '.data.k', message: 'conflict with "a"' }], { reason: 'Conflict' });
    expect(which(conflict)).toEqual(['isConflict']);
    const wrapped = new KubeInformerError(ErrorCodes.FINALIZER_PATCH_FAILED, 'finalizer patch failed', { cause: status(404, 'NotFound') });
    expect(isNotFound(wrapped)).toBe(true);
    const clientNode = new ApiException(409, 'conflict', JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', code: 409 }), {});
    expect(which(clientNode)).toEqual(['isAlreadyExists']);
    expect(which(new ApiException(404, 'not found', '', {}))).toEqual(['isNotFound']);
    expect(which({ kind: 'Status', code: 410, reason: 'Expired' })).toEqual(['isGone']);
    expect(apiStatusOf(wrapped)).toEqual({ code: 404, reason: 'NotFound' });
  });

  it('is false for failures that never reached the server, and for non-errors', () => {
    for (const err of [new NetworkError('ECONNREFUSED'), new AbortedError(), new Error('boom'), undefined, null, 'NotFound', 404]) {
      expect(which(err)).toEqual([]);
      expect(apiStatusOf(err)).toBeUndefined();
    }
  });
});

describe('API error tests on the answers of a ResourceClient (fake API server)', () => {
  let server: FakeApiServer;
  let client: ResourceClient<KubeObject>;
  beforeEach(async () => {
    server = await startFakeApiServer();
    client = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps);
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('NotFound, AlreadyExists, Conflict, Forbidden, TooManyRequests, Gone', async () => {
    const failed = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
    expect(which(await failed(client.get('x', 'default')))).toEqual(['isNotFound']);
    const created = await client.create({ metadata: { name: 'c', namespace: 'default' } });
    expect(which(await failed(client.create({ metadata: { name: 'c', namespace: 'default' } })))).toEqual(['isAlreadyExists']);
    await client.update({ ...created, data: { a: '1' } } as KubeObject);
    expect(which(await failed(client.update({ ...created, data: { a: '2' } } as KubeObject)))).toEqual(['isConflict']);
    server.injectFault({ type: 'status', code: 403 });
    expect(which(await failed(client.get('c', 'default')))).toEqual(['isForbidden']);
    server.injectFault({ type: 'status', code: 429, retryAfterSeconds: 2 });
    expect(which(await failed(client.get('c', 'default')))).toEqual(['isTooManyRequests']);
    server.injectFault({ type: 'status', code: 410 });
    expect(which(await failed(client.list({ namespace: 'default', limit: 1, continue: 'stale' })))).toEqual(['isGone']);
  });
});

describe('retryAfterMs', () => {
  it("reads the server's Retry-After off the error, its cause chain or an AggregateError's errors (3 deep), in ms; 0 when none", () => {
    const asked = new ApiStatusError(429, 'HTTP 429', { retryAfterSeconds: 3 });
    expect(retryAfterMs(asked)).toBe(3_000);
    expect(retryAfterMs(new Error('reconcile failed', { cause: asked }))).toBe(3_000);
    expect(retryAfterMs(new AggregateError([new Error('a'), asked]))).toBe(3_000);
    expect(retryAfterMs(new Error('1', { cause: new Error('2', { cause: new Error('3', { cause: asked }) }) }))).toBe(0);
    expect(retryAfterMs(new ApiStatusError(429, 'HTTP 429'))).toBe(0);
    expect(retryAfterMs(new ApiStatusError(503, 'HTTP 503', { retryAfterSeconds: 0 }))).toBe(0);
    expect(retryAfterMs('boom')).toBe(0);
  });
});
