import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { channelNames } from '../../src/observability/channels.js';
import { ResourceVersionRegressionError } from '../../src/reflector/errors.js';
import { bookmark, gone, harness, pod, podList, settle } from './helpers.js';

describe('Reflector resource-version guard', () => {
  // The production incident (kubernetes #58545 / client-go #338), exactly.
  it('rejects a DELETE carrying an old resource version, relists not older than the held one, and deletes for real via replace', async () => {
    const seen: unknown[] = [];
    const listener = (msg: unknown): void => void seen.push(msg);
    diagnosticsChannel.subscribe(channelNames.reflectorRegression, listener);
    try {
      const h = harness();
      h.lw.lists.push(podList('20', [pod('a', '15'), pod('b', '20')]));
      // The server's truth after the delete of b (at 31): only a@30.
      h.lw.lists.push(podList('31', [pod('a', '30')]));
      h.start();
      await settle();
      h.lw.current.push({ type: 'MODIFIED', object: pod('a', '30') }, { type: 'DELETED', object: pod('b', '20') }).close();
      await settle();
      // Rejected, not applied, reported.
      expect(h.store.ops).toEqual(['replace@20 [a,b]', 'update a@30']);
      expect(h.regressions).toEqual([
        { name: 'test', key: 'b', eventType: 'DELETED', heldResourceVersion: '30', eventResourceVersion: '20', reason: 'held' },
      ]);
      expect(seen).toHaveLength(1);
      expect(h.errors.map((e) => [e.error instanceof ResourceVersionRegressionError, e.context.phase, e.context.action])).toEqual([[true, 'guard', 'relist']]);
      expect(h.reflector.stats().regressions).toBe(1);
      expect(h.reflector.lastSyncResourceVersion()).toBe('30');
      await h.clock.advance(800);
      // The next request asks for 30 (not older), NotOlderThan; b is gone via replace; nothing replayed.
      expect(h.lw.listRequests()).toEqual([{ resourceVersion: '0', limit: 500 }, { resourceVersion: '30', resourceVersionMatch: 'NotOlderThan' }]);
      expect(h.store.ops).toEqual(['replace@20 [a,b]', 'update a@30', 'replace@31 [a]']);
      expect(h.store.snapshot()).toEqual({ a: '30' });
      expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['20', '31']);
      expect(h.lw.backwardRequests()).toEqual([]);
      await h.stop();
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.reflectorRegression, listener);
    }
  });

  // RF-10, deliberately the opposite of client-go: the older event is rejected.
  it('applies in-order events and rejects an event older than one already applied (RF-10 reversed)', async () => {
    const h = harness({ expectedKind: 'Pod' });
    h.lw.lists.push(podList('10', [pod('foo', '1'), pod('bar', '2')]));
    h.start();
    await settle();
    h.lw.current.push(
      { type: 'ADDED', object: { kind: 'Service', metadata: { name: 'rejected', resourceVersion: '11' } } },
      { type: 'DELETED', object: pod('foo', '12') },
      { type: 'MODIFIED', object: pod('bar', '55') },
      { type: 'ADDED', object: pod('baz', '32') },
    );
    await settle();
    expect(h.store.snapshot()).toEqual({ bar: '55' });
    expect(h.reflector.lastSyncResourceVersion()).toBe('55');
    expect(h.codes()).toEqual(['INVALID_OBJECT', 'RESOURCE_VERSION_REGRESSION']);
    expect(h.errors[0].context).toMatchObject({ phase: 'event', action: 'skip' });
    expect(h.regressions[0]).toMatchObject({ key: 'baz', eventType: 'ADDED', heldResourceVersion: '55', eventResourceVersion: '32' });
    await h.stop();
  });

  it('rejects an ADDED/MODIFIED older than the cached copy of the same object when knownObjects is given', async () => {
    // A watch from "" (the list carried no version): its ADDED events are not checked against a held
    // version, so the cached copy is what an event must not be older than.
    const known = new Map([['x', pod('x', '90')]]);
    const h2 = harness({ knownObjects: { getByKey: (k) => known.get(k) } });
    h2.lw.lists.push(podList('', []));
    h2.start();
    await settle();
    h2.lw.current.push({ type: 'ADDED', object: pod('x', '60') });
    await settle();
    expect(h2.store.ops).toEqual(['replace@ []']);
    expect(h2.regressions).toEqual([
      { name: 'test', key: 'x', eventType: 'ADDED', heldResourceVersion: '', eventResourceVersion: '60', reason: 'stored', storedResourceVersion: '90' },
    ]);
    await h2.stop();
  });

  it('does not read the cached copy for a change newer than the held version: the held version bounds the cache', async () => {
    // Everything the reflector hands the store is at most the held version (a list's, or an adopted
    // event's), so a change newer than held is newer than any copy the store can have got from it. A
    // copy newer than held can only have been written by someone else (here: the test).
    const known = new Map([['x', pod('x', '90')]]);
    let reads = 0;
    const h2 = harness({ knownObjects: { getByKey: (k) => (reads++, known.get(k)) } });
    h2.lw.lists.push(podList('50', []));
    h2.start();
    await settle();
    const before = reads;
    h2.lw.current.push({ type: 'MODIFIED', object: pod('x', '60') });
    await settle();
    expect(reads).toBe(before);
    expect(h2.store.ops).toEqual(['replace@50 []', 'update x@60']);
    expect(h2.regressions).toEqual([]);
    await h2.stop();
  });

  it('rejects a bookmark older than the held resource version', async () => {
    const h = harness();
    h.lw.lists.push(podList('50', []));
    h.start();
    await settle();
    h.lw.current.push(bookmark('40'));
    await settle();
    expect(h.regressions).toMatchObject([{ eventType: 'BOOKMARK', heldResourceVersion: '50', eventResourceVersion: '40' }]);
    expect(h.reflector.lastSyncResourceVersion()).toBe('50');
    await h.stop();
  });

  it('refuses a list answer older than the held version, then asks for a consistent list', async () => {
    const h = harness();
    h.lw.lists.push(podList('50', [pod('a', '50')]), podList('40', [pod('old', '40')]), podList('60', [pod('a', '60')]));
    h.lw.watches.push(gone());
    h.start();
    await settle();
    // The watch's 410 relists at once (not older than 50); the refused answer ends the cycle with backoff.
    expect(h.store.ops).toEqual(['replace@50 [a]']);
    expect(h.regressions).toMatchObject([{ eventType: 'LIST', heldResourceVersion: '50', eventResourceVersion: '40' }]);
    await h.clock.advance(800);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '50', '']);
    expect(h.store.snapshot()).toEqual({ a: '60' });
    await h.stop();
  });

  it('adopts a consistent list older than the held version (etcd restored) and reports it as accepted', async () => {
    const h = harness();
    h.lw.lists.push(podList('50', []), gone(), podList('30', [pod('r', '30')]));
    h.lw.watches.push(gone());
    h.start();
    await settle();
    await h.clock.advance(800);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '50', '']);
    expect(h.regressions).toMatchObject([{ eventType: 'LIST', eventResourceVersion: '30', accepted: true }]);
    expect(h.store.snapshot()).toEqual({ r: '30' });
    expect(h.reflector.lastSyncResourceVersion()).toBe('30');
    await h.stop();
  });

  it('turns the guard off with exactly one warning on non-integer resource versions, and keeps working', async () => {
    const h = harness();
    h.lw.lists.push(podList('abc', [pod('a', 'abc')]));
    h.start();
    await settle();
    h.lw.current.push({ type: 'MODIFIED', object: pod('a', 'xyz') }, { type: 'ADDED', object: pod('b', 'pqr') }).close();
    await settle();
    h.lw.current.push({ type: 'MODIFIED', object: pod('b', 'zzz') });
    await settle();
    expect(h.codes()).toEqual(['INVALID_RESOURCE_VERSION']);
    expect(h.errors[0].context).toMatchObject({ phase: 'guard', action: 'warn' });
    expect(h.reflector.stats().resourceVersionGuard).toBe(false);
    expect(h.store.snapshot()).toEqual({ a: 'xyz', b: 'zzz' });
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['abc', 'pqr']);
    await h.stop();
  });

  it('does not adopt the versions of synthetic ADDED events of a watch started at "" until a non-ADDED event', async () => {
    const h = harness();
    h.lw.lists.push(podList('', []));
    h.start();
    await settle();
    expect(h.lw.watchRequests()[0].resourceVersion).toBe('');
    h.lw.current.push({ type: 'ADDED', object: pod('a', '30') }, { type: 'ADDED', object: pod('b', '20') });
    await settle();
    expect(h.reflector.lastSyncResourceVersion()).toBe('');
    expect(h.regressions).toEqual([]);
    h.lw.current.push({ type: 'MODIFIED', object: pod('a', '35') }, { type: 'ADDED', object: pod('c', '33') });
    await settle();
    expect(h.reflector.lastSyncResourceVersion()).toBe('35');
    expect(h.regressions).toMatchObject([{ key: 'c', eventResourceVersion: '33' }]);
    await h.stop();
  });

  it('rejects a change at exactly the held resource version (it would be replayed on resume), but accepts a bookmark there', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', [pod('b', '10')]), podList('12', []));
    h.start();
    await settle();
    h.lw.current.push(bookmark('10'), { type: 'DELETED', object: pod('b', '10') });
    await settle();
    expect(h.store.ops).toEqual(['replace@10 [b]']);
    expect(h.regressions).toMatchObject([{ key: 'b', eventType: 'DELETED', heldResourceVersion: '10', eventResourceVersion: '10' }]);
    await h.clock.advance(800);
    expect(h.store.ops).toEqual(['replace@10 [b]', 'replace@12 []']);
    await h.stop();
  });

  it('relists, not older than the newest event applied, when a watch from "0" ends before a version was adopted', async () => {
    const h = harness();
    h.lw.lists.push(podList('0', []), podList('5', [pod('a', '3'), pod('b', '4')]));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '3') }, { type: 'ADDED', object: pod('b', '4') }).close();
    await settle();
    expect(h.reflector.lastSyncResourceVersion()).toBe('0');
    expect(h.codes()).toEqual(['WATCH_UNRESUMABLE']);
    expect(h.errors[0].error.name).toBe('UnresumableWatchError');
    expect(h.lw.watchRequests()).toHaveLength(1);
    await h.clock.advance(800);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '4']);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['0', '5']);
    expect(h.lw.backwardRequests()).toEqual([]);
    await h.stop();
  });
});
