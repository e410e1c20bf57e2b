// controller-runtime's webhook metrics, by name, over the user's own prom-client module (an optional peer).

import { validateOptions } from '../core/index.js';
import {
  PROMETHEUS_WORK_QUEUE_METRICS_OPTION_SCHEMA,
  registeredMetric,
  type CounterMetric,
  type GaugeMetric,
  type HistogramMetric,
  type PromClientLike,
  type PrometheusWorkQueueMetricsOptions,
} from '../observability/index.js';

/** The metric names {@link prometheusWebhookMetricsProvider} registers (before any prefix): controller-runtime's. */
export const webhookMetricNames = {
  /** Counter, labels `webhook` (the path), `code` (the HTTP status code). */
  requestsTotal: 'controller_runtime_webhook_requests_total',
  /** Histogram (seconds), label `webhook`. */
  latency: 'controller_runtime_webhook_latency_seconds',
  /** Gauge, label `webhook`. */
  inFlight: 'controller_runtime_webhook_requests_in_flight',
} as const;

/** Creates the metrics of the webhook server; each method is called per webhook path (and code). */
export interface WebhookMetricsProvider {
  /** The counter of answered requests at `webhook` (its path) with HTTP status `code`. */
  newRequestsTotalMetric(webhook: string, code: number): CounterMetric;
  /** The latency histogram (seconds) of requests at `webhook`. */
  newLatencyMetric(webhook: string): HistogramMetric;
  /** The gauge of requests being served at `webhook`. */
  newInFlightMetric(webhook: string): GaugeMetric;
}

/** Options of {@link prometheusWebhookMetricsProvider}: `registry` and `prefix` as for the other providers (`buckets`: the latency's). */
export type PrometheusWebhookMetricsOptions = PrometheusWorkQueueMetricsOptions;

/** prom-client's default buckets, as controller-runtime's webhook latency uses (Go's `prometheus.DefBuckets`). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * A {@link WebhookMetricsProvider} that exports controller-runtime's webhook metrics through prom-client:
 * `controller_runtime_webhook_requests_total{webhook,code}`, `controller_runtime_webhook_latency_seconds{webhook}`,
 * `controller_runtime_webhook_requests_in_flight{webhook}`. Pass your own prom-client module:
 *
 * ```ts
 * import * as promClient from 'prom-client';
 * new WebhookServer({ tls, metricsProvider: prometheusWebhookMetricsProvider(promClient) });
 * ```
 */
export function prometheusWebhookMetricsProvider(promClient: PromClientLike, options: PrometheusWebhookMetricsOptions = {}): WebhookMetricsProvider {
  validateOptions('prometheusWebhookMetricsProvider', options, PROMETHEUS_WORK_QUEUE_METRICS_OPTION_SCHEMA);
  const registry = options.registry ?? promClient.register;
  const prefix = options.prefix ?? '';
  const make = <M>(name: string, labelNames: string[], create: (config: Record<string, unknown>) => M): M => registeredMetric(registry, prefix, name, labelNames, create);
  const n = webhookMetricNames;
  const total = make(n.requestsTotal, ['webhook', 'code'], (c) => new promClient.Counter({ ...c, help: 'Total number of admission requests by HTTP status code.' }));
  const latency = make(
    n.latency,
    ['webhook'],
    (c) => new promClient.Histogram({ ...c, help: 'Histogram of the latency of processing admission requests', buckets: options.buckets ?? LATENCY_BUCKETS }),
  );
  const inFlight = make(n.inFlight, ['webhook'], (c) => new promClient.Gauge({ ...c, help: 'Current number of admission requests being served.' }));
  return {
    newRequestsTotalMetric: (webhook, code) => total.labels(webhook, String(code)),
    newLatencyMetric: (webhook) => latency.labels(webhook),
    newInFlightMetric: (webhook) => inFlight.labels(webhook),
  };
}
