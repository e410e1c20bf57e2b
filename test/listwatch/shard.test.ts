// The `shard` option of newListWatch and the informer factory, on the fake API server: the selector
// goes out on every list and watch, the server's echo is checked, and a server that ignores it (the
// ShardedListAndWatch gate off) gets the shard filtered on the client with one warning.

import type { DeepReadonly } from '../../src/core/types.js';
import http from 'node:http';
import type net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { KubeObject, Logger } from '../../src/core/index.js';
import { evenShard, formatShardSelector, shardMatcher, shardSelector } from '../../src/core/shard-selector.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { ResponseDecodeError, newListWatch, type WatchEvent } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';
import { useShardFallbacks } from '../sharding/helpers.js';
import { kubeConfigFor, useCleanups } from './helpers.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const { cleanups } = useCleanups();
const signal = (): AbortSignal => new AbortController().signal;

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(`error: ${m}`) };
}

async function server(options: Parameters<typeof startFakeApiServer>[0] = {}, count = 120): Promise<FakeApiServer> {
  const fake = await startFakeApiServer(options);
  cleanups.push(() => fake.close());
  for (let i = 0; i < count; i++) fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: NAMESPACES[i % 7] } });
  return fake;
}

/** Namespaces of varied spelling: names that differ only in their last characters hash close together under FNV-1a. */
const NAMESPACES = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'];

const names = (items: ReadonlyArray<DeepReadonly<KubeObject>>): string[] => items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();

const fallbacks = useShardFallbacks();

