// Renders docs/benchmarks.md and the SVG charts from a results file; the method comes from bench/method.md.
// The page holds results, method and commands: issue 29's dated work journal (bench/notes.md) is not rendered.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { controllerMarkdown } from './controller-phase.js';
import { indepMarkdown } from './indep-phase.js';
import { operatorMarkdown } from './operator-phase.js';
import { realMarkdown } from './real-phase.js';
import { stormMarkdown } from './storm-report.js';
import { streamMarkdown } from './stream-phase.js';
import { computeFigures, syncSizes, type BenchResults, type ContenderFigures } from './figures.js';
import { benchDir } from './processes.js';
import type { ContenderId } from './protocol.js';
import { fmt, fmtSummary, type Summary } from './stats.js';
import { barPanel, lineChart, svgDocument } from './svg.js';

export type { BenchResults, RunRecord } from './figures.js';

const REFS: ContenderId[] = ['raw', 'client-node', 'client-go'];
const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—');

/** A ratio with three decimals: the targets are close enough to 1 for two to hide a miss. */
const ratio3 = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(3)}×` : '—');

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function refCols(figs: ContenderFigures[], pick: (f: ContenderFigures) => Summary | undefined, self: ContenderFigures): string[] {
  return REFS.filter((r) => figs.some((f) => f.id === r)).map((r) => ratio(pick(self)?.median ?? Number.NaN, pick(figs.find((f) => f.id === r)!)?.median ?? Number.NaN));
}

function targets(figs: ContenderFigures[], sizes: number[], bigPods: number): string {
  const get = (id: ContenderId): ContenderFigures | undefined => figs.find((f) => f.id === id);
  const med = (s: Summary | undefined): number => s?.median ?? Number.NaN;
  const raw = get('raw');
  const ki1 = get('ki-1');
  const ki3 = get('ki-3');
  const largest = sizes[sizes.length - 1];
  const rows: string[][] = [];
  const check = (what: string, value: number, limit: number, higherIsBetter: boolean, shown: string): void => {
    const ok = Number.isFinite(value) && Number.isFinite(limit) ? (higherIsBetter ? value >= limit : value <= limit) : undefined;
    rows.push([what, shown, ok === undefined ? 'not measured' : ok ? 'met' : `**missed** (${ratio3(value, limit)} of the target)`]);
  };
  // The targets of issue 14 (they were 0.8×, 0.7×, 1.25× at the largest size and 1.05×).
  const w = (f: ContenderFigures): number => med(f.throughput);
  const c = (f: ContenderFigures): number => med(f.cpuThroughput);
  if (raw && ki1) check('watch throughput, 1 handler ≥ 0.95× raw', w(ki1) / w(raw), 0.95, true, ratio3(w(ki1), w(raw)));
  if (raw && ki1) check('… on CPU time (events per CPU-second)', c(ki1) / c(raw), 0.95, true, ratio3(c(ki1), c(raw)));
  if (raw && ki3) check('watch throughput, 3 handlers ≥ 0.9× raw', w(ki3) / w(raw), 0.9, true, ratio3(w(ki3), w(raw)));
  if (raw && ki3) check('… on CPU time', c(ki3) / c(raw), 0.9, true, ratio3(c(ki3), c(raw)));
  for (const other of ['client-node', 'client-go'] as const) {
    const o = get(other);
    if (o && ki1) check(`watch throughput ≥ ${other}`, w(ki1) / w(o), 1, true, ratio3(w(ki1), w(o)));
    if (o && ki1) check('… on CPU time', c(ki1) / c(o), 1, true, ratio3(c(ki1), c(o)));
  }
  for (const size of sizes) {
    if (raw && ki1) check(`initial sync of ${fmt(size)} pods ≤ 1.1× raw`, med(ki1.sync.get(size)) / med(raw.sync.get(size)), 1.1, false, ratio3(med(ki1.sync.get(size)), med(raw.sync.get(size))));
  }
  if (raw && ki1) check(`heap per cached pod (${fmt(largest)} pods) ≤ 1.0× raw`, med(ki1.heapPerPod.get(largest)) / med(raw.heapPerPod.get(largest)), 1, false, ratio3(med(ki1.heapPerPod.get(largest)), med(raw.heapPerPod.get(largest))));
  const strip = get('ki-strip');
  if (strip && ki1) {
    const a = med(ki1.heapPerPod.get(largest));
    const b = med(strip.heapPerPod.get(largest));
    rows.push(['what `stripManagedFields` saves (heap per pod)', `${fmt(a - b)} B/pod (${fmt((100 * (a - b)) / a, 0)} %)`, 'reported']);
  }
  if (ki1?.big !== undefined) rows.push([`${fmt(bigPods)} pods sync without error (1 handler, default options)`, ki1.big.ok ? `synced in ${fmt(ki1.big.seconds ?? Number.NaN, 1)} s` : `failed: ${ki1.big.message ?? ''}`, ki1.big.ok ? 'met' : '**missed**']);
  return table(['target (kube-informer, same run, same server)', 'measured (medians)', 'verdict'], rows);
}

function markdown(results: BenchResults, figs: ContenderFigures[]): string {
  const sizes = syncSizes(results);
  const m = results.meta;
  const fake = results.runs.length > 0 || Object.keys(results.steady).length > 0;
  const out: string[] = [];
  out.push('# Benchmarks', '');
  out.push('<!-- Generated by `npm run bench` (bench/run.ts + bench/lib/render.ts). The method at the end comes from bench/method.md. Do not edit by hand. -->', '');
  // The fake-server sections, when this results file has them (a `--kubeconfig` run alone has none).
  if (fake) {
    out.push(`Run on ${m.date.slice(0, 10)} with \`${m.command}\` (${fmt(m.durationMinutes ?? Number.NaN, 0)} minutes): Node ${m.node}, ${m.cpus}, ${m.memoryGiB} GiB. Every figure is min / **median** / max over the repetitions; ratios are of medians.`, '');
    const pod = m.loads[0];
    if (pod) out.push(`Pods are \`bench/lib/pods.ts\`'s \`makePod(i)\`: ${fmt(pod.podBytes)} bytes of JSON each as served (${fmt(pod.metaBytes)} as \`PartialObjectMetadata\`), with managedFields. Server: kube-informer's fake API server (\`startFakeApiServer\`) in its own process.`, '');
    out.push('![watch throughput and heap per pod](benchmarks.svg)', '');
    out.push('## Targets', '', targets(figs, sizes, Number((m.args as { big?: number }).big ?? Number.NaN)), '', 'The throughput targets are judged on events per wall-clock second; the line after each gives the same ratio on CPU time (events per CPU-second of the client process), which the other tenants of the machine disturb far less.', '');

    const watchers = figs.filter((f) => f.throughput.n > 0);
    if (watchers.length > 0) {
      const ev = (results.meta.args as { events?: number }).events;
      out.push('## Watch throughput', '', `${fmt(ev ?? Number.NaN)} MODIFIED events over ${fmt(sizes[0])} cached pods, replayed by the server as fast as the client reads them. Events per second from the first notification to the last handler's last one; CPU (user + system of the client process) per event over the same window.`, '');
      const head = ['contender', 'events/s', ...REFS.filter((r) => figs.some((f) => f.id === r)).map((r) => `÷ ${r}`), 'CPU µs/event', 'events per CPU-second', ...REFS.filter((r) => figs.some((f) => f.id === r)).map((r) => `÷ ${r}`)];
      out.push(table(head, watchers.map((f) => [f.label, fmtSummary(f.throughput), ...refCols(figs, (x) => x.throughput, f), fmtSummary(f.cpuPerEvent, 1), fmt(f.cpuThroughput.median), ...refCols(figs, (x) => x.cpuThroughput, f)])), '');
      out.push('Each row ÷ each column (median events/s):', '');
      out.push(table(['', ...watchers.map((f) => f.id)], watchers.map((f) => [f.id, ...watchers.map((g) => ratio(f.throughput.median, g.throughput.median))])), '');
    }

    out.push('## Initial sync', '', 'Seconds from creating the client to: its cache holds every pod and every handler has had its initial adds. Each contender sends its own first list (raw, kube-informer, client-go: `resourceVersion=0&limit=500`, served whole from the watch cache; client-node: an unpaginated list).', '');
    for (const pods of sizes) {
      const head = ['contender', 'seconds', ...REFS.filter((r) => figs.some((f) => f.id === r)).map((r) => `÷ ${r}`), 'CPU ms per 1000 pods'];
      out.push(`### ${fmt(pods)} pods`, '', table(head, figs.filter((f) => (f.sync.get(pods)?.n ?? 0) > 0 || f.errors.length > 0).map((f) => [f.label, fmtSummary(f.sync.get(pods)!, 2), ...refCols(figs, (x) => x.sync.get(pods), f), fmt(f.syncCpuPerKPod.get(pods)?.median ?? Number.NaN)])), '');
    }

    out.push('## Heap per cached pod', '', 'V8 `heapUsed` (Go: `HeapAlloc`) after two full GCs once synced, minus the same before the client was created, divided by the cached pods. Only the client process is measured.', '');
    const head = ['contender', ...sizes.map((p) => `${fmt(p)} pods (bytes)`), `÷ raw at ${fmt(sizes[sizes.length - 1])}`, `÷ raw-meta at ${fmt(sizes[sizes.length - 1])}`];
    const last = sizes[sizes.length - 1];
    const rawF = figs.find((f) => f.id === 'raw');
    const rawMeta = figs.find((f) => f.id === 'raw-meta');
    out.push(table(head, figs.filter((f) => sizes.some((p) => (f.heapPerPod.get(p)?.n ?? 0) > 0)).map((f) => [f.label, ...sizes.map((p) => fmtSummary(f.heapPerPod.get(p)!)), ratio(f.heapPerPod.get(last)?.median ?? Number.NaN, rawF?.heapPerPod.get(last)?.median ?? Number.NaN), ratio(f.heapPerPod.get(last)?.median ?? Number.NaN, rawMeta?.heapPerPod.get(last)?.median ?? Number.NaN)])), '');

    const big = figs.filter((f) => f.big !== undefined);
    if (big.length > 0) {
      const n = m.loads.find((l) => l.pods === (results.meta.args as { big?: number }).big)?.pods ?? Number.NaN;
      out.push(`## ${fmt(n)} pods: does it sync?`, '', 'One attempt each.', '');
      out.push(table(['contender', 'outcome', 'cached'], big.map((f) => [f.label, f.big!.ok ? `synced in ${fmt(f.big!.seconds ?? Number.NaN, 1)} s` : `failed: ${f.big!.message?.slice(0, 300) ?? ''}`, fmt(f.big!.cached)])), '');
    }

    const steady = figs.filter((f) => f.steady !== undefined);
    if (steady.length > 0) {
      const a = results.meta.args as { steadyMinutes?: number; steadyRate?: number; steadyPods?: number };
      out.push('## Steady watch memory', '', `All contenders at once, ${fmt(a.steadyMinutes ?? Number.NaN, 1)} minutes, ${fmt(a.steadyPods ?? Number.NaN)} pods, ${fmt(a.steadyRate ?? Number.NaN)} MODIFIED events/s; heap after GC sampled about 30 times (the runs overlap: memory, not speed, is measured here). Flat means no leak; the slope is fitted over the second half of the samples, after the sync's garbage has settled.`, '');
      out.push('![heap during the steady watch](benchmarks-steady.svg)', '');
      out.push(table(['contender', 'events seen', 'heap first (MiB)', 'heap last (MiB)', 'heap max (MiB)', 'slope, 2nd half (KiB/min)'], steady.map((f) => {
        const s = f.steady!;
        return [f.label, fmt(s.samples[s.samples.length - 1].events), fmt(s.first / 2 ** 20, 1), fmt(s.last / 2 ** 20, 1), fmt(s.max / 2 ** 20, 1), fmt(s.slopePerMin / 1024, 1)];
      })), '');
    }
  }

  if (results.indep !== undefined) out.push(indepMarkdown(results.indep));
  if (results.real !== undefined) out.push(realMarkdown(results.real));
  if (results.operator !== undefined) out.push(operatorMarkdown(results.operator));
  if (results.stream !== undefined) out.push(streamMarkdown(results.stream));
  if (results.storm !== undefined) out.push(stormMarkdown(results.storm));
  if (results.controller !== undefined) out.push(controllerMarkdown(results.controller));

  // Measured by hand, not by `npm run bench` (bench/webhook.ts): kept in its own file so a regenerated page keeps it.
  const webhooks = join(benchDir, 'webhook.md');
  if (existsSync(webhooks)) out.push(readFileSync(webhooks, 'utf8').trim(), '');
  // Issue 29's memory experiment, written by `bench/intern.bench.ts --write` (its own run, its command on the page).
  const intern = join(benchDir, 'intern.md');
  if (existsSync(intern)) out.push(readFileSync(intern, 'utf8').trim(), '');
  const errs = figs.filter((f) => f.errors.length > 0);
  if (errs.length > 0) out.push('## Errors', '', ...errs.flatMap((f) => f.errors.map((e) => `- ${f.id}: ${e.slice(0, 400)}`)), '');
  out.push(readFileSync(join(benchDir, 'method.md'), 'utf8').trim(), '');
  out.push('The dated record of how these figures were reached — one section per attempt of issue 29 — is [bench/notes.md](../bench/notes.md), in the repository (not in the package).', '');
  return `${out.join('\n')}\n`;
}

