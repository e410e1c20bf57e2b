import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { openWatch, pod } from './helpers.js';

let server: FakeApiServer;
let clock: FakeClock;
beforeEach(async () => {
  clock = new FakeClock();
  server = await startFakeApiServer({ clock });
});
afterEach(async () => {
  await server.close();
});

const brief = (e: any): string => `${e.type} ${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion}`;

describe('fake API server: WATCH', () => {
  it('streams chunked newline-delimited events, replaying from the asked version', async () => {
    server.create('pods', pod('a'));
    const from = server.resourceVersion();
    server.update('pods', pod('a', 'default', { v: '2' }));
    server.create('pods', pod('b'));
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${from}`);
    expect(w.status).toBe(200);
    expect(w.headers.get('transfer-encoding')).toBe('chunked');
    expect(w.headers.get('content-type')).toBe('application/json');
    const [e1, e2] = await w.take(2);
    expect([e1.type, e1.object.metadata.name, e2.type, e2.object.metadata.name]).toEqual(['MODIFIED', 'a', 'ADDED', 'b']);
    expect(e1.object).toMatchObject({ apiVersion: 'v1', kind: 'Pod' });
    server.delete('pods', 'b');
    const e3 = await w.next();
    expect(e3.type).toBe('DELETED');
    expect(e3.object.metadata.resourceVersion).toBe(server.resourceVersion());
    w.close();
  });

  it('accepts watch=1 and sends synthetic ADDED events for a watch from "" or "0"', async () => {
    server.create('pods', pod('a'));
    server.create('pods', pod('b'));
    const w = await openWatch(`${server.url}/api/v1/namespaces/default/pods?watch=1&resourceVersion=0`);
    expect((await w.take(2)).map(brief)).toEqual(['ADDED a@2', 'ADDED b@3']);
    server.create('pods', pod('c', 'other'));
    server.create('pods', pod('d'));
    expect(brief(await w.next())).toBe('ADDED d@5');
    w.close();
  });

  it('sends an in-stream 410 ERROR Status for a too-old version, then closes', async () => {
    server.create('pods', pod('a'));
    server.create('pods', pod('b'));
    server.compact();
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=2`);
    expect(w.status).toBe(200);
    const events = await w.rest();
    expect(events).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired', message: expect.stringContaining('too old resource version') }),
      },
    ]);
    expect(server.openWatches()).toBe(0);
  });

  it('answers a watch from a future version with the 504 ResourceVersionTooLarge Status', async () => {
    const res = await fetch(`${server.url}/api/v1/pods?watch=true&resourceVersion=50`);
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } });
  });

  it('sends bookmarks on demand only to watches that allowed them', async () => {
    server.create('pods', pod('a'));
    const rv = server.resourceVersion();
    const withB = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    const without = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}`);
    server.bookmark();
    server.create('pods', pod('b'));
    expect(await withB.next()).toEqual({
      type: 'BOOKMARK',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: rv } },
    });
    expect((await without.next()).type).toBe('ADDED');
    withB.close();
    without.close();
  });

  it('sends periodic bookmarks on the injected clock', async () => {
    const periodic = await startFakeApiServer({ clock, bookmarkIntervalMs: 60_000 });
    try {
      const w = await openWatch(`${periodic.url}/api/v1/pods?watch=true&resourceVersion=1&allowWatchBookmarks=true`);
      await clock.advance(60_000);
      expect((await w.next()).type).toBe('BOOKMARK');
      await clock.advance(60_000);
      expect((await w.next()).type).toBe('BOOKMARK');
      w.close();
    } finally {
      await periodic.close();
    }
    expect(clock.pendingTimers()).toBe(0);
  });

  it('closes the stream after timeoutSeconds on the injected clock', async () => {
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=1&timeoutSeconds=30`);
    expect(clock.pendingDelays()).toEqual([30_000]);
    await clock.advance(29_999);
    server.create('pods', pod('a'));
    expect((await w.next()).type).toBe('ADDED');
    await clock.advance(1);
    expect(await w.next()).toBeUndefined();
    expect(server.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('streams initial events, the initial-events-end bookmark, then live events (sendInitialEvents)', async () => {
    server.create('pods', pod('a'));
    server.create('pods', pod('b'));
    const rv = server.resourceVersion();
    const w = await openWatch(
      `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    const [a, b, end] = await w.take(3);
    expect([brief(a), brief(b)]).toEqual(['ADDED a@2', 'ADDED b@3']);
    expect(end).toEqual({
      type: 'BOOKMARK',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
    server.update('pods', pod('a'));
    expect((await w.next()).type).toBe('MODIFIED');
    w.close();
    const bad = await fetch(`${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`);
    expect(bad.status).toBe(400);
    await bad.text();
  });

  it('filters by selectors, turning objects that enter or leave the selection into ADDED or DELETED', async () => {
    server.create('pods', pod('a', 'default', { app: 'web' }));
    server.create('pods', pod('b', 'default', { app: 'db' }));
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=3&labelSelector=app%3Dweb`);
    server.update('pods', pod('b', 'default', { app: 'web' }));
    server.update('pods', pod('a', 'default', { app: 'db' }));
    server.update('pods', pod('a', 'default', { app: 'db', x: 'y' }));
    server.update('pods', pod('b', 'default', { app: 'web', x: 'y' }));
    expect((await w.take(3)).map(brief)).toEqual(['ADDED b@4', 'DELETED a@5', 'MODIFIED b@7']);
    w.close();
  });

  it('watches a single object through its path', async () => {
    server.create('pods', pod('a'));
    server.create('pods', pod('b'));
    const w = await openWatch(`${server.url}/api/v1/namespaces/default/pods/b?watch=true&resourceVersion=3`);
    server.update('pods', pod('a'));
    server.update('pods', pod('b'));
    expect(brief(await w.next())).toBe('MODIFIED b@5');
    w.close();
  });

  it('sends PartialObjectMetadata objects to a metadata-only watch', async () => {
    server.create('pods', pod('a', 'default', { app: 'web' }));
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=0&allowWatchBookmarks=true`, {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    const e = await w.next();
    expect(e).toEqual({
      type: 'ADDED',
      object: { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: expect.objectContaining({ name: 'a' }) },
    });
    server.bookmark();
    expect((await w.next()).object).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' });
    w.close();
  });

  it('does not show events recorded with broadcast off, except to a later replay', async () => {
    server.create('pods', pod('a'));
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=2`);
    server.update('pods', pod('a', 'default', { missed: 'yes' }), { broadcast: false });
    server.create('pods', pod('b'));
    expect(brief(await w.next())).toBe('ADDED b@4');
    w.close();
    const replay = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=2`);
    expect((await replay.take(2)).map(brief)).toEqual(['MODIFIED a@3', 'ADDED b@4']);
    replay.close();
  });

  it('ends every watch cleanly on endWatches and forgets closed clients', async () => {
    const w1 = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=1`);
    const w2 = await openWatch(`${server.url}/apis/coordination.k8s.io/v1/leases?watch=true&resourceVersion=1`);
    expect(server.openWatches()).toBe(2);
    server.endWatches();
    expect(await w1.next()).toBeUndefined();
    expect(await w2.next()).toBeUndefined();
    expect(server.openWatches()).toBe(0);
  });

  it('delivers a large burst of events in order through backpressure', async () => {
    const w = await openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=1`);
    const payload = 'x'.repeat(4000);
    for (let i = 0; i < 3000; i++) server.create('pods', pod(`p${i}`, 'default', {}, { data: payload }));
    const events = await w.take(3000);
    expect(events.map((e) => Number(e.object.metadata.resourceVersion))).toEqual(
      Array.from({ length: 3000 }, (_, i) => i + 2),
    );
    w.close();
  });
});
