// Per-resource cache options on kube-apiserver: the metadata-only answers (the oracle for the fake's), a
// controller whose owned cache is metadata-only, and per-resource selectors and namespaces honoured.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Action, Controller } from '../../src/controller/index.js';
import type { PartialObjectMetadata } from '../../src/core/index.js';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { newResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

const LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

interface Answer {
  status: number;
  contentType: string;
  /** The body's JSON documents (one for a list, one per event for a watch). */
  docs: unknown[];
}

/** GETs `path` with `accept`; a watch is read until its first `events` lines arrived. */
function get(base: string, token: string, ca: string | undefined, path: string, accept: string, events = 0): Promise<Answer> {
  const url = new URL(path, base);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { headers: { accept, authorization: `Bearer ${token}` }, ca }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      const done = (): void => {
        const lines = events === 0 ? [text] : text.split('\n').filter((l) => l.trim() !== '').slice(0, events);
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), docs: lines.map((l) => JSON.parse(l) as unknown) });
        res.destroy();
      };
      res.on('data', (chunk: string) => {
        text += chunk;
        if (events > 0 && text.split('\n').filter((l) => l.trim() !== '').length >= events && text.endsWith('\n')) done();
      });
      res.on('end', done);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The shape of a metadata-only answer: keys and kinds, no values that differ between servers. */
function shape(a: Answer): unknown {
  const obj = (o: unknown): unknown => {
    const x = o as { apiVersion?: string; kind?: string; metadata?: Record<string, unknown> };
    return { keys: Object.keys(x).sort(), apiVersion: x.apiVersion, kind: x.kind, name: x.metadata?.name, hasResourceVersion: typeof x.metadata?.resourceVersion === 'string' };
  };
  return {
    status: a.status,
    contentType: a.contentType,
    docs: a.docs.map((d) => {
      const x = d as { type?: string; object?: unknown; items?: unknown[]; apiVersion?: string; kind?: string };
      if (x.type !== undefined) return { type: x.type, object: obj(x.object) };
      return { keys: Object.keys(x).sort(), apiVersion: x.apiVersion, kind: x.kind, items: (x.items ?? []).map(obj) };
    }),
  };
}

describe('per-resource cache options on kube-apiserver', () => {
  let real: RealApiServer;
  let fake: FakeApiServer;
  let namespace: string;
  const stop = new AbortController();

  beforeAll(async () => {
    [real, fake] = await Promise.all([startRealApiServer(), startFakeApiServer()]);
    namespace = await freshNamespace(real, 'ki-cache');
  });
  afterAll(async () => {
    stop.abort();
    await Promise.all([fake?.close(), real?.stop()]);
  });

  it('a metadata-only list and watch: kube-apiserver and the fake answer the same shape', async () => {
    const cm: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace, labels: { app: 'web' } }, data: { big: 'x'.repeat(100) } };
    const realClient = newResourceClient(real.kubeConfig, resources.configmaps);
    await realClient.create(cm);
    fake.create('namespaces', { metadata: { name: namespace } });
    fake.create('configmaps', cm);
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const answers = async (base: string, token: string, ca: string | undefined) => ({
      list: shape(await get(base, token, ca, path, LIST_ACCEPT)),
      watch: shape(await get(base, token, ca, `${path}?watch=true&resourceVersion=0`, WATCH_ACCEPT, 1)),
    });
    const fromReal = await answers(real.server, real.token, real.ca);
    const fromFake = await answers(fake.url, 'fake-token', undefined);
    expect(fromFake).toEqual(fromReal);
    expect(fromReal).toEqual({
      list: {
        status: 200,
        contentType: LIST_ACCEPT,
        docs: [{ keys: ['apiVersion', 'items', 'kind', 'metadata'], apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', items: [{ keys: ['apiVersion', 'kind', 'metadata'], apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', name: 'a', hasResourceVersion: true }] }],
      },
      watch: { status: 200, contentType: WATCH_ACCEPT, docs: [{ type: 'ADDED', object: { keys: ['apiVersion', 'kind', 'metadata'], apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', name: 'a', hasResourceVersion: true } }] },
    });
    realClient.close();
  });

  it('per-resource label selector and namespaces are honoured: the cache holds what they select, nothing else', async () => {
    const other = await freshNamespace(real, 'ki-cache-other');
    const third = await freshNamespace(real, 'ki-cache-third');
    const client = newResourceClient(real.kubeConfig, resources.configmaps);
    for (const ns of [namespace, other, third]) {
      await client.create({ metadata: { name: 'web', namespace: ns, labels: { app: 'web' } } });
      await client.create({ metadata: { name: 'db', namespace: ns, labels: { app: 'db' } } });
    }
    const factory = new SharedInformerFactory(real.kubeConfig, { logger: false });
    const set = factory.forResource(resources.configmaps, { namespaces: [namespace, other], labelSelector: 'app=web', metadataOnly: true });
    factory.start(stop.signal);
    await factory.waitForCacheSync(AbortSignal.timeout(30_000));
    expect(set.getIndexer().listKeys().sort()).toEqual([`${namespace}/web`, `${other}/web`].sort());
    expect(set.list().every((o) => o.kind === 'PartialObjectMetadata')).toBe(true);
    // a change in a namespace outside the set never arrives; one inside does
    await client.create({ metadata: { name: 'web-2', namespace: third, labels: { app: 'web' } } });
    const written = await client.create({ metadata: { name: 'web-2', namespace: other, labels: { app: 'web' } } });
    await set.awaitObserved(written, AbortSignal.timeout(30_000));
    expect(set.getIndexer().listKeys().filter((k) => k.startsWith(`${third}/`))).toEqual([]);
    client.close();
  });

  it('a controller with metadata-only owned children reconciles: children by owner from metadata, the body fetched on demand', async () => {
    const configMaps = newResourceClient(real.kubeConfig, resources.configmaps);
    const secrets = newResourceClient(real.kubeConfig, resources.secrets);
    const parent = await configMaps.create({ metadata: { name: 'parent', namespace } });
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: parent.metadata!.uid!, controller: true };
    await secrets.create({ metadata: { name: 'child', namespace, ownerReferences: [owner] }, stringData: { k: 'body' } } as Secret);
    const factory = new SharedInformerFactory(real.kubeConfig, { logger: false, namespace });
    const seen: Array<{ child: PartialObjectMetadata | undefined; body: string | undefined }> = [];
    const controller = Controller.for(factory, resources.configmaps, { fieldSelector: 'metadata.name=parent' })
      .owns(resources.secrets, { metadataOnly: true })
      .build(
        async (_key, ctx) => {
          const [child] = ctx.children(resources.secrets);
          const body = child === undefined ? undefined : await ctx.client(resources.secrets).get(child.metadata!.name!, ctx.namespace);
          seen.push({ child, body: body?.data?.k === undefined ? undefined : Buffer.from(body.data.k, 'base64').toString() });
          return Action.done();
        },
        { name: 'cache-options', logger: false },
      );
    const run = new AbortController();
    factory.start(run.signal);
    const running = controller.run(run.signal);
    const deadline = Date.now() + 20_000;
    while (!seen.some((s) => s.child !== undefined) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    run.abort();
    await running;
    const last = seen.find((s) => s.child !== undefined);
    expect(last?.child).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'child', ownerReferences: [owner] } });
    expect(last?.child).not.toHaveProperty('data');
    expect(last?.body).toBe('body');
    configMaps.close();
    secrets.close();
  });
});
