// Reconcile outcomes: a stop is not a failure, the runtime's programming errors stop the controller, TerminalError, ctx.reason.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushPromises, type KubeObject } from '../../src/core/index.js';
import { resources } from '../../src/core/resources.js';
import { Action, Controller, TerminalError, type ReconcileReason } from '../../src/controller/index.js';
import { newResourceClient, type ResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { configMap, fixture, recorder, widget, widgets } from './fixture.js';

failOnUnhandledRejections();

describe('reconcile outcomes', () => {
  let server: FakeApiServer;
  let client: ResourceClient<KubeObject>;
  beforeEach(async () => {
    server = await startFakeApiServer();
    client = newResourceClient(server.kubeConfig, resources.configmaps as never);
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('a write aborted by the stop is not a failure: not logged as one, not counted, not retried', async () => {
    const f = fixture();
    f.source(widgets).add(widget('b1'));
    server.injectFault({ verb: 'create', resource: 'configmaps', type: 'stall' });
    const controller = Controller.for(f.factory, widgets).build(
      async (key, ctx) => {
        await client.create(configMap(`${ctx.name}-cm`), ctx.signal);
        return Action.done();
      },
      { clock: f.clock, logger: f.log.logger, reconcileTimeoutMs: 0 },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await vi.waitFor(() => expect(server.requests().some((r) => r.method === 'POST')).toBe(true));
    f.ac.abort();
    await running;
    expect(controller.stats()).toMatchObject({ succeeded: 0, failed: 0, failing: 0 });
    expect(f.log.lines.filter((l) => l.startsWith('warn:') || l.startsWith('error:'))).toEqual([]);
    await f.clock.advance(10_000);
    expect(server.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});

describe('programming errors the runtime raises', () => {
  it('ctx.children of a resource the controller does not own stops the controller: run rejects with INVALID_OPTION, logged, never retried', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    let calls = 0;
    const controller = Controller.for(f.factory, widgets).build(
      async (_key, ctx) => {
        calls++;
        ctx.children(resources.secrets);
        return Action.done();
      },
      { clock: f.clock, logger: f.log.logger },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    const settled = running.then(
      () => undefined,
      (err: unknown) => err,
    );
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    await f.clock.advance(1_000);
    await flushPromises(6);
    expect(calls).toBe(1);
    const err = await settled;
    expect(err).toMatchObject({ code: 'INVALID_OPTION', message: expect.stringContaining('needs the resource to be owned') });
    expect(f.log.lines.filter((l) => l.startsWith('warn:'))).toEqual([]);
    expect(f.log.lines).toContainEqual(expect.stringMatching(/^error: controller example.com\/v1\/widgets: the reconcile of ns\/a misused the runtime \(INVALID_OPTION\)/));
    expect(controller.stats()).toMatchObject({ active: false, failed: 1 });
  });
});

describe('TerminalError', () => {
  it('is logged as an error, counted, and not retried until the key is requested again; the error policy is not asked', async () => {
    const f = fixture();
    const src = f.source(widgets);
    src.add(widget('a'));
    let policyCalls = 0;
    const attempts: number[] = [];
    const r = recorder((_key, ctx) => {
      attempts.push(ctx.attempt);
      if (attempts.length === 1) throw new Error('wrapped', { cause: new TerminalError('spec.size must be ≥ 0') });
      return Action.done();
    });
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, {
      clock: f.clock,
      logger: f.log.logger,
      onError: () => {
        policyCalls++;
        return Action.requeueAfter(1);
      },
    });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    await f.clock.advance(100_000);
    await flushPromises(6);
    expect(attempts).toEqual([0]);
    expect(policyCalls).toBe(0);
    expect(controller.stats()).toMatchObject({ failed: 1, terminal: 1, failing: 1 });
    expect(f.log.lines).toEqual(
      expect.arrayContaining(['error: controller example.com/v1/widgets: reconcile of ns/a failed terminally (attempt 1): wrapped; not retrying until the next change']),
    );
    src.modify(widget('a', { spec: { size: 2 } }));
    await flushPromises(6);
    expect(attempts).toEqual([0, 1]);
    expect(controller.stats()).toMatchObject({ succeeded: 1, failing: 0 });
    expect(new TerminalError('x')).toMatchObject({ code: 'RECONCILE_TERMINAL', name: 'TerminalError' });
    f.ac.abort();
    await running;
  });
});

describe('error policy and results', () => {
  it('an error policy that throws or returns nonsense is logged and the default backoff used (the one fallback)', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    let calls = 0;
    const r = recorder(() => {
      throw new Error('no');
    });
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, {
      clock: f.clock,
      logger: f.log.logger,
      onError: () => {
        if (++calls === 1) throw new Error('policy bug');
        return { kind: 'later' } as unknown as Action;
      },
    });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    await f.clock.advance(5);
    await flushPromises(6);
    await f.clock.advance(10);
    await flushPromises(6);
    expect(r.keys()).toEqual(['ns/a', 'ns/a', 'ns/a']);
    expect(f.log.lines.filter((l) => l.includes('the error policy failed'))).toHaveLength(3);
    expect(controller.stats()).toMatchObject({ active: true, failed: 3 });
    f.ac.abort();
    await running;
  });

  it('a reconcile that returns something that is not an Action stops the controller with a TypeError, logged, never counted as a success', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const r = recorder(() => ({ kind: 'retry' }) as unknown as Action);
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, { clock: f.clock, logger: f.log.logger });
    f.factory.start(f.ac.signal);
    const err = await controller.run(f.ac.signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(r.keys()).toEqual(['ns/a']);
    expect(controller.stats()).toMatchObject({ succeeded: 0, failed: 1 });
    expect(f.log.lines.some((l) => l.startsWith('error: controller example.com/v1/widgets: the reconcile of ns/a misused the runtime (TypeError)'))).toBe(true);
  });
});

describe('ctx.reason', () => {
  it('names the watch and event, a requeue, a retry after a failure, a resync and a schedule', async () => {
    const f = fixture();
    const src = f.source(widgets);
    src.add(widget('a'));
    const cms = f.source(resources.configmaps);
    const reasons: ReconcileReason[] = [];
    let n = 0;
    const controller = Controller.for(f.factory, widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx) => {
          reasons.push(ctx.reason);
          n++;
          if (n === 2) return Action.requeueAfter(1_000);
          if (n === 3) throw new Error('flaky');
          return Action.done();
        },
        { clock: f.clock, logger: false },
      );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    cms.add(configMap('c1', 'a'));
    await flushPromises(6);
    await f.clock.advance(1_000);
    await flushPromises(6);
    await f.clock.advance(5);
    await flushPromises(6);
    src.delete(widget('a'));
    await flushPromises(6);
    src.add(widget('b'));
    await flushPromises(6);
    controller.reconcileAll();
    await flushPromises(6);
    controller.schedule('ns/x', { delayMs: 50 });
    await f.clock.advance(50);
    await flushPromises(6);
    expect(reasons).toEqual([
      { kind: 'watch', role: 'for', resource: 'example.com/v1/widgets', event: 'add', initial: true },
      { kind: 'watch', role: 'owns', resource: 'v1/configmaps', event: 'add', initial: false },
      { kind: 'requeue', afterMs: 1_000 },
      { kind: 'retry', error: expect.objectContaining({ message: 'flaky' }) as Error },
      { kind: 'watch', role: 'for', resource: 'example.com/v1/widgets', event: 'delete', initial: false },
      { kind: 'watch', role: 'for', resource: 'example.com/v1/widgets', event: 'add', initial: false },
      { kind: 'resync' },
      { kind: 'schedule' },
    ]);
    f.ac.abort();
    await running;
  });

  it('is the reason of the request that won the merge: a change during a requeue wait is the reason, not the requeue', async () => {
    const f = fixture();
    const src = f.source(widgets);
    src.add(widget('a'));
    const reasons: string[] = [];
    const controller = Controller.for(f.factory, widgets).build(
      async (_key, ctx) => {
        reasons.push(ctx.reason.kind === 'watch' ? `watch ${ctx.reason.event}` : ctx.reason.kind);
        return Action.requeueAfter(60_000);
      },
      { clock: f.clock, logger: false },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    src.modify(widget('a', { spec: { size: 3 } }));
    await flushPromises(6);
    await f.clock.advance(60_000);
    await flushPromises(6);
    expect(reasons).toEqual(['watch add', 'watch update', 'requeue']);
    f.ac.abort();
    await running;
  });
});
