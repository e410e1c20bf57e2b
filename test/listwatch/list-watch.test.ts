import { describe, expect, it } from 'vitest';
import { ApiStatusError, ErrorCodes, isExpiredError } from '../../src/core/index.js';
import {
  KubeConfigError,
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  NetworkError,
  ResponseDecodeError,
  WatchDecodeError,
  newListWatch,
  type KubeListWatch,
  type WatchEvent,
} from '../../src/listwatch/index.js';
import {
  beginWatch,
  collect,
  eventLine,
  kubeConfigFor,
  pod,
  refusedPort,
  type TestServer,
  useCleanups,
} from './helpers.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const { cleanups, serve } = useCleanups();



function listWatch<T = unknown>(
  server: TestServer | string,
  gvr = PODS,
  options: Parameters<typeof newListWatch>[2] = {},
): KubeListWatch<T> {
  const url = typeof server === 'string' ? server : server.url;
  const lw = newListWatch<T>(kubeConfigFor(url, { token: 'secret-token' }), gvr, options);
  cleanups.push(() => lw.close());
  return lw;
}

function podList(items: unknown[], meta: Record<string, unknown> = { resourceVersion: '10' }): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: meta, items });
}

const signal = (): AbortSignal => new AbortController().signal;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

describe('newListWatch list', () => {
  it('lists a page with the bearer token, the query and the default Accept header', async () => {
    const server = await serve((_req, res) => res.end(podList([{ metadata: { name: 'a', resourceVersion: '9' } }])));
    const lw = listWatch(server, PODS, { namespace: 'team-a', labelSelector: 'app=web' });
    const list = await lw.list({ resourceVersion: '0', resourceVersionMatch: 'NotOlderThan', limit: 50 }, signal());
    expect(list.metadata.resourceVersion).toBe('10');
    const seen = server.requests[0];
    expect(seen.method).toBe('GET');
    expect(seen.path).toBe('/api/v1/namespaces/team-a/pods');
    expect(Object.fromEntries(seen.query)).toEqual({
      resourceVersion: '0',
      resourceVersionMatch: 'NotOlderThan',
      limit: '50',
      labelSelector: 'app=web',
    });
    expect(seen.headers.authorization).toBe('Bearer secret-token');
    expect(seen.headers.accept).toBe('application/json');
    expect(seen.headers['user-agent']).toBe('kube-informer');
  });

  it('fills apiVersion and kind on list items from the list', async () => {
    const server = await serve((_req, res) =>
      res.end(
        JSON.stringify({
          apiVersion: 'stable.example.com/v1',
          kind: 'CronTabList',
          metadata: { resourceVersion: '3' },
          items: [{ metadata: { name: 'a' } }, { apiVersion: 'keep/v2', kind: 'Kept', metadata: { name: 'b' } }],
        }),
      ),
    );
    const lw = listWatch(server, { group: 'stable.example.com', version: 'v1', resource: 'crontabs' });
    const list = await lw.list({}, signal());
    expect(server.requests[0].path).toBe('/apis/stable.example.com/v1/crontabs');
    expect(list.items).toEqual([
      { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'a' } },
      { apiVersion: 'keep/v2', kind: 'Kept', metadata: { name: 'b' } },
    ]);
  });

  it('pages with limit and continue, one page per call', async () => {
    const server = await serve((req, res) => {
      const cont = new URL(req.url ?? '', 'http://x').searchParams.get('continue');
      if (cont === null) res.end(podList([pod('a', '1')], { resourceVersion: '5', continue: 'page2', remainingItemCount: 1 }));
      else res.end(podList([pod('b', '2')], { resourceVersion: '5' }));
    });
    const lw = listWatch(server);
    const first = await lw.list({ limit: 1 }, signal());
    expect(first.metadata).toEqual({ resourceVersion: '5', continue: 'page2', remainingItemCount: 1 });
    const second = await lw.list({ limit: 1, continue: first.metadata.continue }, signal());
    expect(second.items.map((p) => (p as { metadata: { name: string } }).metadata.name)).toEqual(['b']);
    expect(server.requests[1].query.get('continue')).toBe('page2');
  });

  it('reuses one keep-alive connection for consecutive requests', async () => {
    const server = await serve((_req, res) => res.end(podList([])));
    const lw = listWatch(server);
    for (let i = 0; i < 5; i++) await lw.list({}, signal());
    expect(server.connections()).toBe(1);
    expect(server.requests.map((r) => r.connection)).toEqual([1, 1, 1, 1, 1]);
  });

  it('keeps the base path of the server URL and sends metadata-only Accept headers', async () => {
    const server = await serve((req, res) => {
      if (new URL(req.url ?? '', 'http://x').searchParams.get('watch') === 'true') {
        beginWatch(res);
        res.end(eventLine('ADDED', { kind: 'PartialObjectMetadata', metadata: { name: 'n1' } }));
      } else res.end(JSON.stringify({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', metadata: {}, items: [{ metadata: { name: 'n1' } }] }));
    });
    const lw = listWatch(`${server.url}/k8s/clusters/c-1/`, { group: '', version: 'v1', resource: 'nodes' }, { metadataOnly: true });
    const list = await lw.list({}, signal());
    expect(list.items[0]).toEqual({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'n1' } });
    const events = await collect(await lw.watch({}, signal()));
    expect(events).toHaveLength(1);
    expect(server.requests.map((r) => [r.path, r.headers.accept])).toEqual([
      ['/k8s/clusters/c-1/api/v1/nodes', METADATA_LIST_ACCEPT],
      ['/k8s/clusters/c-1/api/v1/nodes', METADATA_WATCH_ACCEPT],
    ]);
  });

  it('rejects a 200 whose body is not a list with ResponseDecodeError', async () => {
    let body = 'not json';
    const server = await serve((_req, res) => res.end(body));
    const lw = listWatch(server);
    const err = await rejection(lw.list({}, signal()));
    expect(err).toBeInstanceOf(ResponseDecodeError);
    expect((err as ResponseDecodeError).failure).toBe('malformed-json');
    body = '{"kind":"PodList"}';
    expect(await rejection(lw.list({}, signal()))).toMatchObject({ code: ErrorCodes.WATCH_DECODE, failure: 'not-a-list' });
  });
});

describe('newListWatch HTTP errors', () => {
  const status = (code: number, reason: string, message: string): string =>
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

  it('turns a 410 into an ApiStatusError with code EXPIRED, on list and on watch', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(410, { 'Content-Type': 'application/json' });
      res.end(status(410, 'Expired', 'too old resource version: 1 (5)'));
    });
    const lw = listWatch(server);
    for (const call of [() => lw.list({ resourceVersion: '1' }, signal()), () => lw.watch({ resourceVersion: '1' }, signal())]) {
      const err = (await rejection(call())) as ApiStatusError;
      expect(err).toBeInstanceOf(ApiStatusError);
      expect(err.code).toBe(ErrorCodes.EXPIRED);
      expect(err.statusCode).toBe(410);
      expect(err.reason).toBe('Expired');
      expect(err.message).toContain('too old resource version: 1 (5)');
      expect(isExpiredError(err)).toBe(true);
    }
  });

  it('turns a 500 with a non-JSON body into an ApiStatusError showing the text', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end('upstream exploded');
    });
    const err = (await rejection(listWatch(server).watch({}, signal()))) as ApiStatusError;
    expect(err).toMatchObject({ code: ErrorCodes.API_STATUS, statusCode: 500, reason: undefined });
    expect(err.message).toContain('upstream exploded');
  });

  it('reads Retry-After of a 429 into retryAfterSeconds', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '7' });
      res.end(status(429, 'TooManyRequests', 'slow down'));
    });
    const err = (await rejection(listWatch(server).list({}, signal()))) as ApiStatusError;
    expect(err).toMatchObject({ statusCode: 429, reason: 'TooManyRequests', retryAfterSeconds: 7 });
    expect(err.status).toMatchObject({ kind: 'Status', code: 429 });
  });

  it('rejects with NetworkError (ECONNREFUSED) when nothing listens', async () => {
    const lw = listWatch(`http://127.0.0.1:${await refusedPort()}`);
    for (const call of [() => lw.list({}, signal()), () => lw.watch({}, signal())]) {
      const err = (await rejection(call())) as NetworkError;
      expect(err).toBeInstanceOf(NetworkError);
      expect(err.code).toBe(ErrorCodes.NETWORK);
      expect(err.syscallCode).toBe('ECONNREFUSED');
      expect((err.cause as { code?: string }).code).toBe('ECONNREFUSED');
    }
  });

  it('rejects with KubeConfigError when the KubeConfig has no usable cluster', async () => {
    const kc = kubeConfigFor('http://127.0.0.1:1');
    kc.setCurrentContext('missing');
    const err = await rejection(newListWatch(kc, PODS).list({}, signal()));
    expect(err).toBeInstanceOf(KubeConfigError);
    expect((err as KubeConfigError).code).toBe(ErrorCodes.KUBECONFIG);
    const plain = newListWatch(kubeConfigFor('http://127.0.0.1:1', {}, { skipTLSVerify: false }), PODS);
    expect(await rejection(plain.watch({}, signal()))).toMatchObject({ code: ErrorCodes.KUBECONFIG });
    const badToken = newListWatch(kubeConfigFor('http://127.0.0.1:1', { token: 'line\nbreak' }), PODS);
    expect(await rejection(badToken.list({}, signal()))).toMatchObject({ code: ErrorCodes.KUBECONFIG });
  });
});

