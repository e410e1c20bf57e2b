// Handler errors propagate: run() rejects promptly with HANDLER_FAILED, nothing is left running.

import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { channelNames } from '../../src/observability/channels.js';
import { FakeClock } from '../../src/core/clock.js';
import { ErrorCodes } from '../../src/core/errors.js';
import { HandlerError, newInformer, SharedIndexInformer } from '../../src/informer/index.js';
import type { IndexFuncError } from '../../src/store/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { pod, Recorder, failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

function setup(): { clock: FakeClock; source: FakeControllerSource<Pod> } {
  const clock = new FakeClock();
  const source = new FakeControllerSource<Pod>();
  return { clock, source };
}

describe('handler errors in a SharedIndexInformer (default policy: stop)', () => {
  it('rejects run() with HANDLER_FAILED whose cause is the thrown error, and closes the watch', async () => {
    const { clock, source } = setup();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const boom = new Error('boom');
    informer.addEventHandler({
      onAdd: (obj) => {
        if (obj.metadata.name === 'b') throw boom;
      },
    });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    source.add(pod('b'));
    const err = await done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HandlerError);
    expect((err as HandlerError).code).toBe(ErrorCodes.HANDLER_FAILED);
    expect((err as HandlerError).cause).toBe(boom);
    expect((err as HandlerError).key).toBe('default/b');
    expect((err as HandlerError).event).toBe('add');
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    expect(informer.isStopped()).toBe(true);
    expect(informer.health().state).toBe('failed');
    expect(ac.signal.aborted).toBe(false);
  });

  it('treats a rejected promise like a throw, in onUpdate and onDelete too', async () => {
    for (const event of ['update', 'delete'] as const) {
      const { clock, source } = setup();
      const a = source.add(pod('a'));
      const informer = new SharedIndexInformer<Pod>(source, { clock });
      informer.addEventHandler({
        onUpdate: async () => {
          if (event === 'update') throw new Error('async update failure');
        },
        onDelete: async () => {
          await Promise.resolve();
          throw new Error('async delete failure');
        },
      });
      const done = informer.run(new AbortController().signal);
      await informer.whenSynced();
      if (event === 'update') source.modify(a);
      else source.delete(a);
      const err = (await done.catch((e: unknown) => e)) as HandlerError;
      expect(err.code).toBe('HANDLER_FAILED');
      expect(err.event).toBe(event);
      expect((err.cause as Error).message).toBe(`async ${event} failure`);
      expect(source.openWatches()).toBe(0);
    }
  });

  it('rejects even when the handler fails on the initial list, and whenSynced rejects with the same error', async () => {
    const { clock, source } = setup();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const reg = informer.addEventHandler({
      onAdd: () => {
        throw new Error('initial');
      },
    });
    const done = informer.run(new AbortController().signal);
    const [runErr, regErr] = await Promise.all([done.catch((e: unknown) => e), reg.whenSynced().catch((e: unknown) => e)]);
    expect((runErr as HandlerError).code).toBe('HANDLER_FAILED');
    expect(regErr).toBe(runErr);
    expect(reg.hasSynced()).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects run() and whenSynced with the error of an index function that throws on the first list, never reporting it synced', async () => {
    const { clock, source } = setup();
    source.add(pod('a'));
    source.add(pod('b'));
    const informer = new SharedIndexInformer<Pod>(source, {
      clock,
      indexers: {
        byName: (obj) => {
          if (obj.metadata.name === 'b') throw new Error('index broke');
          return [obj.metadata.name];
        },
      },
    });
    let syncedEvent = false;
    informer.on('synced', () => {
      syncedEvent = true;
    });
    const done = informer.run(new AbortController().signal);
    const [runErr, syncErr] = await Promise.all([done.catch((e: unknown) => e), informer.whenSynced().catch((e: unknown) => e)]);
    expect((runErr as IndexFuncError).code).toBe(ErrorCodes.INDEX_FUNC_FAILED);
    expect((runErr as IndexFuncError).key).toBe('default/b');
    expect((syncErr as IndexFuncError).code).toBe(ErrorCodes.INDEX_FUNC_FAILED);
    expect(syncedEvent).toBe(false);
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('stops delivering to every handler after the failure, and other handlers loops end', async () => {
    const { clock, source } = setup();
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const other = new Recorder();
    informer.addEventHandler(other);
    informer.addEventHandler({
      onAdd: (obj) => {
        if (obj.metadata.name === 'bad') throw new Error('bad');
      },
    });
    const done = informer.run(new AbortController().signal);
    await informer.whenSynced();
    source.add(pod('bad'));
    await expect(done).rejects.toMatchObject({ code: 'HANDLER_FAILED' });
    const seen = other.events.length;
    source.add(pod('after'));
    await until(() => true);
    expect(other.events.length).toBe(seen);
    expect(() => informer.addEventHandler(new Recorder())).toThrow(/stopped already/);
  });

  it('settles within the stop grace when another handler is stuck in an endless callback', async () => {
    const { clock, source } = setup();
    const informer = new SharedIndexInformer<Pod>(source, { clock, stopGraceMs: 500 });
    informer.addEventHandler({ onAdd: () => new Promise<void>(() => {}) });
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('fatal');
      },
    });
    source.add(pod('a'));
    let settled = false;
    const done = informer.run(new AbortController().signal).catch((e: unknown) => {
      settled = true;
      return e;
    });
    await until(() => clock.pendingTimers() > 0 && informer.isStopped(), 'stop grace timer');
    expect(settled).toBe(false);
    await clock.advance(500);
    const err = (await done) as HandlerError;
    expect(settled).toBe(true);
    expect(err.code).toBe('HANDLER_FAILED');
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe("handler errors under errorPolicy: 'report'", () => {
  it('reports each error to onError, keeps delivering, and the registration still syncs (client-go #129024)', async () => {
    const { clock, source } = setup();
    source.add(pod('a'));
    source.add(pod('b'));
    const errors: Array<HandlerError | IndexFuncError> = [];
    const informer = new SharedIndexInformer<Pod>(source, { clock, errorPolicy: 'report', onError: (e) => errors.push(e) });
    const seen: string[] = [];
    const reg = informer.addEventHandler({
      onAdd: (obj) => {
        seen.push(obj.metadata.name);
        if (obj.metadata.name === 'a') throw new Error('a fails');
      },
    });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await reg.whenSynced();
    expect(reg.hasSynced()).toBe(true);
    expect(seen.sort()).toEqual(['a', 'b']);
    expect(errors.map((e) => [e.code, e.key])).toEqual([['HANDLER_FAILED', 'default/a']]);
    expect(informer.health().handlers[0].failures).toBe(1);
    source.add(pod('c'));
    await until(() => seen.includes('c'));
    ac.abort();
    await done;
  });

  it('publishes every handler failure on the informerHandlerError diagnostics channel', async () => {
    const { clock, source } = setup();
    source.add(pod('a'));
    source.add(pod('b'));
    const published: unknown[] = [];
    const onMessage = (m: unknown): void => void published.push(m);
    diagnosticsChannel.subscribe(channelNames.informerHandlerError, onMessage);
    try {
      const informer = new SharedIndexInformer<Pod>(source, { clock, errorPolicy: 'report', onError: () => {} });
      const reg = informer.addEventHandler({ onAdd: () => Promise.reject(new Error('nope')) }, { name: 'h' });
      const ac = new AbortController();
      const done = informer.run(ac.signal);
      await reg.whenSynced();
      ac.abort();
      await done;
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.informerHandlerError, onMessage);
    }
    expect(published).toEqual([
      { name: 'h', error: expect.objectContaining({ code: 'HANDLER_FAILED', key: 'default/a' }) },
      { name: 'h', error: expect.objectContaining({ code: 'HANDLER_FAILED', key: 'default/b' }) },
    ]);
  });

  it('stops the informer when the onError hook itself throws', async () => {
    const { clock, source } = setup();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, {
      clock,
      errorPolicy: 'report',
      onError: () => {
        throw new Error('hook broke');
      },
    });
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler broke');
      },
    });
    const err = (await informer.run(new AbortController().signal).catch((e: unknown) => e)) as HandlerError;
    expect(err.code).toBe('HANDLER_FAILED');
    expect(err.message).toMatch(/hook broke/);
  });

  it("refuses errorPolicy 'report' without an onError hook", () => {
    expect(() => new SharedIndexInformer<Pod>(new FakeControllerSource<Pod>(), { errorPolicy: 'report' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});

describe('handler errors in newInformer', () => {
  // CT-5: the low-level controller does not swallow a handler failure.
  it('rejects controller.run() with the handler error as cause and closes the watch (CT-5)', async () => {
    const { clock, source } = setup();
    const panic = new Error('Just panic.');
    const { controller } = newInformer<Pod>(source, {
      onAdd: () => {
        throw panic;
      },
    }, { clock });
    const done = controller.run(new AbortController().signal);
    source.add(pod('a'));
    const err = (await done.catch((e: unknown) => e)) as HandlerError;
    expect(err.code).toBe('HANDLER_FAILED');
    expect(err.cause).toBe(panic);
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps a non-Error throw readable as the cause', async () => {
    const { clock, source } = setup();
    source.add(pod('a'));
    const { controller } = newInformer<Pod>(source, {
      onAdd: () => {
        throw 'plain string';  
      },
    }, { clock });
    const err = (await controller.run(new AbortController().signal).catch((e: unknown) => e)) as HandlerError;
    expect((err.cause as Error).message).toMatch(/plain string/);
    expect(((err.cause as Error).cause)).toBe('plain string');
  });
});
