// `npm run bench`: the informer benchmark — raw baseline, client-node, kube-informer and client-go on one server.
//
// Phases (see docs/benchmarks.md for the method):
//   sync+watch  for each --pods size, a fresh server; per repetition every contender (order rotated)
//               syncs once; on the first size each also replays the --events MODIFIED burst
//   big         --big pods, each contender syncs once (does it sync at all?)
//   steady      every contender watches at once for --steady-minutes at --steady-rate events/s
//   indep       issue 29's outside harness: its own loopback pod server (bench/lib/indep-server.ts), events
//               generated live in 64 KiB chunks, kube-informer from dist/ (bench/lib/indep-phase.ts)
//   real        with --kubeconfig FILE only: a real kube-apiserver — pods written into a fresh namespace,
//               initial sync at each --pods size, watch throughput under a writer (bench/lib/real-phase.ts)
//   operator    with --kubeconfig FILE only: the same operator as controller-runtime (Go), kube-informer's
//               Controller and a hand-written client-node loop (bench/lib/operator-phase.ts)
//   stream      with --kubeconfig FILE only: streaming lists against paged lists, 8 informers at once, and the
//               relist after a 410 (bench/lib/stream-phase.ts)
//   storm       with --kubeconfig FILE only: issue 50's restart storm — a new primary created 1 s into a
//               restarted operator's storm, time to its first reconcile (bench/lib/storm-phase.ts)
//   controller  the controller runtime vs a hand-written loop (bench/controller.bench.ts, compiled, plain node)
// `--phases` picks phases; `--merge FILE` keeps the other sections of an earlier results file (sync, big
// and steady share one section: running any of them replaces all three; indep, real, operator, stream, storm and controller are one each).
// Every contender is its own child process (heap isolated, measured after GC); the server is another.
// Results: bench/results/<time>.json, then (unless --no-docs) latest.json, docs/benchmarks.md and docs/benchmarks-*.svg.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type BenchArgs } from './lib/args.js';
import { buildBench, skipBuilds } from './lib/build.js';
import { runControllerPhase } from './lib/controller-phase.js';
import { runIndepPhase } from './lib/indep-phase.js';
import { runOperatorPhase } from './lib/operator-phase.js';
import { runRealPhase } from './lib/real-phase.js';
import { runStormPhase } from './lib/storm-phase.js';
import { runStreamPhase } from './lib/stream-phase.js';
import { benchDir, CONTENDERS, startContender, startServer } from './lib/processes.js';
import type { ContenderConfig, ContenderId, ContenderLine, ContenderMode, LoadResult } from './lib/protocol.js';
import { renderDocs, type BenchResults, type RunRecord } from './lib/render.js';

const log = (msg: string): void => void process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** Runs one contender to completion (sync, and the burst in mode watch); returns what it printed. */
async function runOnce(args: BenchArgs, base: Omit<ContenderConfig, 'id' | 'handlers' | 'metadataOnly' | 'strip' | 'watchList'>, id: ContenderId): Promise<ContenderLine[]> {
  const spec = CONTENDERS[id];
  const cfg: ContenderConfig = { ...base, id, handlers: spec.handlers, metadataOnly: spec.metadataOnly ?? false, strip: spec.strip ?? false, watchList: spec.watchList ?? false, coalesceMs: spec.coalesceMs, noShare: spec.noShare };
  const child = startContender(cfg, args.profile.includes(id));
  const limit = setTimeout(() => void child.stop(), cfg.syncTimeoutMs + 600_000);
  await child.exited;
  clearTimeout(limit);
  return child.lines;
}

