// The bad-input catalogue, user code: a handler throwing a non-Error, a transform that throws, an index function that throws.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/errors.js';
import { pod, PODS, startInformer, stopAll, type Pod } from './harness.js';

afterEach(stopAll);

const isPoison = (obj: Pod): boolean => obj.metadata?.name === 'poison';

function poisonIndex(obj: Pod): string[] {
  if (isPoison(obj)) throw new Error('index exploded');
  return [String(obj.spec?.nodeName ?? '')];
}

describe('bad callbacks', () => {
  it.each([
    ['a string', 'boom'],
    ['a plain object', { reason: 'nope' }],
    ['undefined', undefined],
  ])('reports a handler that throws %s as HANDLER_FAILED with an Error cause, and keeps delivering under errorPolicy report', async (_what, thrown) => {
    const h = await startInformer({
      informer: { errorPolicy: 'report' },
      handlers: [
        {
          onAdd: (obj) => {
            if (isPoison(obj)) throw thrown;
          },
        },
      ],
    });
    h.server.create(PODS, pod('poison'));
    await h.until(() => h.handlerErrors.length > 0, 'the handler error');
    const err = h.handlerErrors[0];
    expect(err.code).toBe(ErrorCodes.HANDLER_FAILED);
    expect(err).toBeInstanceOf(Error);
    expect(err.cause).toBeInstanceOf(Error);
    expect(err.message).toContain('default/poison');
    expect(err.message).toContain('non-Error value thrown');
    await h.stillRunning();
  });

  it('stops the informer with HANDLER_FAILED (never an unhandled rejection) when a handler throws a non-Error under the default policy', async () => {
    const h = await startInformer({
      handlers: [
        {
          onAdd: (obj) => {
            if (isPoison(obj)) throw 42;
          },
        },
      ],
    });
    h.server.create(PODS, pod('poison'));
    await h.until(() => h.informer.isStopped(), 'the informer to stop');
    const failure = await h.stop(true);
    expect(failure).toMatchObject({ code: ErrorCodes.HANDLER_FAILED });
    expect((failure?.cause as Error).message).toContain('42');
  });

  it('reports a transform that throws with TRANSFORM_FAILED naming the object, keeps the cache, and keeps delivering other objects', async () => {
    let armed = false;
    const h = await startInformer({
      informer: {
        transform: (obj) => {
          if (armed && isPoison(obj)) throw new Error('transform exploded');
          return obj;
        },
      },
    });
    armed = true;
    const before = h.cache();
    h.server.create(PODS, pod('poison'));
    await h.until(() => h.watchErrors.length > 0, 'the transform error');
    const err = h.watchErrors[0].error as Error & { code?: string };
    expect(err.code).toBe(ErrorCodes.TRANSFORM_FAILED);
    expect(err.message).toContain('default/poison');
    expect(h.cache()).toEqual(before);
    armed = false;
    await h.stillRunning();
  });

  it('reports an index function that throws with INDEX_FUNC_FAILED naming the index and the key, leaving the store unchanged', async () => {
    const h = await startInformer({ informer: { errorPolicy: 'report', indexers: { byNode: poisonIndex } } });
    const before = h.cache();
    h.server.create(PODS, pod('poison'));
    await h.until(() => h.watchErrors.length > 0 || h.handlerErrors.length > 0 || h.informer.isStopped(), 'the index error');
    const reported = h.watchErrors[0]?.error ?? h.handlerErrors[0] ?? (await h.stop(true));
    expect(reported).toMatchObject({ code: ErrorCodes.INDEX_FUNC_FAILED, indexName: 'byNode', key: 'default/poison' });
    expect((reported as Error).message).toMatch(/index function "byNode" failed for key "default\/poison"/);
    expect(h.cache()).toEqual(before);
  });

  // Under errorPolicy 'report' the failing change is skipped (the store is unchanged by it), reported
  // through onError as an IndexFuncError naming the index and the key, and the informer keeps running.
  it('keeps running after an index function throws, under errorPolicy report', async () => {
    const h = await startInformer({ informer: { errorPolicy: 'report', indexers: { byNode: poisonIndex } } });
    h.server.create(PODS, pod('poison'));
    await h.until(() => h.watchErrors.length > 0 || h.handlerErrors.length > 0 || h.informer.isStopped(), 'the index error');
    expect(h.informer.isStopped()).toBe(false);
    expect(h.handlerErrors[0]).toMatchObject({ code: 'INDEX_FUNC_FAILED', indexName: 'byNode', key: 'default/poison' });
    // Proof of life: a later pod still reaches the cache; only the poisoned object is missing from it.
    const created = h.server.create(PODS, pod('after-poison'));
    await h.until(() => h.cache()['default/after-poison'] === created.metadata?.resourceVersion, 'a later pod to reach the cache');
    expect(h.informer.isStopped()).toBe(false);
    const { ['default/poison']: poisoned, ...truthWithoutPoison } = h.truth();
    expect(poisoned).toBeDefined();
    expect(h.cache()).toEqual(truthWithoutPoison);
  });
});
