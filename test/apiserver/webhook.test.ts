// The webhook server on a real kube-apiserver: it calls our validating, mutating and conversion webhooks over HTTPS on the loopback (clientConfig.url + the generated caBundle).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes, X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApiServer, type RealApiServer } from './harness.js';
import {
  type AdmissionRule,
  WebhookServer,
  allow,
  conversionWebhook,
  crdConversion,
  defaultingWebhook,
  deny,
  generateSelfSignedCertificates,
  issueServingCertificate,
  mutatingWebhook,
  mutatingWebhookConfiguration,
  validatingWebhook,
  validatingWebhookConfiguration,
  validationWebhook,
} from '../../src/webhook/index.js';
import { defineCustomResource, Type } from '../../src/crd/index.js';
import { SharedInformerFactory } from '../../src/index.js';
import { Manager } from '../../src/operations/index.js';
import { createServer } from 'node:net';

// Gadgets: the definition the webhooks enforce, and the older one the cluster's CRD was installed from
// (no defaults, no limits — an upgrade in progress), so what the server does not check reaches the webhooks.
const gadgetSpec = {
  size: Type.Integer({ minimum: 1, default: 1 }),
  min: Type.Optional(Type.Integer()),
  max: Type.Optional(Type.Integer()),
  owner: Type.Optional(Type.String()),
};
const gadgets = defineCustomResource({ group: 'example.com', names: { kind: 'Gadget' }, versions: { v1: { spec: Type.Object(gadgetSpec) } } });
const gadgetsBefore = defineCustomResource({
  group: 'example.com',
  names: { kind: 'Gadget' },
  versions: { v1: { spec: Type.Object({ ...gadgetSpec, size: Type.Optional(Type.Integer()) }) } },
});
const defaultGadgets = defaultingWebhook(gadgets, (req) => {
  req.object!.spec.owner ??= req.userInfo.username;
});
const validateGadgets = validationWebhook(gadgets, (req) => {
  const { min, max } = req.object!.spec;
  return min !== undefined && max !== undefined && min > max ? [{ field: 'spec.min', type: 'FieldValueInvalid', message: `must not exceed spec.max (${max})` }] : [];
});

type ConfigMap = { metadata: { name: string; labels?: Record<string, string> }; data?: Record<string, string> };

