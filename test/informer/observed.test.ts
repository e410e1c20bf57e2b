// awaitObserved: read-your-own-writes on an informer — observed, gone, delayed watches, abort, stop, bad input.

import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, flushPromises, type KubeObject } from '../../src/core/index.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

failOnUnhandledRejections();

const cm = (name: string, data: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data }) as KubeObject;

const stops: AbortController[] = [];
afterEach(() => stops.splice(0).forEach((s) => s.abort()));

async function started() {
  const clock = new FakeClock();
  const source = new FakeControllerSource<KubeObject>();
  const informer = new SharedIndexInformer<KubeObject>(source, { clock, logger: false });
  const stop = new AbortController();
  stops.push(stop);
  const running = informer.run(stop.signal);
  return { clock, source, informer, stop, running, synced: () => informer.whenSynced(stop.signal) };
}

/** Settles a promise into what it resolved with, or 'pending'. */
async function state<T>(p: Promise<T>): Promise<T | 'pending' | { rejected: unknown }> {
  let out: T | 'pending' | { rejected: unknown } = 'pending';
  p.then(
    (v) => (out = v),
    (e: unknown) => (out = { rejected: e }),
  );
  await flushPromises(4);
  return out;
}

describe('SharedIndexInformer.awaitObserved', () => {
  it("resolves 'observed' at once when the cache already holds the version, or a newer one", async () => {
    const t = await started();
    const first = t.source.add(cm('a'));
    await t.synced();
    expect(await t.informer.awaitObserved(first)).toBe('observed');
    t.source.modify(cm('a', { k: 'v' }));
    await flushPromises(4);
    expect(await t.informer.awaitObserved(first)).toBe('observed');
  });

  it('waits until a delayed watch delivers the written version', async () => {
    const t = await started();
    t.source.add(cm('a'));
    await t.synced();
    const written = t.source.modifyDropWatch(cm('a', { k: 'v' })); // the write happened; the watch did not say so yet
    const wait = t.informer.awaitObserved(written);
    expect(await state(wait)).toBe('pending');
    t.source.add(cm('other')); // a newer change of another key does not answer for 'a', whose object is cached
    expect(await state(wait)).toBe('pending');
    t.source.modify(cm('a', { k: 'w' }));
    expect(await state(wait)).toBe('observed');
    expect(t.informer.getIndexer().getByKey('ns/a')).toMatchObject({ data: { k: 'w' } });
  });

  it("resolves 'gone' when the object was created and deleted before the wait began", async () => {
    const t = await started();
    await t.synced();
    const created = t.source.add(cm('a'));
    t.source.delete(cm('a'));
    await flushPromises(4);
    expect(t.informer.getIndexer().getByKey('ns/a')).toBeUndefined();
    expect(await t.informer.awaitObserved(created)).toBe('gone');
  });

  it('a write that removed the last finalizer (answered at the version the cache holds) waits until the object is gone', async () => {
    // kube-apiserver answers the update that deletes an object (its last finalizer removed) with the
    // object as written at the version it was read at: a version the cache already holds, still with
    // the finalizer. Only the deletion's event says the write happened.
    const t = await started();
    const held = { ...cm('a'), metadata: { name: 'a', namespace: 'ns', finalizers: ['example.com/f'], deletionTimestamp: '2026-11-24T10:00:00Z' } } as KubeObject;
    const marked = t.source.add(held);
    await t.synced();
    const answer = { ...marked, metadata: { ...marked.metadata, finalizers: [] } } as KubeObject;
    const wait = t.informer.awaitObserved(answer);
    expect(await state(wait)).toBe('pending');
    t.source.delete(held);
    expect(await state(wait)).toBe('gone');
    // A pod answered mid-graceful-deletion (deletionTimestamp, no finalizers) is the object the cache holds at that version: observed.
    const graceful = t.source.add({ ...cm('p'), metadata: { name: 'p', namespace: 'ns', deletionTimestamp: '2026-11-24T10:00:00Z' } } as KubeObject);
    await flushPromises(4);
    expect(await t.informer.awaitObserved(graceful)).toBe('observed');
  });

  it("counts a first list taken whole towards 'gone': its newest version is applied, whatever its order", async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<KubeObject>();
    source.add(cm('b'));
    const ghost = source.add(cm('ghost')); // created and deleted before the list
    source.delete(cm('ghost'));
    source.add(cm('a'));
    // Listed in key order, a (newest) before b (oldest): only the newest version says the ghost is gone.
    const informer = new SharedIndexInformer<KubeObject>(source, { clock, logger: false });
    const stop = new AbortController();
    stops.push(stop);
    void informer.run(stop.signal);
    await informer.whenSynced(stop.signal);
    expect(await informer.awaitObserved(ghost)).toBe('gone');
    const newer = { ...cm('later'), metadata: { name: 'later', namespace: 'ns', resourceVersion: '1000' } } as KubeObject;
    expect(await state(informer.awaitObserved(newer))).toBe('pending');
  });

  it("resolves 'gone' for an absent object once a newer change of any key was applied", async () => {
    const t = await started();
    await t.synced();
    const ghost = t.source.addDropWatch(cm('ghost'));
    t.source.deleteDropWatch(cm('ghost'));
    const wait = t.informer.awaitObserved(ghost);
    expect(await state(wait)).toBe('pending');
    t.source.add(cm('later'));
    expect(await state(wait)).toBe('gone');
  });

  it('rejects with ABORTED when the signal aborts, leaving nothing registered; and when the informer stops', async () => {
    const t = await started();
    t.source.add(cm('a'));
    await t.synced();
    const written = t.source.modifyDropWatch(cm('a', { k: 'v' }));
    const ac = new AbortController();
    const aborted = t.informer.awaitObserved(written, ac.signal);
    ac.abort();
    expect(await state(aborted)).toMatchObject({ rejected: { code: 'ABORTED' } });
    const pending = t.informer.awaitObserved(written);
    t.stop.abort();
    await t.running;
    expect(await state(pending)).toMatchObject({ rejected: { code: 'INFORMER_STOPPED' } });
    await expect(t.informer.awaitObserved(written)).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
  });

  it('rejects input it cannot answer for with INVALID_OBJECT, saying why', async () => {
    const t = await started();
    expect(() => t.informer.awaitObserved({ metadata: { name: 'a' } })).toThrow(/metadata.name and metadata.resourceVersion/);
    expect(() => t.informer.awaitObserved({ metadata: { name: 'a', resourceVersion: 'abc' } })).toThrow(/not comparable/);
    expect(() => t.informer.awaitObserved(null)).toThrow(expect.objectContaining({ code: 'INVALID_OBJECT' }));
  });

  it('many waiters on many keys each resolve when their own write arrives', async () => {
    const t = await started();
    await t.synced();
    for (let i = 0; i < 200; i++) t.source.add(cm(`k${i}`));
    await flushPromises(4);
    const written = Array.from({ length: 200 }, (_, i) => t.source.modifyDropWatch(cm(`k${i}`, { v: 'dropped' })));
    const waits = written.map((w) => t.informer.awaitObserved(w));
    let settled = 0;
    for (const w of waits) void w.then(() => settled++);
    for (let i = 0; i < 100; i++) t.source.modify(cm(`k${i}`, { v: String(i) }));
    await flushPromises(4);
    expect(settled).toBe(100); // each waiter answers to its own key only
    for (let i = 100; i < 200; i++) t.source.modify(cm(`k${i}`, { v: String(i) }));
    expect(await Promise.all(waits)).toEqual(written.map(() => 'observed'));
  });
});

