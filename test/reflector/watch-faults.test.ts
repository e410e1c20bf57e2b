import { describe, expect, it } from 'vitest';
import { ErrorCodes, KubeInformerError } from '../../src/core/errors.js';
import { FakeWatch, bookmark, gone, harness, pod, podList, settle, statusEvent } from './helpers.js';
import type { Pod } from './helpers.js';

/** What listwatch's decoder throws on a line that is not JSON. */
const decodeError = (): KubeInformerError => new KubeInformerError(ErrorCodes.WATCH_DECODE, 'malformed watch line: {"type":"ADD');

describe('Reflector watch faults', () => {
  it('ends the watch on a malformed line and resumes from the last good version, applying nothing twice', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', [pod('a', '10')]));
    h.start();
    await settle();
    h.lw.current.push({ type: 'MODIFIED', object: pod('a', '11') }, { type: 'ADDED', object: pod('b', '12') }).fail(decodeError());
    await settle();
    expect(h.codes()).toEqual(['WATCH_DECODE']);
    expect(h.errors[0].context).toMatchObject({ phase: 'watch', action: 'rewatch' });
    await h.clock.advance(800);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '12']);
    // The server replays what came after 12 only.
    h.lw.current.push({ type: 'MODIFIED', object: pod('b', '13') });
    await settle();
    expect(h.store.ops).toEqual(['replace@10 [a]', 'update a@11', 'add b@12', 'update b@13']);
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
  });

  it('ends the watch on an unknown event type and resumes from the last good version', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '11') }, { type: 'SURPRISE' as 'ADDED', object: pod('a', '12') }, { type: 'ADDED', object: pod('z', '13') });
    await settle();
    expect(h.codes()).toEqual(['WATCH_DECODE']);
    expect(h.errors[0].context).toMatchObject({ phase: 'event', action: 'rewatch' });
    expect(h.store.ops).toEqual(['replace@10 []', 'add a@11']);
    await h.clock.advance(800);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '11']);
    await h.stop();
  });

  it('ends the watch on an object without a name and resumes from the last good version', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: { metadata: { resourceVersion: '11' } } as Pod });
    await settle();
    expect(h.codes()).toEqual(['INVALID_OBJECT']);
    expect(h.errors[0].context).toMatchObject({ phase: 'event', action: 'rewatch' });
    expect(h.store.ops).toEqual(['replace@10 []']);
    await h.clock.advance(800);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '10']);
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
  });

  it('relists at the held version (not "") after a 410 ERROR event inside the stream', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []), podList('20', [pod('a', '20')]));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '15') }, statusEvent(410, 'Expired'));
    await settle();
    expect(h.codes()).toEqual(['EXPIRED']);
    expect(h.errors[0].context.action).toBe('relist');
    await h.clock.advance(800);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '15']);
    expect(h.store.snapshot()).toEqual({ a: '20' });
    await h.stop();
  });

  it('relists after the watch request itself is refused with 410', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []), podList('30', []));
    h.lw.watches.push(gone());
    h.start();
    await settle();
    await h.clock.advance(800);
    expect(h.lw.listRequests().map((o) => o.resourceVersion)).toEqual(['0', '10']);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '30']);
    await h.stop();
  });

  it('re-watches without relisting when the connection resets mid-stream', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    h.lw.current.push({ type: 'ADDED', object: pod('a', '11') }).fail(new KubeInformerError(ErrorCodes.NETWORK, 'watch broke', { cause: reset }));
    await settle();
    expect(h.errors.map((e) => e.context.action)).toEqual(['rewatch']);
    await h.clock.advance(800);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '11']);
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
  });

  it('closes a silent, half-open watch after timeoutSeconds plus the margin and resumes from the last version', async () => {
    const h = harness({ minWatchTimeoutMs: 60_000, watchIdleMarginMs: 30_000 });
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    const first = h.lw.current;
    expect(first.options?.timeoutSeconds).toBe(60);
    await h.clock.advance(50_000);
    first.push(bookmark('12'));
    await settle();
    await h.clock.advance(89_999);
    expect(h.errors).toEqual([]);
    expect(first.stopped).toBe(false);
    await h.clock.advance(1);
    expect(first.stopped).toBe(true);
    expect(h.codes()).toEqual(['WATCH_STALLED']);
    expect(h.errors[0].context).toMatchObject({ phase: 'watch', action: 'rewatch' });
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '12']);
    expect(h.lw.listRequests()).toHaveLength(1);
    expect(h.reflector.stats().stalls).toBe(1);
    await h.stop();
  });

  it('skips and reports a server-side Table object without ending the watch', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    h.lw.current.push(
      { type: 'ADDED', object: { apiVersion: 'meta.k8s.io/v1', kind: 'Table', metadata: { name: 't', resourceVersion: '11' } } },
      { type: 'ADDED', object: { apiVersion: 'custom.group/v1', kind: 'Table', metadata: { name: 'ok', resourceVersion: '12' } } },
    );
    await settle();
    expect(h.codes()).toEqual(['INVALID_OBJECT']);
    expect(h.errors[0].context.action).toBe('skip');
    expect(h.store.snapshot()).toEqual({ ok: '12' });
    await h.stop();
  });

  it('rejects objects of another apiVersion when expectedApiVersion is set', async () => {
    const h = harness({ expectedApiVersion: 'v1' });
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', resourceVersion: '11' } } });
    await settle();
    expect(h.store.snapshot()).toEqual({});
    expect(h.errors[0].error.message).toContain('expected apiVersion v1');
    await h.stop();
  });

  it('relists after backoff when the store throws on a watch event, so the dropped event is repaired', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []), podList('11', [pod('a', '11')]));
    h.store.failNext.add = new Error('transform failed');
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '11') });
    await settle();
    expect(h.errors.map((e) => [e.error.message, e.context.phase, e.context.action])).toEqual([['transform failed', 'store', 'relist']]);
    await h.clock.advance(800);
    expect(h.store.snapshot()).toEqual({ a: '11' });
    await h.stop();
  });

  it('keeps running when an onError hook throws', async () => {
    const h = harness({
      onError: () => {
        throw new Error('hook broke');
      },
    });
    h.lw.lists.push(new Error('list failed'), podList('3', []));
    h.start();
    await settle();
    await h.clock.advance(800);
    expect(h.reflector.lastSyncResourceVersion()).toBe('3');
    await h.stop();
  });

  it('keeps watching after an event from a watch that closes after delivering events', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []));
    h.lw.watches.push(new FakeWatch().push({ type: 'ADDED', object: pod('a', '11') }).close());
    h.start();
    await settle();
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '11']);
    expect(h.errors).toEqual([]);
    await h.stop();
  });

  it('gives up on a watch that does not connect within the idle limit, and re-watches after backoff', async () => {
    const h = harness({ minWatchTimeoutMs: 60_000, watchIdleMarginMs: 30_000 });
    h.lw.lists.push(podList('10', []));
    h.lw.watches.push(() => new Promise<FakeWatch>(() => undefined));
    h.start();
    await settle();
    await h.clock.advance(89_999);
    expect(h.errors).toEqual([]);
    await h.clock.advance(1);
    expect(h.codes()).toEqual(['WATCH_STALLED']);
    expect(h.errors[0].context).toMatchObject({ phase: 'watch', action: 'rewatch' });
    await h.clock.advance(800);
    expect(h.lw.watchRequests().map((o) => o.resourceVersion)).toEqual(['10', '10']);
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
  });

  it('abandons a list that gets no answer within listTimeoutMs, aborting its signal, and lists again after backoff', async () => {
    const h = harness({ listTimeoutMs: 10_000 });
    let listSignal: AbortSignal | undefined;
    h.lw.lists.push(() => new Promise(() => undefined));
    h.lw.lists.push(podList('3', [pod('a', '3')]));
    const original = h.lw.list.bind(h.lw);
    h.lw.list = (o, signal) => {
      listSignal ??= signal;
      return original(o, signal);
    };
    h.start();
    await settle();
    await h.clock.advance(10_000);
    expect(listSignal?.aborted).toBe(true);
    expect(h.codes()).toEqual(['LIST_TIMEOUT']);
    expect(h.errors[0].context).toMatchObject({ phase: 'list', action: 'relist' });
    await h.clock.advance(800);
    expect(h.store.snapshot()).toEqual({ a: '3' });
    await h.stop();
  });
});
