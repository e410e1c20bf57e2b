// A WorkQueueMetricsProvider over the user's own prom-client module (an optional peer, never imported here).

import { validateOptions } from '../core/index.js';
import {
  PROMETHEUS_WORK_QUEUE_METRICS_OPTION_SCHEMA,
  registeredMetric,
  type CounterMetric,
  type GaugeMetric,
  type HistogramMetric,
  type PromClientLike,
  type PrometheusWorkQueueMetricsOptions,
  type SettableGaugeMetric,
  type WorkQueueMetricsProvider,
} from '../observability/index.js';


/** The metric names the Prometheus adapter registers (before any prefix), as Kubernetes names them. */
export const workQueueMetricNames = {
  /** Gauge: items waiting. */
  depth: 'workqueue_depth',
  /** Counter: adds of newly dirty items. */
  adds: 'workqueue_adds_total',
  /** Histogram: seconds from add to get. */
  latency: 'workqueue_queue_duration_seconds',
  /** Histogram: seconds from get to done. */
  workDuration: 'workqueue_work_duration_seconds',
  /** Gauge: summed age of items in flight. */
  unfinishedWork: 'workqueue_unfinished_work_seconds',
  /** Gauge: age of the oldest item in flight. */
  longestRunningProcessor: 'workqueue_longest_running_processor_seconds',
  /** Counter: delayed adds. */
  retries: 'workqueue_retries_total',
} as const;

const defaultBuckets = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

/**
 * A {@link WorkQueueMetricsProvider} that exports Kubernetes' work-queue metrics through prom-client,
 * each labelled with the queue's `name`: `workqueue_depth`, `workqueue_adds_total`,
 * `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
 * `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`,
 * `workqueue_retries_total`. Pass your own prom-client module, so that prom-client stays your
 * dependency:
 *
 * ```ts
 * import * as promClient from 'prom-client';
 * const metricsProvider = prometheusWorkQueueMetricsProvider(promClient);
 * const queue = new RateLimitingQueue<string>({ name: 'pods', metricsProvider });
 * ```
 *
 * One provider serves any number of queues. Metrics already registered under the same names in the
 * registry (by an earlier call) are reused rather than registered twice.
 */
export function prometheusWorkQueueMetricsProvider(
  promClient: PromClientLike,
  options: PrometheusWorkQueueMetricsOptions = {},
): WorkQueueMetricsProvider {
  validateOptions('prometheusWorkQueueMetricsProvider', options, PROMETHEUS_WORK_QUEUE_METRICS_OPTION_SCHEMA);
  const registry = options.registry ?? promClient.register;
  const prefix = options.prefix ?? '';
  const buckets = options.buckets ?? defaultBuckets;
  const make = <M>(name: string, create: (config: Record<string, unknown>) => M): M => registeredMetric(registry, prefix, name, ['name'], create);
  const gauge = (name: string, help: string) => make(name, (c) => new promClient.Gauge({ ...c, help }));
  const counter = (name: string, help: string) => make(name, (c) => new promClient.Counter({ ...c, help }));
  const histogram = (name: string, help: string) =>
    make(name, (c) => new promClient.Histogram({ ...c, help, buckets }));

  const n = workQueueMetricNames;
  const depth = gauge(n.depth, 'Current depth of the work queue.');
  const adds = counter(n.adds, 'Total number of adds handled by the work queue.');
  const latency = histogram(n.latency, 'How long in seconds an item stays in the work queue before a worker takes it.');
  const work = histogram(n.workDuration, 'How long in seconds processing an item from the work queue takes.');
  const unfinished = gauge(
    n.unfinishedWork,
    'Seconds of work in progress not yet observed by work_duration; large values suggest stuck workers.',
  );
  const longest = gauge(n.longestRunningProcessor, 'Seconds the longest running worker of the queue has been running.');
  const retries = counter(n.retries, 'Total number of retries (delayed adds) handled by the work queue.');

  return {
    newDepthMetric: (name): GaugeMetric => depth.labels(name),
    newAddsMetric: (name): CounterMetric => adds.labels(name),
    newLatencyMetric: (name): HistogramMetric => latency.labels(name),
    newWorkDurationMetric: (name): HistogramMetric => work.labels(name),
    newUnfinishedWorkSecondsMetric: (name): SettableGaugeMetric => unfinished.labels(name),
    newLongestRunningProcessorSecondsMetric: (name): SettableGaugeMetric => longest.labels(name),
    newRetriesMetric: (name): CounterMetric => retries.labels(name),
  };
}
