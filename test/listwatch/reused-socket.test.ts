// A pooled keep-alive connection the server had closed: a read that fails on it before any answer is sent
// once more on a fresh connection (a relist avoided), and nothing else is retried.
//
// Seen against kube-apiserver: a watcher frozen for 100 s came back to "socket hang up" on re-open and
// paid a full relist (~900 tombstones). The server here closes a reused connection as the request
// arrives, which is what the client sees in that case: an error on a reused socket, no response. For an
// informer on the fake API server, a TCP relay in front of it does the same with a reset (RST).

import diagnosticsChannel from 'node:diagnostics_channel';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { channelNames } from '../../src/observability/channels.js';
import { NetworkError, newListWatch, newResourceClient, resources, SharedIndexInformer } from '../../src/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';
import { beginWatch, collect, eventLine, kubeConfigFor, pod, useCleanups } from './helpers.js';
import type http from 'node:http';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const { cleanups, serve } = useCleanups();
const signal = (): AbortSignal => new AbortController().signal;

/** Which requests (1-based, over the whole run) the server answers by closing their connection; `headers`: after sending 200 headers. */
interface Kill {
  at: Set<number>;
  headers?: boolean;
}

async function closingServer(kill: Kill) {
  let n = 0;
  return serve((req: http.IncomingMessage, res: http.ServerResponse) => {
    n++;
    if (kill.at.has(n)) {
      if (kill.headers === true) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"kind":"PodList","items":[');
        setImmediate(() => req.socket.destroy());
      } else req.socket.destroy();
      return;
    }
    if (new URL(req.url ?? '', 'http://x').searchParams.get('watch') === 'true') {
      beginWatch(res);
      res.end(eventLine('ADDED', pod('a', '11')));
    } else if (req.method === 'POST') {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', resourceVersion: '12' } }));
    } else {
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '10' }, items: [pod('a', '9')] }));
    }
  });
}

/**
 * A TCP relay to `port` that, once armed, resets (RST) the next connection that sends data after its
 * first request: the server side of a pooled connection closing just as the client's next request reaches it.
 */
