import { describe, expect, it } from 'vitest';
import { FakeControllerSource, flushPromises } from '../../src/testing/index.js';
import type { WatchEvent } from '../../src/listwatch/types.js';
import type { KubeObject } from '../../src/core/types.js';

const pod = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name, namespace: 'default', labels },
});
const never = new AbortController().signal;

async function take<T>(it: AsyncIterator<WatchEvent<T>>, n: number): Promise<Array<[string, string, string]>> {
  const out: Array<[string, string, string]> = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    if (r.done) break;
    const meta = (r.value.object as KubeObject).metadata ?? {};
    out.push([r.value.type, String(meta.name), String(meta.resourceVersion)]);
  }
  return out;
}

describe('FakeControllerSource', () => {
  it('numbers changes 1, 2, 3 and lists copies at the current version', async () => {
    const src = new FakeControllerSource();
    expect(src.add(pod('a')).metadata?.resourceVersion).toBe('1');
    src.add(pod('b'));
    src.modify(pod('a', { x: 'y' }));
    const list = await src.list({}, never);
    expect(list.metadata.resourceVersion).toBe('3');
    expect(list.items.map((o) => [o.metadata?.name, o.metadata?.resourceVersion])).toEqual([
      ['a', '3'],
      ['b', '2'],
    ]);
    list.items[0].metadata!.name = 'mutated';
    expect((await src.list({}, never)).items[0].metadata?.name).toBe('a');
  });

  it('replays the changes after the asked version, then streams live ones', async () => {
    // client-go fake_controller_source_test TestRCNumber: watch from "1" sees the later changes.
    const src = new FakeControllerSource();
    src.add(pod('a'));
    src.modify(pod('a'));
    src.add(pod('b'));
    const ac = new AbortController();
    const it = (await src.watch({ resourceVersion: '1' }, ac.signal))[Symbol.asyncIterator]();
    expect(await take(it, 2)).toEqual([
      ['MODIFIED', 'a', '2'],
      ['ADDED', 'b', '3'],
    ]);
    src.delete(pod('b'));
    expect(await take(it, 1)).toEqual([['DELETED', 'b', '4']]);
    ac.abort();
    expect((await it.next()).done).toBe(true);
    expect(src.openWatches()).toBe(0);
  });

  it('rejects a watch from "" or a non-integer version, and from the future', async () => {
    const src = new FakeControllerSource();
    src.add(pod('a'));
    await expect(src.watch({ resourceVersion: '' }, never)).rejects.toMatchObject({ statusCode: 400 });
    await expect(src.watch({ resourceVersion: 'abc' }, never)).rejects.toMatchObject({ statusCode: 400 });
    await expect(src.watch({ resourceVersion: '2' }, never)).rejects.toMatchObject({
      statusCode: 504,
      status: { details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } },
    });
    expect(src.openWatches()).toBe(0);
  });

  it('rejects with 410 Expired for a version older than the compacted history', async () => {
    const src = new FakeControllerSource();
    src.add(pod('a'));
    src.add(pod('b'));
    src.compact();
    const err = await src.watch({ resourceVersion: '1' }, never).catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 410, code: 'EXPIRED', reason: 'Expired' });
    expect((await src.watch({ resourceVersion: '2' }, new AbortController().signal))).toBeDefined();
  });

  it('records drop-watch changes without sending them: only a relist sees them', async () => {
    const src = new FakeControllerSource();
    src.add(pod('a'));
    const ac = new AbortController();
    const it = (await src.watch({ resourceVersion: '1' }, ac.signal))[Symbol.asyncIterator]();
    src.addDropWatch(pod('b'));
    src.modifyDropWatch(pod('a', { v: '2' }));
    src.deleteDropWatch(pod('b'));
    src.add(pod('c'));
    expect(await take(it, 1)).toEqual([['ADDED', 'c', '5']]);
    expect((await src.list({}, never)).items.map((o) => o.metadata?.name)).toEqual(['a', 'c']);
    expect((await src.list({}, never)).items[0].metadata?.labels).toEqual({ v: '2' });
    ac.abort();
  });

  it('resetWatch ends open watches and forgets history, so the next watch from an old version gets 410', async () => {
    const src = new FakeControllerSource();
    src.add(pod('a'));
    const it = (await src.watch({ resourceVersion: '1' }, never))[Symbol.asyncIterator]();
    src.add(pod('b'));
    src.resetWatch();
    expect(await take(it, 5)).toEqual([['ADDED', 'b', '2']]);
    expect(src.openWatches()).toBe(0);
    await expect(src.watch({ resourceVersion: '1' }, never)).rejects.toMatchObject({ statusCode: 410 });
  });

  it('shutdown ends watches for good while list keeps working', async () => {
    const src = new FakeControllerSource();
    const it = (await src.watch({ resourceVersion: '0' }, never))[Symbol.asyncIterator]();
    src.shutdown();
    expect((await it.next()).done).toBe(true);
    await expect(src.watch({ resourceVersion: '0' }, never)).rejects.toMatchObject({ statusCode: 503 });
    expect((await src.list({}, never)).items).toEqual([]);
    expect(src.openWatches()).toBe(0);
  });

  it('injects list errors once or persistently, and watch errors', async () => {
    const src = new FakeControllerSource();
    const boom = new Error('boom');
    src.failNextList(boom);
    await expect(src.list({}, never)).rejects.toBe(boom);
    await expect(src.list({}, never)).resolves.toBeDefined();
    src.listError = boom;
    await expect(src.list({}, never)).rejects.toBe(boom);
    await expect(src.list({}, never)).rejects.toBe(boom);
    src.listError = undefined;
    src.failNextWatch(boom);
    await expect(src.watch({ resourceVersion: '0' }, never)).rejects.toBe(boom);
    src.watchError = boom;
    await expect(src.watch({ resourceVersion: '0' }, never)).rejects.toBe(boom);
    expect(src.calls().map((c) => c.verb)).toEqual(['list', 'list', 'list', 'list', 'watch', 'watch']);
  });

  it('sendError pushes an ERROR event with the Status, then ends the watch', async () => {
    const src = new FakeControllerSource();
    const it = (await src.watch({ resourceVersion: '0' }, never))[Symbol.asyncIterator]();
    src.sendError(410);
    const first = await it.next();
    expect(first.value).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect((await it.next()).done).toBe(true);
    expect(src.openWatches()).toBe(0);
  });

  it('pages a list with limit and continue, pinned to the first page version', async () => {
    const src = new FakeControllerSource();
    for (const n of ['a', 'b', 'c', 'd', 'e']) src.add(pod(n));
    const p1 = await src.list({ limit: 2 }, never);
    expect(p1.items.map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    expect(p1.metadata.remainingItemCount).toBe(3);
    src.delete(pod('c'));
    const p2 = await src.list({ limit: 2, continue: p1.metadata.continue }, never);
    expect(p2.items.map((o) => o.metadata?.name)).toEqual(['c', 'd']);
    expect(p2.metadata.resourceVersion).toBe('5');
    src.compact();
    await expect(src.list({ limit: 2, continue: p2.metadata.continue }, never)).rejects.toMatchObject({ statusCode: 410 });
  });

  it('filters list and watch by label selector, turning objects that leave the selection into DELETED', async () => {
    const src = new FakeControllerSource();
    src.add(pod('a', { app: 'web' }));
    src.add(pod('b', { app: 'db' }));
    expect((await src.list({ labelSelector: 'app=web' }, never)).items.map((o) => o.metadata?.name)).toEqual(['a']);
    const ac = new AbortController();
    const it = (await src.watch({ resourceVersion: '2', labelSelector: 'app=web' }, ac.signal))[Symbol.asyncIterator]();
    src.modify(pod('b', { app: 'web' }));
    src.modify(pod('a', { app: 'db' }));
    expect(await take(it, 2)).toEqual([
      ['ADDED', 'b', '3'],
      ['DELETED', 'a', '4'],
    ]);
    ac.abort();
  });

  it('sends an object that leaves the selection as it last matched, at the new resourceVersion (as kube-apiserver does)', async () => {
    const src = new FakeControllerSource();
    src.add(pod('a', { app: 'web' }));
    const ac = new AbortController();
    const it = (await src.watch({ resourceVersion: '1', labelSelector: 'app=web' }, ac.signal))[Symbol.asyncIterator]();
    src.modify(pod('a', { app: 'db' }));
    const event = (await it.next()).value as WatchEvent<KubeObject>;
    expect(event.type).toBe('DELETED');
    expect(event.object.metadata?.labels).toEqual({ app: 'web' });
    expect(event.object.metadata?.resourceVersion).toBe('2');
    ac.abort();
  });

  it('leaves no listener behind when the consumer breaks out of for-await', async () => {
    const src = new FakeControllerSource();
    src.add(pod('a'));
    const w = await src.watch({ resourceVersion: '0' }, never);
    for await (const _ of w) break;
    expect(src.openWatches()).toBe(0);
    src.add(pod('b'));
    await flushPromises();
    expect(src.openWatches()).toBe(0);
  });

  it('ends an iteration that is waiting for an event when the signal aborts', async () => {
    const src = new FakeControllerSource();
    const ac = new AbortController();
    const w = await src.watch({ resourceVersion: '0' }, ac.signal);
    const pending = w[Symbol.asyncIterator]().next();
    ac.abort();
    expect((await pending).done).toBe(true);
    expect(src.openWatches()).toBe(0);
    await expect(src.watch({ resourceVersion: '0' }, ac.signal)).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
