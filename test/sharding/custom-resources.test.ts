// Shards of a custom resource. kube-apiserver v1.37.2 filters custom resources by `shardSelector` but
// does not echo `metadata.shardInfo` on their lists (they are unstructured: nothing to set it on), as
// the fake API server does too. A missing echo is no proof that the server ignored the selector: the
// client filters quietly, and warns only once an object outside the shard arrives (gate off).

import { describe, expect, it } from 'vitest';
import type { KubeObject, Logger } from '../../src/core/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { evenShard, shardMatcher } from '../../src/sharding/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';
import { useCleanups } from '../listwatch/helpers.js';
import { useShardFallbacks } from './helpers.js';

const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
const { cleanups } = useCleanups();

async function widgets(options: Parameters<typeof startFakeApiServer>[0]): Promise<FakeApiServer> {
  const fake = await startFakeApiServer(options);
  cleanups.push(() => fake.close());
  fake.resource(WIDGETS);
  for (let i = 0; i < 60; i++) fake.create(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w-${i}`, namespace: `ns-${i % 3}` } });
  return fake;
}

const fallbacks = useShardFallbacks();

/** A logger that keeps its warnings. */
function recording(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(m) };
}

async function shardOf(fake: FakeApiServer, logger: Logger): Promise<{ listed: string[]; watched: string[]; expected: { listed: string[]; watched: string[] } }> {
  const shard = evenShard(0, 2);
  const inShard = shardMatcher(shard);
  const lw = newListWatch<KubeObject>(fake.kubeConfig, WIDGETS, { shard, logger });
  cleanups.push(() => lw.close());
  const ac = new AbortController();
  const list = await lw.list({}, ac.signal);
  const stream = await lw.watch({ resourceVersion: list.metadata.resourceVersion }, ac.signal);
  const watched: string[] = [];
  const reading = (async () => {
    for await (const ev of stream) watched.push(ev.object.metadata?.name ?? '');
  })();
  const created = Array.from({ length: 40 }, (_, i) => fake.create(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `later-${i}`, namespace: 'ns-0' } }));
  const expectedWatched = created.filter(inShard).map((o) => o.metadata?.name ?? '');
  await until(() => watched.length >= expectedWatched.length, 'the shard’s events');
  ac.abort();
  await reading;
  const all = (await newListWatch<KubeObject>(fake.kubeConfig, WIDGETS).list({}, new AbortController().signal)).items;
  const expectedListed = all.filter((o) => inShard(o) && !o.metadata?.name?.startsWith('later-')).map((o) => o.metadata?.name ?? '');
  return { listed: list.items.map((o) => o.metadata?.name ?? ''), watched, expected: { listed: expectedListed, watched: expectedWatched } };
}

describe('a shard of a custom resource', () => {
  it('the server filters without echoing: the client keeps the shard and says nothing', async () => {
    const fake = await widgets({});
    const raw = await fetch(`${fake.url}/apis/example.com/v1/widgets?shardSelector=${encodeURIComponent("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")}`);
    const body = (await raw.json()) as { metadata: Record<string, unknown>; items: unknown[] };
    expect(body.metadata.shardInfo).toBeUndefined(); // as kube-apiserver v1.37.2 answers a custom resource
    expect(body.items.length).toBeLessThan(60);
    const logger = recording();
    const result = await shardOf(fake, logger);
    expect(result.listed).toEqual(result.expected.listed);
    expect(result.watched).toEqual(result.expected.watched);
    expect(logger.warnings).toEqual([]);
    expect(fallbacks).toEqual([]);
  });

  it('the gate off: the first object outside the shard gives the one warning, and the shard is still exact', async () => {
    const fake = await widgets({ shardedListAndWatch: false });
    const logger = recording();
    const result = await shardOf(fake, logger);
    expect(result.listed).toEqual(result.expected.listed);
    expect(result.watched).toEqual(result.expected.watched);
    expect(logger.warnings).toEqual([expect.stringMatching(/^list \/apis\/example\.com\/v1\/widgets\?shardSelector=.*: the server sent objects outside the shard selector/)]);
    expect(fallbacks).toHaveLength(1);
  });
});
