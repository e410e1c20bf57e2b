// Per-resource cache options on the fake API server: selectors and metadata-only lists and watches reach the
// server, the one-informer-per-resource rule, the bad inputs, and the Controller's stripped managed fields.

import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { Action, Controller } from '../../src/controller/index.js';
import { extract, type PartialObjectMetadata } from '../../src/core/index.js';
import { resources, SharedInformerFactory, stripManagedFields, type SharedIndexInformer } from '../../src/index.js';
import type { NamespaceSetInformer } from '../../src/informer/index.js';
import { newResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { memoryLog } from '../controller/fixture.js';

let server: FakeApiServer;
let stop: AbortController;
beforeEach(async () => {
  server = await startFakeApiServer();
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

const cm = (name: string, namespace: string, labels: Record<string, string> = {}): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data: { k: 'v' } });
const reads = (resource: string) => server.requests().filter((r) => r.resource === resource && r.method === 'GET');

describe('forResource(resource, options) on the fake API server', () => {
  it('a per-resource label selector is ANDed with the factory\'s and sent on every list and watch', async () => {
    server.create('configmaps', cm('a', 'ns', { app: 'web', tier: 'x' }));
    server.create('configmaps', cm('b', 'ns', { app: 'web' }));
    server.create('configmaps', cm('c', 'ns', { app: 'db', tier: 'x' }));
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, labelSelector: 'app=web' });
    const informer = factory.forResource(resources.configmaps, { labelSelector: 'tier=x' });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    expect(informer.getIndexer().listKeys()).toEqual(['ns/a']);
    expect(reads('configmaps').map((r) => r.query.labelSelector)).toEqual(reads('configmaps').map(() => 'app=web,tier=x'));
  });

  it('metadataOnly: lists and watches ask for PartialObjectMetadata and the cache holds it (no data), read-your-writes included', async () => {
    server.create('configmaps', cm('a', 'ns'));
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const informer = factory.forResource(resources.configmaps, { metadataOnly: true });
    expectTypeOf(informer).toEqualTypeOf<SharedIndexInformer<PartialObjectMetadata>>();
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    expect(informer.getIndexer().getByKey('ns/a')).toEqual({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: expect.objectContaining({ name: 'a', namespace: 'ns' }) });
    const written = server.create('configmaps', cm('b', 'ns'));
    await informer.awaitObserved(written, AbortSignal.timeout(10_000)); // resourceVersion is in metadata
    expect(informer.getIndexer().getByKey('ns/b')).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { resourceVersion: written.metadata?.resourceVersion } });
    expect(informer.getIndexer().getByKey('ns/b')).not.toHaveProperty('data');
    const accepts = reads('configmaps').map((r) => `${r.verb}: ${r.accept}`);
    expect(accepts.length).toBeGreaterThanOrEqual(2);
    for (const line of accepts) expect(line).toMatch(/^(list: application\/json;as=PartialObjectMetadataList;g=meta\.k8s\.io;v=v1|watch: application\/json;as=PartialObjectMetadata(List)?;g=meta\.k8s\.io;v=v1)/);
  });

  it('stripManagedFields: the cache holds no managedFields; forResource keeps them by default', async () => {
    await newResourceClient(server.kubeConfig, resources.configmaps, { fieldManager: 'me' }).apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } });
    const stripped = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const plain = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const a = stripped.forResource(resources.configmaps, { stripManagedFields: true });
    const b = plain.forResource(resources.configmaps);
    stripped.start(stop.signal);
    plain.start(stop.signal);
    await Promise.all([stripped.waitForCacheSync(stop.signal), plain.waitForCacheSync(stop.signal)]);
    expect(a.getIndexer().getByKey('ns/a')?.metadata).not.toHaveProperty('managedFields');
    expect(b.getIndexer().getByKey('ns/a')?.metadata?.managedFields).toHaveLength(1);
  });
});

