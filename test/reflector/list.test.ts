import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/core/errors.js';
import type { ListOptions } from '../../src/listwatch/types.js';
import { gone, harness, pod, podList, settle } from './helpers.js';
import type { Harness, Pod } from './helpers.js';

const pods = (from: number, n: number): Pod[] => Array.from({ length: n }, (_, i) => pod(`p${from + i}`, String(from + i)));

/** Ends the current cycle with a watch 410 so the next one relists; returns after that list ran. */
async function relist(h: Harness, delay: number): Promise<void> {
  h.lw.current.push({ type: 'ERROR', object: { code: 410, reason: 'Expired', message: 'gone' } as unknown as Pod });
  await settle();
  await h.clock.advance(delay);
}

describe('Reflector list: paging and resource-version choice', () => {
  // RF-20
  it('pages every list by an explicit pageSize and replaces the store once with all pages', async () => {
    const h = harness({ pageSize: 4 });
    const byToken: Record<string, ReturnType<typeof podList>> = {
      '': podList('10', pods(1, 4), 'C1'),
      C1: podList('10', pods(5, 4), 'C2'),
      C2: podList('10', pods(9, 2)),
    };
    for (let i = 0; i < 3; i++) h.lw.lists.push((o: ListOptions) => byToken[o.continue ?? '']);
    h.start();
    await settle();
    expect(h.lw.listRequests()).toEqual([{ resourceVersion: '0', limit: 4 }, { continue: 'C1', limit: 4 }, { continue: 'C2', limit: 4 }]);
    expect(h.store.ops).toEqual(['replace@10 [p1,p2,p3,p4,p5,p6,p7,p8,p9,p10]']);
    expect(h.lw.watchRequests()[0].resourceVersion).toBe('10');
    await h.stop();
  });

  // RF-21, RF-23
  it('relists at the held version without a limit so the watch cache can answer', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', pods(1, 4)), podList('11', pods(1, 8)));
    h.start();
    await settle();
    await relist(h, 800);
    expect(h.lw.listRequests()).toEqual([{ resourceVersion: '0', limit: 500 }, { resourceVersion: '10' }]);
    expect(Object.keys(h.store.snapshot())).toHaveLength(8);
    expect(h.reflector.stats()).toMatchObject({ lists: 2, relists: 1 });
    await h.stop();
  });

  // RF-22
  it('keeps paging relists when the first "0" list came back paginated (no watch cache)', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', pods(1, 5), 'C1'), podList('10', pods(6, 5)));
    h.lw.lists.push(podList('12', pods(1, 5), 'C1'), podList('12', pods(6, 5)));
    h.start();
    await settle();
    await relist(h, 800);
    expect(h.lw.listRequests()).toEqual([
      { resourceVersion: '0', limit: 500 },
      { continue: 'C1', limit: 500 },
      { resourceVersion: '10', limit: 500 },
      { continue: 'C1', limit: 500 },
    ]);
    expect(h.store.ops.filter((o) => o.startsWith('replace'))).toHaveLength(2);
    await h.stop();
  });

  // RF-24
  it('retries a relist refused with 410 at once with "" (a consistent read)', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', pods(1, 4)), gone(), podList('11', pods(1, 8)));
    h.start();
    await settle();
    await relist(h, 800);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '10', '']);
    expect(h.lw.listRequests()[2]).toEqual({ resourceVersion: '', limit: 500 });
    expect(Object.keys(h.store.snapshot())).toHaveLength(8);
    expect(h.reflector.lastSyncResourceVersion()).toBe('11');
    await h.stop();
  });

  // RF-25
  it('falls back to one unpaginated list at the same version when a continue page expires', async () => {
    const h = harness({ pageSize: 4 });
    h.lw.lists.push(podList('10', pods(1, 4)));
    h.lw.lists.push(podList('11', pods(1, 4), 'C1'), gone('continue expired'), podList('11', pods(1, 8)));
    h.start();
    await settle();
    await relist(h, 800);
    expect(h.lw.listRequests()).toEqual([
      { resourceVersion: '0', limit: 4 },
      { resourceVersion: '10', limit: 4 },
      { continue: 'C1', limit: 4 },
      { resourceVersion: '11', resourceVersionMatch: 'NotOlderThan' },
    ]);
    expect(h.store.ops.filter((o) => o.startsWith('replace'))).toEqual(['replace@10 [p1,p2,p3,p4]', 'replace@11 [p1,p2,p3,p4,p5,p6,p7,p8]']);
    expect(h.lw.backwardRequests()).toEqual([]);
    await h.stop();
  });

  // RF-26
  it('retries with "" after each form of "too large resource version"', async () => {
    const h = harness();
    const timeout = (status: Record<string, unknown>, message = 'Timeout'): ApiStatusError =>
      new ApiStatusError(504, message, { reason: 'Timeout', status: { code: 504, reason: 'Timeout', ...status } });
    h.lw.lists.push(podList('20', []));
    h.lw.lists.push(timeout({ details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large' }] } }), podList('30', []));
    h.lw.lists.push(timeout({ details: { causes: [{ message: 'Too large resource version' }] } }), podList('40', []));
    h.lw.lists.push(timeout({ message: 'Too large resource version: 40, current: 39' }), podList('50', []));
    h.start();
    await settle();
    await relist(h, 800);
    await relist(h, 1600);
    await relist(h, 3200);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '20', '', '30', '', '40', '']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('50');
    expect(h.codes().filter((c) => c !== 'EXPIRED')).toEqual(['API_STATUS', 'API_STATUS', 'API_STATUS']);
    await h.stop();
  });

  it('retries a first list refused with 410 at once with "", and keeps asking "" after that fails too', async () => {
    const h = harness();
    h.lw.lists.push(gone(), gone(), podList('5', []));
    h.start();
    await settle();
    expect(h.errors.map((e) => e.context)).toEqual([
      { name: 'test', phase: 'list', action: 'relist' },
      { name: 'test', phase: 'list', action: 'relist' },
    ]);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '']);
    await h.clock.advance(800);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '', '']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('5');
    await h.stop();
  });

  it('relists after backoff when replace throws, and reports it as a store error', async () => {
    const h = harness();
    h.store.failNext.replace = new Error('transform failed');
    h.lw.lists.push(podList('5', [pod('a', '5')]), podList('6', [pod('a', '6')]));
    h.start();
    await settle();
    expect(h.errors.map((e) => [e.error.message, e.context.phase])).toEqual([['transform failed', 'store']]);
    await h.clock.advance(800);
    expect(h.store.snapshot()).toEqual({ a: '6' });
    await h.stop();
  });

  it('handles a list of 100000 items across pages without overflowing the stack', async () => {
    const h = harness({ pageSize: 50_000 });
    h.lw.lists.push(podList('9', pods(1, 50_000), 'C1'), podList('9', pods(50_001, 50_000)));
    h.start();
    await settle();
    expect(h.store.items.size).toBe(100_000);
    await h.stop();
  });
});
