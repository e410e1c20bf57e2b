// The informer room's lifecycle on the task scope: listener loops with a signal, the processor's grace,
// the factory's scope, and the waits that take a signal (shutDownEventHandler, factory.shutdown).

import diagnosticsChannel from 'node:diagnostics_channel';
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import type { GroupVersionResource } from '../../src/core/types.js';
import { DeltaFIFO } from '../../src/fifo/delta-fifo.js';
import { gvrKey, newController, SharedIndexInformer, SharedInformerFactory } from '../../src/informer/index.js';
import { channelNames } from '../../src/observability/channels.js';
import { ProcessorListener } from '../../src/informer/listener.js';
import { SharedProcessor } from '../../src/informer/processor.js';
import type { ListerWatcher } from '../../src/listwatch/types.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { deferred, failOnUnhandledRejections, pod, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

const PODS: GroupVersionResource = { group: '', version: 'v1', resource: 'pods' };
const POLICIES: GroupVersionResource = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies' };

function listener(clock: FakeClock, onAdd: (name: string) => void | Promise<void>, name = 'l'): ProcessorListener<Pod> {
  return new ProcessorListener<Pod>(
    { onAdd: (p) => onAdd(p.metadata.name) },
    {
      name,
      requestedResyncPeriodMs: 0,
      resyncPeriodMs: 0,
      clock,
      errorPolicy: 'stop',
      onFatal: () => {},
      upstreamHasSynced: () => true,
      keyOf: () => undefined,
    },
  );
}