describe('per-resource namespaces', () => {
  it('a namespace set: one list and watch per namespace, none elsewhere, permissions per namespace; every caller passes the same set', async () => {
    for (const ns of ['a', 'b', 'c']) server.create('configmaps', cm(`cm-${ns}`, ns));
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const set = factory.forResource(resources.configmaps, { namespaces: ['a', 'b'] });
    expectTypeOf(set).toEqualTypeOf<NamespaceSetInformer<ConfigMap>>();
    expect(factory.forResource(resources.configmaps, { namespaces: ['b', 'a'] })).toBe(set);
    expect(() => factory.forResource(resources.configmaps)).toThrow(/is a namespace set \(a, b\): pass the same namespaces to get it/);
    expect(() => factory.forResource(resources.configmaps, { namespaces: ['a'] })).toThrow(/option namespaces of v1\/configmaps is \["a"\], but the factory's shared informer of v1\/configmaps has \["a","b"\] \(asked by forResource\)/);
    expect(factory.permissions().map((p) => `${p.resource} ${p.namespace}`)).toEqual(['configmaps a', 'configmaps b']);
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    expect(set.getIndexer().listKeys().sort()).toEqual(['a/cm-a', 'b/cm-b']);
    expect(Object.keys(factory.health())).toEqual(['v1/configmaps in a', 'v1/configmaps in b']);
    expect([...new Set(reads('configmaps').map((r) => r.namespace))].sort()).toEqual(['a', 'b']);
  });

  it("a Controller's owns(resource, { namespaces }) caches those namespaces alone, and says so in its permissions", async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const controller = Controller.for(factory, resources.configmaps).owns(resources.secrets, { namespaces: ['a'] }).build(async () => Action.done(), { name: 'ns', logger: false });
    expect(controller.permissions().filter((p) => p.resource === 'secrets').map((p) => p.namespace)).toEqual(['a']);
    expect(factory.permissions().filter((p) => p.resource === 'secrets').map((p) => p.namespace)).toEqual(['a']);
  });
});