function describe(lines: ContenderLine[]): string {
  return lines
    .map((l) => {
      if (l.type === 'synced') return `sync ${(l.syncMs / 1000).toFixed(2)}s heap/pod ${Math.round((l.heapAfter - l.heapBefore) / Math.max(1, l.cached))}B`;
      if (l.type === 'done') return `${Math.round(l.events / l.seconds)} ev/s ${((l.cpuMs * 1000) / l.events).toFixed(1)}µs CPU/ev`;
      if (l.type === 'error') return `ERROR ${l.message}`;
      return '';
    })
    .join(', ');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const resultsDir = join(benchDir, 'results');
  if (args.renderOnly !== undefined) {
    renderDocs(JSON.parse(readFileSync(args.renderOnly, 'utf8')) as BenchResults, join(benchDir, '..', 'docs'));
    return;
  }
  const started = Date.now();
  if (args.noBuild) skipBuilds();
  buildBench(log);
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();
  const merged = args.merge === undefined ? undefined : (JSON.parse(readFileSync(args.merge, 'utf8')) as BenchResults);
  const fakePhases = args.phases.some((p) => p === 'sync' || p === 'big' || p === 'steady');
  const results: BenchResults = merged !== undefined && !fakePhases ? merged : {
    meta: {
      date: new Date().toISOString(),
      command,
      node: process.version,
      cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      args: { ...args },
      loads: [],
    },
    runs: [],
    steady: {},
    controller: merged?.controller,
    indep: merged?.indep,
    real: merged?.real,
    operator: merged?.operator,
    stream: merged?.stream,
    storm: merged?.storm,
  };
  const server = fakePhases ? startServer() : undefined;
  const record = (phase: RunRecord['phase'], id: ContenderId, pods: number, rep: number, lines: ContenderLine[]): void => {
    results.runs.push({ phase, id, pods, rep, lines: lines.filter((l) => l.type !== 'sample') });
    log(`${phase} ${id} pods=${pods} rep=${rep}: ${describe(lines)}`);
  };
  const baseFor = (load: LoadResult, mode: ContenderMode, pods: number): Omit<ContenderConfig, 'id' | 'handlers' | 'metadataOnly' | 'strip' | 'watchList'> => ({
    url: load.url,
    token: load.token,
    mode,
    pods,
    events: mode === 'watch' ? args.events : 0,
    sampleMs: Math.max(2000, Math.round((args.steadyMinutes * 60_000) / 30)),
    syncTimeoutMs: Math.max(120_000, pods * 3),
  });
  try {
    // Phase 1: initial sync at each size; the watch burst on the first size.
    const syncers = args.contenders.filter((id) => id !== 'ki-watchlist' || args.pods.length > 0);
    for (const [si, pods] of (args.phases.includes('sync') ? args.pods : []).entries()) {
      if (server === undefined) break;
      const events = si === 0 ? args.events : 0;
      log(`loading ${pods} pods${events > 0 ? ` and recording ${events} MODIFIED events` : ''}`);
      const load = await server.load(pods, events);
      results.meta.loads.push({ pods, events, ...load });
      log(`loaded in ${load.loadSeconds.toFixed(1)}s (+${load.eventSeconds.toFixed(1)}s events), ${Math.round(load.podBytes)} B/pod, ${Math.round(load.metaBytes)} B/pod metadata-only`);
      for (let rep = 0; rep < args.reps; rep++) {
        const order = syncers.map((_, i) => syncers[(i + rep) % syncers.length]);
        for (const id of order) {
          record('sync', id, pods, rep, await runOnce(args, baseFor(load, 'sync', pods), id));
          if (events > 0 && id !== 'ki-watchlist') {
            record('watch', id, pods, rep, await runOnce(args, { ...baseFor(load, 'watch', pods), listRv: load.loadedRv }, id));
          }
        }
      }
    }
    // Phase 2: does it sync at all with --big pods?
    if (server !== undefined && args.phases.includes('big') && args.big > 0) {
      log(`loading ${args.big} pods for the big-sync check`);
      const load = await server.load(args.big, 0);
      results.meta.loads.push({ pods: args.big, events: 0, ...load });
      for (const id of args.contenders) {
        record('big', id, args.big, 0, await runOnce(args, { ...baseFor(load, 'sync', args.big), syncTimeoutMs: 300_000 }, id));
      }
    }
    // Phase 3: every contender watches at once at a low event rate; memory sampled after GC.
    if (server !== undefined && args.phases.includes('steady') && args.steadyMinutes > 0) {
      log(`loading ${args.steadyPods} pods for a ${args.steadyMinutes}-minute steady watch at ${args.steadyRate} events/s`);
      const load = await server.load(args.steadyPods, 0);
      results.meta.loads.push({ pods: args.steadyPods, events: 0, ...load });
      const children = args.contenders
        .filter((id) => id !== 'ki-watchlist')
        .map((id) => {
          const spec = CONTENDERS[id];
          const cfg: ContenderConfig = { ...baseFor(load, 'steady', args.steadyPods), id, handlers: spec.handlers, metadataOnly: spec.metadataOnly ?? false, strip: spec.strip ?? false, watchList: false, coalesceMs: spec.coalesceMs, noShare: spec.noShare };
          return { id, child: startContender(cfg, false) };
        });
      await server.send({ cmd: 'steady', ratePerSecond: args.steadyRate });
      await new Promise((resolve) => setTimeout(resolve, args.steadyMinutes * 60_000));
      await server.send({ cmd: 'stop-steady' });
      for (const { id, child } of children) {
        await child.stop();
        results.steady[id] = child.lines;
        const samples = child.lines.filter((l) => l.type === 'sample');
        log(`steady ${id}: ${samples.length} samples, heap ${samples.map((s) => Math.round(s.heap / 2 ** 20)).join(' → ')} MiB`);
      }
    }
    // Phase 4: the independent harness's shape, with a server of its own.
    if (args.phases.includes('indep')) {
      await server?.close();
      results.indep = await runIndepPhase(args, command, log);
    }
    // Phase 5: a real kube-apiserver (--kubeconfig), with a writer process of its own.
    if (args.phases.includes('real')) {
      await server?.close();
      results.real = await runRealPhase(args, command, log);
    }
    // Phase 5b: the operator head to head with controller-runtime (--kubeconfig), one side process at a time.
    if (args.phases.includes('operator')) {
      await server?.close();
      results.operator = await runOperatorPhase(args.kubeconfig!, args.operator, command, log);
    }
    // Phase 5c: streaming lists against paged lists, and the relist after a 410 (--kubeconfig).
    if (args.phases.includes('stream')) {
      await server?.close();
      results.stream = await runStreamPhase(args.kubeconfig!, args.stream, command, log, merged?.stream);
    }
    // Phase 5d: issue 50's restart storm (--kubeconfig), one side process at a time.
    if (args.phases.includes('storm')) {
      await server?.close();
      results.storm = await runStormPhase(args.kubeconfig!, args.storm, command, log, merged?.storm);
    }
    // Phase 6: the controller runtime vs the hand-written loop, in a process of its own.
    if (args.phases.includes('controller')) {
      const result = await runControllerPhase(args.controller, log);
      results.controller = { date: new Date().toISOString(), command, result };
      log(`controller: keys/s runtime ${result.keysPerSecond.runtime.map(Math.round).join(', ')}; hand-written ${result.keysPerSecond['hand-written'].map(Math.round).join(', ')}`);
    }
  } finally {
    await server?.close();
  }
  if (fakePhases) results.meta.durationMinutes = (Date.now() - started) / 60_000;
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${new Date(started).toISOString().replace(/[:.]/g, '-')}.json`);
  const text = `${JSON.stringify(results, null, 1)}\n`;
  writeFileSync(file, text);
  log(`results: ${file}`);
  if (args.noDocs) return;
  if (results.runs.length === 0 && merged === undefined) {
    // The page is one full run's: a run of the real or controller phase alone would replace it with one section.
    log('docs/benchmarks.md not written: no fake-server sections in this run; add --merge bench/results/<a full run>.json to put its section into the page');
    return;
  }
  // latest.json is always the results behind docs/benchmarks.md: a --no-docs run leaves it alone.
  writeFileSync(join(resultsDir, 'latest.json'), text);
  renderDocs(results, join(benchDir, '..', 'docs'));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
