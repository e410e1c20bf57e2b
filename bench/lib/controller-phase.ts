// The controller phase of `npm run bench`: bench/controller.bench.ts compiled with tsc and run by plain node, and its section of docs/benchmarks.md.
//
// Why compiled: see bench/lib/build.ts.

import { spawn } from 'node:child_process';
import type { ControllerBenchResult } from '../controller.bench.js';
import type { SideName } from './controller-sides.js';
import { median } from './controller-sides.js';
import { buildBench, compiled } from './build.js';
import { fmt } from './stats.js';

/** The controller section of a results file. */
export interface ControllerSection {
  /** When it was measured, and with what command. */
  date: string;
  command: string;
  result: ControllerBenchResult;
}

/** Compiles the repository with tsc into `.cache/bench-build` and runs the controller benchmark there; resolves with its JSON line. */
export async function runControllerPhase(options: { keys: number; reps: number; rate: number; seconds: number }, log: (msg: string) => void): Promise<ControllerBenchResult> {
  buildBench((msg) => log(`controller: ${msg}`));
  const args = ['--keys', options.keys, '--reps', options.reps, '--rate', options.rate, '--seconds', options.seconds].map(String);
  log(`controller: node bench/controller.bench.js ${args.join(' ')} --json`);
  const child = spawn(process.execPath, [compiled('controller.bench.ts'), ...args, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`controller benchmark exited with ${code}`);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as ControllerBenchResult;
}

const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—');
const span = (xs: number[], digits = 0): string => `${fmt(Math.min(...xs), digits)} / **${fmt(median(xs), digits)}** / ${fmt(Math.max(...xs), digits)}`;

/** The "Controller runtime" section of docs/benchmarks.md. */
export function controllerMarkdown(section: ControllerSection): string {
  const r = section.result;
  const sides: SideName[] = ['runtime', 'hand-written'];
  const keys = (s: SideName): number => median(r.keysPerSecond[s]);
  const lat = (s: SideName, q: 'p50' | 'p99' | 'max'): number[] => r.latency[s].map((x) => x[q]);
  const seen = (s: SideName): string => `${fmt(r.latency[s].reduce((n, x) => n + x.reconciled, 0))} / ${fmt(r.latency[s].reduce((n, x) => n + x.writes, 0))}`;
  const k = keys('runtime') / keys('hand-written');
  const out = [
    '## Controller runtime',
    '',
    `Measured on ${section.date.slice(0, 10)} with \`${section.command}\` (Node ${r.node}; bench/controller.bench.ts compiled by tsc and run by plain node). Both sides reconcile with a no-op, concurrency ${r.concurrency}: **runtime** is \`Controller.for(factory, resource).build(noop)\` (reconcile deadline ${fmt(r.deadlineMs)} ms); **hand-written** is an informer handler feeding a \`RateLimitingQueue\` drained by ${r.concurrency} workers — the loop examples/endpoints writes by hand. ${r.reps} repetitions, the sides alternating; min / **median** / max.`,
    '',
    `- **keys/s**: ${fmt(r.keys)} new pods from an in-process source (no HTTP), from the first add to the last key reconciled.`,
    `- **write → reconcile**: ${fmt(r.objects)} ConfigMaps on the fake API server written round-robin at ${fmt(r.rate)} writes/s for ${fmt(r.seconds)} s; from each write to the start of the reconcile that reads that version from the cache (through the watch over HTTP).`,
    '',
    '| side | keys/s | write → reconcile p50 (ms) | p99 (ms) | max (ms) | writes seen |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...sides.map((s) => `| ${s} | ${span(r.keysPerSecond[s])} | ${span(lat(s, 'p50'), 3)} | ${span(lat(s, 'p99'), 3)} | ${span(lat(s, 'max'), 2)} | ${seen(s)} |`),
    '',
    `Target: keys/s through the runtime ≥ 0.95× the hand-written loop (issue 50; 0.9× before it) — measured ${ratio(keys('runtime'), keys('hand-written'))}: ${k >= 0.95 ? 'met' : '**missed**'}.`,
    '',
    ...tracedLines(r),
  ];
  return out.join('\n');
}

/** The traced runtime's line (results from before it have none): keys/s and the cost per reconcile. */
function tracedLines(r: ControllerBenchResult): string[] {
  const t = r.traced;
  if (t === undefined || t.keysPerSecond.length === 0) return [];
  const cost = 1e6 / median(t.keysPerSecond) - 1e6 / median(r.keysPerSecond.runtime);
  return [
    `**Tracing on** (\`tracerProvider\`: every span sampled, batched and dropped by the exporter; the AsyncLocalStorage context manager on — bench/lib/controller-tracing.ts): ${span(t.keysPerSecond)} keys/s, ${t.spansPerKey.toFixed(2)} spans per key (the watch event's and the reconcile's) — ${fmt(cost, 1)} µs more per reconcile than the runtime untraced (${ratio(median(t.keysPerSecond), median(r.keysPerSecond.runtime))} its keys/s). Tracing off is the runtime row: one \`undefined\` check per event and per reconcile.`,
    '',
  ];
}
