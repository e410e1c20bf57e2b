// Test helpers for the webhook room: an HTTPS client that trusts a given CA, and AdmissionReview builders.

import { request } from 'node:https';
import type { PeerCertificate } from 'node:tls';
import { FakeClock } from '../../src/testing/index.js';
import { WebhookServer, type WebhookServerOptions } from '../../src/webhook/index.js';

/** The answer of {@link post}. */
export interface Reply {
  status: number;
  body: any;
  peer: PeerCertificate;
}

/** POSTs `body` (an object → JSON, a string as is) to the server on 127.0.0.1, trusting `caPem`. */
export function post(port: number, path: string, body: unknown, caPem: string, headers: Record<string, string> = {}): Promise<Reply> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca: caPem, agent: false, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = raw;
          try {
            parsed = JSON.parse(raw);
          } catch {
            /* keep the text */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, peer: (res.socket as import('node:tls').TLSSocket).getPeerCertificate() });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** An AdmissionReview for a ConfigMap. */
export function admissionReview(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'uid-1',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'cm',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, data: { a: '1' } },
      dryRun: false,
      ...overrides,
    },
  };
}

/** A started server with a self-signed CA on a free loopback port; `stop()` aborts and awaits `run`. */
export async function startServer(setup: (server: WebhookServer) => void, options: Partial<WebhookServerOptions> = {}) {
  const clock = options.clock ?? new FakeClock();
  const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, logger: false, clock, ...options });
  setup(server);
  const ac = new AbortController();
  const running = server.run(ac.signal);
  while (!server.ready()) {
    await Promise.race([running, new Promise((r) => setImmediate(r))]);
  }
  const ca = server.caBundle() === undefined ? '' : Buffer.from(server.caBundle()!, 'base64').toString('utf8');
  return {
    server,
    clock: clock as FakeClock,
    port: server.port()!,
    ca,
    running,
    stop: async () => {
      ac.abort();
      await running;
    },
  };
}