describe('one informer per resource per factory', () => {
  const factory = () => new SharedInformerFactory(server.kubeConfig, { logger: false });

  it('the same options give the same informer; an omitted option takes the informer as it is', () => {
    const f = factory();
    const first = f.forResource(resources.configmaps, { labelSelector: 'app=web', stripManagedFields: true });
    expect(f.forResource(resources.configmaps, { labelSelector: 'app=web' })).toBe(first);
    expect(f.forResource(resources.configmaps)).toBe(first);
    expect(f.forResource(resources.configmaps, { stripManagedFields: true, labelSelector: 'app=web' })).toBe(first);
  });

  it('an explicit differing value is refused, naming both callers and both values', () => {
    const f = factory();
    f.forResource(resources.configmaps, { labelSelector: 'app=web' });
    expect(() => Controller.for(f, resources.secrets).owns(resources.configmaps, { labelSelector: 'app=db' }).build(async () => Action.done(), { name: 'web' })).toThrow(
      "SharedInformerFactory.forResource(v1/configmaps) for controller web owns(): option labelSelector of v1/configmaps is \"app=db\", but the factory's shared informer of v1/configmaps has \"app=web\" (asked by forResource); one informer per resource per factory",
    );
    // a value the existing informer has by default is a value too
    expect(() => f.forResource(resources.configmaps, { metadataOnly: true })).toThrow(/option metadataOnly of v1\/configmaps is true, but the factory's shared informer of v1\/configmaps has false \(the default\)/);
  });

  it('functions compare by identity: transform and indexers (indexers of new names are added)', () => {
    const f = factory();
    const t = (o: ConfigMap) => o;
    const byApp = (o: ConfigMap) => [o.metadata?.labels?.app ?? ''];
    const informer = f.forResource(resources.configmaps, { transform: t, indexers: { byApp } });
    expect(f.forResource(resources.configmaps, { transform: t, indexers: { byApp, byName: (o) => [o.metadata?.name ?? ''] } })).toBe(informer);
    expect(() => f.forResource(resources.configmaps, { transform: (o) => o })).toThrow(/option transform of v1\/configmaps is function transform, but .* has function t \(asked by forResource\)/);
    expect(() => f.forResource(resources.configmaps, { indexers: { byApp: (o) => [o.metadata?.name ?? ''] } })).toThrow(/option indexers\.byApp of v1\/configmaps is another function than the one forResource gave/);
    expect(() => f.forResource(resources.configmaps, { indexers: { namespace: (o) => [o.metadata?.name ?? ''] } })).toThrow(/the factory \(its namespace index\)/);
  });

  it('per-resource resyncPeriodMs: wins over the factory\'s resyncPeriodMs; with a customResync entry of another value it is refused', () => {
    const f = new SharedInformerFactory(server.kubeConfig, { logger: false, resyncPeriodMs: 1000, customResync: { 'v1/secrets': 5000 } });
    f.forResource(resources.configmaps, { resyncPeriodMs: 2000 });
    expect(() => f.forResource(resources.configmaps, { resyncPeriodMs: 1000 })).toThrow(/resyncPeriodMs of v1\/configmaps is 1000, but .* has 2000 \(asked by forResource\)/);
    expect(f.forResource(resources.secrets, { resyncPeriodMs: 5000 })).toBe(f.forResource(resources.secrets));
    expect(() => new SharedInformerFactory(server.kubeConfig, { customResync: { 'v1/secrets': 5000 } }).forResource(resources.secrets, { resyncPeriodMs: 10 })).toThrow(
      "SharedInformerFactory.forResource(v1/secrets): option resyncPeriodMs is 10, but the factory's customResync['v1/secrets'] is 5000: give one of them",
    );
  });

  it("a Controller's stripManagedFields default never conflicts; it gives way to an explicit ask before the informer starts, not after", async () => {
    const f = factory();
    const reconcile = async () => Action.done();
    // explicit first: the controller takes the informer as it is
    const kept = f.forResource(resources.secrets, { stripManagedFields: false });
    Controller.for(f, resources.configmaps).owns(resources.secrets).build(reconcile, { name: 'a' });
    expect(f.forResource(resources.secrets)).toBe(kept);
    // the controller's default first, the explicit ask later (before start): the ask wins
    await newResourceClient(server.kubeConfig, resources.configmaps, { fieldManager: 'me' }).apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } });
    expect(f.forResource(resources.configmaps, { stripManagedFields: false })).toBe(f.forResource(resources.configmaps));
    f.start(stop.signal);
    await f.waitForCacheSync(stop.signal);
    expect(f.forResource(resources.configmaps).getIndexer().getByKey('ns/a')?.metadata?.managedFields).toHaveLength(1);
    // after the start the default can no longer change
    const g = factory();
    Controller.for(g, resources.configmaps).build(reconcile, { name: 'b' });
    g.start(stop.signal);
    expect(() => g.forResource(resources.configmaps, { stripManagedFields: false })).toThrow(
      /has true \(the default of controller b for\(\)\); the informer has started, so its default can no longer change: pass the same value to that caller too/,
    );
  });
});

