import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { Reflector } from '../../src/reflector/reflector.js';
import { FakeWatch, RecordingStore, ScriptedLW, bookmark, connRefused, harness, pod, podList, settle, statusEvent } from './helpers.js';
import type { Pod } from './helpers.js';

describe('Reflector list and watch', () => {
  // RF-12 (b)
  it('lists at "0" with limit 500, then watches from the list resource version with bookmarks', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', [pod('foo', '1')]));
    const w = new FakeWatch();
    h.lw.watches.push(w);
    h.start();
    await settle();
    w.push(
      { type: 'MODIFIED', object: pod('foo', '2') },
      { type: 'ADDED', object: pod('bar', '3') },
      { type: 'ADDED', object: pod('baz', '4') },
      { type: 'ADDED', object: pod('qux', '5') },
      { type: 'ADDED', object: pod('zoo', '6') },
    );
    await settle();
    expect(h.lw.listRequests()).toEqual([{ resourceVersion: '0', limit: 500 }]);
    expect(h.lw.watchRequests()).toEqual([{ resourceVersion: '1', timeoutSeconds: 300, allowWatchBookmarks: true }]);
    expect(h.store.snapshot()).toEqual({ bar: '3', baz: '4', foo: '2', qux: '5', zoo: '6' });
    expect(h.reflector.lastSyncResourceVersion()).toBe('6');
    expect(h.store.ops[0]).toBe('replace@1 [foo]');
    await h.stop();
  });

  // RF-13
  it('leaves the store right after each of several list-and-watch cycles, and rejects with list and watch errors', async () => {
    const clock = new FakeClock();
    const store = new RecordingStore();
    const cycle = async (lw: ScriptedLW, events: Array<{ type: 'ADDED' | 'DELETED'; object: Pod }>): Promise<unknown> => {
      const r = new Reflector<Pod>(lw, store, { clock, random: () => 0 });
      const ac = new AbortController();
      const p = r.listAndWatch(ac.signal).catch((e: unknown) => e);
      await settle();
      lw.current?.push(...events);
      await settle();
      ac.abort();
      return p;
    };
    let lw = new ScriptedLW();
    lw.lists.push(podList('1', []));
    expect(await cycle(lw, [{ type: 'ADDED', object: pod('foo', '2') }, { type: 'ADDED', object: pod('bar', '3') }])).toBeUndefined();
    expect(store.snapshot()).toEqual({ bar: '3', foo: '2' });

    lw = new ScriptedLW();
    lw.lists.push(podList('3', [pod('foo', '2'), pod('bar', '3')]));
    expect(await cycle(lw, [{ type: 'DELETED', object: pod('foo', '4') }, { type: 'ADDED', object: pod('qux', '5') }])).toBeUndefined();
    expect(store.snapshot()).toEqual({ bar: '3', qux: '5' });

    lw = new ScriptedLW();
    const listError = new Error('a list error');
    lw.lists.push(listError);
    expect(await cycle(lw, [])).toBe(listError);
    expect(store.snapshot()).toEqual({ bar: '3', qux: '5' });

    lw = new ScriptedLW();
    const watchError = new Error('a watch error');
    lw.lists.push(podList('5', [pod('bar', '3'), pod('qux', '5')]));
    lw.watches.push(watchError);
    expect(await cycle(lw, [])).toBe(watchError);

    lw = new ScriptedLW();
    lw.lists.push(podList('5', [pod('bar', '3'), pod('qux', '5')]));
    expect(await cycle(lw, [{ type: 'ADDED', object: pod('baz', '6') }])).toBeUndefined();
    expect(store.snapshot()).toEqual({ bar: '3', baz: '6', qux: '5' });
  });

  // RF-5, RF-2
  it('stops the open watch and resolves when the signal aborts during a watch', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('bar', '2') });
    await settle();
    expect(h.lw.watchRequests()).toHaveLength(1);
    await h.stop();
    expect(h.lw.current.stopped).toBe(true);
    expect(h.reflector.stats().watchConnected).toBe(false);
  });

  // RF-4
  it('sends no request at all when the signal is already aborted', async () => {
    const h = harness();
    h.controller.abort();
    await h.start();
    expect(h.lw.requests).toEqual([]);
    await h.stop();
  });

  it('does not call a quiet watch very short when the server ends it at its own short requested timeout', async () => {
    const h = harness({ minWatchTimeoutMs: 1000 });
    h.lw.lists.push(podList('1', []));
    const first = new FakeWatch();
    h.lw.watches.push(first, new FakeWatch());
    h.start();
    await settle();
    expect(h.lw.watchRequests()[0]).toMatchObject({ resourceVersion: '1', timeoutSeconds: 1 });
    await h.clock.advance(995); // the server's timer fires a little early, as seen from the client
    first.close();
    await settle();
    expect(h.codes()).toEqual([]);
    expect(h.lw.listRequests()).toHaveLength(1);
    expect(h.lw.watchRequests()).toHaveLength(2);
    await h.stop();
  });

  // RF-8, RF-9
  it('treats a watch that closes at once with no event as a very short watch and relists after backoff', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', []), podList('2', []));
    h.lw.watches.push(new FakeWatch().close());
    h.start();
    await settle();
    expect(h.codes()).toEqual(['WATCH_TOO_SHORT']);
    expect(h.errors[0].context.action).toBe('relist');
    expect(h.lw.current.stopped).toBe(true);
    expect(h.clock.nextTimerDelay()).toBe(800);
    await h.clock.advance(800);
    expect(h.lw.listRequests()).toEqual([{ resourceVersion: '0', limit: 500 }, { resourceVersion: '1' }]);
    await h.stop();
  });

  it('re-watches from the last resource version without relisting when the server closes a watch normally', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', [pod('a', '10')]));
    h.start();
    await settle();
    h.lw.current.push({ type: 'MODIFIED', object: pod('a', '11') }).close();
    await settle();
    expect(h.lw.listRequests()).toHaveLength(1);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '11']);
    expect(h.errors).toEqual([]);
    expect(h.store.ops).toEqual(['replace@10 [a]', 'update a@11']);
    await h.stop();
  });

  // RF-30 (the ADDED is at 15, not 10: a change at exactly the held version is refused, see regression tests)
  it('tells the store every accepted watch resource version, bookmarks included', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    h.lw.current.push(
      { type: 'ADDED', object: pod('a', '15') },
      { type: 'MODIFIED', object: pod('a', '20') },
      bookmark('30'),
      { type: 'DELETED', object: pod('a', '40') },
    );
    await settle();
    expect(h.store.rvUpdates).toEqual(['15', '20', '30', '40']);
    await h.stop();
  });

  it('never hands a bookmark to the store, but advances the resource version with it', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', [pod('a', '5')]));
    h.start();
    await settle();
    h.lw.current.push(bookmark('15'), bookmark('18')).close();
    await settle();
    expect(h.store.ops).toEqual(['replace@10 [a]']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('18');
    expect(h.reflector.stats().bookmarks).toBe(2);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '18']);
    await h.stop();
  });

  // RF-32
  it('relists after an in-stream 500 and drops the object the new list no longer has', async () => {
    const h = harness();
    h.lw.lists.push(podList('3', [pod('foo-1', '1'), pod('foo-2', '2'), pod('foo-3', '3')]));
    h.lw.lists.push(podList('5', [pod('foo-1', '1'), pod('foo-2', '2'), pod('foo-3', '3')]));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('foo', '4') }, statusEvent(500, 'StoreReadError'));
    await settle();
    expect(Object.keys(h.store.snapshot())).toContain('foo');
    expect(h.errors.map((e) => [e.context.phase, e.context.action])).toEqual([['watch', 'relist']]);
    await h.clock.advance(800);
    expect(h.store.snapshot()).toEqual({ 'foo-1': '1', 'foo-2': '2', 'foo-3': '3' });
    expect(h.reflector.lastSyncResourceVersion()).toBe('5');
    expect(h.lw.listRequests()[1]).toEqual({ resourceVersion: '4' });
    await h.stop();
  });

  it('never lets a watch ERROR Status reach the store', async () => {
    const h = harness();
    h.lw.lists.push(podList('3', []));
    h.start();
    await settle();
    h.lw.current.push(statusEvent(500, 'InternalError'));
    await settle();
    expect(h.store.ops).toEqual(['replace@3 []']);
    await h.stop();
  });

  // RF-1
  it('stops a watch whose first event is an ERROR without a Status, and relists', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ERROR', object: pod('not-a-status') });
    await settle();
    expect(h.lw.current.stopped).toBe(true);
    expect(h.codes()).toEqual(['API_STATUS']);
    await h.stop();
  });

  it('counts lists, watches, events and connection state in stats()', async () => {
    const h = harness();
    h.lw.lists.push(podList('1', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '2') });
    await settle();
    await h.clock.advance(5);
    const s = h.reflector.stats();
    expect(s).toMatchObject({ lists: 1, relists: 0, watches: 1, events: 1, bookmarks: 0, errors: 0, regressions: 0, watchConnected: true, lastSyncResourceVersion: '2', resourceVersionGuard: true, lastEventAt: 0, lastListAt: 0 });
    await h.stop();
  });

  it('rejects a second run() while the first is running', async () => {
    const h = harness();
    h.start();
    await expect(h.reflector.run(new AbortController().signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
    await h.stop();
  });

  it('rejects out-of-range options with INVALID_OPTION', () => {
    const lw = new ScriptedLW();
    const store = new RecordingStore();
    expect(() => new Reflector(lw, store, { pageSize: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new Reflector(lw, store, { minWatchTimeoutMs: 10 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new Reflector(lw, store, { backoff: { factor: 0.5 } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it('re-watches after connection refused on the watch request without relisting', async () => {
    const h = harness();
    h.lw.lists.push(podList('7', []));
    h.lw.watches.push(connRefused(), connRefused());
    h.start();
    await settle();
    expect(h.codes()).toEqual(['ECONNREFUSED']);
    expect(h.errors[0].context).toMatchObject({ phase: 'watch', action: 'rewatch' });
    await h.clock.advance(800);
    await h.clock.advance(1600);
    expect(h.lw.listRequests()).toHaveLength(1);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['7', '7', '7']);
    await h.stop();
  });
});
