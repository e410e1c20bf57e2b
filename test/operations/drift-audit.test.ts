// The drift audit on the fake API server: nothing on a healthy cache, every injected divergence named, repair by relist, a stalled watch seen.

import { informerIndexer } from '../../src/informer/shared-index-informer.js';
import * as promClient from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, flushPromises, type KubeObject } from '../../src/core/index.js';
import { resources, SharedInformerFactory, type SharedIndexInformer } from '../../src/index.js';
import { newListWatch, type ListerWatcher } from '../../src/listwatch/index.js';
import { DriftAudit, registerInformerMetrics } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { memoryLog } from '../controller/fixture.js';
import { until } from '../examples/helpers.js';
import { metricValue } from './prom.js';

let server: FakeApiServer;
let stop: AbortController;
let factory: SharedInformerFactory;
let configMaps: SharedIndexInformer<KubeObject>;
beforeEach(async () => {
  server = await startFakeApiServer();
  stop = new AbortController();
  for (let i = 0; i < 20; i++) server.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'ns' } });
  factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
  configMaps = factory.forResource<KubeObject>(resources.configmaps);
  factory.start(stop.signal);
  await factory.waitForCacheSync(stop.signal);
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

const newAudit = (options: Partial<ConstructorParameters<typeof DriftAudit>[2]> = {}, log = memoryLog()) =>
  new DriftAudit(server.kubeConfig, configMaps, { resource: resources.configmaps, pageSize: 7, logger: log.logger, ...options });

