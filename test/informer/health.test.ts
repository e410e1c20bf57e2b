// health(): watch liveness, stalls, counters (lists, watches, relists, errors, regressions), transforms.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import {
  composeTransforms,
  LAST_APPLIED_CONFIGURATION_ANNOTATION,
  SharedIndexInformer,
  stripAnnotations,
  stripBulkyMetadata,
  stripManagedFields,
} from '../../src/informer/index.js';
import { computeHealth } from '../../src/health/health.js';
import type { ListerWatcher, WatchEvent } from '../../src/listwatch/types.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { pod, failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

/**
 * A ListerWatcher whose first list answers at `listRv` (later ones at `relistRv`) and whose first
 * watch sends `events`, then stays open until aborted.
 */
function scripted(listRv: string, relistRv: string, items: Pod[], events: Array<WatchEvent<Pod>>): ListerWatcher<Pod> & { lists: number } {
  let watches = 0;
  const lw = {
    lists: 0,
    list: async () => {
      lw.lists++;
      return { metadata: { resourceVersion: lw.lists === 1 ? listRv : relistRv }, items: structuredClone(items) };
    },
    watch: async (_o: unknown, signal: AbortSignal) => {
      const batch = watches++ === 0 ? events : [];
      return (async function* () {
        for (const e of batch) yield structuredClone(e);
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      })();
    },
  };
  return lw;
}

describe('informer health', () => {
  it('is unhealthy before start, then reports a connected watch, event ages and counters', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, { clock, name: 'pods', health: { watchStallMs: 60_000 } });
    informer.addEventHandler({ onAdd: () => undefined }, { name: 'h' });
    expect(informer.health()).toMatchObject({ state: 'new', healthy: false, problems: ['informer has not been started'] });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    await until(() => informer.health().watch.connected);
    source.add(pod('b'));
    await until(() => informer.health().counters.events === 1);
    await clock.advance(5_000);
    let h = informer.health();
    expect(h).toMatchObject({ name: 'pods', state: 'running', synced: true, healthy: true, problems: [], lastSyncResourceVersion: '2' });
    expect(h.watch).toMatchObject({ connected: true, msSinceLastEvent: 5_000, stalled: false, consecutiveErrors: 0 });
    expect(h.counters).toMatchObject({ lists: 1, relists: 0, watches: 1, errors: 0, events: 1, regressions: 0, handlerErrors: 0 });
    expect(h.handlers).toEqual([
      expect.objectContaining({ name: 'h', backlog: 0, delivered: 2, failures: 0, synced: true, slow: false, oldestPendingAgeMs: undefined }),
    ]);
    // No event, bookmark or reconnect for longer than watchStallMs: flagged as stalled.
    await clock.advance(56_000);
    h = informer.health();
    expect(h.watch.stalled).toBe(true);
    expect(h.healthy).toBe(false);
    expect(h.problems[0]).toMatch(/watch stalled: no activity for 61000 ms, watch connected but silent/);
    ac.abort();
    await done;
    expect(informer.health()).toMatchObject({ state: 'stopped', watch: { connected: false, stalled: false } });
  });

  it('counts errors and relists, and flags a watch that cannot connect as stalled', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const informer = new SharedIndexInformer<Pod>(source, { clock, health: { watchStallMs: 30_000 } });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    source.watchError = new Error('connection refused');
    source.resetWatch();
    for (let i = 0; i < 40; i++) await clock.advance(1000);
    const h = informer.health();
    expect(h.counters.errors).toBeGreaterThan(1);
    expect(h.counters.relists).toBeGreaterThanOrEqual(1);
    expect(h.watch).toMatchObject({ connected: false, stalled: true });
    expect(h.watch.lastError?.message).toBe('connection refused');
    expect(h.problems[0]).toMatch(/watch not connected \(last error: connection refused\)/);
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('counts a rejected resource-version regression reported by the reflector', async () => {
    const clock = new FakeClock();
    const lw = scripted('10', '12', [pod('a', { resourceVersion: '10' }), pod('b', { resourceVersion: '9' })], [
      { type: 'MODIFIED', object: pod('a', { resourceVersion: '12' }) },
      { type: 'MODIFIED', object: pod('b', { resourceVersion: '11' }) },
    ]);
    const informer = new SharedIndexInformer<Pod>(lw, { clock });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    for (let i = 0; i < 30 && informer.health().counters.relists === 0; i++) await clock.advance(1000);
    const h = informer.health();
    expect(h.counters.regressions).toBe(1);
    expect(h.counters.relists).toBeGreaterThanOrEqual(1);
    expect(informer.lastSyncResourceVersion()).toBe('12');
    ac.abort();
    await done;
  });

  it('computes health from raw inputs without an informer', () => {
    const h = computeHealth({
      name: 'x',
      now: 10_000,
      state: 'failed',
      synced: false,
      lastSyncResourceVersion: '',
      source: {
        connected: false, lastActivityAt: 0, lastEventAt: undefined, lastBookmarkAt: undefined, lastError: undefined, consecutiveErrors: 0, disconnectedSince: 0,
        staleSince: undefined, staleReason: undefined, relistAt: undefined,
        absentSince: undefined, absentReason: undefined, absentNeverListed: false,
      },
      counters: { lists: 0, relists: 0, watches: 0, errors: 0, events: 0, bookmarks: 0, regressions: 0 },
      handlers: [{ name: 'h', synced: false, stats: { backlog: 2, oldestPendingAt: 1_000, inFlightSince: 9_000, delivered: 0, failures: 1, maxBacklog: 2 } }],
      thresholds: { slowHandlerMs: 5_000 },
      failure: new Error('boom'),
    });
    expect(h.healthy).toBe(false);
    expect(h.problems).toEqual(['informer failed: boom', expect.stringMatching(/handler h is slow: backlog 2, oldest pending 9000 ms, current callback 1000 ms/)]);
    expect(h.handlers[0]).toMatchObject({ oldestPendingAgeMs: 9_000, inFlightMs: 1_000, slow: true });
    expect(h.counters.handlerErrors).toBe(1);
  });

  it("says when a deferred relist comes in wall-clock time, and rounds the durations it prints (issue 47, defect 6)", () => {
    const h = computeHealth({
      name: 'x',
      now: 69_687.25,
      wallNow: Date.UTC(2026, 10, 26, 23, 10, 40),
      state: 'running',
      synced: true,
      lastSyncResourceVersion: '5',
      source: {
        connected: false, lastActivityAt: 69_000.5, lastEventAt: undefined, lastBookmarkAt: undefined, lastError: undefined, consecutiveErrors: 1, disconnectedSince: 69_000.5,
        staleSince: 68_687.125, staleReason: 'GET /api/v1/pods: 500', relistAt: 71_287.75,
        absentSince: undefined, absentReason: undefined, absentNeverListed: false,
      },
      counters: { lists: 1, relists: 0, watches: 1, errors: 1, events: 0, bookmarks: 0, regressions: 0 },
      handlers: [],
      thresholds: {},
      failure: undefined,
    });
    expect(h.problems).toEqual(['cache is stale for 1000 ms (GET /api/v1/pods: 500); relist deferred by backoff until 2026-11-26T23:10:41.601Z (in 1601 ms)']);
  });

  it('is not ready while the cache is known stale, and says why and when the relist comes', () => {
    const at = (relistAt: number | undefined): ReturnType<typeof computeHealth> => computeHealth({
      name: 'x',
      now: 10_000,
      state: 'running',
      synced: true,
      lastSyncResourceVersion: '5',
      source: {
        connected: false, lastActivityAt: 9_000, lastEventAt: undefined, lastBookmarkAt: undefined, lastError: undefined, consecutiveErrors: 1, disconnectedSince: 9_000,
        staleSince: 8_000, staleReason: 'too old resource version: 5 (9)', relistAt, absentSince: undefined, absentReason: undefined, absentNeverListed: false,
      },
      counters: { lists: 1, relists: 0, watches: 1, errors: 1, events: 0, bookmarks: 0, regressions: 0 },
      handlers: [],
      thresholds: {},
      failure: undefined,
    });
    const deferred = at(40_000);
    expect(deferred).toMatchObject({ ready: false, live: true, stale: { reason: 'too old resource version: 5 (9)', msStale: 2_000, relistInMs: 30_000, relistAt: 40_000 } });
    expect(deferred.problems).toEqual(['cache is stale for 2000 ms (too old resource version: 5 (9)); relist deferred by backoff until 1970-01-01T00:00:40.000Z (in 30000 ms)']);
    const now = at(undefined);
    expect(now).toMatchObject({ ready: false, stale: { relistInMs: undefined, relistAt: undefined } });
    expect(now.problems).toEqual(['cache is stale for 2000 ms (too old resource version: 5 (9)); relisting now']);
  });
});

