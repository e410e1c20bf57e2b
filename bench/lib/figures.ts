// The benchmark's figures, computed from the raw run records: sync time, heap per pod, throughput, CPU, steady memory.

import type { ControllerSection } from './controller-phase.js';
import type { IndepSection } from './indep-phase.js';
import type { OperatorSection } from './operator-phase.js';
import type { RealSection } from './real-phase.js';
import type { StormSection } from './storm-phase.js';
import type { StreamSection } from './stream-phase.js';
import { CONTENDERS } from './processes.js';
import type { ContenderId, ContenderLine, DoneLine, SampleLine, SyncedLine } from './protocol.js';
import { slope, summarize, type Summary } from './stats.js';

/** One contender child's outcome. */
export interface RunRecord {
  phase: 'sync' | 'watch' | 'big';
  id: ContenderId;
  pods: number;
  rep: number;
  lines: ContenderLine[];
}

/** Everything a benchmark run wrote (bench/results/*.json). */
export interface BenchResults {
  meta: {
    date: string;
    command: string;
    node: string;
    cpus: string;
    memoryGiB: number;
    args: Record<string, unknown>;
    loads: Array<{ pods: number; events: number; loadSeconds: number; eventSeconds: number; podBytes: number; metaBytes: number }>;
    durationMinutes?: number;
  };
  runs: RunRecord[];
  steady: Partial<Record<ContenderId, ContenderLine[]>>;
  /** The controller phase (bench/controller.bench.ts), when it ran (or was kept by `--merge`). */
  controller?: ControllerSection;
  /** The independent phase (issue 29's outside harness), when it ran (or was kept by `--merge`). */
  indep?: IndepSection;
  /** The real kube-apiserver phase (`--kubeconfig`), when it ran (or was kept by `--merge`). */
  real?: RealSection;
  /** The operator phase (`--kubeconfig --phases operator`: controller-runtime head to head), when it ran (or was kept by `--merge`). */
  operator?: OperatorSection;
  /** The stream phase (`--kubeconfig --phases stream`: streaming against paged lists, the relist), when it ran (or was kept by `--merge`). */
  stream?: StreamSection;
  /** The storm phase (`--kubeconfig --phases storm`: issue 50's restart storm), when it ran (or was kept by `--merge`). */
  storm?: StormSection;
}

/** The figures of one contender. */
export interface ContenderFigures {
  id: ContenderId;
  label: string;
  /** Initial sync seconds by pod count. */
  sync: Map<number, Summary>;
  /** Heap bytes per cached object after the sync, by pod count. */
  heapPerPod: Map<number, Summary>;
  /** CPU ms per 1000 listed objects during the sync, by pod count. */
  syncCpuPerKPod: Map<number, Summary>;
  throughput: Summary;
  /** 1 000 000 / CPU µs per event: the events per second one fully busy core would handle. */
  cpuThroughput: Summary;
  /** CPU µs per MODIFIED event. */
  cpuPerEvent: Summary;
  errors: string[];
  big?: { ok: boolean; seconds?: number; message?: string; cached: number };
  steady?: { samples: SampleLine[]; first: number; last: number; max: number; slopePerMin: number };
}

/** An error message without repeated `Error: ` prefixes or a `(reported: …)` tail that only repeats it. */
export function cleanError(message: string): string {
  const m = /^(.*?) \(reported: (.*)\)$/.exec(message);
  const strip = (x: string): string => x.replace(/^(Error: )+/, '');
  if (m !== null && strip(m[2]).includes(strip(m[1]))) return strip(m[1]);
  return strip(message);
}

const synced = (r: RunRecord): SyncedLine | undefined => r.lines.find((l): l is SyncedLine => l.type === 'synced');
const done = (r: RunRecord): DoneLine | undefined => r.lines.find((l): l is DoneLine => l.type === 'done');

/** Computes every contender's figures (contenders that never ran are left out). */
export function computeFigures(results: BenchResults): ContenderFigures[] {
  const ids = (Object.keys(CONTENDERS) as ContenderId[]).filter((id) => results.runs.some((r) => r.id === id) || results.steady[id] !== undefined);
  const sizes = [...new Set(results.runs.filter((r) => r.phase === 'sync').map((r) => r.pods))].sort((a, b) => a - b);
  return ids.map((id) => {
    const runs = results.runs.filter((r) => r.id === id);
    const f: ContenderFigures = {
      id,
      label: CONTENDERS[id].label,
      sync: new Map(),
      heapPerPod: new Map(),
      syncCpuPerKPod: new Map(),
      throughput: summarize(runs.filter((r) => r.phase === 'watch').map((r) => done(r)).filter((d) => d !== undefined).map((d) => d.events / d.seconds)),
      cpuThroughput: summarize(runs.filter((r) => r.phase === 'watch').map((r) => done(r)).filter((d) => d !== undefined).map((d) => d.events / (d.cpuMs / 1000))),
      cpuPerEvent: summarize(runs.filter((r) => r.phase === 'watch').map((r) => done(r)).filter((d) => d !== undefined).map((d) => (d.cpuMs * 1000) / d.events)),
      errors: runs.flatMap((r) => r.lines.flatMap((l) => (l.type === 'error' ? [`${r.phase} ${r.pods}: ${cleanError(l.message)}`] : []))),
    };
    for (const pods of sizes) {
      const s = runs.filter((r) => r.phase === 'sync' && r.pods === pods).map(synced).filter((l) => l !== undefined);
      f.sync.set(pods, summarize(s.map((l) => l.syncMs / 1000)));
      f.heapPerPod.set(pods, summarize(s.map((l) => (l.heapAfter - l.heapBefore) / l.cached)));
      f.syncCpuPerKPod.set(pods, summarize(s.map((l) => (l.syncCpuMs * 1000) / l.cached)));
    }
    const big = runs.find((r) => r.phase === 'big');
    if (big !== undefined) {
      const s = synced(big);
      const err = big.lines.find((l) => l.type === 'error');
      const text = err?.type === 'error' ? cleanError(err.message) : 'no result';
      f.big = s !== undefined ? { ok: true, seconds: s.syncMs / 1000, cached: s.cached } : { ok: false, message: text, cached: err?.type === 'error' ? err.cached : 0 };
    }
    const lines = results.steady[id];
    if (lines !== undefined) {
      const samples = lines.filter((l): l is SampleLine => l.type === 'sample');
      if (samples.length > 0) {
        // Slope over the second half: the first minutes include the sync's garbage settling.
        const tail = samples.length >= 4 ? samples.slice(Math.floor(samples.length / 2)) : samples;
        f.steady = {
          samples,
          first: samples[0].heap,
          last: samples[samples.length - 1].heap,
          max: Math.max(...samples.map((s) => s.heap)),
          slopePerMin: slope(tail.map((s) => s.t / 60), tail.map((s) => s.heap)),
        };
      }
    }
    return f;
  });
}

/** The sync sizes present in the results, ascending. */
export function syncSizes(results: BenchResults): number[] {
  return [...new Set(results.runs.filter((r) => r.phase === 'sync').map((r) => r.pods))].sort((a, b) => a - b);
}
