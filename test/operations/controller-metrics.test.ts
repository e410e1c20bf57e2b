// controller-runtime's metrics from the controller runtime, on a real prom-client registry: totals by result, errors, time, workers, and the scheduler as a work queue.

import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Action, Controller, TerminalError } from '../../src/controller/index.js';
import { flushPromises } from '../../src/core/index.js';
import { prometheusControllerMetricsProvider } from '../../src/operations/index.js';
import { fixture, widget, widgets } from '../controller/fixture.js';
import { metricValue } from './prom.js';

const value = metricValue;

describe('prometheusControllerMetricsProvider', () => {
  it('counts reconciles by result (success, requeue_after, error), errors, time, and sets the worker gauges', async () => {
    const f = fixture();
    const registry = new promClient.Registry();
    const metricsProvider = prometheusControllerMetricsProvider(promClient, { registry });
    const src = f.source(widgets);
    ['a', 'b', 'c'].forEach((n) => src.add(widget(n)));
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const controller = Controller.for(f.factory, widgets).build(
      async (key) => {
        if (key === 'ns/a') return Action.done();
        if (key === 'ns/b') return Action.requeueAfter(60_000);
        if (key === 'ns/c') throw new Error('boom');
        await held; // ns/d: stays running
        return Action.done();
      },
      { name: 'widgets', concurrency: 3, clock: f.clock, logger: false, metricsProvider },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(20);
    const c = { controller: 'widgets' };
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...c, result: 'success' })).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...c, result: 'requeue_after' })).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...c, result: 'error' })).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_errors_total', c)).toBe(1);
    expect(await value(registry, 'controller_runtime_max_concurrent_reconciles', c)).toBe(3);
    expect(await value(registry, 'controller_runtime_reconcile_time_seconds_count', c)).toBe(3);

    src.add(widget('d'));
    await flushPromises(20);
    expect(await value(registry, 'controller_runtime_active_workers', c)).toBe(1);
    release();
    await flushPromises(20);
    expect(await value(registry, 'controller_runtime_active_workers', c)).toBe(0);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...c, result: 'success' })).toBe(2);

    // The scheduler as a work queue named after the controller: 4 keys added at once, retries for the
    // requeue and the backoff, nothing waiting now.
    const q = { name: 'widgets' };
    expect(await value(registry, 'workqueue_adds_total', q)).toBe(4);
    expect(await value(registry, 'workqueue_retries_total', q)).toBe(2);
    expect(await value(registry, 'workqueue_depth', q)).toBe(0);
    expect(await value(registry, 'workqueue_work_duration_seconds_count', q)).toBe(4);

    // The backoff of ns/c (5 ms) is due: it is added when it starts, its latency counted from its due time.
    await f.clock.advance(5);
    await flushPromises(20);
    expect(await value(registry, 'workqueue_adds_total', q)).toBe(5);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...c, result: 'error' })).toBe(2);
    f.ac.abort();
    await running;
  });

  it('counts a TerminalError in controller_runtime_terminal_reconcile_errors_total (and errors, result error); a reconcile the stop interrupted in none', async () => {
    const f = fixture();
    const registry = new promClient.Registry();
    const src = f.source(widgets);
    ['a', 'b'].forEach((n) => src.add(widget(n)));
    const controller = Controller.for(f.factory, widgets).build(
      async (key, ctx) => {
        if (key === 'ns/a') throw new TerminalError('spec.size must be ≥ 0');
        await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('request aborted'))));
        return Action.done();
      },
      { name: 'terminal', concurrency: 2, clock: f.clock, logger: false, reconcileTimeoutMs: 0, metricsProvider: prometheusControllerMetricsProvider(promClient, { registry }) },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(20);
    await f.clock.advance(10_000);
    f.ac.abort();
    await running;
    const c = { controller: 'terminal' };
    expect(await value(registry, 'controller_runtime_terminal_reconcile_errors_total', c)).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_errors_total', c)).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...c, result: 'error' })).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...c, result: 'success' })).toBe(0);
    expect(await value(registry, 'controller_runtime_reconcile_time_seconds_count', c)).toBe(1);
    expect(controller.stats()).toMatchObject({ failed: 1, terminal: 1, stopped: 1, failing: 0 });
  });

  it('depth counts keys due and waiting for a free slot', async () => {
    const f = fixture();
    const registry = new promClient.Registry();
    const src = f.source(widgets);
    ['a', 'b', 'c'].forEach((n) => src.add(widget(n)));
    const never = new Promise<Action>(() => undefined);
    const controller = Controller.for(f.factory, widgets).build(() => never, {
      name: 'slow',
      clock: f.clock,
      logger: false,
      reconcileTimeoutMs: 0,
      metricsProvider: prometheusControllerMetricsProvider(promClient, { registry }),
    });
    f.factory.start(f.ac.signal);
    void controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(20);
    expect(await value(registry, 'workqueue_depth', { name: 'slow' })).toBe(2);
    expect(await value(registry, 'controller_runtime_active_workers', { controller: 'slow' })).toBe(1);
  });

  it('reuses metrics already registered, so two providers on one registry do not throw', () => {
    const registry = new promClient.Registry();
    prometheusControllerMetricsProvider(promClient, { registry });
    expect(() => prometheusControllerMetricsProvider(promClient, { registry })).not.toThrow();
  });
});
