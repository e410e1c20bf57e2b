// The operations entry point (`kube-informer/operations`): running controllers in production — the manager, probes, metrics, the Event recorder, the drift audit.
export * from './manager.js';
export { CacheSyncError, type UnsyncedInformer } from './cache-sync.js';
export * from './probes.js';
export * from './controller-metrics.js';
export * from './informer-metrics.js';
export * from './events/index.js';
export * from './drift/index.js';
export type { ControllerMetricsProvider, ReconcileResult } from '../controller/metrics.js';
export type { Runnable, RunWhileLeadingOptions } from '../controller/leader.js';
export type { PromClientLike, PromRegistryLike, PromMetricClass, PromLabelled, PrometheusWorkQueueMetricsOptions } from '../workqueue/prometheus.js';
export type { CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric, WorkQueueMetricsProvider } from '../workqueue/metrics.js';
