// Long-lived watches on the real kube-apiserver: bookmarks, and watches the server closes being resumed.
//
// Both tests shorten the watch: the reflector's `minWatchTimeoutMs` with `random: () => 0` makes every
// watch ask for exactly that many seconds. kube-apiserver 1.35 (watch cache on) ends a watch at its
// `timeoutSeconds` and, when bookmarks were asked for, sends one BOOKMARK about two seconds before that
// deadline (a watch of 2 s or less gets none); otherwise bookmarks come about once a minute.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { SharedIndexInformer, newListWatch, type KubeObject } from '../../src/index.js';
import { RecordingListerWatcher, runInformer, startRealApiServer, type ListWatchLogEntry, type RealApiServer } from './harness.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };
const configmaps = { group: '', version: 'v1', resource: 'configmaps' };

describe('watches kept alive against the real kube-apiserver', () => {
  let server: RealApiServer;
  let core: CoreV1Api;

  beforeAll(async () => {
    server = await startRealApiServer();
    core = server.kubeConfig.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function freshNamespace(prefix: string): Promise<string> {
    const namespace = `${prefix}-${randomBytes(3).toString('hex')}`;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    return namespace;
  }

  it('receives BOOKMARK events that advance lastSyncResourceVersion without calling a handler', async () => {
    const namespace = await freshNamespace('ki-bm');
    const elsewhere = await freshNamespace('ki-bm-other');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'only' }, data: { v: '1' } } });
    const lw = new RecordingListerWatcher(newListWatch<ConfigMap>(server.kubeConfig, configmaps, { namespace }));
    // 4 s watches: a bookmark ~2 s in, before the server closes the watch.
    const informer = new SharedIndexInformer<ConfigMap>(lw, { name: 'bookmarks', reflector: { minWatchTimeoutMs: 4000, random: () => 0 } });
    const { seen, stop } = await runInformer(informer, (cm) => `v${cm.data?.v}`);
    try {
      const synced = informer.lastSyncResourceVersion();
      // A write this informer does not see (another namespace) moves the collection's resourceVersion on.
      const other = await core.createNamespacedConfigMap({ namespace: elsewhere, body: { metadata: { name: 'unseen' } } });
      const otherRv = Number(other.metadata!.resourceVersion);
      expect(otherRv).toBeGreaterThan(Number(synced));

      const isBookmarkPast = (e: ListWatchLogEntry): boolean => e.op === 'event' && e.type === 'BOOKMARK' && Number(e.resourceVersion) >= otherRv;
      await lw.log.until((log) => log.some(isBookmarkPast));

      const bookmark = lw.log.events.findIndex(isBookmarkPast);
      const entry = lw.log.events[bookmark] as Extract<ListWatchLogEntry, { op: 'event' }>;
      // Sent on an open watch, before the server closed it at its timeout.
      expect(lw.log.events.slice(0, bookmark).filter((e) => e.op === 'watch').length).toBeGreaterThan(
        lw.log.events.slice(0, bookmark).filter((e) => e.op === 'closed').length,
      );
      expect(entry.name).toBe('');
      expect(Number(informer.lastSyncResourceVersion())).toBeGreaterThanOrEqual(Number(entry.resourceVersion));
      expect(seen.events).toEqual(['add only v1']);
      const health = informer.health();
      expect(health.counters.bookmarks).toBeGreaterThanOrEqual(1);
      expect(health.counters.lists).toBe(1);
      expect(health.watch.msSinceLastBookmark).toBeDefined();
      expect(informer.getStore().listKeys()).toEqual([`${namespace}/only`]);
    } finally {
      await stop();
    }
  });

  it('resumes each watch the server closes from the last resourceVersion, with no relist and no event lost in the gap', async () => {
    const namespace = await freshNamespace('ki-resume');
    let v = 1;
    const counter = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'counter' }, data: { v: String(v) } } });
    let rv = counter.metadata!.resourceVersion!;
    /** Replaces the counter with the next value; every write is one MODIFIED the informer must deliver. */
    const bump = async (): Promise<void> => {
      v++;
      const next = await core.replaceNamespacedConfigMap({
        name: 'counter',
        namespace,
        body: { metadata: { name: 'counter', resourceVersion: rv }, data: { v: String(v) } },
      });
      rv = next.metadata!.resourceVersion!;
    };
    // Before every re-watch (the server closed the previous one), write once more: that event happens
    // while no watch is open and must arrive through the resumed one.
    const lw = new RecordingListerWatcher(newListWatch<ConfigMap>(server.kubeConfig, configmaps, { namespace }), async (n) => {
      if (n > 1) await bump();
    });
    // 2 s watches: the server closes each one at its deadline (no bookmark that short).
    const informer = new SharedIndexInformer<ConfigMap>(lw, { name: 'resume', reflector: { minWatchTimeoutMs: 2000, random: () => 0 } });
    const { seen, stop } = await runInformer(informer, (cm) => `v${cm.data?.v}`);
    const count = (op: ListWatchLogEntry['op']) => (log: ListWatchLogEntry[]) => log.filter((e) => e.op === op).length;
    try {
      for (let round = 1; round <= 3; round++) {
        await lw.log.until((log) => count('watch')(log) === round);
        expect(lw.entries('watch')[round - 1]!.options.timeoutSeconds).toBe(2);
        // One write during the watch, too.
        await bump();
        await lw.log.until((log) => count('closed')(log) === round);
      }
      await lw.log.until((log) => count('watch')(log) === 4);
      await seen.until((events) => events.includes(`update counter v${v}`));

      // Every value, in order, exactly once: 1 from the list, then one per write, gaps included.
      const values = Array.from({ length: v }, (_, i) => i + 1);
      expect(seen.events).toEqual(values.map((n) => (n === 1 ? 'add counter v1' : `update counter v${n}`)));
      expect(v).toBe(7);

      // Each watch started exactly where the previous one left off: the list's version, then the
      // version of the last event applied before the server closed the stream.
      const starts = lw.entries('watch').map((w) => w.options.resourceVersion);
      const expected: string[] = [];
      let last = lw.entries('list')[0]!.resourceVersion;
      for (const entry of lw.log.events) {
        if (entry.op === 'event') last = entry.resourceVersion;
        if (entry.op === 'watch') expected.push(last);
      }
      expect(starts).toEqual(expected);
      expect(lw.entries('list')).toHaveLength(1);
      const health = informer.health();
      expect(health.counters.lists).toBe(1);
      expect(health.counters.relists).toBe(0);
      expect(health.counters.watches).toBeGreaterThanOrEqual(4);
    } finally {
      await stop();
    }
  });
});
