// Webhook server tracing (option tracerProvider, or the Manager's): a server span per review with the
// webhook, operation, kind, allowed and patch size; the handler's own spans nest; a handler that throws is
// an ERROR span; a throwing getTracer is refused at construction.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ErrorCodes } from '../../src/core/index.js';
import { Manager } from '../../src/operations/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { WebhookServer, allow, deny, mutatingWebhook, validatingWebhook } from '../../src/webhook/index.js';
import type { TracerProviderLike } from '../../src/observability/index.js';
import { admissionReview, post, startServer } from './helpers.js';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider };
}

describe('webhook server tracing', () => {
  it('a span per review: webhook, operation, kind, namespace, allowed, patch size; the handler span nests; a throw is ERROR', async () => {
    const { exporter, provider } = tracing();
    const s = await startServer(
      (server) => {
        server.register(
          '/mutate',
          mutatingWebhook<{ data?: Record<string, string> }>({ name: 'm.example.com' }, (req) => {
            provider.getTracer('user').startSpan('handler work').end();
            req.object!.data = { a: '1', b: '2' };
          }),
        );
        server.register('/deny', validatingWebhook({ name: 'd.example.com' }, () => deny('no')));
        server.register(
          '/throw',
          validatingWebhook({ name: 't.example.com' }, () => {
            throw new Error('handler broke');
          }),
        );
      },
      { tracerProvider: provider },
    );
    try {
      expect((await post(s.port, '/mutate', admissionReview(), s.ca)).status).toBe(200);
      expect((await post(s.port, '/deny', admissionReview({ operation: 'UPDATE' }), s.ca)).status).toBe(200);
      expect((await post(s.port, '/throw', admissionReview(), s.ca)).status).toBe(200);
    } finally {
      await s.stop();
    }
    const spans = exporter.getFinishedSpans();
    const mutate = spans.find((x) => x.name === 'webhook m.example.com')!;
    expect(mutate.kind).toBe(1); // SERVER
    expect(mutate.attributes).toMatchObject({
      'kube_informer.webhook': 'm.example.com',
      'kube_informer.webhook.operation': 'CREATE',
      'kube_informer.webhook.kind': 'ConfigMap',
      'k8s.namespace.name': 'default',
      'kube_informer.webhook.allowed': true,
    });
    expect(mutate.attributes['kube_informer.webhook.patch_bytes']).toBeGreaterThan(0);
    expect(spans.find((x) => x.name === 'handler work')!.parentSpanContext?.spanId).toBe(mutate.spanContext().spanId);
    const denied = spans.find((x) => x.name === 'webhook d.example.com')!;
    expect(denied.attributes).toMatchObject({ 'kube_informer.webhook.allowed': false, 'kube_informer.webhook.operation': 'UPDATE' });
    expect(denied.status.code).toBe(0);
    const thrown = spans.find((x) => x.name === 'webhook t.example.com')!;
    expect(thrown.attributes).toMatchObject({ 'kube_informer.webhook.allowed': false, 'kube_informer.webhook.status_code': 500 });
    expect(thrown.status.code).toBe(2);
  });

  it("the Manager's tracerProvider reaches its webhook server (which has none of its own); a throwing getTracer is INVALID_OPTION", async () => {
    const { exporter, provider } = tracing();
    const api = await startFakeApiServer({ logger: false });
    const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, logger: false });
    server.register('/allow', validatingWebhook({ name: 'a.example.com' }, () => allow()));
    const factory = new SharedInformerFactory(api.kubeConfig, { logger: false });
    const manager = new Manager(factory, { webhookServer: server, tracerProvider: provider, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      while (!server.ready()) await new Promise((r) => setImmediate(r));
      const ca = Buffer.from(server.caBundle()!, 'base64').toString('utf8');
      expect((await post(server.port()!, '/allow', admissionReview(), ca)).status).toBe(200);
    } finally {
      stop.abort();
      await running;
      await api.close();
    }
    expect(exporter.getFinishedSpans().map((x) => x.name)).toEqual(['webhook a.example.com']);

    const broken: TracerProviderLike = {
      getTracer: () => {
        throw new Error('no tracer');
      },
    };
    expect(() => new WebhookServer({ tls: { selfSigned: true }, tracerProvider: broken })).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
    expect(() => new Manager(factory, { tracerProvider: broken })).toThrow(/Manager: option tracerProvider: its getTracer\('kube-informer'\) threw: no tracer/);
  });
});