describe('ProcessorListener.run(signal)', () => {
  it('delivers until its signal aborts, then exits and removes its listener from the signal', async () => {
    const clock = new FakeClock();
    const got: string[] = [];
    const l = listener(clock, (n) => void got.push(n));
    const ac = new AbortController();
    const done = l.run(ac.signal);
    expect(l.run(ac.signal)).toBe(done); // idempotent
    l.add({ kind: 'add', obj: pod('a'), isInInitialList: false, at: 0 });
    await until(() => got.length === 1);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    await done;
    l.add({ kind: 'add', obj: pod('b'), isInInitialList: false, at: 0 });
    await flushPromises();
    expect(got).toEqual(['a']);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('never starts delivering with a signal that has already aborted', async () => {
    const clock = new FakeClock();
    const got: string[] = [];
    const l = listener(clock, (n) => void got.push(n));
    l.add({ kind: 'add', obj: pod('a'), isInInitialList: false, at: 0 });
    const ac = new AbortController();
    ac.abort();
    await l.run(ac.signal);
    expect(got).toEqual([]);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});

describe('SharedProcessor on a task scope', () => {
  it('waits, within the grace period, also for the running callback of a listener removed before the stop', async () => {
    const clock = new FakeClock();
    const p = new SharedProcessor<Pod>(clock);
    const release = deferred();
    let finished = false;
    const slow = listener(clock, async () => {
      await release.promise;
      finished = true;
    });
    p.addListener(slow);
    p.run();
    p.distribute({ kind: 'add', obj: pod('a'), isInInitialList: false, at: 0 }, false);
    await until(() => slow.stats().inFlightSince !== undefined);
    p.removeListener(slow);
    let result: boolean | undefined;
    const stopping = p.stop(500).then((r) => (result = r));
    await clock.advance(100);
    expect(result).toBeUndefined();
    release.resolve();
    await stopping;
    expect(result).toBe(true);
    expect(finished).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('does not start a listener added after stop', async () => {
    const clock = new FakeClock();
    const p = new SharedProcessor<Pod>(clock);
    p.run();
    expect(p.isRunning()).toBe(true);
    expect(await p.stop(100)).toBe(true);
    expect(p.isRunning()).toBe(false);
    const got: string[] = [];
    const late = listener(clock, (n) => void got.push(n));
    p.addListener(late);
    late.add({ kind: 'add', obj: pod('a'), isInInitialList: false, at: 0 });
    await flushPromises();
    expect(got).toEqual([]);
  });
});

describe('SharedIndexInformer.shutDownEventHandler(registration, signal)', () => {
  it('rejects with ABORTED when the signal aborts while the callback still runs; the handler is removed anyway', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const entered = deferred();
    const release = deferred();
    const reg = informer.addEventHandler({
      onAdd: async () => {
        entered.resolve();
        await release.promise;
      },
    });
    const run = new AbortController();
    const running = informer.run(run.signal);
    await entered.promise;
    const wait = new AbortController();
    const shuttingDown = informer.shutDownEventHandler(reg, wait.signal);
    expect(informer.isHandlerRegistered(reg)).toBe(false);
    wait.abort('gave up');
    await expect(shuttingDown).rejects.toMatchObject({ code: 'ABORTED', cause: 'gave up', message: expect.stringMatching(/handler handler-1/) });
    expect(getEventListeners(wait.signal, 'abort')).toHaveLength(0);
    release.resolve();
    // Without an abort it resolves once the loop exited, and removes its listener.
    const reg2 = informer.addEventHandler({ onAdd: () => {} });
    const other = new AbortController();
    await informer.shutDownEventHandler(reg2, other.signal);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    run.abort();
    await running;
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('SharedInformerFactory on a task scope', () => {
  function fixture() {
    const clock = new FakeClock();
    const sources = new Map<string, FakeControllerSource<Pod>>();
    const errors: Array<[string, string]> = [];
    const factory = new SharedInformerFactory(undefined, {
      informerOptions: { clock, stopGraceMs: 1000 },
      onError: (resource, err) => void errors.push([resource, (err.cause as Error | undefined)?.message ?? err.message]),
      listWatchFor: (gvr) => {
        const source = new FakeControllerSource<Pod>();
        sources.set(gvrKey(gvr), source);
        return source as unknown as ListerWatcher<unknown>;
      },
    });
    return { clock, sources, errors, factory };
  }

  it('shutdown(signal) stops waiting with ABORTED, and leaves no listener on the signals it was started with', async () => {
    const { factory } = fixture();
    factory.forResource<Pod>(PODS);
    const a = new AbortController();
    const b = new AbortController();
    factory.start(a.signal);
    factory.start(b.signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    const wait = new AbortController();
    const waiting = factory.shutdown(wait.signal);
    wait.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED', message: expect.stringMatching(/SharedInformerFactory/) });
    b.abort();
    await factory.shutdown(new AbortController().signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(wait.signal, 'abort')).toHaveLength(0);
  });

  it('passes every failing informer to onError, the first and one that fails while the others stop', async () => {
    const { factory, sources, errors, clock } = fixture();
    const pods = factory.forResource<Pod>(PODS);
    const policies = factory.forResource<Pod>(POLICIES);
    const entered = deferred();
    const release = deferred();
    policies.addEventHandler({
      onAdd: async () => {
        entered.resolve();
        await release.promise;
        throw new Error('policy handler broke while stopping');
      },
    });
    pods.addEventHandler({
      onAdd: () => {
        throw new Error('pod handler broke');
      },
    });
    const running = factory.run(new AbortController().signal).catch((e: unknown) => e);
    await until(() => sources.size === 2);
    sources.get(gvrKey(POLICIES))?.add(pod('p'));
    await entered.promise;
    sources.get('v1/pods')?.add(pod('a'));
    await until(() => errors.length === 1);
    release.resolve();
    const err = (await running) as Error;
    expect((err.cause as Error).message).toBe('pod handler broke');
    expect(errors).toEqual([
      ['v1/pods', 'pod handler broke'],
      ['networking.k8s.io/v1/networkpolicies', 'policy handler broke while stopping'],
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('the controller loop on a task scope', () => {
  it('waits for a process call only for stopGraceMs, and publishes its later failure as late instead of throwing it', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    const inFlight = deferred();
    let entered = false;
    const controller = newController<Pod>({
      queue: new DeltaFIFO<Pod>(),
      listerWatcher: source,
      clock,
      stopGraceMs: 300,
      process: async () => {
        entered = true;
        await inFlight.promise;
        throw new Error('failed long after the stop');
      },
    });
    const published: Array<{ late?: boolean; error: Error }> = [];
    const onMessage = (m: unknown): void => void published.push(m as { late?: boolean; error: Error });
    diagnosticsChannel.subscribe(channelNames.informerHandlerError, onMessage);
    try {
      const ac = new AbortController();
      let settled = false;
      const running = controller.run(ac.signal).finally(() => (settled = true));
      await until(() => entered, 'process call');
      ac.abort();
      await clock.advance(299);
      expect(settled).toBe(false);
      await clock.advance(1);
      await running; // a clean stop: the abandoned call has not failed yet
      expect(source.openWatches()).toBe(0);
      expect(clock.pendingTimers()).toBe(0);
      inFlight.resolve();
      await until(() => published.length === 1, 'late failure');
      expect(published[0]).toMatchObject({ late: true, error: { message: 'failed long after the stop' } });
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.informerHandlerError, onMessage);
    }
  });
});

describe('SharedIndexInformer has one lifecycle state', () => {
  it('is stopped from the moment its signal aborts, and reports running until the teardown is done', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, { clock, stopGraceMs: 400 });
    const release = deferred();
    const entered = deferred();
    informer.addEventHandler({
      onAdd: async () => {
        entered.resolve();
        await release.promise;
      },
    });
    expect(informer.health().state).toBe('new');
    const ac = new AbortController();
    const running = informer.run(ac.signal);
    await entered.promise;
    expect(informer.isStopped()).toBe(false);
    expect(informer.health().state).toBe('running');
    ac.abort();
    expect(informer.isStopped()).toBe(true);
    expect(informer.hasSynced()).toBe(false);
    expect(() => informer.addEventHandler({})).toThrow(expect.objectContaining({ code: 'INFORMER_STOPPED' }));
    await clock.advance(100);
    expect(informer.health().state).toBe('running'); // still tearing down: a callback is running
    release.resolve();
    await running;
    expect(informer.health().state).toBe('stopped');
    expect(clock.pendingTimers()).toBe(0);
    await expect(informer.run(new AbortController().signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
  });

  it('rejects run() with a handler failure that comes during the stop grace of a clean stop', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(pod('a'));
    const informer = new SharedIndexInformer<Pod>(source, { clock, stopGraceMs: 400 });
    const entered = deferred();
    const release = deferred();
    informer.addEventHandler({
      onAdd: async () => {
        entered.resolve();
        await release.promise;
        throw new Error('broke while stopping');
      },
    });
    const ac = new AbortController();
    const running = informer.run(ac.signal).catch((e: unknown) => e);
    await entered.promise;
    ac.abort();
    await clock.advance(100);
    release.resolve();
    const err = (await running) as Error;
    expect(err).toMatchObject({ code: 'HANDLER_FAILED', cause: { message: 'broke while stopping' } });
    expect(informer.health().state).toBe('failed');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves run() on an already-aborted signal, leaving nothing open, and its sync waits say why', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const reg = informer.addEventHandler({});
    await informer.run(AbortSignal.abort());
    expect(informer.isStopped()).toBe(true);
    expect(informer.health().state).toBe('stopped');
    await expect(informer.whenSynced()).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
    await expect(reg.whenSynced()).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
