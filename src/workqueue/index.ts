// The workqueue room's barrel: work queues, rate limiters and queue metrics.
export * from './queue.js';
export * from './delaying-queue.js';
export * from './rate-limiting-queue.js';
export * from './rate-limiters.js';
export type {
  GaugeMetric,
  SettableGaugeMetric,
  CounterMetric,
  HistogramMetric,
  WorkQueueMetricsProvider,
  WorkQueueEvent,
  WorkQueueEventType,
} from './metrics.js';
export * from './prometheus.js';
