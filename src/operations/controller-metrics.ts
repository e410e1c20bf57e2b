// controller-runtime's controller metrics, by name, over the user's own prom-client module.

import { validateOptions } from '../core/options.js';
import type { ControllerMetricsProvider, ReconcileResult } from '../controller/metrics.js';
import type { RateLimitCause } from '../controller/rate-limit.js';
import {
  PROMETHEUS_WORK_QUEUE_METRICS_OPTION_SCHEMA,
  registeredMetric,
  type CounterMetric,
  type HistogramMetric,
  type PromClientLike,
  type PrometheusWorkQueueMetricsOptions,
  type SettableGaugeMetric,
} from '../observability/index.js';
import { prometheusWorkQueueMetricsProvider } from '../workqueue/index.js';

/**
 * The metric names {@link prometheusControllerMetricsProvider} registers (before any prefix): controller-runtime's,
 * and two of this library's own (`kube_informer_controller_*`, the retry limit: controller-runtime has none).
 */
export const controllerMetricNames = {
  /** Counter, labels `controller`, `result` (`success`, `requeue_after`, `error`). */
  reconcileTotal: 'controller_runtime_reconcile_total',
  /** Counter, label `controller`. */
  reconcileErrors: 'controller_runtime_reconcile_errors_total',
  /** Counter, label `controller`: reconciles that failed with a `TerminalError` (not retried). */
  terminalReconcileErrors: 'controller_runtime_terminal_reconcile_errors_total',
  /** Histogram (seconds), label `controller`. */
  reconcileTime: 'controller_runtime_reconcile_time_seconds',
  /** Gauge, label `controller`. */
  activeWorkers: 'controller_runtime_active_workers',
  /** Gauge, label `controller`. */
  maxConcurrentReconciles: 'controller_runtime_max_concurrent_reconciles',
  /** Gauge, label `controller`: tokens in the retry bucket (`rateLimit`) after the last retry it paced; below 0 = retries booked ahead. */
  rateLimitTokens: 'kube_informer_controller_rate_limit_tokens',
  /** Counter, labels `controller`, `cause` (`bucket`, `retry_after`): retries held past the error policy's delay, by what decided when they start. */
  rateLimitedRetries: 'kube_informer_controller_rate_limited_retries_total',
} as const;

/** Options of {@link prometheusControllerMetricsProvider}. */
export interface PrometheusControllerMetricsOptions extends PrometheusWorkQueueMetricsOptions {
  /**
   * Buckets (seconds) of `controller_runtime_reconcile_time_seconds`. Default: controller-runtime's,
   * 5 ms to 60 s. (`buckets` is for the work-queue histograms.)
   */
  reconcileTimeBuckets?: number[];
}

/** controller-runtime's reconcile-time buckets (seconds). */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15,
  20, 25, 30, 40, 50, 60,
];

/**
 * A {@link ControllerMetricsProvider} that exports controller-runtime's controller metrics through
 * prom-client, so dashboards and alerts written for Go operators work unchanged:
 * `controller_runtime_reconcile_total{controller,result}`, `controller_runtime_reconcile_errors_total`,
 * `controller_runtime_terminal_reconcile_errors_total`,
 * `controller_runtime_reconcile_time_seconds`, `controller_runtime_active_workers`,
 * `controller_runtime_max_concurrent_reconciles`; the retry limit's `kube_informer_controller_rate_limit_tokens`
 * and `kube_informer_controller_rate_limited_retries_total{controller,cause}` — and, as its `workQueue`, the `workqueue_*` metrics of
 * each controller's scheduler (label `name` = the controller's name). Pass your own prom-client module:
 *
 * ```ts
 * import * as promClient from 'prom-client';
 * const metricsProvider = prometheusControllerMetricsProvider(promClient);
 * Controller.for(factory, configMapSets).build(reconcile, { name: 'configmapsets', metricsProvider });
 * ```
 *
 * One provider serves any number of controllers; metrics already registered under these names in the
 * registry are reused.
 */
export function prometheusControllerMetricsProvider(promClient: PromClientLike, options: PrometheusControllerMetricsOptions = {}): ControllerMetricsProvider {
  validateOptions('prometheusControllerMetricsProvider', options, { ...PROMETHEUS_WORK_QUEUE_METRICS_OPTION_SCHEMA, reconcileTimeBuckets: 'any' });
  const { reconcileTimeBuckets: _buckets, ...workQueueOptions } = options;
  const registry = options.registry ?? promClient.register;
  const prefix = options.prefix ?? '';
  const make = <M>(name: string, labelNames: string[], create: (config: Record<string, unknown>) => M): M => registeredMetric(registry, prefix, name, labelNames, create);
  const n = controllerMetricNames;
  const total = make(n.reconcileTotal, ['controller', 'result'], (c) => new promClient.Counter({ ...c, help: 'Total number of reconciliations per controller.' }));
  const errors = make(n.reconcileErrors, ['controller'], (c) => new promClient.Counter({ ...c, help: 'Total number of reconciliation errors per controller.' }));
  const terminal = make(
    n.terminalReconcileErrors,
    ['controller'],
    (c) => new promClient.Counter({ ...c, help: 'Total number of terminal reconciliation errors per controller.' }),
  );
  const time = make(
    n.reconcileTime,
    ['controller'],
    (c) => new promClient.Histogram({ ...c, help: 'Length of time per reconciliation per controller.', buckets: options.reconcileTimeBuckets ?? RECONCILE_TIME_BUCKETS }),
  );
  const active = make(n.activeWorkers, ['controller'], (c) => new promClient.Gauge({ ...c, help: 'Number of currently used workers per controller.' }));
  const max = make(n.maxConcurrentReconciles, ['controller'], (c) => new promClient.Gauge({ ...c, help: 'Maximum number of concurrent reconciles per controller.' }));
  const tokens = make(n.rateLimitTokens, ['controller'], (c) => new promClient.Gauge({ ...c, help: 'Tokens in the retry rate-limit bucket after the last retry it paced (below 0: retries booked ahead).' }));
  const limited = make(
    n.rateLimitedRetries,
    ['controller', 'cause'],
    (c) => new promClient.Counter({ ...c, help: 'Retries held past the error policy delay, by the limit that decided when they start (bucket, retry_after).' }),
  );
  // As controller-runtime does, a controller's counters exist from its start, at 0 (a rate needs the 0).
  const zeroed = (counter: CounterMetric): CounterMetric => {
    (counter as unknown as { inc(value: number): void }).inc(0);
    return counter;
  };
  return {
    newReconcileTotalMetric: (controller: string, result: ReconcileResult): CounterMetric => zeroed(total.labels(controller, result)),
    newReconcileErrorsMetric: (controller: string): CounterMetric => zeroed(errors.labels(controller)),
    newTerminalReconcileErrorsMetric: (controller: string): CounterMetric => zeroed(terminal.labels(controller)),
    newReconcileTimeMetric: (controller: string): HistogramMetric => time.labels(controller),
    newActiveWorkersMetric: (controller: string): SettableGaugeMetric => active.labels(controller),
    newMaxConcurrentReconcilesMetric: (controller: string): SettableGaugeMetric => max.labels(controller),
    newRateLimitTokensMetric: (controller: string): SettableGaugeMetric => tokens.labels(controller),
    newRateLimitedRetriesMetric: (controller: string, cause: RateLimitCause): CounterMetric => zeroed(limited.labels(controller, cause)),
    workQueue: prometheusWorkQueueMetricsProvider(promClient, workQueueOptions),
  };
}
