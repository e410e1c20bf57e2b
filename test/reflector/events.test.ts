// The reflector's one source of truth: typed events, and the counters, hooks and channels that follow them.

import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/core/errors.js';
import { channelNames } from '../../src/observability/channels.js';
import type { ReflectorEventMap } from '../../src/reflector/index.js';
import { FakeWatch, bookmark, connRefused, harness, pod, podList, settle, statusEvent } from './helpers.js';
import type { Harness, Pod } from './helpers.js';

/** Records every event of the harness's reflector as `[name, payload]`. */
function record(h: Harness): Array<[string, unknown]> {
  const seen: Array<[string, unknown]> = [];
  const names: Array<keyof ReflectorEventMap> = ['listed', 'watchOpened', 'watchEnded', 'event', 'bookmark', 'error', 'regression'];
  for (const name of names) h.reflector.events.on(name, (payload: unknown) => void seen.push([name, payload]));
  return seen;
}

describe('Reflector events', () => {
  it('publishes what it does, in order: listed, watch opened, one report per watch event, the end of the watch, the error that ended it', async () => {
    const h = harness();
    const seen = record(h);
    h.lw.lists.push(podList('10', [pod('a', '10')]));
    h.start();
    await settle();
    h.lw.current.push(
      { type: 'MODIFIED', object: pod('a', '11') },
      bookmark('12'),
      { type: 'ADDED', object: { metadata: {} } as Pod },
    );
    await settle();
    await h.stop();
    expect(seen).toEqual([
      ['listed', { resourceVersion: '10', items: 1, streamed: false, consistent: false, failuresBefore: 0 }],
      ['watchOpened', { resourceVersion: '10', streaming: false, failuresBefore: 0 }],
      ['event', { type: 'MODIFIED', key: 'a', resourceVersion: '11', outcome: 'applied' }],
      ['bookmark', { resourceVersion: '12', initialEventsEnd: false }],
      ['event', { type: 'ADDED', key: undefined, resourceVersion: '', outcome: 'dropped' }],
      ['watchEnded', { reason: 'stopped', refused: false }],
      ['error', expect.objectContaining({ name: 'test', phase: 'event', action: 'rewatch', requestFailed: false })],
    ]);
  });

  it('counts request failures in a row and tells the next success how many it ended', async () => {
    const h = harness();
    const seen = record(h);
    h.lw.lists.push(new ApiStatusError(500, 'etcd'), new ApiStatusError(500, 'etcd'), podList('5', []));
    h.start();
    await settle();
    await h.clock.advance(800);
    await h.clock.advance(1600);
    await h.stop();
    const listed = seen.filter(([name]) => name === 'listed').map(([, e]) => e);
    expect(listed).toEqual([{ resourceVersion: '5', items: 0, streamed: false, consistent: false, failuresBefore: 2 }]);
    const opened = seen.filter(([name]) => name === 'watchOpened').map(([, e]) => e);
    expect(opened).toEqual([{ resourceVersion: '5', streaming: false, failuresBefore: 0 }]);
  });

  it('ends a watch whose first event is an ERROR as refused: the run of failures it interrupted goes on', async () => {
    const h = harness();
    const seen = record(h);
    h.reflector.events.on('backoff', (e) => void seen.push(['backoff', e]));
    h.lw.lists.push(podList('10', []), podList('20', []));
    h.lw.watches.push(connRefused(), connRefused(), new FakeWatch().push(statusEvent(410, 'Expired')));
    h.start();
    await settle();
    await h.clock.advance(800);
    await h.clock.advance(1600);
    await h.stop();
    expect(seen.filter(([name]) => name !== 'event')).toEqual([
      ['listed', { resourceVersion: '10', items: 0, streamed: false, consistent: false, failuresBefore: 0 }],
      ['error', expect.objectContaining({ phase: 'watch', action: 'rewatch', requestFailed: true })],
      ['backoff', { then: 'rewatch', delayMs: 800, until: 800 }],
      ['error', expect.objectContaining({ phase: 'watch', action: 'rewatch', requestFailed: true })],
      ['backoff', { then: 'rewatch', delayMs: 1600, until: 2400 }],
      ['watchOpened', { resourceVersion: '10', streaming: false, failuresBefore: 2 }],
      ['watchEnded', { reason: 'stopped', refused: true }],
      // The 410 relists at once: no backoff.
      ['error', expect.objectContaining({ phase: 'watch', action: 'relist', requestFailed: true })],
      // The refused watch took nothing back: 3 failures in a row (two refused connections, the 410).
      ['listed', { resourceVersion: '20', items: 0, streamed: false, consistent: false, failuresBefore: 3 }],
      ['watchOpened', { resourceVersion: '20', streaming: false, failuresBefore: 0 }],
      ['watchEnded', { reason: 'aborted', refused: false }],
    ]);
  });

  it('derives every counter of stats() from the events, one meaning each', async () => {
    const h = harness();
    const seen = record(h);
    h.lw.lists.push(podList('10', []), podList('20', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '11') }, bookmark('12'), { type: 'ADDED', object: pod('b', '5') });
    await settle();
    await h.clock.advance(800);
    h.lw.current.push(statusEvent(429, 'TooManyRequests'));
    await settle();
    const count = (name: string, where: (e: Record<string, unknown>) => boolean = () => true): number =>
      seen.filter(([n, e]) => n === name && where(e as Record<string, unknown>)).length;
    const s = h.reflector.stats();
    expect(s).toMatchObject({
      lists: count('listed'),
      relists: count('listed') - 1,
      watches: count('watchOpened'),
      events: count('event', (e) => e.outcome === 'applied'),
      bookmarks: count('bookmark'),
      errors: count('error'),
      regressions: count('regression'),
    });
    expect(s).toMatchObject({ lists: 2, watches: 2, events: 1, bookmarks: 1, errors: 2, regressions: 1 });
    await h.stop();
  });

  it('keeps going when a listener throws, and reports that on the reflectorError channel (phase hook)', async () => {
    const published: unknown[] = [];
    const listener = (m: unknown): void => void published.push(m);
    diagnosticsChannel.subscribe(channelNames.reflectorError, listener);
    try {
      const h = harness();
      h.reflector.events.on('listed', () => {
        throw new Error('listener broke');
      });
      h.lw.lists.push(podList('3', [pod('a', '3')]));
      h.start();
      await settle();
      expect(h.store.snapshot()).toEqual({ a: '3' });
      expect(h.lw.watchRequests()).toHaveLength(1);
      expect(published).toContainEqual(expect.objectContaining({ name: 'test', phase: 'hook', action: 'warn', error: expect.objectContaining({ message: 'listener broke' }) }));
      await h.stop();
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.reflectorError, listener);
    }
  });

  it('marks a streaming list: the watch it opens, and the list it hands over', async () => {
    const h = harness({ useWatchList: true });
    const seen = record(h);
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '1') }, bookmark('2', true));
    await settle();
    await h.stop();
    expect(seen.slice(0, 4)).toEqual([
      ['watchOpened', { resourceVersion: '', streaming: true, failuresBefore: 0 }],
      ['event', { type: 'ADDED', key: 'a', resourceVersion: '1', outcome: 'collected' }],
      ['bookmark', { resourceVersion: '2', initialEventsEnd: true }],
      ['listed', { resourceVersion: '2', items: 1, streamed: true, consistent: false, failuresBefore: 0 }],
    ]);
  });
});
