// One line per real-fault run, and recovery percentiles per fault kind over many.

import type { RealFaultResult } from './faults.js';

/** The p-th percentile (nearest rank) of `xs`. */
function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A run as one line: writes, objects, each fault's recovery, the informer's counters, and the verdict. */
export function describeRealRun(r: RealFaultResult): string {
  const ms = r.recoveries.map((x) => x.ms);
  const c = r.counters;
  const verdict = r.cacheDiff.length + r.handlerDiff.length === 0 && c.regressions === 0 ? 'PASS' : 'FAIL';
  return (
    `${verdict} ${r.label}: ${r.writes} writes (${r.failedWrites} failed while down)${r.throttled > 0 ? `, ${r.throttled} storm writes answered 429` : ''}, ` +
    `${r.objects} objects at ${r.resourceVersion}; recovery ${r.recoveries.map((x) => `${x.fault} ${x.ms} ms`).join(', ')}` +
    `${ms.length > 0 ? ` (p50 ${percentile(ms, 50)} ms, max ${Math.max(...ms)} ms)` : ''}; ` +
    `lists ${c.lists}, relists ${c.relists}, watches ${c.watches}, errors ${c.errors}, regressions ${c.regressions}` +
    `${verdict === 'FAIL' ? `; cache: ${r.cacheDiff.join('; ') || 'exact'}; handlers: ${r.handlerDiff.join('; ') || 'exact'}` : ''}`
  );
}

/** Recovery p50 / p90 / max per fault kind, as a markdown table. */
export function recoveryTable(results: readonly RealFaultResult[]): string {
  const byKind = new Map<string, number[]>();
  for (const r of results) for (const x of r.recoveries) byKind.set(x.fault, [...(byKind.get(x.fault) ?? []), x.ms]);
  const rows = [...byKind].map(([kind, ms]) => `| ${kind} | ${ms.length} | ${percentile(ms, 50)} | ${percentile(ms, 90)} | ${Math.max(...ms)} |`);
  return ['| fault | times | recovery p50 (ms) | p90 (ms) | max (ms) |', '| --- | ---: | ---: | ---: | ---: |', ...rows].join('\n');
}