describe('newListWatch watch', () => {
  it('sends the watch query and decodes the events until the server ends the stream', async () => {
    const server = await serve((_req, res) => {
      beginWatch(res);
      res.write(eventLine('ADDED', pod('a', '11')) + eventLine('MODIFIED', pod('a', '12')));
      res.end(eventLine('BOOKMARK', { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '13' } }));
    });
    const lw = listWatch(server, { group: 'apps', version: 'v1', resource: 'deployments' }, { fieldSelector: 'metadata.name=a' });
    const stream = await lw.watch(
      { resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' },
      signal(),
    );
    const events = await collect(stream);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'BOOKMARK']);
    expect(server.requests[0].path).toBe('/apis/apps/v1/deployments');
    expect(Object.fromEntries(server.requests[0].query)).toEqual({
      watch: 'true',
      resourceVersion: '10',
      resourceVersionMatch: 'NotOlderThan',
      fieldSelector: 'metadata.name=a',
      timeoutSeconds: '300',
      allowWatchBookmarks: 'true',
      sendInitialEvents: 'true',
    });
  });

  it('decodes a stream written one byte per chunk', async () => {
    const text = eventLine('ADDED', pod('a', '1')) + eventLine('DELETED', pod('a', '2'));
    const server = await serve((_req, res) => {
      beginWatch(res);
      const bytes = Buffer.from(text);
      let i = 0;
      const writeNext = (): void => {
        if (i === bytes.length) {
          res.end();
          return;
        }
        res.write(bytes.subarray(i, ++i), writeNext);
      };
      writeNext();
    });
    const events = await collect(await listWatch(server).watch({}, signal()));
    expect(events).toEqual([
      { type: 'ADDED', object: pod('a', '1') },
      { type: 'DELETED', object: pod('a', '2') },
    ]);
  });

  it('passes ERROR events through to the caller', async () => {
    const expired = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' };
    const server = await serve((_req, res) => {
      beginWatch(res);
      res.end(eventLine('ERROR', expired));
    });
    expect(await collect(await listWatch(server).watch({}, signal()))).toEqual([{ type: 'ERROR', object: expired }]);
  });

  it('throws WatchDecodeError from the iterator on a bad line, after the good events, and closes the socket', async () => {
    const server = await serve((_req, res) => {
      beginWatch(res);
      res.write(`${eventLine('ADDED', pod('a', '1'))}{"kind":"Pod"}\n`); // JSON, but not an event
    });
    const seen: Array<WatchEvent<unknown>> = [];
    const err = await rejection(
      (async () => {
        for await (const ev of await listWatch(server).watch({}, signal())) seen.push(ev);
      })(),
    );
    expect(seen.map((e) => e.type)).toEqual(['ADDED']);
    expect(err).toBeInstanceOf(WatchDecodeError);
    expect(err).toMatchObject({ code: ErrorCodes.WATCH_DECODE, failure: 'not-an-event', preview: '{"kind":"Pod"}' });
    await server.closedConnections(1);
  });

  it('throws WatchDecodeError when the body ends in the middle of a line', async () => {
    const server = await serve((_req, res) => {
      beginWatch(res);
      res.end(eventLine('ADDED', pod('a', '1')).slice(0, 15));
    });
    const err = await rejection(collect(await listWatch(server).watch({}, signal())));
    expect(err).toMatchObject({ code: ErrorCodes.WATCH_DECODE, failure: 'truncated' });
  });

  it('throws NetworkError from the iterator when the connection is reset mid-stream', async () => {
    const server = await serve((req, res) => {
      beginWatch(res);
      res.write(eventLine('ADDED', pod('a', '1')), () => req.socket.destroy());
    });
    const seen: string[] = [];
    const err = await rejection(
      (async () => {
        for await (const ev of await listWatch(server).watch({}, signal())) seen.push(ev.type);
      })(),
    );
    expect(seen).toEqual(['ADDED']);
    expect(err).toBeInstanceOf(NetworkError);
  });

  it('still delivers the events that arrived before a reset the consumer had not read yet', async () => {
    const server = await serve((req, res) => {
      beginWatch(res);
      res.write(eventLine('ADDED', pod('a', '1')) + eventLine('ADDED', pod('b', '2')), () => req.socket.destroy());
    });
    const stream = await listWatch(server).watch({}, signal());
    await server.closedConnections(1);
    // Let the client side see the reset too, before anyone reads.
    for (let i = 0; i < 100 && process.getActiveResourcesInfo().includes('TCPSocketWrap'); i++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    expect(process.getActiveResourcesInfo()).not.toContain('TCPSocketWrap');
    const seen: string[] = [];
    const err = await rejection(
      (async () => {
        for await (const ev of stream) seen.push((ev.object as { metadata: { name: string } }).metadata.name);
      })(),
    );
    expect(seen).toEqual(['a', 'b']);
    expect(err).toMatchObject({ code: ErrorCodes.NETWORK });
  });
});
