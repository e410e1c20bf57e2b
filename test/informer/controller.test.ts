// The low-level controller and newInformer, ported from client-go's controller_test.go (CT-1..15).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { DeletedFinalStateUnknown, deletionHandlingMetaNamespaceKeyFunc, metaNamespaceKeyFunc } from '../../src/core/keys.js';
import { DeltaFIFO } from '../../src/fifo/delta-fifo.js';
import { newController, newIndexerInformer, newInformer, processDeltas } from '../../src/informer/index.js';
import { newStore } from '../../src/store/store.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { pod, prng, Recorder, failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

const keyOf = (o: unknown): string => deletionHandlingMetaNamespaceKeyFunc(o);

describe('low-level controller and newInformer (client-go controller_test)', () => {
  // CT-1
  it('runs a custom process function over a DeltaFIFO whose known objects are a downstream store', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const downstream = newStore<Pod>(keyOf);
    const queue = new DeltaFIFO<Pod>({ knownObjects: downstream, emitDeltaTypeReplaced: true });
    const deleted: string[] = [];
    const controller = newController<Pod>({
      queue,
      listerWatcher: source,
      resyncPeriodMs: 100,
      clock,
      process: (deltas) => {
        const newest = deltas[deltas.length - 1];
        if (newest.type !== 'Deleted') {
          downstream.add(newest.object as Pod);
          source.delete(newest.object as Pod);
        } else {
          downstream.delete(newest.object);
          deleted.push(keyOf(newest.object));
        }
      },
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    for (const name of ['a-hello', 'b-controller', 'c-framework']) source.add(pod(name));
    await until(() => deleted.length === 3);
    expect(deleted.sort()).toEqual(['default/a-hello', 'default/b-controller', 'default/c-framework']);
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
  });

  // CT-2
  it('lets a newInformer handler delete what it sees and report the deletions', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const deleted: string[] = [];
    const { controller } = newInformer<Pod>(
      source,
      { onAdd: (obj) => void source.delete(obj), onDelete: (obj) => void deleted.push(keyOf(obj)) },
      { clock, resyncPeriodMs: 100 },
    );
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    for (const name of ['a-hello', 'b-controller', 'c-framework']) source.add(pod(name));
    await until(() => deleted.length === 3);
    expect(deleted.sort()).toEqual(['default/a-hello', 'default/b-controller', 'default/c-framework']);
    ac.abort();
    await done;
  });

  // CT-3
  it('converges under a hammer of random changes and resyncs', async () => {
    const seed = 0xc73;
    const rand = prng(seed);
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const ops = new Map<string, string[]>();
    const record = (op: string) => (obj: unknown): void => {
      const k = keyOf(obj);
      ops.set(k, [...(ops.get(k) ?? []), op]);
    };
    const { store, controller } = newInformer<Pod>(
      source,
      { onAdd: record('add'), onUpdate: (_o, n) => record('update')(n), onDelete: record('delete') },
      { clock, resyncPeriodMs: 100 },
    );
    expect(controller.hasSynced()).toBe(false);
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await until(() => controller.hasSynced());
    let next = 0;
    for (let i = 0; i < 300; i++) {
      const items = source.items();
      const x = rand();
      if (items.length === 0 || x < 1 / 3) source.add(pod(`p${next++}`, { labels: { v: String(rand()) } }));
      else if (x < 2 / 3) source.modify({ ...items[Math.floor(rand() * items.length)], spec: { nodeName: String(rand()) } });
      else source.delete(items[Math.floor(rand() * items.length)]);
      if (i % 25 === 0) await clock.advance(100);
    }
    const want = source.items().map((p) => keyOf(p)).sort();
    await until(() => store.listKeys().length === want.length && [...ops.values()].flat().length > 0, `seed ${seed}`);
    expect(store.listKeys().sort(), `seed ${seed}`).toEqual(want);
    for (const [k, list] of ops) {
      if (!want.includes(k)) expect(list[list.length - 1], `seed ${seed} ${k}`).toBe('delete');
    }
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
  });

  // CT-4
  it('only ever shows allowed label transitions to an update handler', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const allowed = new Set(['from->to', 'to->to', 'from->from']);
    const bad: string[] = [];
    let deletions = 0;
    const { controller } = newInformer<Pod>(
      source,
      {
        onUpdate: (o, n) => {
          const t = `${o.metadata.labels?.check}->${n.metadata.labels?.check}`;
          if (!allowed.has(t)) bad.push(t);
          if (n.metadata.labels?.final === 'true') source.delete(n);
        },
        onDelete: () => void deletions++,
      },
      { clock },
    );
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await until(() => source.calls().some((c) => c.verb === 'watch'));
    for (let i = 0; i < 3; i++) {
      const created = source.add(pod(`a-${i}-0`, { labels: { check: 'from' } }));
      source.modify({ ...created, metadata: { ...created.metadata, labels: { check: 'to', final: 'true' } } });
    }
    await until(() => deletions === 3);
    expect(bad).toEqual([]);
    ac.abort();
    await done;
  });

  // CT-6
  it('shows handlers and the store only transformed objects, including the old side of an update', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const transform = (p: Pod): Pod => ({ ...p, spec: { nodeName: 'node-x' }, metadata: { ...p.metadata, resourceVersion: '' } });
    const events: string[] = [];
    const describeObj = (p: Pod): string => `${p.metadata.name}:${String(p.metadata.labels?.gen)}:${p.spec?.nodeName}`;
    const created = source.add(pod('pod1', { labels: { gen: '1' } }));
    source.modify({ ...created, metadata: { ...created.metadata, labels: { gen: '2' } } });
    const { store, controller } = newInformer<Pod>(
      source,
      {
        onAdd: (p) => void events.push(`Added ${describeObj(p)}`),
        onUpdate: (o, n) => void events.push(`Modified ${describeObj(o)} -> ${describeObj(n)}`),
        onDelete: (p) => void events.push(`Deleted ${describeObj(p as Pod)}`),
      },
      { clock, transform },
    );
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await until(() => events.length === 1);
    const p2 = source.add(pod('pod2', { labels: { gen: '1' } }));
    source.add(pod('pod3', { labels: { gen: '1' } }));
    source.modify({ ...p2, metadata: { ...p2.metadata, labels: { gen: '2' } } });
    source.delete(source.items().find((p) => p.metadata.name === 'pod1') as Pod);
    await until(() => events.length === 5);
    expect(events).toEqual([
      'Added pod1:2:node-x',
      'Added pod2:1:node-x',
      'Added pod3:1:node-x',
      'Modified pod2:1:node-x -> pod2:2:node-x',
      'Deleted pod1:2:node-x',
    ]);
    expect(store.list().map(describeObj).sort()).toEqual(['pod2:2:node-x', 'pod3:1:node-x']);
    ac.abort();
    await done;
  });

  // CT-7
  it('never hands a resync back to the transform, and reads always see transformed objects', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    for (let i = 0; i < 5; i++) source.add(pod(`pod-${i}`, { labels: { 'to-be-transformed': 'true' } }));
    const failures: string[] = [];
    const transform = (p: Pod): Pod => {
      if (p.metadata.labels?.['to-be-transformed'] !== 'true') failures.push(p.metadata.name);
      return { ...p, metadata: { ...p.metadata, labels: { 'to-be-transformed': 'false' } } };
    };
    let events = 0;
    const { store, controller } = newInformer<Pod>(source, { onAdd: () => void events++, onUpdate: () => void events++ }, {
      clock,
      transform,
      resyncPeriodMs: 5,
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await until(() => events >= 5);
    for (let i = 0; i < 40; i++) {
      await clock.advance(5);
      for (let j = 0; j < 5; j++) {
        expect(store.getByKey(`default/pod-${j}`)?.metadata.labels?.['to-be-transformed']).toBe('false');
      }
    }
    expect(events).toBeGreaterThan(5);
    expect(failures).toEqual([]);
    ac.abort();
    await done;
  });

  // CT-8 (CT-9/CT-10's typed DeletedObject wrapper is not part of this API)
  it('gives a tombstone the same key as the object it wraps', () => {
    const cm = { metadata: { name: 'testname', namespace: 'testnamespace' } };
    const tombstone = new DeletedFinalStateUnknown(metaNamespaceKeyFunc(cm), cm);
    expect(deletionHandlingMetaNamespaceKeyFunc(tombstone)).toBe('testnamespace/testname');
  });

  // CT-12 (DeltaFIFO flavour; CT-11's batch processing and CT-14/15's atomic FIFO are RealFIFO-only)
  it('turns a replace into deletions, updates and adds, with the store already updated in each callback', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const store = newStore<Pod>(keyOf);
    const queue = new DeltaFIFO<Pod>({ knownObjects: store, emitDeltaTypeReplaced: true });
    const history: string[] = [];
    const storeRv = (o: unknown): string => store.getByKey(keyOf(o))?.metadata.resourceVersion ?? '';
    const eventRv = (o: unknown): string => ((o instanceof DeletedFinalStateUnknown ? o.obj : o) as Pod).metadata.resourceVersion ?? '';
    const handler = {
      onAdd: (o: Pod) => void history.push(`add ${keyOf(o)} ${eventRv(o)}/${storeRv(o)}`),
      onUpdate: (_o: Pod, n: Pod) => void history.push(`update ${keyOf(n)} ${eventRv(n)}/${storeRv(n)}`),
      onDelete: (o: unknown) => void history.push(`delete ${keyOf(o)} ${eventRv(o)}/${storeRv(o)}`),
    };
    const controller = newController<Pod>({
      queue,
      listerWatcher: source,
      clock,
      process: (deltas, initial) => processDeltas(handler, store, deltas, initial),
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await until(() => controller.hasSynced());
    const p = (name: string, rv: string, labels?: Record<string, string>): Pod => pod(name, { resourceVersion: rv, labels });
    const step = async (initial: Pod[], items: Pod[], expected: string[]): Promise<void> => {
      for (const k of store.listKeys()) store.delete(store.getByKey(k) as Pod);
      for (const o of initial) queue.add(o);
      await until(() => history.length === initial.length);
      history.length = 0;
      queue.replace(items, '10');
      await until(() => history.length === expected.length);
      const deletes = history.filter((h) => h.startsWith('delete')).sort();
      expect([...deletes, ...history.filter((h) => !h.startsWith('delete'))]).toEqual(expected);
      expect(store.listKeys().sort()).toEqual(items.map(keyOf).sort());
      history.length = 0;
    };
    // (a) create with no initial objects
    await step([], [p('pod-1', '1')], ['add default/pod-1 1/1']);
    // (b) delete all objects
    await step([p('pod-1', '1'), p('pod-3', '2')], [], ['delete default/pod-1 1/', 'delete default/pod-3 2/']);
    // (c) create, update, delete
    await step(
      [p('pod-1', '1'), p('pod-2', '2', { ver: '1' }), p('pod-3', '3')],
      [p('pod-1', '4'), p('pod-2', '5', { ver: '2' }), p('pod-4', '6')],
      ['delete default/pod-3 3/', 'update default/pod-1 4/4', 'update default/pod-2 5/5', 'add default/pod-4 6/6'],
    );
    ac.abort();
    await done;
  });

  // CT-13
  it('relists after a watch reset: updates and adds that are not part of the initial list', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const p1 = source.add(pod('pod-1'));
    const rec = new Recorder();
    const { controller } = newInformer<Pod>(source, rec, { clock });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await until(() => controller.hasSynced() && rec.events.length === 1);
    expect(rec.events).toEqual([{ type: 'add', name: 'pod-1', initial: true, rv: '1' }]);
    rec.clear();
    source.modifyDropWatch({ ...p1, spec: { nodeName: 'n' } });
    source.addDropWatch(pod('pod-2'));
    source.resetWatch();
    for (let i = 0; i < 40 && rec.events.length < 2; i++) await clock.advance(200);
    expect(rec.events).toEqual([
      { type: 'update', name: 'pod-1', oldRv: '1', rv: '2' },
      { type: 'add', name: 'pod-2', initial: false, rv: '3' },
    ]);
    ac.abort();
    await done;
  });

  it('builds an indexer informer whose indexer answers index queries', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a', {}, 'ns1'));
    source.add(pod('b', {}, 'ns2'));
    const { indexer, controller } = newIndexerInformer<Pod>(source, {}, {
      clock,
      indexers: { namespace: (p) => [p.metadata.namespace ?? ''] },
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await until(() => controller.hasSynced());
    expect(indexer.byIndex('namespace', 'ns2').map((p) => p.metadata.name)).toEqual(['b']);
    expect(controller.lastSyncResourceVersion()).toBe('2');
    await expect(controller.run(ac.signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
    ac.abort();
    await done;
  });

  it('resolves at once when the signal is already aborted', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const { controller } = newInformer<Pod>(source, {}, { clock });
    await controller.run(AbortSignal.abort());
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  // Incident 1 (kubernetes #93641) on the parked path: a watch event after the sync is processed inside
  // the reflector's store call (DeltaFIFO.park); its failure must still stop run() promptly, leaving nothing open.
  it('rejects run() with the error of a process call made while the loop was parked, and closes the watch', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    const queue = new DeltaFIFO<Pod>({ emitDeltaTypeReplaced: true });
    const boom = new Error('process failed');
    let calls = 0;
    const controller = newController<Pod>({
      queue,
      listerWatcher: source,
      clock,
      process: (deltas) => {
        calls++;
        if (deltas[0].type === 'Updated') throw boom;
      },
    });
    const running = controller.run(new AbortController().signal);
    await until(() => controller.hasSynced() && source.openWatches() === 1, 'synced and watching');
    source.modify(pod('a', { labels: { x: '1' } }));
    await expect(running).rejects.toBe(boom);
    expect(calls).toBe(2);
    expect(queue.size).toBe(0);
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
