// End to end: informers over real HTTP to the fake API server through newListWatch.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/clock.js';
import type { KubeObject } from '../../src/core/types.js';
import { HandlerError, SharedIndexInformer, SharedInformerFactory, stripManagedFields } from '../../src/informer/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

interface Pod extends KubeObject {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string; [k: string]: unknown };
}

const PODS = { group: '', version: 'v1', resource: 'pods' };

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const resources = (): string[] => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap').sort();

/** Resources active now beyond those active `before` (a multiset difference). */
function leftover(before: string[]): string[] {
  const budget = new Map<string, number>();
  for (const r of before) budget.set(r, (budget.get(r) ?? 0) + 1);
  return resources().filter((r) => {
    const n = budget.get(r) ?? 0;
    budget.set(r, n - 1);
    return n <= 0;
  });
}

/** What is left open beyond `before`, once destroyed sockets had a few loop turns to finish closing. */
async function settledLeftover(before: string[]): Promise<string[]> {
  for (let i = 0; i < 50 && leftover(before).length > 0; i++) await new Promise((r) => setImmediate(r));
  return leftover(before);
}

describe('informers over the fake API server', () => {
  let server: FakeApiServer;
  beforeEach(async () => {
    server = await startFakeApiServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('syncs, follows changes, survives a closed watch, serves listers, and tears down completely', async () => {
    server.create('pods', { metadata: { name: 'web-1', namespace: 'default', labels: { app: 'web' }, managedFields: [{ manager: 'x' }] } });
    server.create('pods', { metadata: { name: 'db-1', namespace: 'default', labels: { app: 'db' } } });
    server.create('pods', { metadata: { name: 'web-9', namespace: 'other', labels: { app: 'web' } } });
    const before = resources();
    const factory = new SharedInformerFactory(server.kubeConfig, { transform: stripManagedFields });
    const pods = factory.forResource<Pod>(PODS);
    const seen: string[] = [];
    const reg = pods.addEventHandler({
      onAdd: (p, initial) => void seen.push(`add ${p.metadata.namespace}/${p.metadata.name}${initial ? ' initial' : ''}`),
      onUpdate: (_o, p) => void seen.push(`update ${p.metadata.name} ${p.metadata.labels?.app}`),
      onDelete: () => void seen.push('delete'),
    });
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    expect(await factory.waitForCacheSync(ac.signal)).toEqual({ 'v1/pods': true });
    await reg.whenSynced();
    expect(seen.sort()).toEqual(['add default/db-1 initial', 'add default/web-1 initial', 'add other/web-9 initial']);
    expect(pods.lister().namespace('default').list('app=web').map((p) => p.metadata.name)).toEqual(['web-1']);
    expect(pods.lister().list({ app: 'web' })).toHaveLength(2);
    expect(pods.getIndexer().getByKey('default/web-1')?.metadata).not.toHaveProperty('managedFields');

    seen.length = 0;
    server.update('pods', { metadata: { name: 'db-1', namespace: 'default', labels: { app: 'database' } } });
    server.delete('pods', 'web-9', 'other');
    await until(() => seen.length === 2, 'update and delete');
    expect(seen).toEqual(['update db-1 database', 'delete']);

    server.endWatches();
    server.create('pods', { metadata: { name: 'web-2', namespace: 'default', labels: { app: 'web' } } });
    await until(() => seen.length === 3, 'add after the watch was re-opened');
    expect(seen[2]).toBe('add default/web-2');
    server.bookmark();
    await until(() => pods.health().counters.bookmarks > 0, 'a bookmark');
    const h = pods.health();
    expect(h.watch.msSinceLastBookmark).toBeGreaterThanOrEqual(0);
    expect(h.counters.watches).toBeGreaterThanOrEqual(2);
    expect(h.counters.lists).toBe(1);
    expect(h.watch.connected).toBe(true);
    expect(pods.lastSyncResourceVersion()).toBe(server.resourceVersion());

    ac.abort();
    await running;
    await until(() => server.openWatches() === 0, 'the server to see the watch closed');
    expect(pods.health().watch.connected).toBe(false);
    expect(await settledLeftover(before)).toEqual([]);
  });

  it('rejects run() with the handler error while events keep coming, and leaves nothing open', async () => {
    server.create('pods', { metadata: { name: 'a', namespace: 'default' } });
    const before = resources();
    const informer = new SharedIndexInformer<Pod>(newListWatch<Pod>(server.kubeConfig, PODS), { name: 'pods' });
    informer.addEventHandler({
      onAdd: (p) => {
        if (p.metadata.name === 'boom') throw new Error('exploded');
      },
    });
    const running = informer.run(new AbortController().signal).catch((e: unknown) => e);
    await informer.whenSynced();
    for (let i = 0; i < 20; i++) server.create('pods', { metadata: { name: `p${i}`, namespace: 'default' } });
    server.create('pods', { metadata: { name: 'boom', namespace: 'default' } });
    for (let i = 20; i < 40; i++) server.create('pods', { metadata: { name: `p${i}`, namespace: 'default' } });
    const err = (await running) as HandlerError;
    expect(err).toBeInstanceOf(HandlerError);
    expect((err.cause as Error).message).toBe('exploded');
    await until(() => server.openWatches() === 0, 'the server to see the watch closed');
    expect(await settledLeftover(before)).toEqual([]);
  });

  it('tells why it never synced when the server keeps answering 403', async () => {
    const informer = new SharedIndexInformer<Pod>(newListWatch<Pod>(server.kubeConfig, PODS), {
      name: 'pods',
      syncFailureThreshold: 2,
      reflector: { backoff: { initialMs: 1, maxMs: 5 } },
    });
    // The streaming list (a watch) and the paged list it falls back to: two requests answered 403.
    for (let i = 0; i < 2; i++) server.injectFault({ verb: ['list', 'watch'], type: 'status', code: 403, reason: 'Forbidden', message: 'pods is forbidden' });
    const ac = new AbortController();
    const running = informer.run(ac.signal);
    const err = (await informer.whenSynced().catch((e: unknown) => e)) as Error & { code: string; statusCode: number };
    expect(err).toMatchObject({ code: 'API_STATUS', statusCode: 403 });
    expect(err.message).toMatch(/2 list\/watch requests in a row failed with HTTP 403/);
    // While the failures last, a new wait is told at once; the faults are used up, so the informer,
    // still retrying, syncs after all.
    await until(() => informer.hasSynced(), 'sync after the faults');
    await informer.whenSynced();
    ac.abort();
    await running;
  });
});
