// An informer whose resource stops being served (its CRD deleted) under onResourceMissing 'absent', over
// the fake API server (which answers as kube-apiserver does): deletes delivered, absent and ready with a
// detail, one warning, re-checks on the backoff (fake clock), back with adds and one info log.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import type { Logger } from '../../src/core/log.js';
import type { KubeObject } from '../../src/core/types.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgets' };
const crd: KubeObject = {
  metadata: { name: 'widgets.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' }, versions: [{ name: 'v1', served: true, storage: true }] },
} as KubeObject;
const widget = (name: string): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' } }) as KubeObject;

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function recording(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string): void => void lines.push(`${level} ${message}`);
  return { lines, logger: { debug: () => undefined, info: at('info'), warn: at('warn'), error: at('error') } };
}

describe("an informer with onResourceMissing: 'absent'", () => {
  let server: FakeApiServer;
  beforeEach(async () => {
    server = await startFakeApiServer({ logger: false });
  });
  afterEach(async () => {
    await server.close();
  });

  it('delivers deletes when its CRD is deleted, turns absent (ready, with a detail), re-checks on the backoff, and comes back with adds', async () => {
    server.create(CRDS, crd);
    server.create('widgets.example.com', widget('a'));
    server.create('widgets.example.com', widget('b'));
    const clock = new FakeClock();
    const { logger, lines } = recording();
    const factory = new SharedInformerFactory(server.kubeConfig, { logger, informerOptions: { clock, onResourceMissing: 'absent' } });
    const widgets = factory.forResource<KubeObject>(WIDGETS);
    const seen: string[] = [];
    widgets.addEventHandler({
      onAdd: (w) => void seen.push(`add ${w.metadata?.name}`),
      onDelete: (w) => void seen.push(`delete ${(w as KubeObject).metadata?.name ?? 'tombstone'}`),
    });
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    await factory.waitForCacheSync(ac.signal);
    await until(() => seen.length === 2 && widgets.health().watch.connected, 'the initial adds and the watch');

    server.delete(CRDS, 'widgets.example.com');
    await until(() => widgets.health().state === 'absent', 'the informer to turn absent');
    expect(seen.slice(2).sort()).toEqual(['delete a', 'delete b']);
    const h = widgets.health();
    expect(h).toMatchObject({ state: 'absent', ready: true, live: true, synced: true, problems: [], absent: { neverServed: false } });
    expect(h.detail).toContain('informer example.com/v1/widgets: its resource is not served');
    expect(widgets.hasSynced()).toBe(true);
    expect(widgets.getIndexer().list()).toEqual([]);
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([expect.stringContaining('informer example.com/v1/widgets: its resource is not served') as unknown]);

    // Re-checks on the backoff, quietly: no further warning, still absent.
    server.clearRequests();
    const rechecks = (): number => server.requests().filter((r) => r.path.startsWith('/apis/example.com/v1/widgets')).length;
    for (let i = 1; i <= 3; i++) {
      await clock.waitForTimers(1);
      await clock.runNext();
      await until(() => rechecks() >= i, `re-check ${i}`);
    }
    expect(widgets.health().state).toBe('absent');
    expect(lines.filter((l) => l.startsWith('warn'))).toHaveLength(1);

    // The CRD is back, with new objects: the next re-check lists them, delivered as adds.
    server.create(CRDS, crd);
    server.create('widgets.example.com', widget('c'));
    await clock.waitForTimers(1);
    await clock.runNext();
    await until(() => widgets.health().state === 'running' && seen.includes('add c'), 'the informer to come back');
    expect(widgets.getIndexer().listKeys()).toEqual(['default/c']);
    expect(lines.filter((l) => l.startsWith('info'))).toEqual([expect.stringContaining('informer example.com/v1/widgets: its resource is served again; listed 1 object') as unknown]);
    await until(() => widgets.health().watch.connected, 'the watch again');
    server.create('widgets.example.com', widget('d'));
    await until(() => seen.includes('add d'), 'a watched add');
    expect(widgets.health()).toMatchObject({ ready: true, detail: undefined, absent: undefined });
    ac.abort();
    await running;
  });

  it('ends the re-check wait at once on relist(), which the CRD watch of a Manager calls', async () => {
    const clock = new FakeClock();
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { clock, onResourceMissing: 'absent' } });
    const widgets = factory.forResource<KubeObject>(WIDGETS);
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    await until(() => widgets.health().state === 'absent', 'absent');
    server.create(CRDS, crd);
    server.create('widgets.example.com', widget('a'));
    await widgets.relist(ac.signal); // no clock step: the wait was cut short
    expect(widgets.getIndexer().listKeys()).toEqual(['default/a']);
    expect(widgets.health().state).toBe('running');
    ac.abort();
    await running;
  });

  it('starts the backoff over when woken: a list refused while the server initializes the storage (429, as kube-apiserver answers right after Established) retries soon', async () => {
    const clock = new FakeClock();
    // Paged lists: the refused request below is the list (a streaming list's refusal falls back to one).
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { clock, onResourceMissing: 'absent', reflector: { useWatchList: false } } });
    const widgets = factory.forResource<KubeObject>(WIDGETS);
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    await until(() => widgets.health().state === 'absent', 'absent');
    for (let i = 0; i < 8; i++) {
      await clock.waitForTimers(1);
      await clock.runNext(); // the re-checks grow the backoff to its cap
    }
    await clock.waitForTimers(1);
    expect(clock.nextTimerDelay()).toBeGreaterThan(10_000);
    server.create(CRDS, crd);
    server.injectFault({ verb: 'list', resource: 'widgets', type: 'status', code: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing', retryAfterSeconds: 1 });
    const relisted = widgets.relist(ac.signal);
    await until(() => server.pendingFaults().length === 0 && clock.pendingDelays().some((d) => d < 300_000), 'the refused list');
    expect(clock.pendingDelays()[0]).toBeLessThanOrEqual(1_600); // 800 ms jittered (or the 1 s Retry-After), not 30 s
    await clock.runNext();
    await relisted;
    expect(widgets.health().state).toBe('running');
    ac.abort();
    await running;
  });

  it('is synced and ready, never silent, when the resource was never served (a CRD not created yet, or a misspelling)', async () => {
    const { logger, lines } = recording();
    const factory = new SharedInformerFactory(server.kubeConfig, { logger, informerOptions: { clock: new FakeClock(), onResourceMissing: 'absent' } });
    const misspelt = factory.forResource<KubeObject>({ group: 'example.com', version: 'v1', resource: 'widgetz' });
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    expect(await factory.waitForCacheSync(ac.signal)).toEqual({ 'example.com/v1/widgetz': true });
    const h = misspelt.health();
    expect(h).toMatchObject({ state: 'absent', ready: true, absent: { neverServed: true } });
    expect(h.detail).toContain('check its group, version and plural');
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([expect.stringContaining('it has not been served since the informer started') as unknown]);
    ac.abort();
    await running;
  });

  it("keeps 'retry' the default: a 404 is not synced and not ready", async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { clock: new FakeClock() } });
    const widgets = factory.forResource<KubeObject>(WIDGETS);
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    await until(() => widgets.health().watch.consecutiveErrors > 0, 'a failed list');
    expect(widgets.health()).toMatchObject({ state: 'running', ready: false, synced: false, detail: undefined });
    ac.abort();
    await running;
  });

  it('refuses a value other than retry or absent, and a change once the informer runs', async () => {
    expect(() => new SharedInformerFactory(server.kubeConfig, { informerOptions: { onResourceMissing: 'ignore' as never } })).toThrow(/option informerOptions\.onResourceMissing/);
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const pods = factory.forResource<KubeObject>({ group: '', version: 'v1', resource: 'pods' });
    expect(() => pods.setOnResourceMissing('gone' as never)).toThrow(/onResourceMissing/);
    pods.setOnResourceMissing('absent');
    expect(pods.onResourceMissing).toBe('absent');
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    expect(() => pods.setOnResourceMissing('retry')).toThrow(expect.objectContaining({ code: 'ALREADY_STARTED' }) as unknown as Error);
    ac.abort();
    await running;
  });
});

