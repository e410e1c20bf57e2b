// Controller: keys from the primary, owned children and mapped watches; predicates; errors, deadlines, stop and restart.

import { describe, expect, it } from 'vitest';
import { flushPromises, type KubeObject } from '../../src/core/index.js';
import { resources, type ResourceDescriptor } from '../../src/core/resources.js';
import { Action, Controller, predicates } from '../../src/controller/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { abortAfterTest, configMap, fixture, recorder, widget, widgets, type Widget } from './fixture.js';

failOnUnhandledRejections();

describe('Controller', () => {
  it('reconciles every cached primary once the caches synced, reading the object from the cache; a deleted primary once more, not found', async () => {
    const f = fixture();
    const w = f.source(widgets);
    w.add(widget('a'));
    w.add(widget('b'));
    const r = recorder();
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, { clock: f.clock, logger: f.log.logger });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    expect(r.seen.sort()).toEqual([['ns/a', true], ['ns/b', true]]);
    w.delete(widget('a'));
    await flushPromises(6);
    expect(r.seen.at(-1)).toEqual(['ns/a', false]);
    expect(r.seen).toHaveLength(3);
    f.ac.abort();
    await running;
    expect(f.log.lines.some((l) => l.startsWith('info: controller example.com/v1/widgets: caches synced'))).toBe(true);
  });

  it('ctx.cluster is undefined in a single-cluster Controller (a MultiClusterController names the request’s cluster)', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const clusters: unknown[] = [];
    const controller = Controller.for(f.factory, widgets).build(async (_key, ctx) => (clusters.push(ctx.cluster), Action.done()), { clock: f.clock, logger: false });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    expect(clusters).toEqual([undefined]);
    f.ac.abort();
    await running;
  });

  it('owns: a child reconciles its controlling owner; a child with only a non-controller reference, or none, is ignored; a change of owner reconciles both', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const cms = f.source(resources.configmaps);
    const r = recorder();
    const controller = Controller.for(f.factory, widgets).owns(resources.configmaps).build(r.reconcile, { clock: f.clock, logger: false });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    r.seen.length = 0;
    const child = cms.add(configMap('c1', 'a'));
    cms.add(configMap('c2', 'b', false));
    cms.add(configMap('c3'));
    await flushPromises(6);
    expect(r.keys()).toEqual(['ns/a']);
    cms.modify({ ...child, metadata: { ...child.metadata, ownerReferences: configMap('c1', 'z').metadata?.ownerReferences } });
    await flushPromises(6);
    expect(r.keys().slice(1).sort()).toEqual(['ns/a', 'ns/z']);
    f.ac.abort();
    await running;
  });

  it('ctx.children lists the owned objects this primary controls, from the cache', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const cms = f.source(resources.configmaps);
    cms.add(configMap('c1', 'a'));
    cms.add(configMap('c2', 'other'));
    const names: Record<string, string[]> = {};
    const controller = Controller.for(f.factory, widgets)
      .owns(resources.configmaps)
      .build(async (key, ctx) => {
        names[key] = ctx.children(resources.configmaps).map((c) => c.metadata!.name!);
        expect(() => ctx.children(resources.secrets)).toThrow(/needs the resource to be owned/);
        return Action.done();
      }, { clock: f.clock, logger: false });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    expect(names).toEqual({ 'ns/a': ['c1'], 'ns/other': ['c2'] });
    f.ac.abort();
    await running;
  });

  it('watches: the map function names the primaries, for both states of an update', async () => {
    const f = fixture();
    const cms = f.source(resources.configmaps);
    const r = recorder();
    const controller = Controller.for(f.factory, widgets)
      .watches(resources.configmaps, (cm) => [{ namespace: cm.metadata?.namespace, name: cm.metadata?.labels?.widget ?? '' }].filter((x) => x.name !== ''))
      .build(r.reconcile, { clock: f.clock, logger: false });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    const cm = cms.add({ ...configMap('c'), metadata: { name: 'c', namespace: 'ns', labels: { widget: 'x' } } });
    await flushPromises(6);
    cms.modify({ ...cm, metadata: { ...cm.metadata, labels: { widget: 'y' } } });
    await flushPromises(6);
    expect(r.keys()[0]).toBe('ns/x');
    expect(r.keys().slice(1).sort()).toEqual(['ns/x', 'ns/y']);
    f.ac.abort();
    await running;
  });

  it('predicates: generationChanged drops a status-only update of the primary but passes children without a generation', async () => {
    const f = fixture();
    const w = f.source(widgets);
    const stored = w.add(widget('a'));
    const cms = f.source(resources.configmaps);
    const child = cms.add(configMap('c', 'a'));
    const r = recorder();
    const controller = Controller.for(f.factory, widgets, { predicates: [predicates.generationChanged] })
      .owns(resources.configmaps, { predicates: [predicates.generationChanged] })
      .build(r.reconcile, { clock: f.clock, logger: false });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    r.seen.length = 0;
    const statusOnly = w.modify({ ...stored, status: { ready: true } } as Widget);
    await flushPromises(6);
    expect(r.keys()).toEqual([]);
    w.modify({ ...statusOnly, metadata: { ...statusOnly.metadata, generation: 2 }, spec: { size: 2 } } as Widget);
    await flushPromises(6);
    expect(r.keys()).toEqual(['ns/a']);
    cms.modify({ ...child, data: { k: 'v' } } as KubeObject);
    await flushPromises(6);
    expect(r.keys()).toEqual(['ns/a', 'ns/a']);
    f.ac.abort();
    await running;
  });

  it('a failing reconcile is logged and retried with backoff; it never stops the controller', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    let failures = 2;
    const attempts: number[] = [];
    const r = recorder((_key, ctx) => {
      attempts.push(ctx.attempt);
      if (failures-- > 0) throw new Error('the cloud said no');
      return Action.done();
    });
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, { clock: f.clock, logger: f.log.logger });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    expect(attempts).toEqual([0]);
    await f.clock.advance(5);
    await flushPromises(6);
    await f.clock.advance(10);
    await flushPromises(6);
    expect(attempts).toEqual([0, 1, 2]);
    expect(controller.stats()).toMatchObject({ active: true, succeeded: 1, failed: 2, failing: 0 });
    expect(f.log.lines.filter((l) => l.startsWith('warn:'))).toEqual([
      'warn: controller example.com/v1/widgets: reconcile of ns/a failed (attempt 1): the cloud said no; retrying in 5 ms',
      'warn: controller example.com/v1/widgets: reconcile of ns/a failed (attempt 2): the cloud said no; retrying in 10 ms',
    ]);
    f.ac.abort();
    await running;
  });

  it('a reconcile past reconcileTimeoutMs has its signal aborted with RECONCILE_TIMEOUT, is logged and counts as failed', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const reasons: unknown[] = [];
    let calls = 0;
    const controller = Controller.for(f.factory, widgets).build(
      (_key, ctx) => {
        calls++;
        if (calls > 1) return Promise.resolve(Action.done());
        return new Promise<Action>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            reasons.push(ctx.signal.reason);
            reject(ctx.signal.reason as Error);
          });
        });
      },
      { clock: f.clock, logger: f.log.logger, reconcileTimeoutMs: 1_000, onError: () => Action.requeueAfter(50) },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    await f.clock.advance(1_000);
    await flushPromises(6);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ code: 'RECONCILE_TIMEOUT', key: 'ns/a', timeoutMs: 1_000 });
    expect(f.log.lines).toContain('error: controller example.com/v1/widgets: the reconcile of ns/a ran past its deadline of 1000 ms; its signal was aborted and it counts as failed');
    expect(controller.stats()).toMatchObject({ timedOut: 1, failed: 1 });
    await f.clock.advance(50);
    await flushPromises(6);
    expect(calls).toBe(2);
    f.ac.abort();
    await running;
  });

  it('run rejects with NOT_STARTED when the factory was not started, and with INFORMER_STOPPED when a predicate throws', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const controller = Controller.for(f.factory, widgets, {
      predicates: [
        () => {
          throw new Error('predicate bug');
        },
      ],
    }).build(async () => Action.done(), { clock: f.clock, logger: false });
    await expect(controller.run(f.ac.signal)).rejects.toMatchObject({ code: 'NOT_STARTED', message: expect.stringContaining('factory.start(signal)') });
    f.factory.start(f.ac.signal);
    f.factory.shutdown().catch(() => {});
    const err = await controller.run(f.ac.signal).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'HANDLER_FAILED', handlerName: 'controller example.com/v1/widgets', cause: { message: 'predicate bug' } });
  });

  it('an informer failure after the sync ends the run with INFORMER_STOPPED, its cause attached, after draining', async () => {
    const f = fixture();
    const cms = f.source(resources.configmaps);
    const controller = Controller.for(f.factory, widgets)
      .watches(resources.configmaps, (cm) => {
        if (cm.metadata?.name === 'poison') throw new Error('mapper bug');
        return [];
      })
      .build(async () => Action.done(), { clock: f.clock, logger: f.log.logger });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal).then(() => undefined, (e: unknown) => e);
    await f.factory.waitForCacheSync(f.ac.signal);
    cms.add(configMap('poison'));
    const err = await running;
    expect(err).toMatchObject({ code: 'INFORMER_STOPPED', cause: { code: 'HANDLER_FAILED', cause: { message: 'mapper bug' } } });
    expect(f.log.lines.some((l) => l.startsWith('error: controller example.com/v1/widgets stopped: controller example.com/v1/widgets: an informer failed'))).toBe(true);
    expect(f.informerErrors).toHaveLength(1);
  });

  it('stop: no new reconciles, the running one sees the abort and is waited for, handlers removed, no timer left; it can run again', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    let release: () => void = () => {};
    let sawAbort = false;
    let calls = 0;
    const controller = Controller.for(f.factory, widgets).build(
      (_key, ctx) => {
        calls++;
        return new Promise<Action>((resolve) => {
          release = () => resolve(Action.done());
          ctx.signal.addEventListener('abort', () => (sawAbort = true));
        });
      },
      { clock: f.clock, logger: false, reconcileTimeoutMs: 0 },
    );
    const factoryStop = abortAfterTest(new AbortController());
    f.factory.start(factoryStop.signal);
    const term = new AbortController();
    const informer = f.factory.forResource(widgets);
    await f.factory.waitForCacheSync(factoryStop.signal);
    const factoryTimers = f.clock.pendingTimers();
    const running = controller.run(term.signal);
    await flushPromises(6);
    expect(informer.handlerCount()).toBe(1);
    expect(controller.stats()).toMatchObject({ active: true, running: 1 });
    term.abort();
    await flushPromises(6);
    expect(sawAbort).toBe(true);
    let ended = false;
    void running.then(() => (ended = true));
    await flushPromises(6);
    expect(ended).toBe(false);
    release();
    await running;
    expect(informer.handlerCount()).toBe(0);
    expect(controller.stats()).toMatchObject({ active: false, queued: 0, running: 0 });
    expect(f.clock.pendingTimers()).toBe(factoryTimers);
    const again = new AbortController();
    const second = controller.run(again.signal);
    await expect(controller.run(again.signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
    await flushPromises(6);
    expect(calls).toBe(2);
    release();
    again.abort();
    await second;
  });

  it('a burst of changes: at most concurrency reconciles at once, one key never twice at once, changes during a run merge into one more run', async () => {
    const f = fixture();
    const w = f.source(widgets);
    const stored = ['a', 'b', 'c', 'd'].map((n) => w.add(widget(n)));
    let running = 0;
    let maxRunning = 0;
    const perKey = new Map<string, number>();
    const gates: Array<() => void> = [];
    const controller = Controller.for(f.factory, widgets).build(
      (key) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        perKey.set(key, (perKey.get(key) ?? 0) + 1);
        return new Promise<Action>((resolve) =>
          gates.push(() => {
            running--;
            resolve(Action.done());
          }),
        );
      },
      { clock: f.clock, logger: false, concurrency: 2 },
    );
    f.factory.start(f.ac.signal);
    const run = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    expect(running).toBe(2);
    // Five changes of a running key while it runs: one more run of it afterwards, not five.
    const running0 = [...perKey.keys()][0];
    const obj = stored.find((o) => `ns/${o.metadata!.name}` === running0)!;
    for (let i = 0; i < 5; i++) w.modify({ ...obj, spec: { size: i } } as Widget);
    await flushPromises(6);
    while (gates.length > 0) {
      gates.shift()!();
      await flushPromises(6);
      expect(running).toBeLessThanOrEqual(2);
    }
    expect(maxRunning).toBe(2);
    expect(Object.fromEntries(perKey)).toEqual({ 'ns/a': 1, 'ns/b': 1, 'ns/c': 1, 'ns/d': 1, [running0]: 2 });
    f.ac.abort();
    await run;
  });

  it('ctx.wrote holds the next reconcile of the key until the cache observed the write, at most observeTimeoutMs', async () => {
    const f = fixture();
    const w = f.source(widgets);
    w.add(widget('a'));
    const seen: Array<number | undefined> = [];
    let write = true;
    const controller = Controller.for(f.factory, widgets).build(
      async (_key, ctx) => {
        seen.push(ctx.object?.spec?.size);
        if (write) {
          write = false;
          // Our write: the API server answered, the watch has not delivered it yet.
          ctx.wrote(w.modifyDropWatch(widget('a', { spec: { size: 2 } })));
          return Action.requeueAfter(0);
        }
        return Action.done();
      },
      { clock: f.clock, logger: f.log.logger, observeTimeoutMs: 5_000 },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(8);
    expect(seen).toEqual([1]); // the requeue waits: the cache still holds size 1
    w.modify(widget('a', { spec: { size: 3 } }));
    await flushPromises(8);
    // Never ran on the cache older than its own write (the change also requested a run of its own).
    expect(seen).toEqual([1, 3, 3]);
    // A write that never shows up: the reconcile runs after observeTimeoutMs, with a warning.
    write = true;
    controller.schedule('ns/a');
    await flushPromises(8);
    expect(seen).toHaveLength(4); // wrote again; its requeue now waits for that write
    await f.clock.advance(4_999);
    await flushPromises(8);
    expect(seen).toHaveLength(4);
    await f.clock.advance(1);
    await flushPromises(8);
    expect(seen).toHaveLength(5);
    expect(f.log.lines.some((l) => l.startsWith('warn: controller example.com/v1/widgets: reconciling ns/a without waiting for its write of Widget ns/a'))).toBe(true);
    f.ac.abort();
    await running;
  });

  it('ctx.signal read for the first time after the stop or the deadline is already aborted', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    f.source(widgets).add(widget('b'));
    const gates = new Map<string, () => void>();
    const seen: Record<string, unknown> = {};
    const controller = Controller.for(f.factory, widgets).build(
      async (key, ctx) => {
        await new Promise<void>((resolve) => gates.set(key, resolve));
        seen[key] = ctx.signal.aborted ? (ctx.signal.reason as { code?: string }).code ?? 'aborted' : 'live';
        return Action.done();
      },
      { clock: f.clock, logger: false, concurrency: 2, reconcileTimeoutMs: 1_000 },
    );
    f.factory.start(f.ac.signal);
    const term = new AbortController();
    const running = controller.run(term.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    await f.clock.advance(1_000); // both pass their deadline without looking at the signal
    gates.get('ns/a')!();
    await flushPromises(6);
    expect(seen['ns/a']).toBe('RECONCILE_TIMEOUT');
    term.abort();
    gates.get('ns/b')!();
    await running;
    expect(seen['ns/b']).toBe('RECONCILE_TIMEOUT');
    expect(controller.stats()).toMatchObject({ timedOut: 2, succeeded: 0 });
  });

  it('resyncPeriodMs reconciles every primary again on the clock', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    f.source(widgets).add(widget('b'));
    const r = recorder();
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, { clock: f.clock, logger: false, resyncPeriodMs: 60_000 });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    expect(r.seen).toHaveLength(2);
    await f.clock.advance(60_000);
    await flushPromises(6);
    expect(r.seen).toHaveLength(4);
    f.ac.abort();
    await running;
    await f.factory.shutdown(); // the informers' own stop (their grace timers) ends after the controller's
    expect(f.clock.pendingTimers()).toBe(0);
  });

  it('rejects bad options and builder misuse with INVALID_OPTION', () => {
    const f = fixture();
    expect(() => Controller.for(f.factory, { group: '', version: 'v1', resource: 'pods' } as ResourceDescriptor<unknown>)).toThrow(/kind and namespaced/);
    const builder = Controller.for(f.factory, widgets);
    expect(() => builder.watches(resources.configmaps, 'x' as never)).toThrow(/map must be a function/);
    expect(() => builder.build(async () => Action.done(), { concurrency: 0 })).toThrow(/concurrency/);
  });
});
