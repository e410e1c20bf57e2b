import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/core/errors.js';
import type { WatchEvent } from '../../src/listwatch/types.js';
import { FakeWatch, bookmark, gone, harness, pod, podList, settle, statusEvent } from './helpers.js';
import type { Pod } from './helpers.js';

const added = (name: string, rv: string): WatchEvent<Pod> => ({ type: 'ADDED', object: pod(name, rv) });
const WL = { resourceVersion: '', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true, allowWatchBookmarks: true, timeoutSeconds: 300 };

describe('Reflector streaming list (useWatchList)', () => {
  // RF-12 (a), RW-4 (e)
  it('collects the initial ADDED events until the initial-events-end bookmark, replaces once, then keeps the same stream', async () => {
    const h = harness({ useWatchList: true });
    h.start();
    await settle();
    expect(h.lw.requests.map((r) => [r.kind, r.options])).toEqual([['watch', WL]]);
    h.lw.current.push(added('foo', '1'), bookmark('1', true), { type: 'MODIFIED', object: pod('foo', '2') }, added('bar', '3'));
    await settle();
    expect(h.store.ops).toEqual(['replace@1 [foo]', 'update foo@2', 'add bar@3']);
    expect(h.lw.requests).toHaveLength(1);
    expect(h.reflector.lastSyncResourceVersion()).toBe('3');
    expect(h.reflector.stats()).toMatchObject({ lists: 1, watches: 1 });
    await h.stop();
  });

  // RW-4 (a), RW-3, RW-4 (k)
  it('commits nothing and adopts no version before the bookmark, nor for a bookmark annotated "false"', async () => {
    const h = harness({ useWatchList: true });
    h.start();
    await settle();
    h.lw.current.push(added('p1', '1'), added('p2', '2'), {
      type: 'BOOKMARK',
      object: { metadata: { name: '', resourceVersion: '2', annotations: { 'k8s.io/initial-events-end': 'false' } } },
    });
    await settle();
    expect(h.store.ops).toEqual([]);
    expect(h.reflector.lastSyncResourceVersion()).toBe('');
    await h.stop();
  });

  // RW-4 (f)
  it('applies updates and deletes inside the initial stream to the collection before the replace', async () => {
    const h = harness({ useWatchList: true });
    h.start();
    await settle();
    h.lw.current.push(
      added('p1', '1'),
      added('p2', '2'),
      { type: 'MODIFIED', object: pod('p1', '3', { spec: { changed: true } }) },
      added('p3', '4'),
      { type: 'DELETED', object: pod('p3', '5') },
      bookmark('5', true),
    );
    await settle();
    expect(h.store.ops).toEqual(['replace@5 [p1,p2]']);
    expect(h.store.items.get('p1')?.spec).toEqual({ changed: true });
    await h.stop();
  });

  // RW-4 (c), (d), (g), NC-6
  for (const [what, error] of [
    ['a generic error', new Error('boom')],
    ['422 Invalid', new ApiStatusError(422, 'streaming is not allowed', { reason: 'Invalid' })],
    ['429', new ApiStatusError(429, 'slow down')],
    ['410', gone()],
  ] as const) {
    it(`falls back to a normal list when the streaming watch fails with ${what}`, async () => {
      const h = harness({ useWatchList: true });
      h.lw.watches.push(error);
      h.lw.lists.push(podList('1', [pod('p1', '1')]));
      h.start();
      await settle();
      h.lw.current.push(added('p2', '2'));
      await settle();
      expect(h.lw.requests.map((r) => [r.kind, r.options.resourceVersion])).toEqual([['watch', ''], ['list', '0'], ['watch', '1']]);
      expect(h.lw.watchRequests()[1]).toEqual({ resourceVersion: '1', timeoutSeconds: 300, allowWatchBookmarks: true });
      expect(h.errors.map((e) => e.context)).toEqual([{ name: 'test', phase: 'watch-list', action: 'fallback' }]);
      expect(h.store.snapshot()).toEqual({ p1: '1', p2: '2' });
      await h.stop();
    });
  }

  // RW-4 (h): deliberately a fallback, where client-go retries the streaming watch.
  it('falls back to a normal list when the stream closes before the bookmark', async () => {
    const h = harness({ useWatchList: true });
    h.lw.watches.push(new FakeWatch().push(added('p1', '1')).close());
    h.lw.lists.push(podList('1', [pod('p1', '1')]));
    h.start();
    await settle();
    expect(h.lw.requests.map((r) => r.kind)).toEqual(['watch', 'list', 'watch']);
    expect(h.store.snapshot()).toEqual({ p1: '1' });
    await h.stop();
  });

  // RW-4 (i)
  it('resumes with a plain watch from the last event after the synced stream closes', async () => {
    const h = harness({ useWatchList: true });
    h.start();
    await settle();
    h.lw.current.push(added('p1', '1'), added('p2', '2'), bookmark('2', true), added('p3', '3')).close();
    await settle();
    h.lw.current.push(added('p4', '4'));
    await settle();
    expect(h.lw.watchRequests()).toEqual([WL, { resourceVersion: '3', timeoutSeconds: 300, allowWatchBookmarks: true }]);
    expect(h.store.snapshot()).toEqual({ p1: '1', p2: '2', p3: '3', p4: '4' });
    await h.stop();
  });

  // RW-4 (j)
  // A 410 from a server that answers is not a failure: the streaming list follows at once, no backoff.
  it('relists at once after the 410 of the re-watch: streams again from the held version', async () => {
    const h = harness({ useWatchList: true });
    h.lw.watches.push(new FakeWatch(), gone('rv already expired'));
    h.start();
    await settle();
    h.lw.current.push(added('p1', '1'), bookmark('2', true), added('p3', '3')).close();
    await settle();
    expect(h.errors.map((e) => [e.error.message, e.context.action])).toEqual([['rv already expired', 'relist']]);
    expect(h.store.snapshot()).toEqual({ p1: '1', p3: '3' });
    expect(h.lw.watchRequests()[2]).toEqual({ ...WL, resourceVersion: '3' });
    expect(h.lw.listRequests()).toEqual([]);
    await h.stop();
  });

  it('rejects an initial-events-end bookmark older than the held version and repairs with a list', async () => {
    const h = harness({ useWatchList: true });
    h.lw.watches.push(new FakeWatch().push(added('a', '50'), bookmark('50', true), statusEvent(410, 'Expired')));
    h.lw.watches.push(new FakeWatch().push(bookmark('40', true)));
    h.lw.lists.push(podList('55', [pod('a', '55')]));
    h.start();
    await settle();
    expect(h.regressions).toMatchObject([{ eventType: 'BOOKMARK', heldResourceVersion: '50', eventResourceVersion: '40' }]);
    expect(h.lw.listRequests()).toEqual([{ resourceVersion: '50', resourceVersionMatch: 'NotOlderThan' }]);
    expect(h.store.snapshot()).toEqual({ a: '55' });
    expect(h.lw.backwardRequests()).toEqual([]);
    await h.stop();
  });

  it('leaves nothing behind when aborted during the initial stream', async () => {
    const h = harness({ useWatchList: true });
    h.start();
    await settle();
    h.lw.current.push(added('p1', '1'));
    await settle();
    await h.stop();
    expect(h.store.ops).toEqual([]);
  });
});
