import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { generateSelfSignedCertificates, mutatingWebhookConfiguration, validatingWebhookConfiguration, WebhookServer } from '../../src/webhook/index.js';

const admissionregistration = (kind: string) => ({ group: 'admissionregistration.k8s.io', version: 'v1', resource: `${kind.toLowerCase()}s`, kind, namespaced: false });
const validatingConfigs = admissionregistration('ValidatingWebhookConfiguration');
const mutatingConfigs = admissionregistration('MutatingWebhookConfiguration');

let api: FakeApiServer;
beforeEach(async () => {
  // The fake serves no admissionregistration.k8s.io resource of its own: declared here.
  api = await startFakeApiServer({ resources: [validatingConfigs, mutatingConfigs] });
});
afterEach(async () => {
  await api.close();
});

const rules = [{ operations: ['CREATE' as const], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }];
const endpoint = { url: 'https://127.0.0.1:9443' };

describe('WebhookServer configurations: applied at start', () => {
  it('applies them once it listens, before it is ready, with its caBundle where a webhook has none', async () => {
    const validating = validatingWebhookConfiguration({ name: 'widgets', endpoint, webhooks: [{ name: 'v.example.com', path: '/validate', rules }] });
    const mutating = mutatingWebhookConfiguration({ name: 'widgets', endpoint, caBundle: 'T1dO', webhooks: [{ name: 'm.example.com', path: '/mutate', rules }] });
    const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, logger: false, configurations: { objects: [validating, mutating], kubeConfig: api.kubeConfig } });
    const stop = new AbortController();
    const running = server.run(stop.signal);
    running.catch(() => {}); // awaited below; a failure shows there
    expect(await server.whenReady(stop.signal)).toBe(true);
    const v = api.get(validatingConfigs, 'widgets') as any;
    const m = api.get(mutatingConfigs, 'widgets') as any;
    expect(v.webhooks[0]).toMatchObject({ name: 'v.example.com', clientConfig: { url: 'https://127.0.0.1:9443/validate', caBundle: server.caBundle() } });
    expect(m.webhooks[0].clientConfig.caBundle).toBe('T1dO');
    expect(validating.webhooks![0].clientConfig.caBundle).toBeUndefined(); // the caller's object is not changed
    stop.abort();
    await running;
  });

  it('rejects run with WEBHOOK_CONFIG naming the configuration when the API server refuses it, never ready', async () => {
    api.injectFault({ verb: 'patch', resource: 'validatingwebhookconfigurations', type: 'status', code: 403, message: 'forbidden: cannot patch validatingwebhookconfigurations' });
    const validating = validatingWebhookConfiguration({ name: 'widgets', endpoint, webhooks: [{ name: 'v.example.com', path: '/validate', rules }] });
    const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, logger: false, configurations: { objects: [validating], kubeConfig: api.kubeConfig } });
    const stop = new AbortController();
    const running = server.run(stop.signal);
    expect(await server.whenReady(stop.signal)).toBe(false);
    await expect(running).rejects.toMatchObject({ code: 'WEBHOOK_CONFIG', message: expect.stringContaining('cannot apply ValidatingWebhookConfiguration widgets') });
    expect(server.ready()).toBe(false);
  });

  it('a failing part stops the others: run rejects at once, the listener closed and the certificate poller stopped (no timer left)', async () => {
    api.injectFault({ verb: 'patch', resource: 'validatingwebhookconfigurations', type: 'status', code: 403, message: 'forbidden' });
    const dir = mkdtempSync(join(tmpdir(), 'webhook-parts-'));
    try {
      const ca = generateSelfSignedCertificates({ hosts: ['127.0.0.1'] });
      writeFileSync(join(dir, 'tls.crt'), ca.cert);
      writeFileSync(join(dir, 'tls.key'), ca.key);
      // The fake clock never advances: a stop that waited for stopGraceMs or a poll would never end.
      const clock = new FakeClock();
      const validating = validatingWebhookConfiguration({ name: 'widgets', endpoint, webhooks: [{ name: 'v.example.com', path: '/validate', rules }] });
      const server = new WebhookServer({
        tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), pollIntervalMs: 1_000 },
        host: '127.0.0.1',
        port: 0,
        clock,
        logger: false,
        configurations: { objects: [validating], kubeConfig: api.kubeConfig },
      });
      await expect(server.run(new AbortController().signal)).rejects.toMatchObject({ code: 'WEBHOOK_CONFIG' });
      expect(clock.pendingTimers()).toBe(0);
      expect(server.ready()).toBe(false);
      const port = server.port();
      expect(port).toBeGreaterThan(0);
      const refused = await new Promise<string>((resolve) => {
        const socket = connect(port!, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
      expect(refused).toBe('ECONNREFUSED');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what is not a webhook configuration at construction', () => {
    expect(() => new WebhookServer({ tls: { selfSigned: true }, configurations: { objects: [{ kind: 'ConfigMap', metadata: { name: 'x' } } as never], kubeConfig: api.kubeConfig } })).toThrow(
      'configurations.objects[0] must be a ValidatingWebhookConfiguration or MutatingWebhookConfiguration',
    );
    expect(() => new WebhookServer({ tls: { selfSigned: true }, configurations: { objects: [], kubeConfig: api.kubeConfig, forse: true } as never })).toThrow('unknown option forse (did you mean force?)');
  });
});
