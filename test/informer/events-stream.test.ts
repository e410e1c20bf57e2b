// informer.events(): the notifications as a `for await` stream — the handler API's order, cleanup on
// break / abort / throw, a bounded queue that holds the delivery, the informer's failure thrown into the
// loop; the same function on NamespaceSetInformer (on the fake API server).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { DeletedFinalStateUnknown } from '../../src/core/keys.js';
import type { KubeObject } from '../../src/core/index.js';
import { NamespaceSetInformer, SharedIndexInformer, type InformerEvent } from '../../src/informer/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { openHandles, leftoverHandles } from '../helpers/handles.js';
import { failOnUnhandledRejections, pod, prng, Recorder, until, type Pod, type Recorded } from './helpers.js';

failOnUnhandledRejections();

function setup(): { source: FakeControllerSource<Pod>; informer: SharedIndexInformer<Pod>; ac: AbortController } {
  const clock = new FakeClock();
  const source = new FakeControllerSource<Pod>();
  const informer = new SharedIndexInformer<Pod>(source, { clock, logger: false });
  return { source, informer, ac: new AbortController() };
}

/** An event as the Recorder records the handler API's callbacks. */
function recorded(e: InformerEvent<Pod>): Recorded {
  const obj = e.object instanceof DeletedFinalStateUnknown ? e.object.obj : e.object;
  const name = obj.metadata.name;
  if (e.type === 'add') return { type: 'add', name, initial: e.isInInitialList, rv: obj.metadata.resourceVersion };
  if (e.type === 'update') return { type: 'update', name, oldRv: e.oldObject.metadata.resourceVersion, rv: obj.metadata.resourceVersion };
  return { type: 'delete', name, tombstone: e.object instanceof DeletedFinalStateUnknown };
}