async function resettingRelay(port: number) {
  const sockets = new Set<net.Socket>();
  const state = { armed: false, resets: 0 };
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  };
  const relay = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    track(client);
    track(upstream);
    let carried = false;
    client.on('data', (chunk: Buffer) => {
      if (carried && state.armed) {
        state.armed = false;
        state.resets++;
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      carried = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    const closed = new Promise<void>((resolve) => relay.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  });
  return { url: `http://127.0.0.1:${(relay.address() as net.AddressInfo).port}`, state };
}

const retries: unknown[] = [];
const onRetry = (m: unknown): void => void retries.push(m);
beforeEach(() => {
  retries.length = 0;
  diagnosticsChannel.subscribe(channelNames.transportRetry, onRetry);
});
afterEach(() => {
  diagnosticsChannel.unsubscribe(channelNames.transportRetry, onRetry);
});

describe('a reused keep-alive connection the server closed', () => {
  it('costs an informer a fresh connection, not a relist (the watch re-opened after a server timeout)', async () => {
    let n = 0;
    const server = await serve((req, res) => {
      n++;
      const watching = new URL(req.url ?? '', 'http://x').searchParams.get('watch') === 'true';
      if (!watching) {
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '10' }, items: [pod('a', '9')] }));
      } else if (n === 2) {
        beginWatch(res);
        res.end(eventLine('MODIFIED', pod('a', '11'))); // the server's watch timeout: a clean end, the connection pooled
      } else if (n === 3) {
        req.socket.destroy(); // the pooled connection had been closed by the server
      } else {
        beginWatch(res);
        res.write(eventLine('MODIFIED', pod('a', '12')));
      }
    });
    // The stub speaks a list and a plain watch (no streaming list): paged.
    const informer = new SharedIndexInformer(newListWatch(kubeConfigFor(server.url, { token: 't' }), PODS), { logger: false, reflector: { useWatchList: false } });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await until(() => (informer.getIndexer().getByKey('default/a') as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion === '12', 'the third watch');
    expect(informer.health().counters).toMatchObject({ lists: 1, relists: 0, watches: 2 });
    expect(server.requests.map((r) => r.query.get('watch') ?? 'list')).toEqual(['list', 'true', 'true', 'true']);
    expect(retries).toHaveLength(1);
  });

  it('a reflector on the fake API server keeps its cache without a relist when its pooled connection is reset', async () => {
    const fake = await startFakeApiServer();
    cleanups.push(() => fake.close());
    fake.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } });
    const relay = await resettingRelay(fake.port);
    const informer = new SharedIndexInformer(newListWatch(kubeConfigFor(relay.url, { token: 'fake-token' }), PODS), { logger: false });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await until(() => informer.hasSynced() && fake.openWatches() === 1, 'the first watch');
    // An event first: a watch that ends without one is "very short", and its re-open waits a backoff.
    fake.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b' } });
    await until(() => informer.getIndexer().getByKey('default/b') !== undefined, 'pod b through the first watch');

    relay.state.armed = true; // the connection the list and the watch used is gone when the watch is re-opened on it
    fake.endWatches(); // the server's watch timeout: a clean end, the connection pooled
    fake.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'c' } });
    await until(() => informer.getIndexer().getByKey('default/c') !== undefined || informer.health().counters.errors > 0, 'pod c, or a failure');

    // Without the retry: the reflector's request failure (errors: 1), then a backoff and a new list-and-watch.
    expect(informer.health().counters).toMatchObject({ lists: 1, relists: 0, watches: 2, errors: 0 });
    expect(relay.state.resets).toBe(1);
    expect(retries).toEqual([expect.objectContaining({ method: 'GET', path: expect.stringMatching(/^\/api\/v1\/pods\?watch=true&/), error: expect.objectContaining({ code: 'ECONNRESET' }) })]);
    // The list was streamed (useWatchList 'auto'): the first watch, then the one re-opened after the reset.
    expect(fake.requests().map((r) => r.verb)).toEqual(['watch', 'watch']);
  });

  it('a list that fails on it before any answer is sent once more, on a fresh connection', async () => {
    const server = await closingServer({ at: new Set([2]) });
    const lw = newListWatch(kubeConfigFor(server.url, { token: 't' }), PODS);
    cleanups.push(() => lw.close());
    await lw.list({}, signal());
    const again = await lw.list({}, signal()); // the pooled connection dies under it
    expect(again.metadata.resourceVersion).toBe('10');
    expect(server.requests.map((r) => r.connection)).toEqual([1, 1, 2]);
    expect(retries).toEqual([expect.objectContaining({ method: 'GET', path: '/api/v1/pods' })]);
  });

  it('so does a watch: it opens on the fresh connection and streams', async () => {
    const server = await closingServer({ at: new Set([2]) });
    const lw = newListWatch(kubeConfigFor(server.url, { token: 't' }), PODS);
    cleanups.push(() => lw.close());
    await lw.list({}, signal());
    const events = await collect(await lw.watch({ resourceVersion: '10' }, signal()));
    expect(events.map((e) => e.type)).toEqual(['ADDED']);
    expect(server.requests.map((r) => r.connection)).toEqual([1, 1, 2]);
    expect(retries).toHaveLength(1);
  });

  it('only once: a second failure is the caller’s NetworkError', async () => {
    const server = await closingServer({ at: new Set([2, 3]) });
    const lw = newListWatch(kubeConfigFor(server.url, { token: 't' }), PODS);
    cleanups.push(() => lw.close());
    await lw.list({}, signal());
    await expect(lw.list({}, signal())).rejects.toBeInstanceOf(NetworkError);
    expect(server.requests).toHaveLength(3);
    expect(retries).toHaveLength(1);
  });

  it('never a write: a POST that fails on a reused connection surfaces as NetworkError', async () => {
    const server = await closingServer({ at: new Set([2]) });
    const client = newResourceClient(kubeConfigFor(server.url, { token: 't' }), resources.configmaps);
    cleanups.push(() => client.close());
    await client.create({ metadata: { name: 'c', namespace: 'ns' } });
    await expect(client.create({ metadata: { name: 'd', namespace: 'ns' } })).rejects.toBeInstanceOf(NetworkError);
    expect(server.requests).toHaveLength(2);
    expect(retries).toEqual([]);
  });

  it('never a fresh connection, nor a response already begun', async () => {
    const fresh = await closingServer({ at: new Set([1]) });
    const lw = newListWatch(kubeConfigFor(fresh.url, { token: 't' }), PODS);
    cleanups.push(() => lw.close());
    await expect(lw.list({}, signal())).rejects.toBeInstanceOf(NetworkError);
    expect(fresh.requests).toHaveLength(1);

    const begun = await closingServer({ at: new Set([2]), headers: true });
    const lw2 = newListWatch(kubeConfigFor(begun.url, { token: 't' }), PODS);
    cleanups.push(() => lw2.close());
    await lw2.list({}, signal());
    await expect(lw2.list({}, signal())).rejects.toThrow();
    expect(begun.requests).toHaveLength(2);
    expect(retries).toEqual([]);
  });
});
