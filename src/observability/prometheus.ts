// The metrics vocabulary over the user's own prom-client module (an optional peer, never imported
// here): the shapes of prom-client the providers use, the options every provider shares, and the one
// way to get a metric registered once. The work-queue, controller and webhook providers build on it.

import type { OptionSchemaFor } from '../core/index.js';
import type { CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric } from './metrics.js';

/** The rules of {@link PrometheusWorkQueueMetricsOptions} (the controller metrics add theirs). */
export const PROMETHEUS_WORK_QUEUE_METRICS_OPTION_SCHEMA = {
  registry: 'object',
  prefix: 'string',
  buckets: 'any',
} as const satisfies OptionSchemaFor<PrometheusWorkQueueMetricsOptions>;
/** A labelled prom-client metric: `labels(value)` returns the child for one label value. */
export interface PromLabelled<C> {
  /** The child metric for the given label values. */
  labels(...values: string[]): C;
}

/** A prom-client metric class: constructed from a configuration object, labelled per queue. */
export interface PromMetricClass<C> {
  /** Creates (and registers) the metric; the configuration is prom-client's. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- prom-client's constructors take its own option types, which this library never imports.
  new (configuration: any): PromLabelled<C>;
}

/**
 * The parts of the `prom-client` module the adapter uses; `import * as promClient from 'prom-client'`
 * satisfies it (versions 14 and 15). Typed structurally so the library never depends on prom-client.
 */
export interface PromClientLike {
  // The constructors take prom-client's own configuration types, which this interface must not name.
  /** prom-client's `Gauge` class. */
  Gauge: PromMetricClass<GaugeMetric & SettableGaugeMetric>;
  /** prom-client's `Counter` class. */
  Counter: PromMetricClass<CounterMetric>;
  /** prom-client's `Histogram` class. */
  Histogram: PromMetricClass<HistogramMetric>;
  /** prom-client's default registry. */
  register: PromRegistryLike;
}

/** The parts of a prom-client `Registry` the adapter uses. */
export interface PromRegistryLike {
  /** Looks up an already registered metric by its full name. */
  getSingleMetric(name: string): unknown;
}

/** Options of {@link prometheusWorkQueueMetricsProvider}. */
export interface PrometheusWorkQueueMetricsOptions {
  /** The registry the metrics are registered in. Default: prom-client's default `register`. */
  registry?: PromRegistryLike;
  /** Prepended to every metric name (`'myapp_'` gives `myapp_workqueue_depth`). Default: `''`. */
  prefix?: string;
  /**
   * Histogram buckets (seconds) for queue latency and work duration. Default: Kubernetes' buckets,
   * 10⁻⁸ s to 10³ s by powers of ten.
   */
  buckets?: number[];
}

/**
 * The metric `prefix + name` of `registry`: the one already registered under that name (by an earlier
 * provider), or the one `create` makes from a config with the name, the label names and the registry.
 * Shared by every prom-client provider (work queues, controllers, webhooks).
 */
export function registeredMetric<M>(
  registry: PromRegistryLike,
  prefix: string,
  name: string,
  labelNames: string[],
  create: (config: Record<string, unknown>) => M,
): M {
  const existing = registry.getSingleMetric(prefix + name);
  if (existing !== undefined) return existing as M;
  return create({ name: prefix + name, help: '', labelNames, registers: [registry] });
}
