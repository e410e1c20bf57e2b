// The few HTTP requests envtest sends itself: etcd's /health, kube-apiserver's /readyz, the controller manager's /healthz.

import http from 'node:http';
import https from 'node:https';
import { createServer } from 'node:net';

/** Where and how to reach the API server: its URL, the CA that signed its certificate, a bearer token. */
export interface ApiServerEndpoint {
  /** `https://127.0.0.1:<port>`. */
  readonly server: string;
  /** PEM of the CA bundle to verify the serving certificate with. */
  readonly ca: string;
  /** The bearer token of a `system:masters` user. */
  readonly token: string;
}

/** An answer: HTTP status and body text. A network failure is `status: 0` with the error message. */
export interface HttpAnswer {
  /** The HTTP status, or 0 when no answer arrived (refused, reset, TLS). */
  readonly status: number;
  /** The body, or the network error's message when `status` is 0. */
  readonly body: string;
}

/**
 * Sends one request and resolves with the answer; never rejects (a failure is `status: 0`), so a
 * readiness poll just asks again. `idleMs` bounds a request the server accepted but never answers.
 */
export function request(
  url: string,
  init: { method?: string; body?: unknown; endpoint?: ApiServerEndpoint; signal?: AbortSignal | undefined; idleMs?: number; insecure?: boolean } = {},
): Promise<HttpAnswer> {
  const target = new URL(url);
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (init.endpoint) headers.authorization = `Bearer ${init.endpoint.token}`;
  return new Promise<HttpAnswer>((resolve) => {
    const options: https.RequestOptions = { method: init.method ?? 'GET', headers, signal: init.signal, timeout: init.idleMs ?? 10_000, agent: false };
    if (init.endpoint) options.ca = init.endpoint.ca;
    // Only for kube-controller-manager's /healthz: its certificate is self-signed and the answer is all we read.
    if (init.insecure) options.rejectUnauthorized = false;
    const req = (target.protocol === 'https:' ? https : http).request(target, options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', (err) => resolve({ status: 0, body: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${target.host} within ${init.idleMs ?? 10_000} ms`)));
    req.on('error', (err) => resolve({ status: 0, body: err.message }));
    req.end(body);
  });
}

/** `count` distinct free loopback ports, held open together while picked so none repeats. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    await Promise.all(servers.map((s) => new Promise<void>((resolve, reject) => s.once('error', reject).listen(0, '127.0.0.1', resolve))));
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))));
  }
}

/** True when nothing listens on `port` at 127.0.0.1 (we could bind it just now). */
export async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (ok) await new Promise<void>((resolve) => server.close(() => resolve()));
  return ok;
}