describe('newListWatch with a shard', () => {
  it('four even shards partition the collection; each list echoes its selector; the request carries it', async () => {
    const fake = await server();
    const all = (await newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS).list({}, signal())).items;
    expect(all).toHaveLength(120);
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const shard = evenShard(i, 4);
      const lw = newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { shard, logger: false });
      const list = await lw.list({ limit: 50 }, signal());
      let items = list.items;
      let cont = list.metadata.continue;
      expect(list.metadata.shardInfo).toEqual({ selector: formatShardSelector(shard) });
      while (cont) {
        const page = await lw.list({ limit: 50, continue: cont }, signal());
        items = items.concat(page.items);
        cont = page.metadata.continue;
      }
      // Every object in this shard's list hashes into it, as the server computed.
      expect(items.every(shardMatcher(shard))).toBe(true);
      expect(items.length).toBeGreaterThan(10);
      seen.push(...names(items));
    }
    expect(seen.sort()).toEqual(names(all)); // no object twice, none missing
    expect(fake.requests().filter((r) => r.query.shardSelector !== undefined).length).toBeGreaterThanOrEqual(4);
    expect(fallbacks).toEqual([]);
  });

  it('a watch carries the selector and sees only its shard', async () => {
    const fake = await server({}, 0);
    const shard = evenShard(1, 2);
    const lw = newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { shard, logger: false });
    const list = await lw.list({}, signal());
    const ac = new AbortController();
    const events: Array<WatchEvent<KubeObject>> = [];
    const stream = await lw.watch({ resourceVersion: list.metadata.resourceVersion }, ac.signal);
    const reading = (async () => {
      for await (const ev of stream) events.push(ev);
    })();
    const created: KubeObject[] = [];
    for (let i = 0; i < 40; i++) created.push(fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}`, namespace: 'default' } }) as KubeObject);
    const expected = created.filter(shardMatcher(shard)).map((o) => o.metadata?.name);
    expect(expected.length).toBeGreaterThan(5);
    expect(expected.length).toBeLessThan(35);
    await until(() => events.length >= expected.length, 'the shard’s events');
    ac.abort();
    await reading;
    expect(events.map((e) => e.object.metadata?.name)).toEqual(expected);
    expect(fake.requests().find((r) => r.verb === 'watch')?.query.shardSelector).toBe(formatShardSelector(shard));
  });

  it('a server that ignores the selector: the shard is filtered on the client, with one warning and one channel message', async () => {
    const fake = await server({ shardedListAndWatch: false });
    const shard = evenShard(0, 3);
    const logger = recordingLogger();
    const lw = newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { shard, logger });
    const first = await lw.list({}, signal());
    const second = await lw.list({}, signal());
    expect(first.metadata.shardInfo).toBeUndefined();
    expect(first.items.every(shardMatcher(shard))).toBe(true);
    expect(first.items.length).toBeGreaterThan(15);
    expect(first.items.length).toBeLessThan(80);
    expect(names(second.items)).toEqual(names(first.items));
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toMatch(/sent objects outside the shard selector.*ShardedListAndWatch/);
    expect(fallbacks).toEqual([{ path: '/api/v1/configmaps', selector: formatShardSelector(shard) }]);

    // The watch is filtered too.
    const ac = new AbortController();
    const stream = await lw.watch({ resourceVersion: first.metadata.resourceVersion }, ac.signal);
    const events: string[] = [];
    const reading = (async () => {
      for await (const ev of stream) events.push(ev.object.metadata?.name ?? '');
    })();
    const created = Array.from({ length: 30 }, (_, i) => fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `late-${i}`, namespace: 'default' } }) as KubeObject);
    const expected = created.filter(shardMatcher(shard)).map((o) => o.metadata?.name ?? '');
    fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'marker', namespace: 'default' } });
    await until(() => fake.requests().length > 0 && events.length >= expected.length, 'the filtered events');
    ac.abort();
    await reading;
    expect(events.filter((n) => n !== 'marker')).toEqual(expected);
  });

  it('a list that echoes another selector is refused (shard-mismatch)', async () => {
    const other = formatShardSelector(evenShard(1, 2));
    const srv = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '5', shardInfo: { selector: other } }, items: [] }));
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => srv.close(() => resolve())));
    const lw = newListWatch<KubeObject>(kubeConfigFor(`http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`), CONFIGMAPS, { shard: evenShard(0, 2), logger: false });
    cleanups.push(() => lw.close());
    const err = await lw.list({}, signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseDecodeError);
    expect(err).toMatchObject({ code: 'WATCH_DECODE', failure: 'shard-mismatch' });
  });

  it('a malformed shard fails at construction with INVALID_SELECTOR', async () => {
    const fake = await server({}, 0);
    expect(() => newListWatch(fake.kubeConfig, CONFIGMAPS, { shard: { field: 'uid', ranges: [{ start: 5n, end: 1n }] } })).toThrow(expect.objectContaining({ code: 'INVALID_SELECTOR' }));
    expect(() => newListWatch(fake.kubeConfig, CONFIGMAPS, { shard: 'uid' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it('the fake answers a malformed shardSelector with 500, as kube-apiserver v1.37 does (test/apiserver/sharding.test.ts)', async () => {
    const fake = await server({}, 0);
    const res = await fetch(`${fake.url}/api/v1/configmaps?shardSelector=${encodeURIComponent("shardRange(object.metadata.name, '0x00', '0x80')")}`, { headers: { Authorization: 'Bearer fake-token' } });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { message: string }).message).toMatch(/invalid shard selector: unsupported field object\.metadata\.name/);
  });
});

describe('SharedInformerFactory with a shard', () => {
  it('each informer caches exactly its shard, through list and watch; namespace shards keep namespaces whole', async () => {
    const fake = await server();
    const shard = shardSelector('namespace', [{ start: 0n, end: 1n << 63n }]);
    const factory = new SharedInformerFactory(fake.kubeConfig, { shard, logger: false });
    const informer = factory.forResource<KubeObject>(CONFIGMAPS);
    const ac = new AbortController();
    const running = factory.start(ac.signal);
    cleanups.push(async () => {
      ac.abort();
      await running;
    });
    await informer.whenSynced();
    const inShard = shardMatcher(shard);
    const all = (await newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS).list({}, signal())).items;
    expect(names(informer.getStore().list())).toEqual(names(all.filter(inShard)));
    const namespaces = new Set(informer.getStore().list().map((o) => o.metadata?.namespace));
    expect(namespaces.size).toBeGreaterThan(0);
    expect(namespaces.size).toBeLessThan(7);
    for (const ns of namespaces) expect(all.filter((o) => o.metadata?.namespace === ns).length).toBe(informer.getStore().list().filter((o) => o.metadata?.namespace === ns).length);

    const outside = NAMESPACES.find((ns) => !namespaces.has(ns))!;
    const inside = [...namespaces][0]!;
    fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late-out', namespace: outside } });
    fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late-in', namespace: inside } });
    await until(() => informer.getStore().getByKey(`${inside}/late-in`) !== undefined, 'the object in the shard');
    expect(informer.getStore().getByKey(`${outside}/late-out`)).toBeUndefined();
  });
});
