// Issue 48: the webhook configurations a server applied, at its stop: kept by default and in a cluster; out of one, deleted (onStop 'delete') or relaxed to failurePolicy Ignore (onStop 'ignore') — only the objects it applied.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { validatingWebhookConfiguration, WebhookServer, type WebhookConfigurationsOptions } from '../../src/webhook/index.js';

const validatingConfigs = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false };
const rules = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
const endpoint = { url: 'https://127.0.0.1:9443' };

let api: FakeApiServer;
beforeEach(async () => {
  api = await startFakeApiServer({ resources: [validatingConfigs], logger: false });
});
afterEach(async () => {
  await api.close();
});

interface Lines {
  info: string[];
  warn: string[];
  error: string[];
}

/** Runs a server with one configuration (two webhooks) until ready, lets `meanwhile` act, stops it; returns its log lines. */
async function runAndStop(configurations: Partial<WebhookConfigurationsOptions>, meanwhile?: () => void): Promise<Lines> {
  const lines: Lines = { info: [], warn: [], error: [] };
  const logger = { debug: () => {}, info: (m: string) => lines.info.push(m), warn: (m: string) => lines.warn.push(m), error: (m: string) => lines.error.push(m) };
  const objects = [
    validatingWebhookConfiguration({
      name: 'widgets',
      endpoint,
      webhooks: [
        { name: 'a.example.com', path: '/a', rules },
        { name: 'b.example.com', path: '/b', rules },
      ],
    }),
  ];
  const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, logger, configurations: { objects, kubeConfig: api.kubeConfig, inCluster: false, ...configurations } });
  const stop = new AbortController();
  const running = server.run(stop.signal);
  expect(await server.whenReady(stop.signal)).toBe(true);
  meanwhile?.();
  stop.abort();
  await running;
  return lines;
}

const stored = (): { metadata: { uid: string }; webhooks: Array<{ failurePolicy?: string }> } | undefined =>
  api.get(validatingConfigs, 'widgets') as { metadata: { uid: string }; webhooks: Array<{ failurePolicy?: string }> } | undefined;

describe('WebhookServer configurations at stop (onStop)', () => {
  it("'delete' out of a cluster: the configuration the server applied is gone once run resolved", async () => {
    const lines = await runAndStop({ onStop: 'delete' });
    expect(stored()).toBeUndefined();
    expect(lines.info).toContain("WebhookServer: deleted ValidatingWebhookConfiguration widgets at stop (onStop 'delete')");
    const del = api.requests().find((r) => r.method === 'DELETE');
    expect(del).toMatchObject({ resource: 'validatingwebhookconfigurations', name: 'widgets' });
  });

  it("'ignore' out of a cluster: every webhook of it has failurePolicy Ignore", async () => {
    await runAndStop({ onStop: 'ignore' });
    expect(stored()?.webhooks.map((w) => w.failurePolicy)).toEqual(['Ignore', 'Ignore']);
  });

  it("'keep' (the default) leaves it as applied: failurePolicy Fail", async () => {
    await runAndStop({});
    expect(stored()?.webhooks.map((w) => w.failurePolicy)).toEqual(['Fail', 'Fail']);
  });

  it("in a cluster, 'delete' keeps it and says why in a log line", async () => {
    const lines = await runAndStop({ onStop: 'delete', inCluster: true });
    expect(stored()).toBeDefined();
    expect(lines.info).toContain(
      "WebhookServer: keeping ValidatingWebhookConfiguration widgets at stop: onStop 'delete' applies out of a cluster only, and this process runs in one (KUBERNETES_SERVICE_HOST is set): another replica, or the next pod, serves them",
    );
  });

  it("'delete' leaves alone an object of the same name that is not the one it applied (another uid), with a warning", async () => {
    let other = '';
    const lines = await runAndStop({ onStop: 'delete' }, () => {
      api.delete(validatingConfigs, 'widgets');
      other = (api.create(validatingConfigs, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'widgets' }, webhooks: [] }) as unknown as { metadata: { uid: string } }).metadata.uid;
    });
    expect(stored()?.metadata.uid).toBe(other);
    expect(lines.warn.join('\n')).toMatch(/^WebhookServer: left ValidatingWebhookConfiguration widgets alone at stop: it is no longer the object this process applied \(uid /);
  });

  it('a refused delete is an error line naming the configuration, and run still resolves', async () => {
    const lines = await runAndStop({ onStop: 'delete' }, () => api.injectFault({ verb: 'delete', resource: 'validatingwebhookconfigurations', type: 'status', code: 403, message: 'forbidden: cannot delete' }));
    expect(stored()).toBeDefined();
    expect(lines.error.join('\n')).toMatch(/^WebhookServer: could not delete ValidatingWebhookConfiguration widgets at stop \(onStop 'delete'\): .*403/);
  });
});

describe('WebhookServer reviews at stop', () => {
  it('a review in flight at the stop is answered; one sent after it on the same kept-alive connection is never run (the connection closes)', async () => {
    const { connect } = await import('node:tls');
    const { startServer, admissionReview } = await import('./helpers.js');
    const { allow, validatingWebhook } = await import('../../src/webhook/index.js');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    let calls = 0;
    const s = await startServer((server) =>
      server.register('/v', validatingWebhook({ name: 'v.example.com' }, async () => {
        calls++;
        started();
        await held;
        return allow();
      })),
    );
    const body = JSON.stringify(admissionReview());
    const request = `POST /v HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = connect({ host: '127.0.0.1', port: s.port, ca: s.ca });
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    socket.write(request);
    await inFlight;
    const stopping = s.stop();
    socket.write(request); // the next review on the kept-alive connection, while the server stops
    release();
    await stopping;
    await closed;
    const statuses = [...received.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
    expect(calls).toBe(1);
    expect(statuses).toEqual([200]);
  });
});
