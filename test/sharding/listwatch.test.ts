// The fake API server's `shardSelector` against kube-apiserver's parser vectors, and the `shard` option
// of newListWatch and the informer factory through it: server-side filtering of a union of ranges, the
// gate-off fallback with exactly one warning however often the reflector relists, and a watch opened
// before any list. (test/listwatch/shard.test.ts has the basics: even shards, the echo check, a
// mismatched echo, namespace shards.)

import type { DeepReadonly } from '../../src/core/types.js';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { KubeObject, Logger } from '../../src/core/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { newListWatch, type WatchEvent } from '../../src/listwatch/index.js';
import { evenShard, formatShardSelector, parseShardSelector, shardMatcher, shardSelector, type ShardSelector } from '../../src/sharding/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';
import { useCleanups } from '../listwatch/helpers.js';
import { useShardFallbacks } from './helpers.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const { cleanups } = useCleanups();
const signal = (): AbortSignal => new AbortController().signal;
const vectors = JSON.parse(readFileSync(new URL('../fixtures/sharding-vectors.json', import.meta.url), 'utf8')) as {
  parses: Array<{ input: string; ok: boolean; string?: string }>;
};

/** Quarters 0 and 2 of the hash space: two ranges apart, so the selector has two terms. */
const UNION: ShardSelector = shardSelector('uid', [evenShard(0, 4).ranges[0], evenShard(2, 4).ranges[0]]);

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(`error: ${m}`) };
}

async function server(options: Parameters<typeof startFakeApiServer>[0] = {}, count = 200): Promise<FakeApiServer> {
  const fake = await startFakeApiServer(options);
  cleanups.push(() => fake.close());
  for (let i = 0; i < count; i++) fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: `ns-${i % 5}` } });
  return fake;
}

async function rawList(fake: FakeApiServer, shardSelectorParam: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${fake.url}/api/v1/configmaps?shardSelector=${encodeURIComponent(shardSelectorParam)}`, { headers: { Authorization: 'Bearer fake-token' } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Waits in real time (the reflector's restarts go through timers), up to 10 s. */
async function eventually(cond: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !cond(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const keys = (items: ReadonlyArray<DeepReadonly<KubeObject>>): string[] => items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();

const fallbacks = useShardFallbacks();

describe('the fake API server answers shardSelector as kube-apiserver v1.37.2 does', () => {
  it('echoes the String() the server parser made of every input both parsers accept; refuses what it refuses with a reasonless 500', async () => {
    const fake = await server({}, 20);
    let echoed = 0;
    for (const v of vectors.parses) {
      let ours = true;
      try {
        parseShardSelector(v.input);
      } catch {
        ours = false;
      }
      if (v.input === '') continue; // no parameter at all: below
      const { status, body } = await rawList(fake, v.input);
      if (v.ok && ours) {
        expect([v.input, status, (body.metadata as { shardInfo?: unknown }).shardInfo]).toEqual([v.input, 200, { selector: v.string }]);
        echoed++;
      } else if (!v.ok) {
        expect([v.input, status]).toEqual([v.input, 500]);
        expect(body).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
        expect(body.message).toMatch(/^invalid shard selector: /);
        expect(body).not.toHaveProperty('reason');
      }
    }
    expect(echoed).toBeGreaterThan(15);
    // An empty parameter is no parameter: everything, no shardInfo.
    const empty = await rawList(fake, '');
    expect([empty.status, (empty.body.metadata as Record<string, unknown>).shardInfo, (empty.body.items as unknown[]).length]).toEqual([200, undefined, 20]);
  });

  it('a watch with a malformed selector is refused the same way', async () => {
    const fake = await server({}, 0);
    const res = await fetch(`${fake.url}/api/v1/configmaps?watch=true&shardSelector=${encodeURIComponent("shardRange(object.metadata.uid, '0x0', '0x80')")}`, {
      headers: { Authorization: 'Bearer fake-token' },
    });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { message: string }).message).toMatch(/^invalid shard selector: /);
  });

  it('with the gate off it ignores the parameter, even a malformed one: everything, no shardInfo', async () => {
    const fake = await server({ shardedListAndWatch: false }, 20);
    for (const text of [formatShardSelector(evenShard(0, 2)), "shardRange(object.metadata.name, '0x00', '0x80')", '   ']) {
      const { status, body } = await rawList(fake, text);
      expect([status, (body.metadata as Record<string, unknown>).shardInfo, (body.items as unknown[]).length]).toEqual([200, undefined, 20]);
    }
  });
});

describe('a union of ranges', () => {
  it('is filtered by the server on list and watch: two terms sent, echoed, exactly the matching objects', async () => {
    const fake = await server();
    const inShard = shardMatcher(UNION);
    const text = formatShardSelector(UNION);
    expect(text.split(' || ')).toHaveLength(2);
    const all = (await newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS).list({}, signal())).items;
    const lw = newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { shard: UNION, logger: false });
    cleanups.push(() => lw.close());
    const list = await lw.list({}, signal());
    expect(list.metadata.shardInfo).toEqual({ selector: text });
    expect(keys(list.items)).toEqual(keys(all.filter(inShard)));
    expect(list.items.length).toBeGreaterThan(60);
    expect(list.items.length).toBeLessThan(140);

    const ac = new AbortController();
    const stream = await lw.watch({ resourceVersion: list.metadata.resourceVersion }, ac.signal);
    const events: Array<WatchEvent<KubeObject>> = [];
    const reading = (async () => {
      for await (const ev of stream) events.push(ev);
    })();
    const created = Array.from({ length: 40 }, (_, i) => fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}`, namespace: 'ns-0' } }) as KubeObject);
    const deleted = all.slice(0, 40).map((o) => fake.delete(CONFIGMAPS, o.metadata!.name!, o.metadata!.namespace) as KubeObject);
    const expected = [...created.filter(inShard).map((o) => `ADDED ${o.metadata?.name}`), ...deleted.filter(inShard).map((o) => `DELETED ${o.metadata?.name}`)];
    await until(() => events.length >= expected.length, 'the union’s events');
    ac.abort();
    await reading;
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(expected);
    const sent = fake.requests().filter((r) => r.query.shardSelector !== undefined);
    expect(sent.map((r) => [r.verb, r.query.shardSelector])).toEqual([
      ['list', text],
      ['watch', text],
    ]);
    expect(fallbacks).toEqual([]);
  });
});