function api(server: RealApiServer, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(new URL(path, server.server), { method, ca: server.ca, headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = raw;
        try {
          parsed = raw ? JSON.parse(raw) : undefined;
        } catch {
          /* a text body (e.g. "404 page not found" before a CRD is served) */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('webhooks on a real kube-apiserver', () => {
  let kube: RealApiServer;
  let webhooks: WebhookServer;
  let stop: AbortController;
  let running: Promise<void>;
  const dir = mkdtempSync(join(tmpdir(), 'ki-webhook-'));
  const pki = generateSelfSignedCertificates({ hosts: ['127.0.0.1'] });
  const ns = `ki-webhook-${randomBytes(3).toString('hex')}`;
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');

  beforeAll(async () => {
    writeFileSync(certFile, pki.cert);
    writeFileSync(keyFile, pki.key);
    webhooks = new WebhookServer({ tls: { certFile, keyFile, pollIntervalMs: 200 }, host: '127.0.0.1', port: 0, logger: false });
    webhooks.register(
      '/validate',
      validatingWebhook<ConfigMap>({ name: 'vcm.example.com' }, (req) =>
        req.object?.data?.forbidden !== undefined ? deny('forbidden data', { fieldErrors: [{ field: 'data.forbidden', type: 'FieldValueInvalid', message: 'must not be set' }] }) : allow(),
      ),
    );
    webhooks.register(
      '/slow',
      validatingWebhook({ name: 'slow.example.com' }, () => new Promise(() => {})),
    );
    webhooks.register(
      '/mutate',
      mutatingWebhook<ConfigMap>({ name: 'mcm.example.com' }, (req) => {
        req.object!.metadata.labels = { ...req.object!.metadata.labels, 'example.com/defaulted': 'yes' };
      }),
    );
    webhooks.register('/default-gadgets', defaultGadgets);
    webhooks.register('/validate-gadgets', validateGadgets);
    webhooks.register(
      '/convert',
      conversionWebhook<{ v1: any; v2: any }, 'v2'>({
        name: 'widgets.example.com',
        group: 'example.com',
        hub: 'v2',
        spokes: { v1: { toHub: (o) => ({ ...o, spec: { dimensions: { size: o.spec.size } } }), fromHub: (h) => ({ ...h, spec: { size: h.spec.dimensions.size } }) } },
      }),
    );
    stop = new AbortController();
    running = webhooks.run(stop.signal);
    while (!webhooks.ready()) await Promise.race([running, new Promise((r) => setTimeout(r, 10))]);
    kube = await startRealApiServer();
    const url = `https://127.0.0.1:${webhooks.port()}`;
    const rules: AdmissionRule[] = [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
    const inNs = { matchLabels: { 'kubernetes.io/metadata.name': ns } };
    expect((await api(kube, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
    const validating = validatingWebhookConfiguration({
      name: `${ns}-validating`,
      endpoint: { url },
      caBundle: pki.caBundle,
      webhooks: [
        { name: 'vcm.example.com', path: '/validate', rules, namespaceSelector: inNs, objectSelector: { matchExpressions: [{ key: 'down', operator: 'DoesNotExist' }] } },
        // A handler that never answers, under Ignore: only the server's own answer before the deadline can refuse.
        { name: 'slow.example.com', path: '/slow', rules, namespaceSelector: inNs, objectSelector: { matchLabels: { slow: 'yes' } }, failurePolicy: 'Ignore', timeoutSeconds: 2 },
        // Nothing listens on port 1: the webhook is down.
        { name: 'down-fail.example.com', path: '/x', rules, namespaceSelector: inNs, objectSelector: { matchLabels: { down: 'fail' } }, failurePolicy: 'Fail', timeoutSeconds: 2 },
        { name: 'down-ignore.example.com', path: '/x', rules, namespaceSelector: inNs, objectSelector: { matchLabels: { down: 'ignore' } }, failurePolicy: 'Ignore', timeoutSeconds: 2 },
      ],
    });
    for (const w of validating.webhooks!.filter((w) => w.name.startsWith('down-'))) w.clientConfig.url = 'https://127.0.0.1:1/x';
    const mutating = mutatingWebhookConfiguration({
      name: `${ns}-mutating`,
      endpoint: { url },
      caBundle: pki.caBundle,
      webhooks: [{ name: 'mcm.example.com', path: '/mutate', rules, namespaceSelector: inNs, objectSelector: { matchLabels: { mutate: 'yes' } } }],
    });
    expect((await api(kube, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', validating)).status).toBe(201);
    expect((await api(kube, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', mutating)).status).toBe(201);
    // Configurations take effect asynchronously: wait until a denial comes back.
    await until('the validating webhook to be called', async () => {
      const r = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'probe' }, data: { forbidden: 'x' } });
      return r.status === 422 ? r : undefined;
    });
  });

  afterAll(async () => {
    stop?.abort();
    await running?.catch(() => {});
    await kube?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a denial reaches the client with its message and field errors', async () => {
    const r = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'bad' }, data: { forbidden: 'x' } });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('admission webhook "vcm.example.com" denied the request: forbidden data: data.forbidden: must not be set');
    expect(r.body.details.causes).toEqual([{ field: 'data.forbidden', message: 'must not be set', reason: 'FieldValueInvalid' }]);
    const ok = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'good' }, data: { fine: 'x' } });
    expect(ok.status).toBe(201);
  });

  it('a mutation is stored', async () => {
    const r = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'mutated', labels: { mutate: 'yes' } } });
    expect(r.status).toBe(201);
    const stored = await api(kube, 'GET', `/api/v1/namespaces/${ns}/configmaps/mutated`);
    expect(stored.body.metadata.labels).toEqual({ mutate: 'yes', 'example.com/defaulted': 'yes' });
  });

  it('with the webhook down, failurePolicy Fail rejects naming the webhook and Ignore admits', async () => {
    const failed = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'down-fail', labels: { down: 'fail' } } });
    expect(failed.status).toBe(500);
    expect(failed.body.message).toContain('failed calling webhook "down-fail.example.com"');
    const ignored = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'down-ignore', labels: { down: 'ignore' } } });
    expect(ignored.status).toBe(201);
  });

  it('answers a handler slower than timeoutSeconds itself, before the API server gives up (onTimeout: deny)', async () => {
    const r = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'slow', labels: { slow: 'yes' } } });
    // The API server sent ?timeout=2s: the server answered at 2 s - 1 s margin with its denial (code 504),
    // which is why the write is refused although the policy is Ignore.
    expect(r.status).toBe(504);
    expect(r.body.message).toBe('admission webhook "slow.example.com" denied the request: webhook slow.example.com did not answer within 1000 ms');
  });

  it('serves a certificate rotated on disk (same CA) without a restart, and the API server trusts it', async () => {
    const before = new X509Certificate(pki.cert).serialNumber;
    const next = issueServingCertificate({ caCert: pki.caCert, caKey: pki.caKey, hosts: ['127.0.0.1'] });
    writeFileSync(keyFile, next.key);
    writeFileSync(certFile, next.cert);
    const served = await until('the new certificate to be served', async () => {
      const serial = await peerSerial(webhooks.port()!, pki.caCert);
      return serial !== before ? serial : undefined;
    });
    expect(served).toBe(new X509Certificate(next.cert).serialNumber);
    // Node closes idle keep-alive connections after 5 s: the API server's next call makes a new handshake.
    await new Promise((r) => setTimeout(r, 6_000));
    const r = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'after-rotation' }, data: { forbidden: 'x' } });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('admission webhook "vcm.example.com" denied the request');
  });

  it('a v1 custom resource is read at v2 through the conversion webhook, and back; a storage-version change migrates', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        scope: 'Namespaced',
        versions: ['v1', 'v2'].map((name) => ({
          name,
          served: true,
          storage: name === 'v1',
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
        })),
        conversion: crdConversion({ endpoint: { url: `https://127.0.0.1:${webhooks.port()}` }, path: '/convert', caBundle: pki.caBundle }),
      },
    };
    expect((await api(kube, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    const base = `/apis/example.com/%s/namespaces/${ns}/widgets`;
    await until('the CRD to be served', async () => ((await api(kube, 'GET', base.replace('%s', 'v2'))).status === 200 ? true : undefined));
    const created = await api(kube, 'POST', base.replace('%s', 'v1'), { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } });
    expect(created.status).toBe(201);
    const atV2 = await api(kube, 'GET', `${base.replace('%s', 'v2')}/w1`);
    expect(atV2.status).toBe(200);
    expect(atV2.body).toMatchObject({ apiVersion: 'example.com/v2', spec: { dimensions: { size: 3 } } });
    const viaV2 = await api(kube, 'POST', base.replace('%s', 'v2'), { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'w2' }, spec: { dimensions: { size: 7 } } });
    expect(viaV2.status).toBe(201);
    const atV1 = await api(kube, 'GET', `${base.replace('%s', 'v1')}/w2`);
    expect(atV1.body).toMatchObject({ apiVersion: 'example.com/v1', spec: { size: 7 } });

    // A storage-version change migrates: store v2, rewrite every object (a no-op update re-encodes it at
    // the new storage version, as kube-storage-version-migrator does), then drop v1 from storedVersions.
    expect(await storedApiVersion(kube, ns, 'w1')).toBe('example.com/v1');
    const current = (await api(kube, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com')).body;
    for (const v of current.spec.versions) v.storage = v.name === 'v2';
    expect((await api(kube, 'PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', current)).status).toBe(200);
    let lastList: unknown;
    await until('v2 to be the storage version', async () => {
      const list = (await api(kube, 'GET', base.replace('%s', 'v2'))).body;
      lastList = list;
      if (!Array.isArray(list?.items)) return undefined; // the CRD's handler reloads after the update
      for (const item of list.items) await api(kube, 'PUT', `${base.replace('%s', 'v2')}/${item.metadata.name}`, item);
      const stored = await Promise.all(['w1', 'w2'].map((n) => storedApiVersion(kube, ns, n)));
      return stored.every((v) => v === 'example.com/v2') ? true : undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; last list: ${JSON.stringify(lastList).slice(0, 500)}`);
    });
    const crdNow = (await api(kube, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com')).body;
    crdNow.status.storedVersions = ['v2'];
    expect((await api(kube, 'PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com/status', crdNow)).status).toBe(200);
    expect((await api(kube, 'GET', `${base.replace('%s', 'v1')}/w1`)).body).toMatchObject({ apiVersion: 'example.com/v1', spec: { size: 3 } });
  });

  it("defaults and validates a custom resource from its definition's schema: a defaulted field appears, an invalid object is denied with its field errors", async () => {
    expect((await api(kube, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', gadgetsBefore.crd)).status).toBe(201);
    const url = `https://127.0.0.1:${webhooks.port()}`;
    const inNs = { matchLabels: { 'kubernetes.io/metadata.name': ns } };
    const validating = validatingWebhookConfiguration({ name: `${ns}-gadgets`, endpoint: { url }, caBundle: pki.caBundle, webhooks: [{ name: validateGadgets.name, path: '/validate-gadgets', rules: validateGadgets.rules, namespaceSelector: inNs }] });
    const mutating = mutatingWebhookConfiguration({ name: `${ns}-gadgets`, endpoint: { url }, caBundle: pki.caBundle, webhooks: [{ name: defaultGadgets.name, path: '/default-gadgets', rules: defaultGadgets.rules, namespaceSelector: inNs }] });
    expect((await api(kube, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', validating)).status).toBe(201);
    expect((await api(kube, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', mutating)).status).toBe(201);
    const base = `/apis/example.com/v1/namespaces/${ns}/gadgets`;
    const gadget = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name }, spec });
    await until('the gadget webhooks to be called', async () => {
      const r = await api(kube, 'POST', `${base}?dryRun=All`, gadget('probe', { size: 0 }));
      return r.status === 422 && String(r.body?.message).startsWith('admission webhook') ? r : undefined;
    });

    const invalid = await api(kube, 'POST', base, gadget('g0', { size: 0 }));
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toBe(
      'admission webhook "validate.gadgets.example.com" denied the request: Gadget "g0" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
    );
    expect(invalid.body.details.causes).toEqual([{ field: 'spec.size', reason: 'FieldValueInvalid', message: 'Invalid value: 0: spec.size in body should be greater than or equal to 1' }]);
    const crossed = await api(kube, 'POST', base, gadget('g-crossed', { min: 3, max: 2 }));
    expect(crossed.status).toBe(422);
    expect(crossed.body.details.causes).toEqual([{ field: 'spec.min', reason: 'FieldValueInvalid', message: 'must not exceed spec.max (2)' }]);

    // The CRD on the server has no default for size: it appears through the defaulting webhook, with the typed defaulter's owner.
    expect((await api(kube, 'POST', base, gadget('g1', {}))).status).toBe(201);
    const stored = await api(kube, 'GET', `${base}/g1`);
    expect(stored.body.spec).toEqual({ size: 1, owner: expect.any(String) });
    expect(stored.body.spec.owner).not.toBe('');
    expect(stored.body.metadata.name).toBe('g1');
  });

  it('under the Manager, a webhook server applies its configurations at start (its self-signed caBundle filled in) and the API server calls it', async () => {
    const port = await freePort();
    const server = new WebhookServer({
      tls: { selfSigned: { hosts: ['127.0.0.1'] } },
      host: '127.0.0.1',
      port,
      logger: false,
      configurations: {
        kubeConfig: kube.kubeConfig,
        objects: [
          validatingWebhookConfiguration({
            name: `${ns}-applied`,
            endpoint: { url: `https://127.0.0.1:${port}` },
            webhooks: [
              {
                name: 'applied.example.com',
                path: '/applied',
                rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
                objectSelector: { matchLabels: { applied: 'yes' } },
              },
            ],
          }),
        ],
      },
    });
    server.register('/applied', validatingWebhook({ name: 'applied.example.com' }, () => deny('refused by the applied webhook')));
    const manager = new Manager(new SharedInformerFactory(kube.kubeConfig, { logger: false }), { webhookServer: server, logger: false });
    const stopManager = new AbortController();
    const managed = manager.run(stopManager.signal);
    try {
      expect(await server.whenReady(stopManager.signal)).toBe(true);
      const applied = await api(kube, 'GET', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${ns}-applied`);
      expect(applied.body.webhooks[0].clientConfig.caBundle).toBe(server.caBundle());
      expect(applied.body.metadata.managedFields.map((f: { manager: string; operation: string }) => `${f.manager} ${f.operation}`)).toEqual(['kube-informer-webhook Apply']);
      const denied = await until('the applied webhook to be called', async () => {
        const r = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'applied', labels: { applied: 'yes' } } });
        return r.status === 403 ? r : undefined;
      });
      expect(denied.body.message).toBe('admission webhook "applied.example.com" denied the request: refused by the applied webhook');
    } finally {
      stopManager.abort();
      await managed;
    }
  });

  // Issue 48: after the operator stops, its self-registered configuration stays, and the next write it
  // matches fails with "failed calling webhook … connection refused"; onStop 'delete' (out of a cluster)
  // removes it with the server, onStop 'ignore' relaxes it to failurePolicy Ignore.
  it.each(['keep', 'delete', 'ignore'] as const)("after the webhook server stops (onStop '%s'), the next matching write", async (onStop) => {
    const port = await freePort();
    const name = `${ns}-stop-${onStop}`;
    const label = `stop-${onStop}`;
    const server = new WebhookServer({
      tls: { selfSigned: { hosts: ['127.0.0.1'] } },
      host: '127.0.0.1',
      port,
      logger: false,
      configurations: {
        kubeConfig: kube.kubeConfig,
        onStop,
        inCluster: false,
        objects: [
          validatingWebhookConfiguration({
            name,
            endpoint: { url: `https://127.0.0.1:${port}` },
            webhooks: [
              {
                name: 'stop.example.com',
                path: '/stop',
                rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
                objectSelector: { matchLabels: { stop: label } },
              },
            ],
          }),
        ],
      },
    });
    server.register('/stop', validatingWebhook({ name: 'stop.example.com' }, () => allow()));
    const manager = new Manager(new SharedInformerFactory(kube.kubeConfig, { logger: false }), { webhookServer: server, logger: false });
    const stopManager = new AbortController();
    const managed = manager.run(stopManager.signal);
    expect(await server.whenReady(stopManager.signal)).toBe(true);
    const uid = (await api(kube, 'GET', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`)).body.metadata.uid as string;
    // Called while it serves (the API server's webhook cache may lag the configuration by a moment).
    await until('the webhook to be called', async () => {
      const r = await api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'probe', labels: { stop: label } } });
      return r.status === 201 ? r : undefined;
    });
    stopManager.abort();
    await managed;
    const after = await api(kube, 'GET', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`);
    const write = (): Promise<{ status: number; body: any }> => api(kube, 'POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'after', labels: { stop: label } } });
    if (onStop === 'keep') {
      expect(after.body.metadata.uid).toBe(uid);
      const refused = await write();
      expect(refused.status).toBe(500);
      expect(refused.body.message).toMatch(/failed calling webhook "stop\.example\.com".*connection refused/);
      await api(kube, 'DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`);
    } else {
      if (onStop === 'delete') expect(after.status).toBe(404);
      else expect(after.body.webhooks.map((w: { failurePolicy: string }) => w.failurePolicy)).toEqual(['Ignore']);
      // The API server's webhook cache follows the change within a moment: the write then passes.
      const passed = await until('a write to pass', async () => {
        const r = await write();
        return r.status === 201 ? r : undefined;
      });
      expect(passed.status).toBe(201);
      if (onStop === 'ignore') await api(kube, 'DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`);
    }
  });
});

/** The apiVersion an object is stored at in etcd (custom resources are stored as JSON), read through etcd's v3 JSON gateway. */
async function storedApiVersion(kube: RealApiServer, namespace: string, name: string): Promise<string> {
  const key = Buffer.from(`/registry/example.com/widgets/${namespace}/${name}`).toString('base64');
  const res = await fetch(`${kube.etcdEndpoint}/v3/kv/range`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key }) });
  const answer = (await res.json()) as { kvs?: Array<{ value: string }> };
  const value = answer.kvs?.[0]?.value;
  if (value === undefined) throw new Error(`no etcd key for widget ${namespace}/${name}`);
  return (JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as { apiVersion: string }).apiVersion;
}

function peerSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/nope', method: 'POST', ca, agent: false }, (res) => {
      const serial = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().serialNumber;
      res.resume();
      res.on('end', () => resolve(serial));
    });
    req.on('error', reject);
    req.end();
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
