// Server-side sharded list and watch (KEP-5866) on the real kube-apiserver, started by the harness with
// the ShardedListAndWatch gate (scripts/apiserver/start.sh adds it from 1.36 on): the server's filter
// and our client-side hash agree on every object (uid and namespace), even shards partition the
// collection, a union of ranges is echoed and applied, the server answers every parser vector of
// test/fixtures/sharding-vectors.json as recorded (the fake API server is held to the same vectors in
// test/sharding/listwatch.test.ts), and a sharded informer caches exactly its share through list and
// watch. Then the same on a server with the gate off: the client filters, with one warning.

import diagnosticsChannel from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject, Logger } from '../../src/core/index.js';
import { evenShard, formatShardSelector, shardMatcher, shardSelector, type ShardSelector } from '../../src/core/shard-selector.js';
import { newListWatch, type WatchEvent } from '../../src/listwatch/index.js';
import { channelNames } from '../../src/observability/channels.js';
import { newResourceClient, resources, SharedInformerFactory, type ResourceClient } from '../../src/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const COUNT = 300;
const signal = (): AbortSignal => new AbortController().signal;
const keyOf = (o: { readonly metadata?: { readonly namespace?: string; readonly name?: string } }): string => `${o.metadata?.namespace}/${o.metadata?.name}`;
const vectors = JSON.parse(readFileSync(new URL('../fixtures/sharding-vectors.json', import.meta.url), 'utf8')) as {
  parses: Array<{ input: string; ok: boolean; string?: string; error?: string }>;
};
/** Quarters 0 and 2 of the hash space: two ranges apart, two terms on the wire. */
const UNION: ShardSelector = shardSelector('uid', [evenShard(0, 4).ranges[0], evenShard(2, 4).ranges[0]]);

