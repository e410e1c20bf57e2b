// The workqueue entry point (`kube-informer/workqueue`): work queues, rate limiters and queue metrics.
export { WorkQueue, FifoQueueStrategy } from './queue.js';
export type { WorkQueueOptions, WorkQueueGetResult, QueueStrategy } from './queue.js';
export { DelayingQueue } from './delaying-queue.js';
export type { DelayingQueueOptions } from './delaying-queue.js';
export { RateLimitingQueue } from './rate-limiting-queue.js';
export type { RateLimitingQueueOptions } from './rate-limiting-queue.js';
export {
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  BucketRateLimiter,
  WithMaxWaitRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
} from './rate-limiters.js';
export type { RateLimiter, BucketRateLimiterOptions } from './rate-limiters.js';
export type {
  GaugeMetric,
  SettableGaugeMetric,
  CounterMetric,
  HistogramMetric,
  WorkQueueMetricsProvider,
  WorkQueueEvent,
  WorkQueueEventType,
} from '../observability/index.js';
export { prometheusWorkQueueMetricsProvider, workQueueMetricNames } from './prometheus.js';
export type { PromClientLike, PromLabelled, PromMetricClass, PromRegistryLike, PrometheusWorkQueueMetricsOptions } from '../observability/index.js';
