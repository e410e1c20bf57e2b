// The manager runs a webhook server: first (informers start once it serves), /readyz gated on it, stopped last with its in-flight reviews finished, its failure stopping the manager.

import { createServer, type Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SharedInformerFactory, resources } from '../../src/index.js';
import { Manager, type ManagedWebhookServer } from '../../src/operations/index.js';
import { FakeClock, flushPromises, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { allow, validatingWebhook, WebhookServer } from '../../src/webhook/index.js';
import { until } from '../examples/helpers.js';
import { admissionReview, post } from '../webhook/helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer();
});
afterEach(async () => {
  await server.close();
});

function newFactory(): SharedInformerFactory {
  const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
  factory.forResource(resources.configmaps);
  return factory;
}

const caOf = (w: WebhookServer): string => Buffer.from(w.caBundle()!, 'base64').toString('utf8');

describe('Manager with a webhook server', () => {
  it('starts the informers only once the webhook server serves, and /readyz is not ready until it does', async () => {
    let ready = false;
    let serve!: () => void;
    const served = new Promise<void>((r) => (serve = r));
    const order: string[] = [];
    const webhooks: ManagedWebhookServer = {
      ready: () => ready,
      whenReady: async () => {
        order.push('waiting for the webhook server');
        await served;
        return true;
      },
      run: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    };
    const factory = newFactory();
    const runInformers = factory.run.bind(factory);
    factory.run = (signal) => (order.push('informers'), runInformers(signal));
    const manager = new Manager(factory, { webhookServer: webhooks, probes: { port: 0, host: '127.0.0.1' }, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => order.length > 0, 'the manager to wait for the webhook server');
    await flushPromises();
    expect(order).toEqual(['waiting for the webhook server']);
    const notReady = await fetch(`${manager.probeUrl}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({ ok: false, webhookServer: { ready: false } });
    ready = true;
    serve();
    await until(() => manager.phase === 'running', 'the caches to sync');
    expect(order).toEqual(['waiting for the webhook server', 'informers']);
    const ok = await fetch(`${manager.probeUrl}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, webhookServer: { ready: true } });
    ready = false; // a webhook server that stops serving makes the process not ready
    expect((await fetch(`${manager.probeUrl}/readyz`)).status).toBe(503);
    stop.abort();
    await running;
  });

  it('stops the webhook server last: a review in flight when the stop begins is answered after the informers stopped', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered = false;
    const webhooks = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, clock: new FakeClock(), logger: false });
    webhooks.register(
      '/hold',
      validatingWebhook({ name: 'hold.example.com' }, async () => {
        entered = true;
        await held;
        return allow();
      }),
    );
    const manager = new Manager(newFactory(), { webhookServer: webhooks, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => manager.phase === 'running', 'the caches to sync');
    expect(webhooks.ready()).toBe(true);
    const reply = post(webhooks.port()!, '/hold', admissionReview(), caOf(webhooks));
    await until(() => entered, 'the review to reach the handler');
    stop.abort();
    await until(() => server.openWatches() === 0, 'the informers to stop');
    expect(webhooks.ready()).toBe(false); // stopping: not ready, no new connection
    let finished = false;
    void running.then(() => (finished = true));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r)); // I/O turns for a wrong stop to close the server
    expect(finished).toBe(false); // the manager waits for the review
    release();
    expect((await reply).body.response).toEqual({ uid: 'uid-1', allowed: true });
    await running;
    expect(manager.phase).toBe('stopped');
  });

  it('rejects run when the webhook server cannot serve (port taken), starting no informer', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const webhooks = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port, logger: false });
      const manager = new Manager(newFactory(), { webhookServer: webhooks, logger: false });
      await expect(manager.run(new AbortController().signal)).rejects.toMatchObject({ code: 'WEBHOOK_SERVE', message: expect.stringContaining(`cannot listen on 127.0.0.1:${port}`) });
      expect(server.openWatches()).toBe(0);
      expect(manager.phase).toBe('stopped');
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it('refuses a webhookServer that is not one', () => {
    expect(() => new Manager(newFactory(), { webhookServer: { run: async () => {} } as never })).toThrow('Manager: option webhookServer must be a WebhookServer (run, ready, whenReady)');
  });
});
