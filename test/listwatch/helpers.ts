// Test helpers for the listwatch room: a tiny scripted HTTP(S) server, KubeConfigs for it, leak checks.

import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, expect } from 'vitest';

/** What the server saw of one request. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** Which connection carried it (1, 2, ... in accept order). */
  connection: number;
  /** The TLS peer certificate's subject CN, when the client sent one. */
  peerCN?: string;
}

/** A running test server. */
export interface TestServer {
  url: string;
  port: number;
  requests: SeenRequest[];
  /** Connections accepted so far. */
  connections(): number;
  /** Resolves once the server saw `count` connections close. */
  closedConnections(count: number): Promise<void>;
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest) => void;

/** Starts a server on 127.0.0.1; `tls` makes it HTTPS. */
export async function startServer(
  handler: Handler,
  tls?: https.ServerOptions,
): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const connectionIds = new WeakMap<Socket, number>();
  let accepted = 0;
  let closed = 0;
  const closeWaiters: Array<{ count: number; resolve: () => void }> = [];
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    const socket = req.socket as Socket & { getPeerCertificate?: () => { subject?: { CN?: string } } };
    const seen: SeenRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      connection: connectionIds.get(socket) ?? 0,
      peerCN: socket.getPeerCertificate?.()?.subject?.CN,
    };
    requests.push(seen);
    handler(req, res, seen);
  };
  const server = tls === undefined ? http.createServer(onRequest) : https.createServer(tls, onRequest);
  server.on(tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => {
    connectionIds.set(socket, ++accepted);
    socket.on('close', () => {
      closed++;
      for (const w of closeWaiters.filter((x) => closed >= x.count)) {
        closeWaiters.splice(closeWaiters.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    port,
    requests,
    connections: () => accepted,
    closedConnections: (count) =>
      closed >= count ? Promise.resolve() : new Promise((resolve) => closeWaiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Options of {@link kubeConfigFor}. */
export interface TestUser {
  token?: string;
  username?: string;
  password?: string;
  certData?: string;
  keyData?: string;
  exec?: unknown;
}

/** A KubeConfig whose current context points at `server` with `user`. */
export function kubeConfigFor(
  server: string,
  user: TestUser = {},
  cluster: { skipTLSVerify?: boolean; caData?: string } = { skipTLSVerify: true },
): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server, skipTLSVerify: cluster.skipTLSVerify ?? false, caData: cluster.caData }],
    users: [{ name: 'tester', ...user }],
    contexts: [{ name: 'test', cluster: 'test', user: 'tester' }],
    currentContext: 'test',
  });
  return kc;
}

/** A port nothing listens on (a server was bound to it and closed). */
export async function refusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const NETWORK_RESOURCES = new Set(['TCPSocketWrap', 'TCPServerWrap', 'TLSWrap', 'TCPWRAP', 'GetAddrInfoReqWrap']);

function openNetworkResources(): string[] {
  return process.getActiveResourcesInfo().filter((r) => NETWORK_RESOURCES.has(r));
}

/**
 * Asserts that no socket or server is left: handles close a loop turn or two after `destroy()`, so this
 * lets up to 50 turns pass (no timers) before failing.
 */
export async function expectNothingOpen(): Promise<void> {
  for (let i = 0; i < 50 && openNetworkResources().length > 0; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  expect(openNetworkResources()).toEqual([]);
}

/**
 * The per-file cleanup list: registers an `afterEach` that runs what the tests pushed (newest first)
 * and then asserts that no socket or server is left open. Call once at the top of a test file.
 */
export function useCleanups(): { cleanups: Array<() => unknown>; serve(handler: Handler): Promise<TestServer> } {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await expectNothingOpen();
  });
  return {
    cleanups,
    async serve(handler) {
      const server = await startServer(handler);
      cleanups.push(() => server.close());
      return server;
    },
  };
}

/** Writes a watch event line. */
export function eventLine(type: string, object: unknown): string {
  return `${JSON.stringify({ type, object })}\n`;
}

/** A pod-like object. */
export function pod(name: string, rv: string, namespace = 'default'): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, resourceVersion: rv } };
}

/** Starts a chunked 200 watch response. */
export function beginWatch(res: http.ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
}

/** Collects every event of an iterable. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
