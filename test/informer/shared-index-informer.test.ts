// SharedIndexInformer scenarios ported from client-go's shared_informer_test.go (SI-1..24).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { HandlerError, SharedIndexInformer } from '../../src/informer/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { deferred, pod, prng, Recorder, failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

interface Running {
  clock: FakeClock;
  source: FakeControllerSource<Pod>;
  informer: SharedIndexInformer<Pod>;
  stop: () => Promise<void>;
  done: Promise<void>;
}

function make(options: { resyncPeriodMs?: number } = {}): Omit<Running, 'stop' | 'done'> {
  const clock = new FakeClock();
  const source = new FakeControllerSource<Pod>();
  const informer = new SharedIndexInformer<Pod>(source, { clock, ...options });
  return { clock, source, informer };
}

function start(r: Omit<Running, 'stop' | 'done'>): Running {
  const ac = new AbortController();
  const done = r.informer.run(ac.signal);
  return {
    ...r,
    done,
    stop: async () => {
      ac.abort();
      await done;
      expect(r.source.openWatches()).toBe(0);
      expect(r.clock.pendingTimers()).toBe(0);
    },
  };
}

const labelKeys = (p: Pod): string[] => Object.keys(p.metadata.labels ?? {});

describe('SharedIndexInformer (client-go shared_informer_test)', () => {
  // SI-1
  it('indexes objects, keeps the index current, and indexes existing objects for an index added while running', async () => {
    const r = make({ resyncPeriodMs: 1000 });
    r.source.add(pod('pod1', { labels: { a: '1', b: '1' } }));
    r.source.add(pod('pod2', { labels: { b: '1' } }));
    r.informer.addIndexers({ labels: labelKeys });
    const s = start(r);
    await r.informer.whenSynced();
    const names = (ps: Pod[]): string[] => ps.map((p) => p.metadata.name).sort();
    expect(names(r.informer.getIndexer().byIndex('labels', 'a'))).toEqual(['pod1']);
    r.source.add(pod('pod3', { labels: { a: '1' } }));
    await until(() => r.informer.getIndexer().byIndex('labels', 'a').length === 2);
    expect(names(r.informer.getIndexer().byIndex('labels', 'a'))).toEqual(['pod1', 'pod3']);
    r.informer.addIndexers({ 'labels-again': labelKeys });
    expect(names(r.informer.getIndexer().byIndex('labels-again', 'a'))).toEqual(['pod1', 'pod3']);
    expect(r.informer.getIndexer().listIndexFuncValues('labels').sort()).toEqual(['a', 'b']);
    expect(r.informer.getIndexer().listIndexFuncValues('labels-again').sort()).toEqual(['a', 'b']);
    expect(() => r.informer.addIndexers({ labels: labelKeys })).toThrow(expect.objectContaining({ code: 'INDEXER_CONFLICT' }));
    await s.stop();
    expect(() => r.informer.addIndexers({ late: labelKeys })).toThrow(expect.objectContaining({ code: 'INFORMER_STOPPED' }));
  });

  // SI-2 (SI-3's deadlock cannot happen here: distribute only pushes into buffers; see processor tests)
  it('resyncs each handler on its own period', async () => {
    const r = make({ resyncPeriodMs: 1000 });
    r.source.add(pod('pod1'));
    r.source.add(pod('pod2'));
    const l1 = new Recorder();
    const l2 = new Recorder();
    const l3 = new Recorder();
    r.informer.addEventHandler(l1, { resyncPeriodMs: 0 });
    r.informer.addEventHandler(l2, { resyncPeriodMs: 2000 });
    r.informer.addEventHandler(l3, { resyncPeriodMs: 3000 });
    const s = start(r);
    await r.informer.whenSynced();
    await until(() => l1.names().length === 2 && l2.names().length === 2 && l3.names().length === 2);
    for (const l of [l1, l2, l3]) {
      expect(l.names()).toEqual(['pod1', 'pod2']);
      l.clear();
    }
    await r.clock.advance(1000);
    expect([l1.events, l2.events, l3.events]).toEqual([[], [], []]);
    await r.clock.advance(1000);
    await until(() => l2.events.length === 2);
    expect(l2.events.every((e) => e.type === 'update' && e.rv === (e as { oldRv?: string }).oldRv)).toBe(true);
    expect([l1.events.length, l3.events.length]).toEqual([0, 0]);
    l2.clear();
    await r.clock.advance(1000);
    await until(() => l3.events.length === 2);
    expect(l3.names()).toEqual(['pod1', 'pod2']);
    expect([l1.events.length, l2.events.length]).toEqual([0, 0]);
    await s.stop();
  });

  // SI-4 and NC-29
  it('lowers the resync check period before start, and clamps handler periods', () => {
    const r = make({ resyncPeriodMs: 12 * 3600_000 });
    const h1 = r.informer.addEventHandler(new Recorder(), { resyncPeriodMs: 0 });
    expect(r.informer.resyncCheckPeriodMs()).toBe(12 * 3600_000);
    expect(h1.resyncPeriodMs).toBe(0);
    const h2 = r.informer.addEventHandler(new Recorder(), { resyncPeriodMs: 60_000 });
    expect(r.informer.resyncCheckPeriodMs()).toBe(60_000);
    expect([h1.resyncPeriodMs, h2.resyncPeriodMs]).toEqual([0, 60_000]);
    const h3 = r.informer.addEventHandler(new Recorder(), { resyncPeriodMs: 55_000 });
    expect(r.informer.resyncCheckPeriodMs()).toBe(55_000);
    expect([h1.resyncPeriodMs, h2.resyncPeriodMs, h3.resyncPeriodMs]).toEqual([0, 60_000, 55_000]);
    const h4 = r.informer.addEventHandler(new Recorder(), { resyncPeriodMs: 5_000 });
    expect(r.informer.resyncCheckPeriodMs()).toBe(5_000);
    expect([h1, h2, h3, h4].map((h) => h.resyncPeriodMs)).toEqual([0, 60_000, 55_000, 5_000]);
    // NC-29: below one second is raised to one second.
    const h5 = r.informer.addEventHandler(new Recorder(), { resyncPeriodMs: 10 });
    expect(h5.resyncPeriodMs).toBe(1000);
    expect(r.informer.resyncCheckPeriodMs()).toBe(1000);
  });

  // NC-29, after start
  it('raises a handler period below the check period to the check period once running', async () => {
    const r = make({ resyncPeriodMs: 10_000 });
    const s = start(r);
    const h = r.informer.addEventHandler(new Recorder(), { resyncPeriodMs: 2_000 });
    expect(h.resyncPeriodMs).toBe(10_000);
    expect(r.informer.resyncCheckPeriodMs()).toBe(10_000);
    await s.stop();
  });

  it('never resyncs when the informer was created with period 0, whatever a handler asks', async () => {
    const r = make({ resyncPeriodMs: 0 });
    r.source.add(pod('a'));
    const rec = new Recorder();
    const h = r.informer.addEventHandler(rec, { resyncPeriodMs: 5_000 });
    expect(h.resyncPeriodMs).toBe(0);
    const s = start(r);
    await h.whenSynced();
    await r.clock.advance(60_000);
    expect(rec.events).toHaveLength(1);
    await s.stop();
  });

  // SI-5
  it('delivers everything to a handler added right after run() starts', async () => {
    const r = make();
    r.source.add(pod('a'));
    const s = start(r);
    const rec = new Recorder();
    const reg = r.informer.addEventHandler(rec);
    await reg.whenSynced();
    expect(rec.events).toEqual([{ type: 'add', name: 'a', initial: true, rv: '1' }]);
    await s.stop();
  });

  // SI-6
  it('after a watch disruption, relists and sends unchanged objects only to handlers due for resync', async () => {
    const r = make({ resyncPeriodMs: 1000 });
    r.source.add(pod('pod1'));
    r.source.add(pod('pod2'));
    const noResync = new Recorder();
    const resync = new Recorder();
    r.informer.addEventHandler(noResync, { resyncPeriodMs: 0 });
    r.informer.addEventHandler(resync, { resyncPeriodMs: 1000 });
    const s = start(r);
    await r.informer.whenSynced();
    await until(() => noResync.names().length === 2 && resync.names().length === 2);
    r.source.addDropWatch(pod('pod3'));
    r.source.modifyDropWatch({ ...pod('pod2'), spec: { nodeName: 'n1' } });
    await until(() => true);
    expect([noResync.names(), resync.names()]).toEqual([['pod1', 'pod2'], ['pod1', 'pod2']]);
    noResync.clear();
    resync.clear();
    await r.clock.advance(1000);
    r.source.resetWatch();
    for (let i = 0; i < 40 && !(noResync.names().length === 2 && resync.names().length === 3); i++) await r.clock.advance(200);
    expect(noResync.names()).toEqual(['pod2', 'pod3']);
    expect(resync.names()).toEqual(['pod1', 'pod2', 'pod3']);
    await s.stop();
  });

  // SI-7
  it('tells the watch error hook about a failing list', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.listError = new Error('Access Denied');
    const seen: Error[] = [];
    const informer = new SharedIndexInformer<Pod>(source, { clock, onWatchError: (err) => seen.push(err) });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await until(() => seen.length > 0);
    expect(seen[0].message).toMatch(/Access Denied/);
    expect(informer.health().watch.lastError?.message).toMatch(/Access Denied/);
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
  });

  // SI-9
  it('hands handlers and the cache only transformed objects', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('pod1'));
    source.add(pod('pod2'));
    const informer = new SharedIndexInformer<Pod>(source, {
      clock,
      transform: (p) => ({ ...p, metadata: { ...p.metadata, name: p.metadata.name.toUpperCase() } }),
    });
    const rec = new Recorder();
    const reg = informer.addEventHandler(rec, { resyncPeriodMs: 0 });
    const s = start({ clock, source, informer });
    await reg.whenSynced();
    expect(rec.names()).toEqual(['POD1', 'POD2']);
    expect(informer.getStore().listKeys().sort()).toEqual(['default/POD1', 'default/POD2']);
    await s.stop();
  });

  // SI-10, SI-12, SI-13
  it('counts registrations; the same handler twice is two registrations; removing twice is harmless', () => {
    const r = make();
    const h = new Recorder();
    const r1 = r.informer.addEventHandler(h);
    const r2 = r.informer.addEventHandler(h);
    expect(r.informer.handlerCount()).toBe(2);
    expect(r1).not.toBe(r2);
    r.informer.removeEventHandler(r2);
    expect(r.informer.handlerCount()).toBe(1);
    expect(r.informer.isHandlerRegistered(r1)).toBe(true);
    expect(r.informer.isHandlerRegistered(r2)).toBe(false);
    r.informer.removeEventHandler(r1);
    r.informer.removeEventHandler(r1);
    expect(r.informer.handlerCount()).toBe(0);
    expect(r.informer.isHandlerRegistered(r1)).toBe(false);
  });

  // SI-11
  it('ignores the removal of a registration that belongs to another informer', () => {
    const one = make().informer;
    const two = make().informer;
    const h1 = one.addEventHandler(new Recorder());
    const h2 = one.addEventHandler(new Recorder());
    two.removeEventHandler(h1);
    expect([one.handlerCount(), two.handlerCount()]).toEqual([2, 0]);
    expect(one.isHandlerRegistered(h1) && one.isHandlerRegistered(h2)).toBe(true);
    one.removeEventHandler(h2);
    expect(one.handlerCount()).toBe(1);
    one.removeEventHandler(h1);
    expect(one.handlerCount()).toBe(0);
  });

  // SI-14
  it('survives handlers being added and removed at random while the source changes at random', async () => {
    const seed = 0x5eed14;
    const rand = prng(seed);
    const r = make({ resyncPeriodMs: 1000 });
    for (let i = 0; i < 5; i++) r.source.add(pod(`p${i}`));
    const s = start(r);
    await r.informer.whenSynced();
    const regs: ReturnType<typeof r.informer.addEventHandler>[] = [];
    let names = 5;
    for (let step = 0; step < 1000; step++) {
      const x = rand();
      if (x < 0.1) regs.push(r.informer.addEventHandler(new Recorder(), { resyncPeriodMs: 1000 }));
      else if (x < 0.2 && regs.length > 0) r.informer.removeEventHandler(regs.splice(Math.floor(rand() * regs.length), 1)[0]);
      else {
        const items = r.source.items();
        const y = rand();
        if (y < 0.4 || items.length <= 1) r.source.add(pod(`p${names++}`));
        else if (y < 0.7) r.source.modify(items[Math.floor(rand() * items.length)]);
        else r.source.delete(items[Math.floor(rand() * items.length)]);
      }
      if (step % 50 === 0) await r.clock.advance(250);
    }
    const want = r.source.items().map((p) => p.metadata.name).sort();
    await until(() => r.informer.getStore().list().length === want.length, `seed ${seed}: cache converges`);
    expect(r.informer.getStore().list().map((p) => p.metadata.name).sort(), `seed ${seed}`).toEqual(want);
    await s.stop();
    expect(() => r.informer.addEventHandler(new Recorder())).toThrow(expect.objectContaining({ code: 'INFORMER_STOPPED' }));
  });

  // SI-15
  it('reports started and stopped states through its lifecycle', async () => {
    const r = make();
    expect([r.informer.isStarted(), r.informer.isStopped()]).toEqual([false, false]);
    r.source.add(pod('pod1'));
    const rec = new Recorder();
    r.informer.addEventHandler(rec);
    const s = start(r);
    await until(() => rec.events.length === 1);
    expect([r.informer.isStarted(), r.informer.isStopped()]).toEqual([true, false]);
    await s.stop();
    expect([r.informer.isStarted(), r.informer.isStopped()]).toEqual([true, true]);
    expect(r.informer.health().state).toBe('stopped');
  });

  // SI-16, SI-17
  it('refuses new handlers once stopped, but removing one is still fine', async () => {
    const r = make();
    const reg = r.informer.addEventHandler(new Recorder());
    const s = start(r);
    await s.stop();
    expect(() => r.informer.addEventHandler(new Recorder())).toThrow(/was not added to shared informer informer because it has stopped already$/);
    expect(() => r.informer.removeEventHandler(reg)).not.toThrow();
    expect(r.informer.handlerCount()).toBe(0);
  });

  it('refuses a second run() with ALREADY_STARTED', async () => {
    const r = make();
    const s = start(r);
    await expect(r.informer.run(new AbortController().signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
    await s.stop();
    await expect(r.informer.run(new AbortController().signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
  });

  // SI-18
  it('delivers nothing to a handler after it was removed', async () => {
    const r = make();
    const rec = new Recorder();
    const reg = r.informer.addEventHandler(rec);
    const s = start(r);
    await r.informer.whenSynced();
    r.source.add(pod('pod1'));
    await until(() => rec.events.length === 1);
    r.informer.removeEventHandler(reg);
    expect(r.informer.isHandlerRegistered(reg)).toBe(false);
    r.source.add(pod('pod2'));
    await until(() => r.informer.getStore().list().length === 2);
    await until(() => true);
    expect(rec.names()).toEqual(['pod1']);
    await s.stop();
  });

  // SI-19
  it('replays the cache to a handler added while running, and syncs it only once handled', async () => {
    const r = make();
    const l1 = new Recorder();
    const h1 = r.informer.addEventHandler(l1);
    expect(h1.hasSynced()).toBe(false);
    const s = start(r);
    r.source.add(pod('pod1'));
    await h1.whenSynced();
    await until(() => l1.events.length === 1);
    expect(h1.hasSynced()).toBe(true);
    const gate = deferred();
    const l2 = new Recorder();
    const h2 = r.informer.addEventHandler({
      onAdd: async (obj, initial) => {
        await gate.promise;
        l2.onAdd(obj, initial);
      },
    });
    expect(h2.hasSynced()).toBe(false);
    await until(() => true);
    expect(h2.hasSynced()).toBe(false);
    gate.resolve();
    r.source.add(pod('pod2'));
    await h2.whenSynced();
    await until(() => l2.events.length === 2);
    expect(l2.events).toEqual([
      { type: 'add', name: 'pod1', initial: true, rv: '1' },
      { type: 'add', name: 'pod2', initial: false, rv: '2' },
    ]);
    expect(l1.names()).toEqual(['pod1', 'pod2']);
    expect(r.informer.isHandlerRegistered(h1) && r.informer.isHandlerRegistered(h2)).toBe(true);
    await s.stop();
  });

  // SI-20
  it('leaves no resource behind in any shutdown order', async () => {
    const before = process.getActiveResourcesInfo().length;
    // (a) handler, run, sync, stop, remove
    let r = make();
    let reg = r.informer.addEventHandler(new Recorder());
    let s = start(r);
    await r.informer.whenSynced();
    await s.stop();
    r.informer.removeEventHandler(reg);
    // (b) run, sync, add + remove a handler, stop
    r = make();
    s = start(r);
    await r.informer.whenSynced();
    reg = r.informer.addEventHandler(new Recorder());
    r.informer.removeEventHandler(reg);
    await s.stop();
    // (c) a handler on a never-run informer
    r = make();
    r.informer.addEventHandler(new Recorder());
    await until(() => true);
    expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(before);
  });

  // SI-21 (our policy: a failure is reported once, never retried, and never blocks sync)
  it("reports each failing notification once per handler under errorPolicy 'report'", async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    for (let i = 0; i < 5; i++) source.add(pod(`p${i}`));
    const reports: string[] = [];
    const informer = new SharedIndexInformer<Pod>(source, { clock, errorPolicy: 'report', onError: (e) => reports.push(e instanceof HandlerError ? e.handlerName : e.code) });
    const failing = { onAdd: () => Promise.reject(new Error('fake panic')) };
    const r1 = informer.addEventHandler(failing, { name: 'fake-event-handler-1' });
    const r2 = informer.addEventHandler(failing, { name: 'fake-event-handler-2' });
    const s = start({ clock, source, informer });
    await Promise.all([r1.whenSynced(), r2.whenSynced()]);
    expect(reports.filter((n) => n === 'fake-event-handler-1')).toHaveLength(5);
    expect(reports.filter((n) => n === 'fake-event-handler-2')).toHaveLength(5);
    await s.stop();
  });

  // SI-22, SI-23
  it('removeEventHandler returns at once; shutDownEventHandler waits for the running callback', async () => {
    const r = make();
    r.source.add(pod('a'));
    const entered = deferred();
    const release = deferred();
    let finished = false;
    const handler = {
      onAdd: async () => {
        entered.resolve();
        await release.promise;
        finished = true;
      },
    };
    const reg = r.informer.addEventHandler(handler);
    const s = start(r);
    await entered.promise;
    r.informer.removeEventHandler(reg);
    expect(finished).toBe(false);
    const reg2 = r.informer.addEventHandler({
      onAdd: async () => {
        await release.promise;
      },
    });
    let shutDown = false;
    const waiting = r.informer.shutDownEventHandler(reg2).then(() => {
      shutDown = true;
    });
    await until(() => true);
    expect(shutDown).toBe(false);
    release.resolve();
    await waiting;
    expect(shutDown).toBe(true);
    await s.stop();
    expect(finished).toBe(true);
  });

  // SI-24
  it('shuts a handler down promptly in every lifecycle', async () => {
    // (a) never started
    let r = make();
    await r.informer.shutDownEventHandler(r.informer.addEventHandler(new Recorder()));
    // (b) started and synced, then a handler added and shut down
    r = make();
    let s = start(r);
    await r.informer.whenSynced();
    await r.informer.shutDownEventHandler(r.informer.addEventHandler(new Recorder()));
    await s.stop();
    // (c) handler added, informer started and synced, then shut down
    r = make();
    const reg = r.informer.addEventHandler(new Recorder());
    s = start(r);
    await reg.whenSynced();
    await r.informer.shutDownEventHandler(reg);
    expect(r.informer.handlerCount()).toBe(0);
    await s.stop();
  });
});