describe('SharedIndexInformer.awaitDeleted', () => {
  it("resolves 'gone' once the cache drops the object, 'observed' once it holds it with a deletionTimestamp, at once when already so", async () => {
    const t = await started();
    const a = t.source.add(cm('a'));
    const b = t.source.add(cm('b'));
    await t.synced();
    await flushPromises(4);
    const ref = (o: KubeObject) => ({ metadata: { name: o.metadata?.name, namespace: 'ns', uid: o.metadata?.uid } });
    const goneWait = t.informer.awaitDeleted(ref(a));
    const markedWait = t.informer.awaitDeleted(ref(b));
    expect(await state(goneWait)).toBe('pending');
    t.source.modify({ ...cm('b'), metadata: { ...b.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x/y'] } } as KubeObject);
    expect(await state(markedWait)).toBe('observed');
    expect(await state(goneWait)).toBe('pending');
    t.source.delete(cm('a'));
    expect(await state(goneWait)).toBe('gone');
    expect(await t.informer.awaitDeleted(ref(a))).toBe('gone');
    expect(await t.informer.awaitDeleted({ metadata: { name: 'never', namespace: 'ns' } })).toBe('gone');
  });

  it('an object of the same name with another uid is not the deleted one; without a uid any object of the name is', async () => {
    const t = await started();
    t.source.add(cm('a'));
    await t.synced();
    await flushPromises(4);
    expect(await t.informer.awaitDeleted({ metadata: { name: 'a', namespace: 'ns', uid: 'an-older-one' } })).toBe('gone');
    const wait = t.informer.awaitDeleted({ metadata: { name: 'a', namespace: 'ns' } });
    expect(await state(wait)).toBe('pending');
    const abort = new AbortController();
    const aborted = t.informer.awaitDeleted({ metadata: { name: 'a', namespace: 'ns' } }, abort.signal);
    abort.abort();
    expect(await state(aborted)).toMatchObject({ rejected: { code: 'ABORTED' } });
    t.source.delete(cm('a'));
    expect(await state(wait)).toBe('gone');
    expect(() => t.informer.awaitDeleted({ metadata: {} })).toThrow(/awaitDeleted needs the deleted object/);
  });
});
