// The fake API server stores nothing for a write that changes nothing, as kube-apiserver: same resourceVersion, no watch event.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { openWatch, sendJson } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

const CMS = '/api/v1/namespaces/default/configmaps';
const send = (method: string, path: string, body?: unknown, contentType?: string) => sendJson(server.url, method, path, body, contentType);

describe('fake API server: a write that changes nothing (kube-apiserver v1.37.2)', () => {
  it('keeps the resourceVersion and sends no event for a no-op PUT, merge patch or JSON patch; a real change still does', async () => {
    const created = (await send('POST', CMS, { metadata: { name: 'c', labels: { a: 'b' } }, data: { k: 'v' } })).body;
    const rv = created.metadata.resourceVersion as string;
    const watch = await openWatch(`${server.url}${CMS}?watch=true&resourceVersion=${rv}`);
    try {
      expect((await send('PUT', `${CMS}/c`, created)).body.metadata.resourceVersion).toBe(rv);
      expect((await send('PATCH', `${CMS}/c`, { data: { k: 'v' } }, 'application/merge-patch+json')).body.metadata.resourceVersion).toBe(rv);
      expect((await send('PATCH', `${CMS}/c`, [{ op: 'replace', path: '/data/k', value: 'v' }], 'application/json-patch+json')).body.metadata.resourceVersion).toBe(rv);
      expect(server.resourceVersion()).toBe(rv);
      const changed = await send('PATCH', `${CMS}/c`, { data: { k: 'w' } }, 'application/merge-patch+json');
      expect(changed.body.metadata.resourceVersion).not.toBe(rv);
      expect(await watch.next()).toMatchObject({ type: 'MODIFIED', object: { data: { k: 'w' } } });
    } finally {
      watch.close();
    }
  });

  it('still checks a stale resourceVersion on a no-op PUT (409)', async () => {
    const created = (await send('POST', CMS, { metadata: { name: 'c' }, data: { k: 'v' } })).body;
    await send('PATCH', `${CMS}/c`, { data: { k: 'w' } }, 'application/merge-patch+json');
    expect((await send('PUT', `${CMS}/c`, { ...created, data: { k: 'w' } })).status).toBe(409);
  });
});
