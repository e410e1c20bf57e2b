// The observability room's barrel: diagnostics_channel names; the metrics vocabulary (metric shapes,
// queue metrics, the prom-client shapes and registration every Prometheus provider shares); the tracing types and lazy `@opentelemetry/api`.
export * from './channels.js';
export * from './metrics.js';
export * from './prometheus.js';
export * from './tracing.js';