describe('transforms', () => {
  const bulky = {
    metadata: {
      name: 'a',
      managedFields: [{ manager: 'kubectl' }],
      annotations: { [LAST_APPLIED_CONFIGURATION_ANNOTATION]: '{...}', keep: 'me' },
    },
    spec: { x: 1 },
  };

  it('strips managed fields without touching the input, and is idempotent', () => {
    const out = stripManagedFields(bulky);
    expect(out.metadata).not.toHaveProperty('managedFields');
    expect(bulky.metadata.managedFields).toHaveLength(1);
    expect(out.spec).toBe(bulky.spec);
    expect(stripManagedFields(out)).toBe(out);
    expect(stripManagedFields('not an object')).toBe('not an object');
  });

  it('strips named annotations, dropping an emptied annotations map', () => {
    const out = stripAnnotations<typeof bulky>(LAST_APPLIED_CONFIGURATION_ANNOTATION)(bulky);
    expect(out.metadata.annotations).toEqual({ keep: 'me' });
    const none = stripAnnotations<typeof bulky>('keep', LAST_APPLIED_CONFIGURATION_ANNOTATION)(bulky);
    expect(none.metadata).not.toHaveProperty('annotations');
    expect(stripAnnotations<typeof bulky>('absent')(bulky)).toBe(bulky);
  });

  it('composes transforms left to right and offers the usual memory diet', () => {
    const order: string[] = [];
    const t = composeTransforms<number>((n) => (order.push('a'), n + 1), (n) => (order.push('b'), n * 10));
    expect(t(1)).toBe(20);
    expect(order).toEqual(['a', 'b']);
    const slim = stripBulkyMetadata(bulky);
    expect(slim.metadata).toEqual({ name: 'a', annotations: { keep: 'me' } });
  });
});