describe('bad input', () => {
  const factory = () => new SharedInformerFactory(server.kubeConfig, { logger: false });

  it('a factory option per resource, and a per-resource option to the factory, name where they belong', () => {
    expect(() => factory().forResource(resources.pods, { namespace: 'x' } as never)).toThrow(
      "SharedInformerFactory.forResource(v1/pods): option namespace is not a per-resource option: it is the factory's one namespace for every informer; for this resource alone pass namespaces: ['...']",
    );
    expect(() => factory().forResource(resources.pods, { watchCoalesceMs: 5 } as never)).toThrow(/option watchCoalesceMs is not a per-resource option: it is an option of the whole factory/);
    expect(() => Controller.for(factory(), resources.pods, { logger: false } as never)).toThrow(/^Controller\.for: option logger is not a per-resource option/);
    expect(() => new SharedInformerFactory(server.kubeConfig, { stripManagedFields: true } as never)).toThrow(/option stripManagedFields is not a factory option: it is an option of one resource/);
    expect(() => new SharedInformerFactory(server.kubeConfig, { namespaces: ['a'] } as never)).toThrow(/option namespaces is not a factory option/);
  });

  it('metadataOnly with a transform that reads spec (or any field beyond metadata) is refused, naming the fields', () => {
    const readsSpec = (o: PartialObjectMetadata) => ((o as { spec?: unknown }).spec === undefined ? o : o);
    expect(() => factory().forResource(resources.pods, { metadataOnly: true, transform: readsSpec })).toThrow(
      'SharedInformerFactory.forResource(v1/pods): option transform reads spec, which a metadataOnly cache never has (its objects are PartialObjectMetadata: apiVersion, kind and metadata only); drop metadataOnly, or write the transform over metadata alone',
    );
    expect(() => Controller.for(factory(), resources.configmaps).owns(resources.pods, { metadataOnly: true, transform: (o) => ({ ...o, x: (o as { status?: { phase?: string } }).status?.phase }) })).toThrow(/^ControllerBuilder\.owns: option transform reads status/);
    // metadata alone is fine (the ready-made stripManagedFields reads only metadata)
    expect(() => factory().forResource(resources.pods, { metadataOnly: true, transform: stripManagedFields })).not.toThrow();
  });

  it('namespaces: empty, repeated, on a cluster-scoped resource, or on newInformer', () => {
    expect(() => factory().forResource(resources.pods, { namespaces: [] })).toThrow(/option namespaces is empty/);
    expect(() => factory().forResource(resources.pods, { namespaces: ['a', 'a'] })).toThrow(/option namespaces names a twice/);
    expect(() => factory().forResource(resources.nodes, { namespaces: ['a'] })).toThrow(/option namespaces: nodes is cluster-scoped/);
    expect(() => factory().newInformer(resources.pods, { namespaces: ['a'] })).toThrow(/use forResource\(resource, \{ namespaces \}\)/);
  });

  it('list options with a factory whose listWatchFor builds the lists', () => {
    const f = new SharedInformerFactory(undefined, { listWatchFor: () => ({ list: async () => ({ metadata: {}, items: [] }), watch: async () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) }) as never }) });
    expect(() => f.forResource(resources.pods, { labelSelector: 'a=b', metadataOnly: true })).toThrow(/option labelSelector, metadataOnly of v1\/pods shapes the lists and watches, which this factory's listWatchFor builds/);
    expect(() => f.forResource(resources.pods, { stripManagedFields: true })).not.toThrow();
  });
});

describe('a Controller that reads what it uses', () => {
  it('owns metadata-only children (typed PartialObjectMetadata), reads a body with ctx.client when it needs one, and strips managed fields from its caches', async () => {
    const client = newResourceClient(server.kubeConfig, resources.configmaps, { fieldManager: 'me' });
    const parent = await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'parent', namespace: 'ns' }, data: { want: 'x' } });
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: parent.metadata!.uid!, controller: true };
    server.create('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'child', namespace: 'ns', ownerReferences: [owner] }, data: { big: Buffer.from('body').toString('base64') } } as Secret);
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const log = memoryLog();
    const seen: Array<{ children: unknown[]; body: unknown; managedFields: unknown; extracted: unknown }> = [];
    const controller = Controller.for(factory, resources.configmaps)
      .owns(resources.secrets, { metadataOnly: true })
      .uses(resources.secrets, ['get'])
      .uses(resources.configmaps, ['get'])
      .build(
        async (key, ctx) => {
          const children = ctx.children(resources.secrets);
          expectTypeOf(children).toEqualTypeOf<Array<import('../../src/core/index.js').DeepReadonly<PartialObjectMetadata>>>();
          const body = children.length === 0 ? undefined : await ctx.client(resources.secrets).get(children[0].metadata!.name!, ctx.namespace);
          // server-side apply's extract reads the live object (a get), never the cache, whose managed fields are stripped
          const live = await ctx.client(resources.configmaps).get(ctx.name, ctx.namespace);
          seen.push({ children: [...children], body: body?.data, managedFields: ctx.object?.metadata?.managedFields, extracted: extract(live, 'me').data });
          return Action.done();
        },
        { name: 'meta', logger: log.logger },
      );
    factory.start(stop.signal);
    const running = controller.run(stop.signal);
    for (let i = 0; i < 1000 && seen.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10)); // real HTTP: real time
    expect(log.lines.filter((l) => !l.startsWith('debug') && !l.startsWith('info'))).toEqual([]);
    stop.abort();
    await running;
    expect(seen[0]).toEqual({
      children: [{ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: expect.objectContaining({ name: 'child', ownerReferences: [owner] }) }],
      body: { big: Buffer.from('body').toString('base64') },
      managedFields: undefined,
      extracted: { want: 'x' },
    });
  });
});
