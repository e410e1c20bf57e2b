import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { getJson, openWatch, pod, tcpHandlesAfterSettling } from './helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
  for (const n of ['a', 'b', 'c']) server.create('pods', pod(n));
});
afterEach(async () => {
  await server.close();
});

const WATCH = (rv = '1') => `/api/v1/pods?watch=true&resourceVersion=${rv}`;

describe('fake API server: scripted faults', () => {
  it('answers 500, 429 with Retry-After, 403 and 404 Status once each, then serves normally', async () => {
    server.injectFault({ verb: 'list', type: 'status', code: 500 });
    server.injectFault({ verb: 'list', type: 'status', code: 429, retryAfterSeconds: 7 });
    server.injectFault({ verb: 'list', type: 'status', code: 403 });
    server.injectFault({ verb: 'list', type: 'status', code: 404, message: 'gone fishing' });
    const url = `${server.url}/api/v1/pods`;
    const r500 = await getJson(url);
    expect([r500.status, r500.body.reason]).toEqual([500, 'InternalError']);
    const r429 = await getJson(url);
    expect([r429.status, r429.headers.get('retry-after'), r429.body.details.retryAfterSeconds]).toEqual([429, '7', 7]);
    expect((await getJson(url)).body).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    expect((await getJson(url)).body).toMatchObject({ code: 404, reason: 'NotFound', message: 'gone fishing' });
    expect((await getJson(url)).status).toBe(200);
    server.assertNoPendingFaults();
  });

  it('matches faults by verb, resource, namespace and path', async () => {
    server.injectFault({ verb: 'update', resource: 'leases', type: 'status', code: 409 });
    server.injectFault({ path: /\/namespaces\/other\//, type: 'status', code: 503 });
    expect((await getJson(`${server.url}/api/v1/pods`)).status).toBe(200);
    expect((await getJson(`${server.url}/api/v1/namespaces/other/pods`)).status).toBe(503);
    expect(server.pendingFaults()).toHaveLength(1);
    expect(() => server.assertNoPendingFaults()).toThrow(expect.objectContaining({ code: 'PENDING_FAULTS', message: expect.stringContaining('status 409') }));
  });

  it('ends a watch mid-stream after N events', async () => {
    server.injectFault({ type: 'endWatch', afterEvents: 2 });
    const w = await openWatch(`${server.url}${WATCH()}`);
    expect((await w.rest()).map((e) => e.object.metadata.name)).toEqual(['a', 'b']);
    expect(server.openWatches()).toBe(0);
  });

  it('drops a watch connection abruptly', async () => {
    server.injectFault({ type: 'endWatch', afterEvents: 1, abrupt: true });
    const w = await openWatch(`${server.url}${WATCH()}`);
    expect(await w.rest()).toHaveLength(1);
    expect(server.openWatches()).toBe(0);
  });

  it('stalls a watch after its headers (half-open) until the client gives up', async () => {
    server.injectFault({ type: 'stall', verb: 'watch', sendHeaders: true });
    const w = await openWatch(`${server.url}${WATCH()}`);
    expect(w.status).toBe(200);
    const first = w.nextLine();
    server.create('pods', pod('d'));
    let settled = false;
    void first.then(() => (settled = true));
    await new Promise<void>((r) => setImmediate(r));
    expect(settled).toBe(false);
    w.close();
    expect(await first).toBeUndefined();
  });

  it('stalls a list without sending anything; close() still releases it', async () => {
    server.injectFault({ type: 'stall', verb: 'list' });
    const pending = fetch(`${server.url}/api/v1/pods`).then(
      () => 'answered',
      () => 'failed',
    );
    for (let i = 0; i < 50 && server.requests().length === 0; i++) await new Promise<void>((r) => setImmediate(r));
    expect(server.requests()).toHaveLength(1);
    await server.close();
    expect(await pending).toBe('failed');
  });

  it('sends a malformed line, a duplicate event, a non-event and an unknown event type where scripted', async () => {
    server.injectFault({
      type: 'sequence',
      steps: [
        { type: 'duplicateEvent', afterEvents: 1 },
        { type: 'malformedLine', afterEvents: 2 },
        { type: 'notAnEvent', afterEvents: 2 },
        { type: 'unknownEventType', afterEvents: 3 },
        { type: 'endWatch', afterEvents: 3 },
      ],
    });
    const w = await openWatch(`${server.url}${WATCH()}`);
    const lines: string[] = [];
    for (let l = await w.nextLine(); l !== undefined; l = await w.nextLine()) lines.push(l);
    expect(lines).toHaveLength(7);
    expect(lines[1]).toBe(lines[0]);
    expect(() => JSON.parse(lines[3])).toThrow();
    expect(JSON.parse(lines[4])).not.toHaveProperty('type');
    expect(JSON.parse(lines[6])).toMatchObject({ type: 'SURPRISE', object: { metadata: { name: 'c' } } });
    server.assertNoPendingFaults();
  });

  it('sends a DELETED event carrying a regressed resourceVersion (kubernetes #58545)', async () => {
    server.injectFault({ type: 'regressedEvent', afterEvents: 3 });
    const w = await openWatch(`${server.url}${WATCH()}`);
    const events = await w.take(4);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`)).toEqual([
      'ADDED a@2',
      'ADDED b@3',
      'ADDED c@4',
      'DELETED c@3',
    ]);
    w.close();
  });

  it('lets a test choose the regressed event and consumes faults in order, one per request', async () => {
    server.injectFault({ type: 'regressedEvent', eventType: 'MODIFIED', resourceVersion: '1', object: pod('x') });
    server.injectFault({ type: 'endWatch', afterEvents: 0 });
    const first = await openWatch(`${server.url}${WATCH('4')}`);
    expect(await first.next()).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'x', resourceVersion: '1' } } });
    first.close();
    const second = await openWatch(`${server.url}${WATCH('4')}`);
    expect(await second.rest()).toEqual([]);
    server.assertNoPendingFaults();
  });
});

describe('fake API server: lifecycle', () => {
  it('restarts on the same port with its state, dropping open watches', async () => {
    const port = server.port;
    const w = await openWatch(`${server.url}${WATCH('4')}`);
    await server.restart();
    expect(await w.next()).toBeUndefined();
    expect(server.port).toBe(port);
    const list = await getJson(`${server.url}/api/v1/pods`);
    expect(list.body.items).toHaveLength(3);
    expect(list.body.metadata.resourceVersion).toBe('4');
  });

  it('close() destroys every socket and clears every timer before it resolves', async () => {
    const clock = new FakeClock();
    const s = await startFakeApiServer({ clock, bookmarkIntervalMs: 1000 });
    const w1 = await openWatch(`${s.url}${WATCH()}&allowWatchBookmarks=true&timeoutSeconds=60`);
    s.injectFault({ type: 'stall', sendHeaders: true });
    const w2 = await openWatch(`${s.url}${WATCH()}`);
    expect(clock.pendingTimers()).toBe(2);
    await s.close();
    expect(clock.pendingTimers()).toBe(0);
    expect(s.openWatches()).toBe(0);
    expect(s.state.listenerCount()).toBe(0);
    expect(await w1.next()).toBeUndefined();
    expect(await w2.next()).toBeUndefined();
    await server.close();
    expect(await tcpHandlesAfterSettling()).toEqual([]);
  });

  it('close() leaves no socket, server or real timer behind (process.getActiveResourcesInfo)', async () => {
    await server.close();
    await tcpHandlesAfterSettling();
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const s = await startFakeApiServer({ bookmarkIntervalMs: 60_000 });
    const url = `${s.url}${WATCH()}&allowWatchBookmarks=true&timeoutSeconds=3600`;
    await new Promise<void>((resolve) => {
      http.get(url, (res) => {
        res.on('data', () => {});
        res.on('error', () => {});
        resolve();
      });
    });
    // The bookmark and timeout timers are live (Node 22 may count timers sharing a duration as one).
    expect(timers()).toBeGreaterThan(before);
    expect(process.getActiveResourcesInfo()).toContain('TCPServerWrap');
    await s.close();
    expect(process.getActiveResourcesInfo()).not.toContain('TCPServerWrap');
    expect(await tcpHandlesAfterSettling()).toEqual([]);
    // Under load a timer counted in `before` (an earlier test's) may have fired meanwhile: none is added.
    expect(timers()).toBeLessThanOrEqual(before);
  });
});