/** A plain GET of `path` on the server (status and parsed body), for what the client would refuse to send. */
function rawGet(server: RealApiServer, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    https
      .get(`${server.server}${path}`, { ca: server.ca, headers: { Authorization: `Bearer ${server.token}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      })
      .on('error', reject);
  });
}

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(`error: ${m}`) };
}

/** Waits in real time, up to 30 s. */
async function eventually(cond: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; !cond(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('sharded list and watch on the real kube-apiserver', () => {
  let server: RealApiServer;
  let configMaps: ResourceClient<KubeObject>;
  let namespace: string;

  beforeAll(async () => {
    server = await startRealApiServer();
    namespace = await freshNamespace(server, 'shard');
    configMaps = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'test-user' });
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < COUNT; i++) writes.push(configMaps.create({ metadata: { name: `cm-${i}`, namespace } }));
    await Promise.all(writes);
  }, 120_000);
  afterAll(async () => {
    configMaps?.close();
    await server?.stop();
  });

  it('four even shards partition the namespace; each list echoes its selector; our hash agrees with the server on every object', async () => {
    const all = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
    expect(all).toHaveLength(COUNT);
    const owners = new Map<string, number>();
    for (let i = 0; i < 4; i++) {
      const shard = evenShard(i, 4);
      const lw = newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace, shard, logger: false });
      // Both the watch cache (resourceVersion=0) and etcd (a consistent list, paged) apply it.
      for (const options of [{ resourceVersion: '0' }, { limit: 40 }]) {
        let list = await lw.list(options, signal());
        expect(list.metadata.shardInfo).toEqual({ selector: formatShardSelector(shard) });
        let items = list.items;
        while (list.metadata.continue) {
          list = await lw.list({ limit: 40, continue: list.metadata.continue }, signal());
          expect(list.metadata.shardInfo).toEqual({ selector: formatShardSelector(shard) });
          items = items.concat(list.items);
        }
        if (options.resourceVersion === '0') for (const o of items) owners.set(keyOf(o), (owners.get(keyOf(o)) ?? 0) + 1);
        // What the server sent is exactly what our hash puts in the shard.
        expect(items.map(keyOf).sort()).toEqual(all.filter(shardMatcher(shard)).map(keyOf).sort());
      }
      lw.close();
    }
    expect(owners.size).toBe(COUNT);
    expect([...owners.values()].every((n) => n === 1)).toBe(true);
  });

  it('a sharded informer caches exactly its share, and its watch delivers only its share', async () => {
    const shard = evenShard(1, 3);
    const inShard = shardMatcher(shard);
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace, shard, logger: false });
    const informer = factory.forResource<KubeObject>(CONFIGMAPS);
    const added: string[] = [];
    informer.addEventHandler({ onAdd: (o) => void added.push(keyOf(o)), onUpdate() {}, onDelete() {} });
    const ac = new AbortController();
    const running = factory.start(ac.signal);
    try {
      await informer.whenSynced();
      const all = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
      expect(informer.getStore().listKeys().sort()).toEqual(all.filter(inShard).map(keyOf).sort());

      const created = await Promise.all(Array.from({ length: 60 }, (_, i) => configMaps.create({ metadata: { name: `late-${i}`, namespace } })));
      const expected = created.filter(inShard).map(keyOf);
      expect(expected.length).toBeGreaterThan(5);
      const deadline = Date.now() + 30_000;
      while (!expected.every((k) => informer.getStore().getByKey(k) !== undefined) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // A bookmark-free check that nothing outside arrived: the store holds exactly the shard.
      const now = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
      expect(informer.getStore().listKeys().sort()).toEqual(now.filter(inShard).map(keyOf).sort());
      expect(added.every((k) => inShard(now.find((o) => keyOf(o) === k)))).toBe(true);
    } finally {
      ac.abort();
      await running;
    }
  });

  it('a union of two ranges: echoed as sent, and exactly what our matcher puts in either range', async () => {
    const all = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
    const lw = newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace, shard: UNION, logger: false });
    try {
      for (const options of [{ resourceVersion: '0' }, {}]) {
        const list = await lw.list(options, signal());
        expect(list.metadata.shardInfo).toEqual({ selector: formatShardSelector(UNION) });
        expect(list.items.map(keyOf).sort()).toEqual(all.filter(shardMatcher(UNION)).map(keyOf).sort());
      }
    } finally {
      lw.close();
    }
  });

  it('namespace shards: every namespace whole in exactly one of four shards, as our hash says', async () => {
    const spaces = await Promise.all(Array.from({ length: 12 }, () => freshNamespace(server, 'shard-ns')));
    await Promise.all(spaces.flatMap((ns) => [0, 1, 2].map((i) => configMaps.create({ metadata: { name: `n-${i}`, namespace: ns } }))));
    const all = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS).list({}, signal())).items;
    const ownerOf = new Map<string, number>();
    for (let i = 0; i < 4; i++) {
      const shard = evenShard(i, 4, 'namespace');
      const lw = newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { shard, logger: false });
      const list = await lw.list({}, signal());
      lw.close();
      expect(list.metadata.shardInfo).toEqual({ selector: formatShardSelector(shard) });
      expect(list.items.map(keyOf).sort()).toEqual(all.filter(shardMatcher(shard)).map(keyOf).sort());
      for (const o of list.items) {
        const ns = o.metadata!.namespace!;
        expect(ownerOf.get(ns) ?? i).toBe(i);
        ownerOf.set(ns, i);
      }
    }
    for (const ns of spaces) expect(ownerOf.has(ns)).toBe(true);
  });

  it('answers every parser vector as recorded from k8s.io/apiserver: the echo of what it accepts, a reasonless 500 for what it refuses', async () => {
    for (const v of vectors.parses) {
      const { status, body } = await rawGet(server, `/api/v1/namespaces/${namespace}/configmaps?limit=1&shardSelector=${encodeURIComponent(v.input)}`);
      if (v.input === '') {
        // An empty parameter is no parameter.
        expect([status, (body.metadata as Record<string, unknown>).shardInfo]).toEqual([200, undefined]);
      } else if (v.ok) {
        expect([v.input, status, (body.metadata as Record<string, unknown>).shardInfo]).toEqual([v.input, 200, { selector: v.string }]);
      } else {
        expect([v.input, status, body.message, body.reason]).toEqual([v.input, 500, `invalid shard selector: ${v.error}`, undefined]);
      }
    }
    // A watch is refused the same way, before it starts.
    const bad = vectors.parses.find((v) => !v.ok && v.input !== '')!;
    const { status, body } = await rawGet(server, `/api/v1/namespaces/${namespace}/configmaps?watch=true&shardSelector=${encodeURIComponent(bad.input)}`);
    expect([status, body.message]).toEqual([500, `invalid shard selector: ${bad.error}`]);
  });
});

describe('sharded list and watch on a kube-apiserver with the ShardedListAndWatch gate off', () => {
  let server: RealApiServer;
  let configMaps: ResourceClient<KubeObject>;
  let namespace: string;
  const fallbacks: unknown[] = [];
  const onFallback = (m: unknown): void => void fallbacks.push(m);

  beforeAll(async () => {
    server = await startRealApiServer({ apiServerArgs: ['--feature-gates=ShardedListAndWatch=false'] });
    namespace = await freshNamespace(server, 'shard-off');
    configMaps = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'test-user' });
    await Promise.all(Array.from({ length: 120 }, (_, i) => configMaps.create({ metadata: { name: `cm-${i}`, namespace } })));
  }, 120_000);
  afterAll(async () => {
    configMaps?.close();
    await server?.stop();
  });
  beforeEach(() => {
    fallbacks.length = 0;
    diagnosticsChannel.subscribe(channelNames.shardFallback, onFallback);
  });
  afterEach(() => diagnosticsChannel.unsubscribe(channelNames.shardFallback, onFallback));

  it('the server ignores the parameter, even a malformed one: everything, no shardInfo', async () => {
    for (const text of [formatShardSelector(UNION), "shardRange(object.metadata.name, '0x00', '0x80')"]) {
      const { status, body } = await rawGet(server, `/api/v1/namespaces/${namespace}/configmaps?shardSelector=${encodeURIComponent(text)}`);
      expect([status, (body.metadata as Record<string, unknown>).shardInfo, (body.items as unknown[]).length]).toEqual([200, undefined, 120]);
    }
  });

  it('newListWatch filters lists and watches on the client, with one warning and one channel message', async () => {
    const logger = recordingLogger();
    const inShard = shardMatcher(UNION);
    const lw = newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace, shard: UNION, logger });
    const ac = new AbortController();
    try {
      const all = (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
      // The watch cache (resourceVersion=0) and paged etcd reads: both ignore it, both are filtered here.
      const cached = await lw.list({ resourceVersion: '0' }, signal());
      expect(cached.metadata.shardInfo).toBeUndefined();
      expect(cached.items.map(keyOf).sort()).toEqual(all.filter(inShard).map(keyOf).sort());
      let list = await lw.list({ limit: 50 }, signal());
      let items = list.items;
      while (list.metadata.continue) {
        list = await lw.list({ limit: 50, continue: list.metadata.continue }, signal());
        expect(list.metadata.shardInfo).toBeUndefined();
        items = items.concat(list.items);
      }
      expect(items.map(keyOf).sort()).toEqual(all.filter(inShard).map(keyOf).sort());
      expect(logger.warnings).toHaveLength(1);
      expect(logger.warnings[0]).toMatch(/sent objects outside the shard selector \(feature gate ShardedListAndWatch off/);
      expect(fallbacks).toEqual([{ path: `/api/v1/namespaces/${namespace}/configmaps`, selector: formatShardSelector(UNION) }]);

      const events: Array<WatchEvent<KubeObject>> = [];
      const stream = await lw.watch({ resourceVersion: list.metadata.resourceVersion }, ac.signal);
      const reading = (async () => {
        for await (const ev of stream) events.push(ev);
      })();
      const created = await Promise.all(Array.from({ length: 40 }, (_, i) => configMaps.create({ metadata: { name: `w-${i}`, namespace } })));
      const expected = created.filter(inShard).map(keyOf).sort();
      expect(expected.length).toBeGreaterThan(5);
      // A marker outside the shard would be dropped; wait on the shard's own events instead.
      await eventually(() => events.length >= expected.length, 'the shard’s watch events');
      ac.abort();
      await reading;
      expect(events.map((e) => keyOf(e.object)).sort()).toEqual(expected);
      expect(events.every((e) => e.type === 'ADDED')).toBe(true);
      expect(logger.warnings).toHaveLength(1);
    } finally {
      ac.abort();
      lw.close();
    }
  });

  it('a sharded informer caches exactly its share and warns once', async () => {
    const shard = evenShard(2, 3);
    const inShard = shardMatcher(shard);
    const logger = recordingLogger();
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace, shard, logger });
    const informer = factory.forResource<KubeObject>(CONFIGMAPS);
    const ac = new AbortController();
    const running = factory.start(ac.signal);
    try {
      await informer.whenSynced();
      const list = async (): Promise<KubeObject[]> => (await newListWatch<KubeObject>(server.kubeConfig, CONFIGMAPS, { namespace }).list({}, signal())).items;
      expect(informer.getStore().listKeys().sort()).toEqual((await list()).filter(inShard).map(keyOf).sort());
      const created = await Promise.all(Array.from({ length: 30 }, (_, i) => configMaps.create({ metadata: { name: `late-${i}`, namespace } })));
      const expected = created.filter(inShard).map(keyOf);
      await eventually(() => expected.every((k) => informer.getStore().getByKey(k) !== undefined), 'the late objects of the shard');
      expect(informer.getStore().listKeys().sort()).toEqual((await list()).filter(inShard).map(keyOf).sort());
      expect(logger.warnings.filter((w) => /sent objects outside the shard selector/.test(w))).toHaveLength(1);
      expect(fallbacks).toHaveLength(1);
    } finally {
      ac.abort();
      await running;
    }
  });
});
