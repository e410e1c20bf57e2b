// Work-queue metrics: the provider calls on a FakeClock, the diagnostics channel, the Prometheus adapter.

import diagnosticsChannel from 'node:diagnostics_channel';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { channelNames } from '../../src/observability/channels.js';
import type { WorkQueueMetricsProvider } from '../../src/observability/index.js';
import { prometheusWorkQueueMetricsProvider, workQueueMetricNames } from '../../src/workqueue/prometheus.js';
import { RateLimitingQueue } from '../../src/workqueue/rate-limiting-queue.js';
import { WorkQueue } from '../../src/workqueue/queue.js';

function recordingProvider(): { provider: WorkQueueMetricsProvider; calls: string[]; names: Set<string> } {
  const calls: string[] = [];
  const names = new Set<string>();
  const round = (v: number) => Math.round(v * 1000) / 1000;
  const provider: WorkQueueMetricsProvider = {
    newDepthMetric: (n) => (names.add(n), { inc: () => calls.push('depth+1'), dec: () => calls.push('depth-1') }),
    newAddsMetric: (n) => (names.add(n), { inc: () => calls.push('adds') }),
    newLatencyMetric: (n) => (names.add(n), { observe: (v) => calls.push(`latency ${round(v)}`) }),
    newWorkDurationMetric: (n) => (names.add(n), { observe: (v) => calls.push(`work ${round(v)}`) }),
    newUnfinishedWorkSecondsMetric: (n) => (names.add(n), { set: (v) => calls.push(`unfinished ${round(v)}`) }),
    newLongestRunningProcessorSecondsMetric: (n) => (names.add(n), { set: (v) => calls.push(`longest ${round(v)}`) }),
    newRetriesMetric: (n) => (names.add(n), { inc: () => calls.push('retries') }),
  };
  return { provider, calls, names };
}

describe('work-queue metrics', () => {
  it('reports depth, adds, latency, work duration and periodic gauges on the queue clock', async () => {
    const clock = new FakeClock();
    const { provider, calls, names } = recordingProvider();
    const q = new RateLimitingQueue<string>({ name: 'pods', clock, metricsProvider: provider });
    expect([...names]).toEqual(['pods']);
    q.add('a');
    q.add('a');
    expect(calls.splice(0)).toEqual(['adds', 'depth+1']);
    await clock.advance(50);
    await q.get();
    expect(calls.splice(0)).toEqual(['depth-1', 'latency 0.05']);
    await clock.advance(450);
    expect(calls.splice(0)).toEqual(['unfinished 0.45', 'longest 0.45']);
    q.add('b');
    await clock.advance(200);
    await q.get();
    calls.splice(0);
    await clock.advance(300);
    expect(calls.splice(0)).toEqual(['unfinished 1.25', 'longest 0.95']);
    q.done('a');
    expect(calls.splice(0)).toEqual(['work 0.95']);
    q.addRateLimited('c');
    q.addAfter('d', 0);
    expect(calls.splice(0)).toEqual(['retries', 'retries', 'adds', 'depth+1']);
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    expect(calls.splice(0)).toEqual(['unfinished 0.3', 'longest 0.3']);
    await clock.advance(10_000);
    expect(calls).toEqual([]);
  });

  it('sets no timer and keeps no timing state without a provider', () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 'plain', clock });
    q.add('a');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('publishes add, get, done, retry and shutdown on the workqueue channel', async () => {
    const events: unknown[] = [];
    const listener = (message: unknown) => events.push(message);
    diagnosticsChannel.subscribe(channelNames.workqueue, listener);
    try {
      const clock = new FakeClock();
      const q = new RateLimitingQueue<string>({ name: 'diag', clock });
      q.add('a');
      q.add('a');
      await q.get();
      q.done('a');
      q.addAfter('b', 10);
      q.shutDown();
      expect(events).toEqual([
        { name: 'diag', event: 'add', item: 'a' },
        { name: 'diag', event: 'get', item: 'a' },
        { name: 'diag', event: 'done', item: 'a' },
        { name: 'diag', event: 'retry', item: 'b' },
        { name: 'diag', event: 'shutdown' },
      ]);
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.workqueue, listener);
    }
  });
});

describe('prometheusWorkQueueMetricsProvider', () => {
  it('exports the Kubernetes work-queue metric names, labelled by queue name', async () => {
    const registry = new promClient.Registry();
    const clock = new FakeClock();
    const metricsProvider = prometheusWorkQueueMetricsProvider(promClient, { registry });
    const q = new RateLimitingQueue<string>({ name: 'pods', clock, metricsProvider });
    q.add('a');
    await clock.advance(20);
    await q.get();
    await clock.advance(500);
    q.done('a');
    q.addRateLimited('a');
    const text = await registry.metrics();
    for (const name of Object.values(workQueueMetricNames)) expect(text).toContain(`# TYPE ${name} `);
    expect(text).toContain('workqueue_adds_total{name="pods"} 1');
    expect(text).toContain('workqueue_depth{name="pods"} 0');
    expect(text).toContain('workqueue_retries_total{name="pods"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="pods"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_sum{name="pods"} 0.02');
    expect(text).toContain('workqueue_work_duration_seconds_sum{name="pods"} 0.5');
    expect(text).toContain('workqueue_unfinished_work_seconds{name="pods"} 0.48');
    expect(text).toContain('workqueue_longest_running_processor_seconds{name="pods"} 0.48');
    q.shutDown();
  });

  it('applies a prefix and reuses metrics already in the registry', async () => {
    const registry = new promClient.Registry();
    const a = prometheusWorkQueueMetricsProvider(promClient, { registry, prefix: 'app_' });
    const b = prometheusWorkQueueMetricsProvider(promClient, { registry, prefix: 'app_' });
    const clock = new FakeClock();
    const q1 = new WorkQueue<string>({ name: 'one', clock, metricsProvider: a });
    const q2 = new WorkQueue<string>({ name: 'two', clock, metricsProvider: b });
    q1.add('x');
    q2.add('x');
    q2.add('y');
    const text = await registry.metrics();
    expect(text).toContain('app_workqueue_depth{name="one"} 1');
    expect(text).toContain('app_workqueue_depth{name="two"} 2');
    expect(text).not.toContain('\nworkqueue_depth');
    q1.shutDown();
    q2.shutDown();
  });
});
