import { describe, expect, it } from 'vitest';
import { AbortedError, ApiStatusError, ErrorCodes, type KubeObject } from '../../src/core/index.js';
import {
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  NetworkError,
  WatchDecodeError,
  newListWatch,
  type KubeListWatch,
  type WatchEvent,
} from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { useCleanups } from './helpers.js';

// The adapter against the test kit's fake API server, over real HTTP.

const PODS = { group: '', version: 'v1', resource: 'pods' };
const { cleanups } = useCleanups();


async function setup(
  options: Parameters<typeof newListWatch>[2] = {},
): Promise<{ server: FakeApiServer; lw: KubeListWatch<KubeObject> }> {
  const server = await startFakeApiServer();
  cleanups.push(() => server.close());
  const lw = newListWatch<KubeObject>(server.kubeConfig, PODS, options);
  cleanups.push(() => lw.close());
  return { server, lw };
}

function mkPod(name: string, namespace = 'default', labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels } };
}

const signal = (): AbortSignal => new AbortController().signal;

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => expect.fail('expected a failure'),
    (err: unknown) => err,
  );
}

/** Reads `count` events from an open watch, then stops it. */
async function take(stream: AsyncIterable<WatchEvent<KubeObject>>, count: number): Promise<Array<WatchEvent<KubeObject>>> {
  const out: Array<WatchEvent<KubeObject>> = [];
  if (count === 0) return out;
  for await (const ev of stream) {
    out.push(ev);
    if (out.length === count) break;
  }
  return out;
}

describe('newListWatch against the fake API server', () => {
  it('lists pages and then watches the changes made after the list', async () => {
    const { server, lw } = await setup();
    for (const n of ['a', 'b', 'c']) server.create(PODS, mkPod(n));
    const first = await lw.list({ limit: 2 }, signal());
    expect(first.items.map((p) => p.metadata?.name)).toEqual(['a', 'b']);
    expect(first.items[0]).toMatchObject({ apiVersion: 'v1', kind: 'Pod' });
    const second = await lw.list({ limit: 2, continue: first.metadata.continue }, signal());
    expect(second.items.map((p) => p.metadata?.name)).toEqual(['c']);

    const controller = new AbortController();
    const stream = await lw.watch({ resourceVersion: first.metadata.resourceVersion, allowWatchBookmarks: true }, controller.signal);
    server.update(PODS, { ...mkPod('a'), spec: { nodeName: 'n1' } } as KubeObject);
    server.delete(PODS, 'b');
    const events = await take(stream, 2);
    expect(events.map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ['MODIFIED', 'a'],
      ['DELETED', 'b'],
    ]);
    const watchReq = server.requests().find((r) => r.verb === 'watch');
    expect(watchReq?.query).toMatchObject({ watch: 'true', allowWatchBookmarks: 'true' });
    expect(watchReq?.authorization).toBe('Bearer fake-token');
  });

  it('sends the metadata-only Accept headers', async () => {
    const { server, lw } = await setup({ metadataOnly: true, namespace: 'default' });
    server.create(PODS, mkPod('a'));
    const list = await lw.list({}, signal());
    expect(list.items[0]?.metadata?.name).toBe('a');
    await take(await lw.watch({ resourceVersion: list.metadata.resourceVersion }, signal()), 0);
    const accepts = server.requests().map((r) => r.accept);
    expect(accepts).toEqual([METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT]);
  });

  it('reports scripted 410 and 429 answers as ApiStatusError', async () => {
    const { server, lw } = await setup();
    server.injectFault({ verb: 'watch', type: 'status', code: 410, reason: 'Expired', message: 'too old' });
    server.injectFault({ verb: 'list', type: 'status', code: 429, retryAfterSeconds: 3 });
    const expired = (await failure(() => lw.watch({ resourceVersion: '1' }, signal()))) as ApiStatusError;
    expect(expired).toMatchObject({ code: ErrorCodes.EXPIRED, statusCode: 410, reason: 'Expired' });
    const busy = (await failure(() => lw.list({}, signal()))) as ApiStatusError;
    expect(busy).toMatchObject({ code: ErrorCodes.API_STATUS, statusCode: 429, retryAfterSeconds: 3 });
    server.assertNoPendingFaults();
  });

  it('rejects with AbortedError when aborted while the server stalls the watch', async () => {
    const { server, lw } = await setup();
    server.injectFault({ verb: 'watch', type: 'stall' });
    const controller = new AbortController();
    const watching = lw.watch({}, controller.signal);
    for (let i = 0; i < 50 && server.pendingFaults().length > 0; i++) await new Promise((r) => setImmediate(r));
    controller.abort();
    expect(await failure(() => watching)).toBeInstanceOf(AbortedError);
  });

  it.each([
    ['malformedLine', 'malformed-json'],
    ['notAnEvent', 'not-an-event'],
    ['unknownEventType', 'unknown-type'],
  ] as const)('throws WatchDecodeError for a %s fault after the good events', async (type, failureKind) => {
    const { server, lw } = await setup();
    server.injectFault({ verb: 'watch', type, afterEvents: 1 });
    const stream = await lw.watch({ resourceVersion: server.resourceVersion() }, signal());
    server.create(PODS, mkPod('a'));
    server.create(PODS, mkPod('b'));
    const seen: string[] = [];
    const err = await failure(async () => {
      for await (const ev of stream) seen.push(`${ev.type}:${ev.object.metadata?.name}`);
    });
    expect(seen).toEqual(['ADDED:a']);
    expect(err).toBeInstanceOf(WatchDecodeError);
    expect((err as WatchDecodeError).failure).toBe(failureKind);
  });

  it('throws NetworkError when the server drops the watch connection, and ends cleanly on a clean end', async () => {
    const { server, lw } = await setup();
    server.injectFault({ verb: 'watch', type: 'endWatch', afterEvents: 2, abrupt: true });
    const abrupt = await lw.watch({ resourceVersion: server.resourceVersion() }, signal());
    server.create(PODS, mkPod('a'));
    const seen: string[] = [];
    const err = await failure(async () => {
      for await (const ev of abrupt) {
        seen.push(`${ev.type}:${ev.object.metadata?.name}`);
        if (seen.length === 1) server.create(PODS, mkPod('b'));
      }
    });
    // The event written in the same tick as the drop may or may not leave the server first.
    expect(seen[0]).toBe('ADDED:a');
    expect(err).toBeInstanceOf(NetworkError);

    const clean = await lw.watch({ resourceVersion: server.resourceVersion() }, signal());
    server.endWatches();
    const events: string[] = [];
    for await (const ev of clean) events.push(ev.type);
    expect(events).toEqual([]);
  });
});
