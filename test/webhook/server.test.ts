import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/testing/index.js';
import {
  WebhookServer,
  allow,
  generateSelfSignedCertificates,
  issueServingCertificate,
  prometheusWebhookMetricsProvider,
  validatingWebhook,
  type WebhookMetricsProvider,
} from '../../src/webhook/index.js';
import { parseGoDuration } from '../../src/webhook/server.js';
import { admissionReview, post, startServer } from './helpers.js';

const allowAll = () => validatingWebhook({ name: 'v.example.com' }, () => allow());
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('WebhookServer', () => {
  it('is not ready before it serves, is ready while serving, and not after run resolves', async () => {
    const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, logger: false });
    expect(server.ready()).toBe(false);
    server.register('/validate', allowAll());
    const ac = new AbortController();
    const running = server.run(ac.signal);
    await vi.waitFor(() => expect(server.ready()).toBe(true));
    const ca = Buffer.from(server.caBundle()!, 'base64').toString();
    const reply = await post(server.port()!, '/validate', admissionReview(), ca);
    expect(reply.status).toBe(200);
    expect(reply.body.response).toEqual({ uid: 'uid-1', allowed: true });
    ac.abort();
    await running;
    expect(server.ready()).toBe(false);
  });

  it('rejects run with WEBHOOK_SERVE when the port is in use', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port, logger: false });
      await expect(server.run(new AbortController().signal)).rejects.toMatchObject({ code: 'WEBHOOK_SERVE', message: expect.stringContaining('EADDRINUSE') });
      expect(server.ready()).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it('rejects run with WEBHOOK_SERVE when the certificate files cannot be read', async () => {
    const server = new WebhookServer({ tls: { certFile: '/nonexistent/tls.crt', keyFile: '/nonexistent/tls.key' }, port: 0, logger: false });
    await expect(server.run(new AbortController().signal)).rejects.toMatchObject({ code: 'WEBHOOK_SERVE', message: expect.stringContaining('/nonexistent/tls.crt') });
  });

  it('answers 404 for a path without a webhook and 405 for a GET', async () => {
    const s = await startServer((server) => server.register('/validate', allowAll()));
    try {
      const missing = await post(s.port, '/nope', admissionReview(), s.ca);
      expect(missing.status).toBe(404);
      expect(missing.body.message).toContain('/nope');
    } finally {
      await s.stop();
    }
  });

  it('answers a malformed body with 400 and a message', async () => {
    const s = await startServer((server) => server.register('/validate', allowAll()));
    try {
      const bad = await post(s.port, '/validate', '{"apiVersion": ', s.ca);
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(/not JSON/);
      const notReview = await post(s.port, '/validate', { apiVersion: 'v1', kind: 'Pod' }, s.ca);
      expect(notReview.status).toBe(400);
      expect(notReview.body.message).toContain('AdmissionReview');
      const noUid = await post(s.port, '/validate', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }, s.ca);
      expect(noUid.status).toBe(400);
      expect(noUid.body.message).toContain('uid');
      const text = await post(s.port, '/validate', '{}', s.ca, { 'content-type': 'text/plain' });
      expect(text.status).toBe(400);
      expect(text.body.message).toContain('text/plain');
    } finally {
      await s.stop();
    }
  });

  it('answers an oversized body with 413, declared or streamed', async () => {
    const s = await startServer((server) => server.register('/validate', allowAll()), { maxBodyBytes: 200 });
    try {
      const big = admissionReview({ object: { data: { x: 'y'.repeat(500) } } });
      const declared = await post(s.port, '/validate', big, s.ca);
      expect(declared.status).toBe(413);
      expect(declared.body.message).toContain('200 bytes');
      const streamed = await post(s.port, '/validate', big, s.ca, { 'transfer-encoding': 'chunked' });
      expect(streamed.status).toBe(413);
    } finally {
      await s.stop();
    }
  });

  it('finishes an in-flight review before run resolves (graceful stop)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered = false;
    const s = await startServer((server) =>
      server.register(
        '/slow',
        validatingWebhook({ name: 'slow.example.com' }, async () => {
          entered = true;
          await gate;
          return allow();
        }),
      ),
    );
    const reply = post(s.port, '/slow', admissionReview(), s.ca);
    await vi.waitFor(() => expect(entered).toBe(true));
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(s.server.ready()).toBe(false);
    expect(stopped).toBe(false);
    release();
    expect((await reply).body.response.allowed).toBe(true);
    await stopping;
    expect(stopped).toBe(true);
  });

  it('aborts in-flight reviews after stopGraceMs and still resolves', async () => {
    let seen: AbortSignal | undefined;
    const s = await startServer(
      (server) =>
        server.register(
          '/stuck',
          validatingWebhook({ name: 'stuck.example.com' }, (_req, ctx) => {
            seen = ctx.signal;
            return new Promise(() => {});
          }),
        ),
      { stopGraceMs: 5_000 },
    );
    void post(s.port, '/stuck', admissionReview(), s.ca).catch(() => {});
    await vi.waitFor(() => expect(seen).toBeDefined());
    const stopping = s.stop();
    await s.clock.advance(5_000);
    await stopping;
    expect(seen!.aborted).toBe(true);
  });

  it('serves a certificate rotated on disk (same CA) without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
    dirs.push(dir);
    const ca = generateSelfSignedCertificates({ hosts: ['127.0.0.1'] });
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    writeFileSync(certFile, ca.cert);
    writeFileSync(keyFile, ca.key);
    writeFileSync(join(dir, 'ca.crt'), ca.caCert);
    const clock = new FakeClock();
    const s = await startServer((server) => server.register('/validate', allowAll()), {
      tls: { certFile, keyFile, caFile: join(dir, 'ca.crt'), pollIntervalMs: 10_000 },
      clock,
    });
    try {
      expect(s.server.caBundle()).toBe(ca.caBundle);
      const first = await post(s.port, '/validate', admissionReview(), ca.caCert);
      expect(first.peer.serialNumber).toBe(new X509Certificate(ca.cert).serialNumber);
      const next = issueServingCertificate({ caCert: ca.caCert, caKey: ca.caKey, hosts: ['127.0.0.1'] });
      writeFileSync(keyFile, next.key);
      writeFileSync(certFile, next.cert);
      await clock.advance(10_000);
      await vi.waitFor(async () => {
        const reply = await post(s.port, '/validate', admissionReview(), ca.caCert);
        expect(reply.peer.serialNumber).toBe(new X509Certificate(next.cert).serialNumber);
      });
    } finally {
      await s.stop();
    }
  });

  it('keeps the served certificate when a rotation is half-written (key and certificate do not match) and logs it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
    dirs.push(dir);
    const ca = generateSelfSignedCertificates({ hosts: ['127.0.0.1'] });
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    writeFileSync(certFile, ca.cert);
    writeFileSync(keyFile, ca.key);
    const warn = vi.fn();
    const s = await startServer((server) => server.register('/validate', allowAll()), {
      tls: { certFile, keyFile },
      logger: { debug() {}, info() {}, warn, error() {} },
    });
    try {
      const next = issueServingCertificate({ caCert: ca.caCert, caKey: ca.caKey, hosts: ['127.0.0.1'] });
      writeFileSync(certFile, next.cert); // the key is still the old one
      expect(await s.server.reloadCertificate()).toBe(false);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('keeping the served one'));
      const reply = await post(s.port, '/validate', admissionReview(), ca.caCert);
      expect(reply.peer.serialNumber).toBe(new X509Certificate(ca.cert).serialNumber);
      writeFileSync(keyFile, next.key);
      expect(await s.server.reloadCertificate()).toBe(true);
    } finally {
      await s.stop();
    }
  });

  it('records controller-runtime webhook metrics by path and code', async () => {
    const calls: string[] = [];
    const provider: WebhookMetricsProvider = {
      newRequestsTotalMetric: (w, code) => ({ inc: () => calls.push(`total ${w} ${code}`) }),
      newLatencyMetric: (w) => ({ observe: (v) => calls.push(`latency ${w} ${typeof v}`) }),
      newInFlightMetric: (w) => ({ inc: () => calls.push(`inflight+ ${w}`), dec: () => calls.push(`inflight- ${w}`) }),
    };
    const s = await startServer((server) => server.register('/validate', allowAll()), { metricsProvider: provider });
    try {
      await post(s.port, '/validate', admissionReview(), s.ca);
      await post(s.port, '/validate', 'nope', s.ca);
      expect(calls).toEqual([
        'inflight+ /validate',
        'total /validate 200',
        'latency /validate number',
        'inflight- /validate',
        'inflight+ /validate',
        'total /validate 400',
        'latency /validate number',
        'inflight- /validate',
      ]);
    } finally {
      await s.stop();
    }
  });

  it('registers the metrics under controller-runtime names in prom-client', async () => {
    const registry = new promClient.Registry();
    const s = await startServer((server) => server.register('/validate', allowAll()), {
      metricsProvider: prometheusWebhookMetricsProvider(promClient, { registry }),
    });
    try {
      await post(s.port, '/validate', admissionReview(), s.ca);
      const text = await registry.metrics();
      expect(text).toContain('controller_runtime_webhook_requests_total{webhook="/validate",code="200"} 1');
      expect(text).toContain('controller_runtime_webhook_latency_seconds_count{webhook="/validate"} 1');
      expect(text).toContain('controller_runtime_webhook_requests_in_flight{webhook="/validate"} 0');
    } finally {
      await s.stop();
    }
  });

  it('resolves run when its signal aborts while the server is still starting (no hang, nothing left listening)', async () => {
    const server = new WebhookServer({ tls: { selfSigned: true }, host: '127.0.0.1', port: 0, logger: false });
    const ac = new AbortController();
    const running = server.run(ac.signal);
    ac.abort();
    const outcome = await Promise.race([running.then(() => 'resolved'), new Promise((r) => setTimeout(() => r('hung'), 2_000))]);
    expect(outcome).toBe('resolved');
    expect(server.ready()).toBe(false);
  });

  it('refuses a second run and a path registered twice', async () => {
    const server = new WebhookServer({ tls: { selfSigned: true }, port: 0, host: '127.0.0.1', logger: false });
    server.register('/a', allowAll());
    expect(() => server.register('/a', allowAll())).toThrow(/already registered/);
    const ac = new AbortController();
    ac.abort();
    await server.run(ac.signal);
    await expect(server.run(ac.signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
  });

  it('refuses an unknown option value at construction', () => {
    expect(() => new WebhookServer({ tls: { selfSigned: true }, port: -1 })).toThrow(/INVALID_OPTION|port/);
  });

  it('parses the Go durations the API server sends as ?timeout=', () => {
    expect(parseGoDuration('10s')).toBe(10_000);
    expect(parseGoDuration('1m30s')).toBe(90_000);
    expect(parseGoDuration('500ms')).toBe(500);
    expect(parseGoDuration('abc')).toBeUndefined();
    expect(parseGoDuration('')).toBeUndefined();
  });
});
