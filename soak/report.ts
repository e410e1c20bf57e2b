// Summaries of soak results: one line per run, and the side-by-side table of docs/reliability.md.

import { describeDivergence, mb } from './check.js';
import type { SoakResult } from './soak.js';

/** Recovery times (ms, from the request that met the fault to catching up) of the faults that were injected. */
export function recoveryTimes(results: readonly SoakResult[]): { recovered: number[]; injected: number; unrecovered: number } {
  const recovered: number[] = [];
  let injected = 0;
  let unrecovered = 0;
  for (const r of results) {
    for (const f of r.faults) {
      if (f.injectedAtMs === undefined) continue;
      injected++;
      if (f.recoveredAtMs === undefined || f.consumedAtMs === undefined) unrecovered++;
      else recovered.push(f.recoveredAtMs - f.consumedAtMs);
    }
  }
  return { recovered: recovered.sort((a, b) => a - b), injected, unrecovered };
}

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function ms(v: number | undefined): string {
  if (v === undefined) return '–';
  return v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`;
}

/** One line about a run, plus its failures (the first divergence first). */
export function describeRun(r: SoakResult): string {
  const rec = recoveryTimes([r]);
  const head =
    `${r.failures.length === 0 ? 'PASS' : 'FAIL'} ${r.contender} seed=${r.seed} events=${r.events}: ` +
    `${rec.injected} faults (${rec.injected - rec.unrecovered} recovered, median ${ms(percentile(rec.recovered, 50))}, max ${ms(rec.recovered.at(-1))}), ` +
    `${r.storeDivergences.length} store / ${r.handlerDivergences.length} handler divergences, ` +
    `settled in ${ms(r.settleMs)}, heap ${r.heap === undefined ? 'n/a (run with --expose-gc)' : `${r.heap.growthBytes >= 0 ? '+' : ''}${mb(r.heap.growthBytes)}`}, ` +
    `${ms(r.wallMs)} wall`;
  if (r.failures.length === 0) return head;
  return [head, `  reproduce: npm run soak -- --seed ${r.seed} --events ${r.events} --contender ${r.contender}`, ...r.failures.map((f) => `  - ${f}`)].join('\n');
}

/** The first divergence of a run, in one line, or undefined. */
export function firstDivergence(r: SoakResult): string | undefined {
  const d = r.storeDivergences[0] ?? r.handlerDivergences[0];
  return d === undefined ? undefined : describeDivergence(d);
}

interface Column {
  runs: number;
  passed: number;
  events: number;
  injected: number;
  recovered: number[];
  unrecovered: number;
  store: number;
  lost: number;
  rvRegressions: number;
  anomalies: number;
  rejections: number;
  leftovers: string;
  heap: string;
  errors: number;
  wallMs: number;
}

function column(results: readonly SoakResult[]): Column {
  const rec = recoveryTimes(results);
  const leftovers = new Set<string>();
  let heapMax: number | undefined;
  for (const r of results) {
    for (const [k, v] of Object.entries(r.leftoverResources)) leftovers.add(`${v} ${k}`);
    if (r.leftoverListeners > 0) leftovers.add(`${r.leftoverListeners} listener(s)`);
    if (r.heap !== undefined) heapMax = Math.max(heapMax ?? -Infinity, r.heap.growthBytes);
  }
  const sum = (f: (r: SoakResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  return {
    runs: results.length,
    passed: results.filter((r) => r.failures.length === 0).length,
    events: sum((r) => r.events),
    injected: rec.injected,
    recovered: rec.recovered,
    unrecovered: rec.unrecovered,
    store: sum((r) => r.storeDivergences.length),
    lost: sum((r) => r.handlerDivergences.length),
    rvRegressions: sum((r) => Object.values(r.anomalies).reduce((a, x) => a + x.rvRegressions, 0)),
    anomalies: sum((r) => Object.values(r.anomalies).reduce((a, x) => a + x.count, 0)),
    rejections: sum((r) => r.unhandledRejections + r.uncaughtExceptions),
    leftovers: leftovers.size === 0 ? 'none' : [...leftovers].join(', '),
    heap: heapMax === undefined ? 'n/a' : `${heapMax >= 0 ? '+' : ''}${mb(heapMax)}`,
    errors: sum((r) => r.stats.errors),
    wallMs: sum((r) => r.wallMs),
  };
}

/** A markdown table with one column per contender (results grouped by `contender`). */
export function comparisonTable(results: readonly SoakResult[]): string {
  const names = [...new Set(results.map((r) => r.contender))];
  const cols = names.map((n) => column(results.filter((r) => r.contender === n)));
  const row = (label: string, f: (c: Column) => string): string => `| ${label} | ${cols.map(f).join(' | ')} |`;
  return [
    `| | ${names.map((n) => `\`${n}\``).join(' | ')} |`,
    `| --- | ${names.map(() => '---').join(' | ')} |`,
    row('runs passed (every check exact)', (c) => `${c.passed} / ${c.runs}`),
    row('workload writes', (c) => String(c.events)),
    row('faults injected', (c) => String(c.injected)),
    row('recoveries (caught up after the fault)', (c) => `${c.recovered.length} / ${c.injected}`),
    row('time to recover: median / p95 / max', (c) => `${ms(percentile(c.recovered, 50))} / ${ms(percentile(c.recovered, 95))} / ${ms(c.recovered.at(-1))}`),
    row('divergences found (cache ≠ server, keys)', (c) => String(c.store)),
    row('events lost (handler replay ≠ server, keys × handlers)', (c) => String(c.lost)),
    row('keys seen going back to an older resourceVersion', (c) => String(c.rvRegressions)),
    row('other history anomalies', (c) => String(c.anomalies - c.rvRegressions)),
    row('unhandled rejections / uncaught exceptions', (c) => String(c.rejections)),
    row('left behind after stop', (c) => c.leftovers),
    row('heap growth over a run (after GC, worst)', (c) => c.heap),
    row('errors reported through the error hook', (c) => String(c.errors)),
    row('wall time', (c) => ms(c.wallMs)),
  ].join('\n');
}

/** A markdown table: one row per fault kind, one column per contender (runs with that fault alone). */
export function perFaultTable(runs: ReadonlyArray<{ kind: string; result: SoakResult }>): string {
  const names = [...new Set(runs.map((r) => r.result.contender))];
  const kinds = [...new Set(runs.map((r) => r.kind))];
  const cell = (kind: string, name: string): string => {
    const rs = runs.filter((r) => r.kind === kind && r.result.contender === name).map((r) => r.result);
    const c = column(rs);
    return `${c.passed}/${c.runs} exact · ${c.store} diverged · ${c.lost} lost · ${c.recovered.length}/${c.injected} recovered, median ${ms(percentile(c.recovered, 50))}`;
  };
  return [
    `| fault (alone) | ${names.map((n) => `\`${n}\``).join(' | ')} |`,
    `| --- | ${names.map(() => '---').join(' | ')} |`,
    ...kinds.map((k) => `| ${k} | ${names.map((n) => cell(k, n)).join(' | ')} |`),
  ].join('\n');
}