describe('informer.events()', () => {
  it('yields what a handler gets, in the same order, for a seeded run of adds, updates and deletes', async () => {
    const { source, informer, ac } = setup();
    const random = prng(50);
    for (let i = 0; i < 5; i++) source.add(pod(`p${i}`));
    const handler = new Recorder();
    informer.addEventHandler(handler);
    const stream = informer.events(ac.signal, { highWaterMark: 3 });
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    const live = new Set(Array.from({ length: 5 }, (_, i) => `p${i}`));
    for (let i = 0; i < 200; i++) {
      const name = `p${Math.floor(random() * 10)}`;
      if (!live.has(name)) {
        source.add(pod(name, { labels: { i: String(i) } }));
        live.add(name);
      } else if (random() < 0.7) source.modify(pod(name, { labels: { i: String(i) } }));
      else {
        source.delete(pod(name));
        live.delete(name);
      }
    }
    await until(() => handler.events.length === 205, 'the handler got every notification');
    const seen: Recorded[] = [];
    for await (const e of stream) {
      seen.push(recorded(e));
      if (seen.length === 205) break;
    }
    expect(seen).toEqual(handler.events);
    expect(seen.length).toBeGreaterThan(5);
    ac.abort();
    await done;
  });

  it('removes its registration on break, on abort and when the loop body throws', async () => {
    const { source, informer, ac } = setup();
    source.add(pod('a'));
    source.add(pod('b'));
    const done = informer.run(ac.signal);
    expect(informer.handlerCount()).toBe(0);
    for await (const e of informer.events()) {
      expect(informer.handlerCount()).toBe(1);
      if (e.type === 'add') break;
    }
    expect(informer.handlerCount()).toBe(0);

    const stop = new AbortController();
    const seen: string[] = [];
    const loop = (async () => {
      for await (const e of informer.events(stop.signal)) seen.push(e.type);
    })();
    await until(() => seen.length === 2);
    stop.abort();
    await loop; // an abort ends the loop quietly
    expect(informer.handlerCount()).toBe(0);

    await expect(
      (async () => {
        for await (const _ of informer.events()) throw new Error('consumer failed');
      })(),
    ).rejects.toThrow('consumer failed');
    expect(informer.handlerCount()).toBe(0);
    ac.abort();
    await done;
  });

  it('holds the delivery at highWaterMark: the rest waits in its registration, counted in health(), and nothing is lost', async () => {
    const { source, informer, ac } = setup();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    const stream = informer.events(ac.signal, { highWaterMark: 4, name: 'slow' });
    const fast = new Recorder();
    informer.addEventHandler(fast);
    for (let i = 0; i < 100; i++) source.add(pod(`p${i}`));
    await until(() => fast.events.length === 100);
    const slow = () => informer.health().handlers.find((h) => h.name === 'slow');
    // Four in the stream (the fourth's callback held until the loop takes one), the rest in the registration's buffer.
    await until(() => slow()?.backlog === 96, `backlog of 96 (${JSON.stringify(slow())})`);
    expect(slow()?.delivered).toBe(3);
    expect(slow()?.inFlightMs).toBeDefined();
    const names: string[] = [];
    for await (const e of stream) {
      names.push(e.object instanceof DeletedFinalStateUnknown ? '' : e.object.metadata.name);
      if (names.length === 100) break;
    }
    expect(names).toEqual(Array.from({ length: 100 }, (_, i) => `p${i}`));
    ac.abort();
    await done;
  });

  it('lets go of a held delivery when the informer stops: run() resolves without waiting for the grace', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const informer = new SharedIndexInformer<Pod>(source, { clock, logger: false, stopGraceMs: 60_000 });
    for (let i = 0; i < 10; i++) source.add(pod(`p${i}`));
    const ac = new AbortController();
    const stream = informer.events(undefined, { highWaterMark: 2 });
    const done = informer.run(ac.signal);
    await until(() => informer.health().handlers[0]?.inFlightMs !== undefined);
    ac.abort();
    await done; // the fake clock never moves: a held callback would hold this for the 60 s grace
    const names: string[] = [];
    for await (const e of stream) names.push(e.type); // what the stream held, then the end
    expect(names).toEqual(['add', 'add']);
    expect(informer.handlerCount()).toBe(0);
  });

  it("throws the informer's failure into the loop (another handler threw), after which the loop is done", async () => {
    const { source, informer, ac } = setup();
    informer.addEventHandler({
      onUpdate: () => {
        throw new Error('handler bug');
      },
    });
    const done = informer.run(ac.signal).catch((err: unknown) => err);
    await informer.whenSynced();
    const stream = informer.events();
    source.add(pod('a'));
    source.modify(pod('a', { labels: { v: '2' } }));
    const err = await (async () => {
      try {
        for await (const _ of stream) {
          /* consume */
        }
      } catch (e) {
        return e as Error & { code?: string };
      }
      return undefined;
    })();
    expect(err?.code).toBe('HANDLER_FAILED');
    expect((err?.cause as Error).message).toBe('handler bug');
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect(await done).toBe(err);
  });

  it('refuses a stopped informer with INFORMER_STOPPED, and bad options with INVALID_OPTION', async () => {
    const { informer, ac } = setup();
    expect(() => informer.events(undefined, { highWaterMark: 0 })).toThrow(/highWaterMark/);
    expect(() => informer.events(undefined, { bufferSize: 3 } as never)).toThrow(/bufferSize/);
    expect(() => informer.events('signal' as never)).toThrow(/AbortSignal/);
    const done = informer.run(ac.signal);
    ac.abort();
    await done;
    expect(() => informer.events()).toThrow(expect.objectContaining({ code: 'INFORMER_STOPPED' }));
    expect(informer.handlerCount()).toBe(0);
  });

  it('answers next() calls made before the last settled in order, as an async generator does', async () => {
    const { source, informer, ac } = setup();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    const stream = informer.events();
    const first = stream.next();
    const second = stream.next();
    source.add(pod('a'));
    source.add(pod('b'));
    const [a, b] = await Promise.all([first, second]);
    expect([a.value?.object, b.value?.object].map((o) => (o as Pod).metadata.name)).toEqual(['a', 'b']);
    const third = stream.next();
    await stream.return();
    expect(await third).toEqual({ value: undefined, done: true });
    ac.abort();
    await done;
  });

  it('streams a NamespaceSetInformer through the same function: every namespace, removal on break, nothing left open', async () => {
    const before = openHandles();
    const fake = await startFakeApiServer();
    const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
    fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'a' } });
    fake.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y', namespace: 'b' } });
    const informer = new NamespaceSetInformer<KubeObject>({
      name: 'cms',
      namespaces: ['a', 'b'],
      resource: CONFIGMAPS,
      logger: false,
      informerFor: (namespace) => new SharedIndexInformer(newListWatch<KubeObject>(fake.kubeConfig, CONFIGMAPS, { namespace, logger: false }), { name: `cms/${namespace}`, logger: false }),
    });
    const ac = new AbortController();
    const stream = informer.events(ac.signal);
    const done = informer.run(ac.signal);
    const seen: string[] = [];
    for await (const e of stream) {
      const o = e.object as KubeObject;
      seen.push(`${e.type} ${o.metadata?.namespace}/${o.metadata?.name}`);
      if (seen.length === 2) break;
    }
    expect(seen.sort()).toEqual(['add a/x', 'add b/y']);
    const again = informer.events();
    ac.abort();
    await done;
    for await (const _ of again) {
      /* what it held: the stop ends the loop */
    }
    expect(() => informer.events()).toThrow(expect.objectContaining({ code: 'INFORMER_STOPPED' }));
    await fake.close();
    expect(await leftoverHandles(before)).toEqual([]);
  });
});
