// Day-two parts on the real kube-apiserver: the Event recorder's series, and the drift audit (healthy, injected divergence, repair).

import { informerIndexer } from '../../src/informer/shared-index-informer.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, SharedInformerFactory, type ResourceClient } from '../../src/index.js';
import { DriftAudit, EventRecorder, eventsV1Resource, type EventsV1Event } from '../../src/operations/index.js';
import { startRealApiServer, type RealApiServer } from './harness.js';

describe('operations against the real kube-apiserver', () => {
  let server: RealApiServer;
  let configMaps: ResourceClient<KubeObject>;
  let namespace: string;

  beforeAll(async () => {
    server = await startRealApiServer();
    namespace = `ops-${randomBytes(3).toString('hex')}`;
    const namespaces = newResourceClient(server.kubeConfig, resources.namespaces);
    await namespaces.create({ metadata: { name: namespace } });
    namespaces.close();
    configMaps = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'test-user' });
    for (let i = 0; i < 30; i++) await configMaps.create({ metadata: { name: `cm-${i}`, namespace } });
  });
  afterAll(async () => {
    configMaps?.close();
    await server?.stop();
  });

  it('the Event recorder writes one events.k8s.io/v1 Event and folds repeats into its series with a PATCH', async () => {
    const cm = await configMaps.get('cm-0', namespace);
    const recorder = new EventRecorder(server.kubeConfig, { reportingController: 'example.com/ops-test', reportingInstance: 'ops-test-0', logger: false });
    const stop = new AbortController();
    const running = recorder.run(stop.signal);
    recorder.event(cm, { type: 'Warning', reason: 'Broken', action: 'Reconcile', note: 'first' });
    await recorder.flush();
    recorder.event(cm, { type: 'Warning', reason: 'Broken', action: 'Reconcile', note: 'first' });
    recorder.event(cm, { type: 'Warning', reason: 'Broken', action: 'Reconcile', note: 'first' });
    await recorder.flush();
    stop.abort();
    await running;
    expect(recorder.stats()).toMatchObject({ emitted: 3, created: 1, patched: 1, failed: 0, dropped: 0 });
    const events = newListWatch<EventsV1Event>(server.kubeConfig, eventsV1Resource, { namespace });
    const list = await events.list({}, AbortSignal.timeout(10_000));
    events.close();
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({
      reason: 'Broken',
      action: 'Reconcile',
      type: 'Warning',
      reportingController: 'example.com/ops-test',
      regarding: { kind: 'ConfigMap', name: 'cm-0', namespace, uid: cm.metadata?.uid },
      series: { count: 3 },
    });
  });

  it('the drift audit finds nothing on a healthy cache, names the divergences injected into it, and repairs them by a relist', async () => {
    const stop = new AbortController();
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace, logger: false });
    const informer = factory.forResource<KubeObject>(resources.configmaps);
    const running = factory.run(stop.signal);
    try {
      await factory.waitForCacheSync(stop.signal);
      // The list's version is etcd's newest, which a quiet namespace reaches only with a bookmark (about
      // a minute): a write after each first page brings this watch past it at once.
      const lw = newListWatch(server.kubeConfig, resources.configmaps, { namespace, metadataOnly: true });
      let ticks = 0;
      const audit = new DriftAudit(undefined, informer, {
        repair: true,
        logger: false,
        pageSize: 10,
        listWatch: {
          list: async (options, signal) => {
            const page = await lw.list(options, signal);
            if (options.continue === undefined) await configMaps.create({ metadata: { name: `tick-${ticks++}`, namespace } });
            return page;
          },
          watch: (options, signal) => lw.watch(options, signal),
        },
      });
      const healthy = await audit.audit(AbortSignal.timeout(60_000));
      expect(healthy).toMatchObject({ listed: 30, divergent: 0, repaired: false });

      const indexer = informerIndexer(informer);
      indexer.delete(indexer.getByKey(`${namespace}/cm-1`)!);
      indexer.add({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ghost', namespace, resourceVersion: healthy.listResourceVersion } });
      const before = indexer.getByKey(`${namespace}/cm-2`)!;
      await informer.awaitObserved(await configMaps.replace({ ...before, data: { changed: 'yes' } } as KubeObject), AbortSignal.timeout(30_000));
      indexer.update(before); // as if the MODIFIED had been lost

      const found = await audit.audit(AbortSignal.timeout(60_000));
      expect(found.divergences.map((d) => `${d.key} ${d.kind}`).sort()).toEqual([`${namespace}/cm-1 missing`, `${namespace}/cm-2 stale`, `${namespace}/ghost extra`]);
      expect(found).toMatchObject({ caughtUp: true, repaired: true });
      expect(indexer.getByKey(`${namespace}/ghost`)).toBeUndefined();
      expect((await audit.audit(AbortSignal.timeout(60_000))).divergent).toBe(0);
      lw.close();
    } finally {
      stop.abort();
      await running;
    }
  });
});
