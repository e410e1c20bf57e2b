// The bad-input catalogue, watch side: each bad line is reported with a specific error, the cache stays whole, the informer keeps running.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/errors.js';
import { pod, PODS, startInformer, stopAll, type Harness } from './harness.js';

afterEach(stopAll);

/** Sends `line` as-is on the next watch (after ending the open one) and waits for the informer to report something. */
async function sendLine(h: Harness, line: string): Promise<void> {
  const before = h.watchErrors.length;
  h.server.injectFault({ type: 'notAnEvent', line });
  h.server.endWatches();
  await h.until(() => h.watchErrors.length > before, 'the bad line to be reported');
  h.server.assertNoPendingFaults();
}

function last(h: Harness): Error & { code?: string; statusCode?: number } {
  return h.watchErrors.at(-1)!.error as Error & { code?: string; statusCode?: number };
}

describe('bad watch input', () => {
  it('reports a watch object without metadata as INVALID_OBJECT and keeps the cache and the watch', async () => {
    const h = await startInformer();
    const before = h.cache();
    await sendLine(h, '{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod"}}');
    expect(last(h).code).toBe(ErrorCodes.INVALID_OBJECT);
    expect(last(h).message).toMatch(/no key/);
    expect(h.watchErrors.at(-1)!.context).toMatchObject({ phase: 'event', action: 'rewatch' });
    expect(h.cache()).toEqual(before);
    await h.stillRunning();
  });

  it('reports a watch object whose metadata has no name as INVALID_OBJECT and keeps the cache and the watch', async () => {
    const h = await startInformer();
    const before = h.cache();
    await sendLine(h, `{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"default","resourceVersion":"999"}}}`);
    expect(last(h).code).toBe(ErrorCodes.INVALID_OBJECT);
    expect(h.cache()).toEqual(before);
    await h.stillRunning();
  });

  it.each([
    [403, 'Forbidden'],
    [500, 'InternalError'],
  ])('reports a watch ERROR event with code %i as an API_STATUS error naming the code, and relists', async (code, reason) => {
    const h = await startInformer();
    const before = h.cache();
    await sendLine(h, JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `injected ${reason}` } }));
    const err = last(h);
    expect(err.code).toBe(ErrorCodes.API_STATUS);
    expect(err.statusCode).toBe(code);
    expect(err.message).toContain(`injected ${reason}`);
    expect(h.cache()).toEqual(before);
    await h.stillRunning();
  });

  it('reports a watch ERROR event carrying an unknown Status as an API_STATUS error, and relists', async () => {
    const h = await startInformer();
    const before = h.cache();
    await sendLine(h, '{"type":"ERROR","object":{"surprise":true}}');
    const err = last(h);
    expect(err.code).toBe(ErrorCodes.API_STATUS);
    expect(typeof err.statusCode).toBe('number');
    expect(h.cache()).toEqual(before);
    await h.stillRunning();
  });

  it('reports a line that is valid JSON but not a watch event as WATCH_DECODE and re-watches', async () => {
    const h = await startInformer();
    const before = h.cache();
    const rv = h.informer.lastSyncResourceVersion();
    h.server.injectFault({ type: 'notAnEvent' });
    h.server.endWatches();
    await h.until(() => h.watchErrors.length > 0, 'the line to be reported');
    expect(last(h).code).toBe(ErrorCodes.WATCH_DECODE);
    expect(h.watchErrors.at(-1)!.context?.action).toBe('rewatch');
    expect(h.cache()).toEqual(before);
    expect(h.informer.lastSyncResourceVersion()).toBe(rv);
    await h.stillRunning();
  });

  it('reports an unknown watch event type as WATCH_DECODE naming the type', async () => {
    const h = await startInformer();
    h.server.create(PODS, pod('before-surprise'));
    await h.converged('before-surprise');
    const before = h.cache();
    h.server.injectFault({ type: 'unknownEventType', eventType: 'SURPRISE' });
    h.server.endWatches();
    await h.until(() => h.watchErrors.length > 0, 'the event to be reported');
    expect(last(h).code).toBe(ErrorCodes.WATCH_DECODE);
    expect(last(h).message).toContain('SURPRISE');
    expect(h.cache()).toEqual(before);
    await h.stillRunning();
  });

  it('skips and reports an object of another kind than the informer expects, without caching it', async () => {
    const h = await startInformer({ informer: { reflector: { expectedKind: 'Pod' } } });
    const before = h.cache();
    const next = Number(h.server.resourceVersion()) + 1;
    await sendLine(h, JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'default', resourceVersion: String(next) } } }));
    expect(last(h).code).toBe(ErrorCodes.INVALID_OBJECT);
    expect(last(h).message).toMatch(/another kind.*Pod/);
    expect(h.watchErrors.at(-1)!.context?.action).toBe('skip');
    expect(h.cache()).toEqual(before);
    expect(h.cache()['default/svc']).toBeUndefined();
    await h.stillRunning();
  });

  it('caches a 10 MB object from the initial list and from the watch, intact and without an error', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024);
    const h = await startInformer({ pods: 0 });
    h.server.create(PODS, pod('big-watch', { metadata: { name: 'big-watch', namespace: 'default', annotations: { blob: big } } }));
    await h.converged('the 10 MB object from the watch');
    const cached = h.informer.getStore().getByKey('default/big-watch');
    expect(cached?.metadata?.annotations?.blob).toHaveLength(big.length);
    expect(h.watchErrors).toEqual([]);
    await h.stop();

    const h2 = await startInformer({
      pods: 0,
      seed: (server) => server.create(PODS, pod('big-list', { metadata: { name: 'big-list', namespace: 'default', annotations: { blob: big } } })),
    });
    await h2.converged('the 10 MB object from the list');
    expect(h2.informer.getStore().getByKey('default/big-list')?.metadata?.annotations?.blob).toHaveLength(big.length);
    expect(h2.watchErrors).toEqual([]);
    await h2.stillRunning();
  }, 60_000);
});