/** Writes docs/benchmarks.md, docs/benchmarks.svg and (with a steady phase) docs/benchmarks-steady.svg. */
export function renderDocs(results: BenchResults, docsDir: string): void {
  const figs = computeFigures(results);
  const sizes = syncSizes(results);
  mkdirSync(docsDir, { recursive: true });
  writeFileSync(join(docsDir, 'benchmarks.md'), markdown(results, figs));
  if (results.runs.length === 0) return; // no fake-server figures to chart: leave the SVGs as they are
  const width = 760;
  const through = barPanel('Watch throughput (MODIFIED events/s, higher is better)', 'ev/s', figs.filter((f) => f.throughput.n > 0).map((f) => ({ id: f.id, label: f.label, ...f.throughput })), 10, 10, width - 20, (v) => fmt(v));
  const last = sizes[sizes.length - 1];
  const heap = barPanel(`Heap per cached pod at ${fmt(last)} pods (KiB, lower is better)`, 'KiB', figs.filter((f) => (f.heapPerPod.get(last)?.n ?? 0) > 0).map((f) => {
    const s = f.heapPerPod.get(last)!;
    return { id: f.id, label: f.label, min: s.min / 1024, median: s.median / 1024, max: s.max / 1024 };
  }), 10, 20 + through.height, width - 20, (v) => fmt(v, 1));
  writeFileSync(join(docsDir, 'benchmarks.svg'), svgDocument(width, 30 + through.height + heap.height, `${through.svg}\n${heap.svg}`, `${results.meta.command} (${results.meta.date.slice(0, 10)}); bars: median, whiskers: min–max`));
  const steady = figs.filter((f) => f.steady !== undefined);
  if (steady.length > 0) {
    const series = steady.map((f) => ({ id: f.id, label: f.label, points: f.steady!.samples.map((s) => [s.t / 60, s.heap / 2 ** 20] as [number, number]) }));
    writeFileSync(join(docsDir, 'benchmarks-steady.svg'), svgDocument(820, 320, lineChart('Heap after GC during the steady watch', 'minutes', 'MiB', series, 820, 320), results.meta.command));
  }
}
