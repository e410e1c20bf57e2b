// Reading a prom-client registry in tests: one series' value by name and labels.

import type * as promClient from 'prom-client';

/** The value of the series `name` (a histogram's `_count` or `_sum` too) whose labels include `labels`, or `undefined`. */
export async function metricValue(registry: promClient.Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name || m.name === name.replace(/_(count|sum)$/, ''));
  const match = metric?.values.find((v) => ((v as { metricName?: string }).metricName ?? metric.name) === name && Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return match?.value;
}