describe('the gate off: filtered on the client, one warning', () => {
  it('an informer with a shard caches exactly its share through relists and watch restarts, warning once', async () => {
    const fake = await server({ shardedListAndWatch: false });
    const inShard = shardMatcher(UNION);
    const logger = recordingLogger();
    // Paged lists: a list's own check of the shard (its echo, its items) is what this covers; the streaming
    // list's watch is the next test's.
    const factory = new SharedInformerFactory(fake.kubeConfig, { shard: UNION, logger, informerOptions: { reflector: { useWatchList: false } } });
    const informer = factory.forResource<KubeObject>(CONFIGMAPS);
    const seen: string[] = [];
    informer.addEventHandler({ onAdd: (o) => void seen.push(o.metadata!.name!), onUpdate() {}, onDelete() {} });
    const ac = new AbortController();
    const running = factory.start(ac.signal);
    cleanups.push(async () => {
      ac.abort();
      await running;
    });
    await informer.whenSynced();
    const all = (): Promise<KubeObject[]> => newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS).list({}, signal()).then((l) => l.items);
    expect(keys(informer.getStore().list())).toEqual(keys((await all()).filter(inShard)));
    const shardedLists = (): number => fake.requests().filter((r) => r.verb === 'list' && r.query.shardSelector !== undefined).length;

    // Two relists (the watch ended, its restart answered 410 Expired: list again), new objects in between.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 20; i++) fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `r${round}-${i}`, namespace: 'ns-1' } });
      const lists = shardedLists();
      fake.injectFault({ type: 'status', code: 410, verb: 'watch' });
      fake.endWatches();
      await eventually(() => shardedLists() > lists, 'a relist');
      const want = keys((await all()).filter(inShard));
      await eventually(() => keys(informer.getStore().list()).join() === want.join(), 'the shard after the relist');
    }
    expect(shardedLists()).toBe(3);
    // (The log also has the reflector's "watch failed" lines of the 410s.)
    expect(logger.warnings.filter((w) => /sent objects outside the shard selector/.test(w))).toHaveLength(1);
    expect(fallbacks).toEqual([{ path: '/api/v1/configmaps', selector: formatShardSelector(UNION) }]);
    // Nothing outside the shard was ever handed to a handler.
    const everything = new Map((await all()).map((o) => [o.metadata!.name!, o]));
    expect(seen.every((n) => inShard(everything.get(n)))).toBe(true);
  });

  it('a watch opened before any list (as a streaming list does) is filtered too, and its first event outside the shard gives the one warning', async () => {
    const fake = await server({ shardedListAndWatch: false }, 0);
    const shard = evenShard(1, 3);
    const logger = recordingLogger();
    const lw = newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { shard, logger });
    cleanups.push(() => lw.close());
    const ac = new AbortController();
    const stream = await lw.watch({ resourceVersion: fake.resourceVersion() }, ac.signal);
    const names: string[] = [];
    const reading = (async () => {
      for await (const ev of stream) names.push(ev.object.metadata?.name ?? '');
    })();
    const created = Array.from({ length: 30 }, (_, i) => fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `s-${i}`, namespace: 'ns-0' } }) as KubeObject);
    const expected = created.filter(shardMatcher(shard)).map((o) => o.metadata?.name);
    await until(() => names.length >= expected.length, 'the shard’s events');
    ac.abort();
    await reading;
    expect(names).toEqual(expected);
    expect(logger.warnings).toEqual([expect.stringMatching(/^watch \/api\/v1\/configmaps: the server sent objects outside the shard selector/)]);
    expect(fallbacks).toEqual([{ path: '/api/v1/configmaps', selector: formatShardSelector(shard) }]);
  });
});
