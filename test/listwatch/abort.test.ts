import { getEventListeners } from 'node:events';
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { AbortedError, ErrorCodes } from '../../src/core/index.js';
import { newListWatch, type KubeListWatch } from '../../src/listwatch/index.js';
import {
  beginWatch,
  eventLine,
  kubeConfigFor,
  pod,
  startServer,
  type Handler,
  type TestServer,
  useCleanups,
} from './helpers.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const { cleanups } = useCleanups();


async function setup(handler: Handler): Promise<{ server: TestServer; lw: KubeListWatch<unknown> }> {
  const server = await startServer(handler);
  cleanups.push(() => server.close());
  const lw = newListWatch(kubeConfigFor(server.url), PODS);
  cleanups.push(() => lw.close());
  return { server, lw };
}

/** A handler that never answers, calling back once the request arrived. */
function silent(onRequest: () => void): Handler {
  return () => onRequest();
}

function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

describe('aborting a watch or list', () => {
  it('rejects with AbortedError at once when the signal is already aborted, sending nothing', async () => {
    const { server, lw } = await setup((_req, res) => res.end('{}'));
    const controller = new AbortController();
    controller.abort();
    await expect(lw.watch({}, controller.signal)).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
    await expect(lw.list({}, controller.signal)).rejects.toBeInstanceOf(AbortedError);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects with AbortedError and closes the socket when aborted while the server has not answered', async () => {
    let arrived!: () => void;
    const requestSeen = new Promise<void>((resolve) => (arrived = resolve));
    const { server, lw } = await setup(silent(() => arrived()));
    const controller = new AbortController();
    const watching = lw.watch({}, controller.signal);
    await requestSeen;
    controller.abort();
    const err = await watching.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AbortedError);
    expect((err as AbortedError).code).toBe(ErrorCodes.ABORTED);
    await server.closedConnections(1);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('rejects a list with AbortedError when aborted while the body is still arriving', async () => {
    let arrived!: () => void;
    const bodyStarted = new Promise<void>((resolve) => (arrived = resolve));
    const { server, lw } = await setup((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"kind":"PodList","items":[', () => arrived());
    });
    const controller = new AbortController();
    const listing = lw.list({}, controller.signal);
    await bodyStarted;
    controller.abort();
    await expect(listing).rejects.toBeInstanceOf(AbortedError);
    await server.closedConnections(1);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('ends the iteration without an error when aborted mid-stream, and closes the socket', async () => {
    const { server, lw } = await setup((_req, res) => {
      beginWatch(res);
      res.write(eventLine('ADDED', pod('a', '1')));
    });
    const controller = new AbortController();
    const types: string[] = [];
    for await (const ev of await lw.watch({}, controller.signal)) {
      types.push(ev.type);
      controller.abort();
    }
    expect(types).toEqual(['ADDED']);
    await server.closedConnections(1);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('ends a pending next() when aborted while waiting for the next event', async () => {
    const { server, lw } = await setup((_req, res) => {
      beginWatch(res);
      res.write(eventLine('ADDED', pod('a', '1')));
    });
    const controller = new AbortController();
    const it = (await lw.watch({}, controller.signal))[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    const pending = it.next();
    controller.abort();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
    await server.closedConnections(1);
  });

  it('destroys the request when the consumer breaks out of for-await', async () => {
    let serverRes: http.ServerResponse | undefined;
    const { server, lw } = await setup((_req, res) => {
      serverRes = res;
      beginWatch(res);
      res.write(eventLine('ADDED', pod('a', '1')) + eventLine('ADDED', pod('b', '2')));
    });
    const controller = new AbortController();
    for await (const ev of await lw.watch({}, controller.signal)) {
      expect(ev.type).toBe('ADDED');
      break;
    }
    await server.closedConnections(1);
    expect(serverRes?.destroyed).toBe(true);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('releases the abort listener and keeps the connection when a watch ends normally', async () => {
    const { server, lw } = await setup((_req, res) => {
      beginWatch(res);
      res.end(eventLine('ADDED', pod('a', '1')));
    });
    const controller = new AbortController();
    for await (const ev of await lw.watch({}, controller.signal)) expect(ev.type).toBe('ADDED');
    await lw.list({}, controller.signal).catch(() => undefined);
    expect(server.connections()).toBe(1);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('leaves no abort listener behind after a list or a failed watch', async () => {
    const { lw } = await setup((req, res) => {
      if (req.url?.includes('watch=true')) {
        res.writeHead(403, { 'Content-Type': 'application/json' });
        res.end('{"kind":"Status","reason":"Forbidden","code":403}');
      } else res.end('{"kind":"PodList","metadata":{},"items":[]}');
    });
    const controller = new AbortController();
    await lw.list({}, controller.signal);
    await expect(lw.watch({}, controller.signal)).rejects.toMatchObject({ statusCode: 403, reason: 'Forbidden' });
    expect(abortListeners(controller.signal)).toBe(0);
  });
});