/** Makes the cache wrong the ways a lost event would: a missed ADDED, DELETED and MODIFIED. */
function injectDivergence(): void {
  const indexer = informerIndexer(configMaps); // corrupting the cache on purpose: its writable indexer
  indexer.delete(indexer.getByKey('ns/cm-1')!); // missing: the server has it
  indexer.add({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ghost', namespace: 'ns', resourceVersion: '3' } }); // extra
  const current = server.list('configmaps', 'ns').find((c) => c.metadata?.name === 'cm-2')!;
  server.update('configmaps', { ...current, data: { v: '2' } }); // the cache keeps the old version: stale
  indexer.update(structuredClone(current));
}

/** Watches whose events can be held back (the cache falls behind the server) and released. */
function gatedWatches() {
  let open = true;
  const waiting: Array<() => void> = [];
  return {
    hold: () => void (open = false),
    release: () => {
      open = true;
      for (const wake of waiting.splice(0)) wake();
    },
    wrap: <T>(lw: ListerWatcher<T>): ListerWatcher<T> => ({
      list: (options, signal) => lw.list(options, signal),
      watch: async (options, signal) => {
        const stream = await lw.watch(options, signal);
        return {
          async *[Symbol.asyncIterator]() {
            for await (const event of stream) {
              while (!open) await new Promise<void>((resolve) => waiting.push(resolve));
              yield event;
            }
          },
        };
      },
    }),
  };
}

describe('DriftAudit', () => {
  it('finds nothing on a healthy cache, from a paginated metadata-only list', async () => {
    const log = memoryLog();
    const report = await newAudit({}, log).audit(stop.signal);
    expect(report).toMatchObject({ informer: 'v1/configmaps', listed: 20, cached: 20, divergent: 0, missing: 0, extra: 0, stale: 0, caughtUp: true, repaired: false });
    expect(report.listResourceVersion).toBe(server.resourceVersion());
    const lists = server.requests().filter((r) => r.resource === 'configmaps' && r.verb === 'list' && (r.accept ?? '').includes('PartialObjectMetadataList'));
    expect(lists).toHaveLength(3); // 20 objects, 7 a page
    expect(log.lines.filter((l) => l.startsWith('warn'))).toEqual([]);
  });

  it('names each divergence injected into the cache — missing, extra, stale — in its report and one warning', async () => {
    // The stale object's update reaches the cache too unless the watch is held: hold it.
    server.injectFault({ verb: 'watch', resource: 'configmaps', type: 'stall', sendHeaders: true });
    server.endWatches();
    await until(() => configMaps.health().watch.connected, 'the held watch');
    injectDivergence();
    server.create('configmaps', { metadata: { name: 'tick', namespace: 'ns' } }); // not seen either
    const log = memoryLog();
    const audit = newAudit({ settleTimeoutMs: 50 }, log);
    const report = await audit.audit(stop.signal);
    expect(report.caughtUp).toBe(false); // the held watch never brings the cache to the list's version
    expect(report.divergences.map((d) => `${d.key} ${d.kind}`).sort()).toEqual(['ns/cm-1 missing', 'ns/cm-2 stale', 'ns/ghost extra', 'ns/tick missing']);
    expect(report).toMatchObject({ divergent: 4, missing: 2, extra: 1, stale: 1 });
    const warnings = log.lines.filter((l) => l.startsWith('warn'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/drift-audit:v1\/configmaps: the cache differs from the server at resource version \d+: 4 of 21 objects \(missing 2, extra 1, stale 1\)/);
    expect(warnings[0]).toContain('ns/ghost (extra: cache 3)');
    expect(warnings[0]).toContain('is the watch stalled?');
    expect(audit.stats().audits).toEqual({ clean: 0, divergent: 1, failed: 0 });
  });

  it('confirms a divergence only once the cache reached the list: changes still in flight are not divergences', async () => {
    const gate = gatedWatches();
    const gatedFactory = new SharedInformerFactory(server.kubeConfig, { logger: false, listWatchFor: (gvr) => gate.wrap(newListWatch(server.kubeConfig, gvr)) });
    const informer = gatedFactory.forResource<KubeObject>(resources.configmaps);
    gatedFactory.start(stop.signal);
    await gatedFactory.waitForCacheSync(stop.signal);
    await until(() => informer.health().watch.connected, 'the watch');
    const writable = informerIndexer(informer);
    writable.delete(writable.getByKey('ns/cm-5')!); // the one real divergence
    gate.hold(); // what the server does next reaches the cache only once released
    for (let i = 20; i < 30; i++) server.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'ns' } });
    server.delete('configmaps', 'cm-0', 'ns');
    const lw = newListWatch(server.kubeConfig, resources.configmaps, { metadataOnly: true });
    let looked = false;
    const audit = new DriftAudit(undefined, informer, {
      logger: false,
      listWatch: {
        list: async (options, signal) => {
          const page = await lw.list(options, signal);
          // The audit compares as soon as the last page is in: release the held events only after that.
          if (page.metadata.continue === undefined || page.metadata.continue === '') setImmediate(() => ((looked = true), gate.release()));
          return page;
        },
        watch: (options, signal) => lw.watch(options, signal),
      },
    });
    const report = await audit.audit(stop.signal);
    expect(looked).toBe(true);
    expect(report.divergences.map((d) => `${d.key} ${d.kind}`)).toEqual(['ns/cm-5 missing']);
    expect(report).toMatchObject({ listed: 29, caughtUp: true });
    lw.close();
  });

  it('repairs by a relist when asked: the handlers see the differences, and the next audit is clean', async () => {
    const seen: string[] = [];
    configMaps.addEventHandler({
      onAdd: (o, initial) => void (initial ? undefined : seen.push(`add ${o.metadata?.name}`)),
      onDelete: () => void seen.push('delete'),
    });
    const indexer = informerIndexer(configMaps);
    indexer.delete(indexer.getByKey('ns/cm-1')!);
    indexer.add({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ghost', namespace: 'ns', resourceVersion: '3' } });
    const audit = newAudit({ repair: true });
    const report = await audit.audit(stop.signal);
    expect(report).toMatchObject({ divergent: 2, repaired: true });
    expect(configMaps.getIndexer().getByKey('ns/ghost')).toBeUndefined();
    expect(configMaps.getIndexer().getByKey('ns/cm-1')).toBeDefined();
    await until(() => seen.length === 2, 'the handler');
    expect(seen.sort()).toEqual(['add cm-1', 'delete']);
    expect(configMaps.health().counters.relists).toBe(1);
    expect((await audit.audit(stop.signal)).divergent).toBe(0);
    expect(audit.stats()).toMatchObject({ audits: { clean: 1, divergent: 1, failed: 0 }, repairs: 1 });
  });

  it('runs every interval on the injected clock, counts a failed list and goes on; exports its metrics', async () => {
    const clock = new FakeClock();
    const audit = newAudit({ clock, intervalMs: 60_000, jitter: 0 });
    const reg = new promClient.Registry();
    const metrics = registerInformerMetrics(promClient, factory, { registry: reg, audits: [audit] });
    const running = audit.run(stop.signal);
    await flushPromises();
    await clock.advance(60_000);
    await until(() => audit.stats().audits.clean === 1, 'the first audit');
    server.injectFault({ verb: 'list', resource: 'configmaps', type: 'status', code: 500 });
    await clock.advance(60_000);
    await until(() => audit.stats().audits.failed === 1, 'the failed audit');
    const indexer = informerIndexer(configMaps);
    indexer.delete(indexer.getByKey('ns/cm-3')!);
    await clock.advance(60_000);
    await until(() => audit.stats().audits.divergent === 1, 'the divergent audit');
    const i = { informer: 'v1/configmaps' };
    expect(await metricValue(reg, 'kube_informer_drift_audits_total', { ...i, result: 'clean' })).toBe(1);
    expect(await metricValue(reg, 'kube_informer_drift_audits_total', { ...i, result: 'failed' })).toBe(1);
    expect(await metricValue(reg, 'kube_informer_drift_audits_total', { ...i, result: 'divergent' })).toBe(1);
    expect(await metricValue(reg, 'kube_informer_drift_objects', { ...i, kind: 'missing' })).toBe(1);
    expect(await metricValue(reg, 'kube_informer_drift_objects', { ...i, kind: 'stale' })).toBe(0);
    stop.abort();
    await running;
    metrics.close();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('stretches or shrinks each interval by the jitter, drawn from the injected random source', async () => {
    const clock = new FakeClock();
    const draws = [0, 0.999_999];
    const audit = newAudit({ clock, intervalMs: 60_000, jitter: 0.1, random: () => draws.shift() ?? 0.5 });
    const running = audit.run(stop.signal);
    await flushPromises();
    expect(clock.pendingDelays()).toEqual([54_000]); // 60 s − 10 %
    await clock.advance(54_000);
    await until(() => audit.stats().audits.clean === 1, 'the first audit');
    await until(() => clock.pendingTimers() === 1, 'the next interval');
    expect(clock.pendingDelays()[0]).toBeCloseTo(66_000, 0); // 60 s + 10 % (almost)
    stop.abort();
    await running;
    expect(() => newAudit({ random: 1 as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it('validates its options', () => {
    expect(() => new DriftAudit(server.kubeConfig, configMaps, {})).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => newAudit({ jitter: 1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => newAudit({ intervalMs: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});
