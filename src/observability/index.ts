// The observability room's barrel: diagnostics_channel names; the metrics vocabulary (metric shapes,
// queue metrics, the prom-client shapes and registration every Prometheus provider shares).
export * from './channels.js';
export * from './metrics.js';
export * from './prometheus.js';
