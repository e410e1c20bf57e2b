// The operator phase of `npm run bench -- --kubeconfig FILE --phases operator`: the same operator as controller-runtime, kube-informer's Controller and a hand-written client-node loop, on a real kube-apiserver; and its section of docs/benchmarks.md.
//
// The operator (bench/controller-runtime/main.go, bench/operator/kube-informer.ts, bench/operator/client-node.ts):
// a BenchSet (bench CRD, namespaced, status subresource) asks for `children` ConfigMaps `<set>-<i>`
// holding its `spec.data`; the reconcile reads the set and each ConfigMap from its cache, creates a
// missing one (with a controller owner reference) or updates (PUT) one whose data differs, then PUTs the
// status (observedGeneration, ready) if it changed. The primary's updates pass only when the generation
// changed (GenerationChangedPredicate / predicates.generationChanged / a generation map); any ConfigMap
// event queues its controller. Same concurrency on every side; no client-side rate limit on any.
//
// Per size, repetition and side (one child process at a time, order rotated per repetition):
// 1. reset: the namespace's ConfigMaps and BenchSets deleted, `n` BenchSets created (no children, no status);
// 2. converge: the side starts; time from its spawn until a watch of the parent's sees every set ready;
// 3. steady writes: `rate` spec changes per second for `seconds`, each to another set; latency = from a
//    write's answer to the start of the first reconcile that read that generation (or later) from the
//    cache, all on the machine's wall clock (epoch ms); the side is then stopped (its CPU and peak RSS);
// 4. saturation: the side restarted on the converged world; every set is reconciled once, writing
//    nothing; reconciles/s = n ÷ (first reconcile start → n-th reconcile end), CPU per reconcile over
//    that window.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { compiled } from './build.js';
import { quantile } from './controller-sides.js';
import { OperatorWorld, type SpecWrite } from './operator-world.js';
import { epochMs, type OperatorSideConfig, type MemoryAtPeak, type WindowGc } from './operator-side.js';
import { KI_OWNS_OPTIONS, OPERATOR_SIDES, type OperatorArgs, type OperatorSideId } from './operator-args.js';
import { benchDir } from './processes.js';
import type { ServerRunMeta } from './real-phase.js';
import { fmt, fmtSummary, summarize, type Summary } from './stats.js';

/** What one side's `final` line says. */
export interface FinalLine {
  reconciles: number;
  errors: number;
  writes: number;
  cpuMs: number;
  maxRssKiB: number;
  /** Node sides: where the memory stood at the largest resident set sampled (bench/lib/operator-side.ts). */
  memoryAtPeak?: MemoryAtPeak;
  starts: Array<[string, number, number]>;
  /** Node sides: the collector's pauses in the saturation window (bench/lib/operator-side.ts). */
  windowGc?: WindowGc;
  /** Node sides, storm phase: per start of an annotated set, [key, start ms, the collector's pause ms, pauses] since its create. */
  stormGc?: Array<[string, number, number, number]>;
}

/** One side at one size and repetition. */
export interface OperatorRun {
  side: OperatorSideId;
  primaries: number;
  rep: number;
  /** Seconds from spawn to every set ready; CPU seconds of the side by then (from /proc). */
  convergeSeconds?: number;
  convergeCpuSeconds?: number;
  /** Steady writes: answered, seen by a reconcile, and the latency quantiles (ms). */
  writes?: number;
  seen?: number;
  p50Ms?: number;
  p99Ms?: number;
  maxMs?: number;
  /** The converge + steady process: its reconciles, failed reconciles, writes, CPU ms and peak RSS (KiB). */
  run?: Omit<FinalLine, 'starts' | 'windowGc'>;
  /** The saturation restart: reconciles/s, CPU µs per reconcile over the window, peak RSS (KiB). */
  reconcilesPerSecond?: number;
  cpuUsPerReconcile?: number;
  saturationRssKiB?: number;
  /** The saturation restart's writes (none expected: the world is converged). */
  saturationWrites?: number;
  /** Node sides: the collector's pauses in the saturation window. */
  saturationGc?: WindowGc;
  errors: string[];
}

/** The operator section of a results file. */
export interface OperatorSection extends ServerRunMeta {
  args: OperatorArgs;
  /** The kube-informer side's `owns` options (absent in files from before they were recorded: none). */
  kiOwnsOptions?: Record<string, unknown>;
  /** Whether the Controller's informers stripped managedFields by default in this run (absent: they did not). */
  kiStripsManagedFields?: boolean;
  /** Seconds each reset took (delete + create the sets), in order. */
  resets: number[];
  runs: OperatorRun[];
  errors: string[];
}

let crBin: string | undefined;
/** Builds (once per machine, cached: a minute the first time) and returns the controller-runtime side's binary. */
export function controllerRuntimeBinary(): string {
  crBin ??= execFileSync('bash', [join(benchDir, 'controller-runtime', 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim().split('\n').at(-1)!;
  return crBin;
}

/** A running side: its JSON lines as they come. */
export interface SideProcess {
  child: ChildProcess;
  spawnedAt: number;
  /** Resolves with the first line of `type` (undefined if the process exits first). */
  line<T>(type: string): Promise<T | undefined>;
  /** Closes stdin; resolves with the `final` line (SIGKILL after 30 s). */
  stop(): Promise<FinalLine | undefined>;
}

/** Spawns a side (the storm phase's too); `profile`: run a Node side under `--cpu-prof`, its profiles in a directory of their own under bench/results/profiles/. */
export function startSide(side: OperatorSideId, cfg: OperatorSideConfig, kiNodeFlags: readonly string[], profile = false): SideProcess {
  const spawnedAt = epochMs();
  const node = ['--max-old-space-size=8192', ...(side === 'kube-informer' ? kiNodeFlags : [])];
  if (profile) {
    const dir = join(benchDir, 'results', 'profiles', `operator-${side}-${cfg.expect}-${Date.now()}`);
    mkdirSync(dir, { recursive: true });
    // Sampled every 100 µs: the saturation window at 1 000 sets lasts some 30 ms.
    node.push('--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100');
  }
  const child =
    side === 'controller-runtime'
      ? spawn(controllerRuntimeBinary(), [`--kubeconfig-file=${cfg.kubeconfig}`, `--namespace=${cfg.namespace}`, `--concurrency=${cfg.concurrency}`, `--expect=${cfg.expect}`, ...(cfg.workMs === undefined ? [] : [`--work-ms=${cfg.workMs}`])], { stdio: ['pipe', 'pipe', 'inherit'] })
      : spawn(process.execPath, [...node, compiled(`operator/${side}.ts`), JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: Array<{ type: string }> = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    if (!text.startsWith('{')) return;
    lines.push(JSON.parse(text) as { type: string });
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    for (const w of waiters.splice(0)) w();
  });
  child.stdin!.on('error', () => {});
  const line = async <T>(type: string): Promise<T | undefined> => {
    for (;;) {
      const found = lines.find((l) => l.type === type);
      if (found !== undefined) return found as T;
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return {
    child,
    spawnedAt,
    line,
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const final = await line<FinalLine>('final');
      await exited;
      clearTimeout(timer);
      return final;
    },
  };
}

/** CPU seconds (user + system) of a live process, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function procCpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Latency of each write: its answer → the first reconcile start that read its generation or a later one. */
function latencies(writes: SpecWrite[], starts: Array<[string, number, number]>): number[] {
  const byKey = new Map<string, Array<[number, number]>>();
  for (const [key, gen, t] of starts) {
    let list = byKey.get(key);
    if (list === undefined) byKey.set(key, (list = []));
    list.push([gen, t]);
  }
  const out: number[] = [];
  for (const w of writes) {
    const seen = (byKey.get(w.key) ?? []).filter(([gen]) => gen >= w.generation).map(([, t]) => t);
    if (seen.length > 0) out.push(Math.min(...seen) - w.at);
  }
  return out.sort((a, b) => a - b);
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Runs the operator phase against the server of `kubeconfig`; resolves with its section (with `errors` if something failed). */
export async function runOperatorPhase(kubeconfig: string, args: OperatorArgs, command: string, log: (msg: string) => void): Promise<OperatorSection> {
  const started = Date.now();
  const namespace = `kube-informer-operator-${started.toString(36)}`;
  const section: OperatorSection = { date: new Date(started).toISOString(), command, durationMinutes: 0, node: process.version, cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`, serverVersion: '?', args, kiOwnsOptions: { ...KI_OWNS_OPTIONS }, kiStripsManagedFields: true, resets: [], runs: [], errors: [] };
  const world = await OperatorWorld.open(kubeconfig, namespace, args.children, 32);
  try {
    if (args.sides.includes('controller-runtime')) controllerRuntimeBinary();
    section.serverVersion = await world.version();
    await world.setup();
    log(`operator: kube-apiserver ${section.serverVersion}; namespace ${namespace} (deleted at the end); ${args.children} ConfigMaps per BenchSet, concurrency ${args.concurrency}`);
    for (const n of [...new Set(args.primaries)].sort((a, b) => a - b)) {
      const reps = n > 1000 ? args.repsLarge : args.reps;
      for (let rep = 0; rep < reps; rep++) {
        const order = args.sides.map((_, i) => args.sides[(i + rep) % args.sides.length]);
        for (const side of order) {
          const run = await runSide(world, kubeconfig, side, n, rep, args, section, log);
          section.runs.push(run);
          log(`operator ${side} n=${n} rep=${rep}: converge ${fmt(run.convergeSeconds ?? Number.NaN, 1)} s; ${fmt(run.reconcilesPerSecond ?? Number.NaN)} reconciles/s, ${fmt(run.cpuUsPerReconcile ?? Number.NaN)} µs CPU each; write→reconcile p50 ${fmt(run.p50Ms ?? Number.NaN, 1)} ms p99 ${fmt(run.p99Ms ?? Number.NaN, 1)} ms (${run.seen ?? 0}/${run.writes ?? 0}); RSS ${fmt((run.run?.maxRssKiB ?? Number.NaN) / 1024)} MiB${run.run?.memoryAtPeak === undefined ? '' : ` (at its peak: ${JSON.stringify(run.run.memoryAtPeak)})`}${gcText(run)}${run.errors.length > 0 ? `; ERRORS ${run.errors.join('; ')}` : ''}`);
        }
      }
    }
  } catch (err) {
    section.errors.push(message(err));
    log(`operator: ${message(err)}`);
  } finally {
    await world.cleanup().catch((err: unknown) => section.errors.push(`cleanup: ${message(err)}`));
  }
  section.durationMinutes = (Date.now() - started) / 60_000;
  return section;
}

async function runSide(world: OperatorWorld, kubeconfig: string, side: OperatorSideId, n: number, rep: number, args: OperatorArgs, section: OperatorSection, log: (msg: string) => void): Promise<OperatorRun> {
  const run: OperatorRun = { side, primaries: n, rep, errors: [] };
  const cfg = (expect: number): OperatorSideConfig => ({ kubeconfig, namespace: world.namespace, concurrency: args.concurrency, expect });
  const timeoutMs = Math.max(300_000, n * 60);
  section.resets.push(await world.reset(n));
  log(`operator: ${n} BenchSets created in ${fmt(section.resets.at(-1)!, 1)} s; starting ${side}`);
  // 1. converge, then the steady writes, in one process.
  const watch = await world.watchReady(n);
  const proc = startSide(side, cfg(0), args.kiNodeFlags ?? []);
  try {
    const died = proc.line('never').then(() => Promise.reject(new Error(`${side} exited (code ${proc.child.exitCode}) before every set was ready`)));
    const readyAt = await Promise.race([watch.allReady(timeoutMs), died]);
    run.convergeSeconds = (readyAt - proc.spawnedAt) / 1000;
    run.convergeCpuSeconds = procCpuSeconds(proc.child.pid);
    const writes = await world.steadyWrites(n, args.rate, args.seconds);
    await watch.allReady(60_000, writes).catch((err: unknown) => run.errors.push(`after the steady writes: ${message(err)}`));
    const final = await proc.stop();
    if (final === undefined) throw new Error('the side exited without its final line');
    const { starts, windowGc: _gc, stormGc: _storm, ...rest } = final;
    run.run = rest;
    const lat = latencies(writes, starts);
    Object.assign(run, { writes: writes.length, seen: lat.length, p50Ms: quantile(lat, 0.5), p99Ms: quantile(lat, 0.99), maxMs: lat.at(-1) });
  } catch (err) {
    run.errors.push(message(err));
    await proc.stop();
  } finally {
    watch.close();
  }
  // 2. saturation: a restart on the converged world.
  const again = startSide(side, cfg(n), args.kiNodeFlags ?? [], args.profile.includes(side));
  const limit = setTimeout(() => void again.stop(), timeoutMs);
  const reached = await again.line<{ firstStartMs: number; atMs: number; cpuAtFirstMs: number; cpuMs: number }>('reconciled');
  clearTimeout(limit);
  const final = await again.stop();
  if (reached === undefined) run.errors.push(`saturation: fewer than ${n} reconciles within ${timeoutMs / 1000} s`);
  else {
    run.reconcilesPerSecond = n / ((reached.atMs - reached.firstStartMs) / 1000);
    run.cpuUsPerReconcile = ((reached.cpuMs - reached.cpuAtFirstMs) * 1000) / n;
  }
  run.saturationRssKiB = final?.maxRssKiB;
  run.saturationWrites = final?.writes;
  run.saturationGc = final?.windowGc;
  return run;
}

/** The saturation window's collector pauses and writes, for the log; empty when the side does not report them. */
function gcText(run: OperatorRun): string {
  const gc = run.saturationGc;
  if (gc === undefined) return '';
  const ms = (x: number): string => x.toFixed(1);
  return `; saturation window: ${gc.minor} scavenges ${ms(gc.minorMs)} ms, ${gc.major} mark-compacts ${ms(gc.majorMs)} ms, ${gc.other} other ${ms(gc.otherMs)} ms, ${run.saturationWrites ?? '?'} writes`;
}

/** The sentence under a size's table: each side's writes and collector pauses in its saturation windows, run by run. */
function windowText(sides: readonly OperatorSideId[], runsOf: (id: OperatorSideId) => OperatorRun[]): string {
  const parts = sides.flatMap((id) => {
    const runs = runsOf(id).filter((r) => r.saturationWrites !== undefined);
    if (runs.length === 0) return [];
    const writes = runs.map((r) => String(r.saturationWrites)).join(' / ');
    const gc = runs.every((r) => r.saturationGc !== undefined)
      ? `; the collector paused ${runs.map((r) => { const g = r.saturationGc!; return `${fmt(g.minorMs + g.majorMs + g.otherMs, 1)} ms (${g.minor} scavenge${g.minor === 1 ? '' : 's'}, ${g.major} mark-compact${g.major === 1 ? '' : 's'})`; }).join(' / ')}`
      : '';
    return [`${LABELS[id]}: ${writes} writes${gc}`];
  });
  return parts.length === 0 ? '' : `In the saturation windows, run by run: ${parts.join('; ')}.`;
}

const LABELS: Record<OperatorSideId, string> = {
  'controller-runtime': 'controller-runtime v0.25.2 (Go)',
  'kube-informer': 'kube-informer `Controller`',
  'client-node': 'hand-written client-node loop',
};
const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—');

/** The `owns` options of the kube-informer side as its source passes them (`, { metadataOnly: true }`), '' for none. */
function owns(section: OperatorSection): string {
  const o = section.kiOwnsOptions ?? {};
  const entries = Object.entries(o);
  return entries.length === 0 ? '' : `, { ${entries.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')} }`;
}

/** Where the kube-informer side's memory stood at its largest resident set, median run of size `n` (the converge + steady process). */
function memoryText(runs: OperatorRun[]): string {
  const at = runs.map((r) => r.run?.memoryAtPeak).filter((m): m is MemoryAtPeak => m !== undefined).sort((x, y) => x.rss - y.rss);
  const m = at[Math.floor((at.length - 1) / 2)];
  if (m === undefined) return '';
  const sp = m.spaces;
  const rest = m.rss - m.heapCommitted - m.external;
  return `kube-informer's memory when its resident set was largest (sampled every 100 ms; median run): RSS ${fmt(m.rss, 1)} MiB = the V8 heap committed ${fmt(m.heapCommitted, 1)} MiB (young generation ${fmt(sp.new ?? 0, 1)}, old ${fmt(sp.old ?? 0, 1)}, large objects ${fmt(sp.large_object ?? 0, 1)}, code ${fmt(sp.code ?? 0, 1)}; ${fmt(m.heapUsed, 1)} MiB of it in use) + outside the heap ${fmt(m.external, 1)} MiB (array buffers ${fmt(m.arrayBuffers, 1)}) + the rest ${fmt(rest, 1)} MiB (Node itself — an empty \`node\` is 42 MiB — compiled code and the parser's memory).`;
}

/** The "Operator head to head: controller-runtime" section of docs/benchmarks.md. */
export function operatorMarkdown(s: OperatorSection): string {
  const a = s.args;
  const sizes = [...new Set(s.runs.map((r) => r.primaries))].sort((x, y) => x - y);
  const sides = OPERATOR_SIDES.filter((id) => s.runs.some((r) => r.side === id));
  const of = (side: OperatorSideId, n: number, f: (r: OperatorRun) => number | undefined): Summary => summarize(s.runs.filter((r) => r.side === side && r.primaries === n).map((r) => f(r) ?? Number.NaN));
  const reps = sizes.map((n) => `${fmt(n)}: ${Math.max(0, ...sides.map((id) => s.runs.filter((r) => r.side === id && r.primaries === n).length))}`).join(', ');
  const out: string[] = ['## Operator head to head: controller-runtime', ''];
  out.push(
    `Measured on ${s.date.slice(0, 10)} with \`${s.command}\` (${fmt(s.durationMinutes, 0)} min; kube-apiserver ${s.serverVersion} and its etcd on the same machine, \`scripts/apiserver/start.sh\`; Node ${s.node}, ${s.cpus}). ` +
      `The same operator three times, each side its own process, one at a time (order rotated per repetition; repetitions per size ${reps}; min / **median** / max): ` +
      '**controller-runtime** (bench/controller-runtime/main.go: a manager with its cache, `NewControllerManagedBy(mgr).For(&BenchSet{}, GenerationChangedPredicate).Owns(&corev1.ConfigMap{})`, a hand-written Go type, JSON, `QPS = -1`, metrics and health servers off, no leader election); ' +
      `**kube-informer** (bench/operator/kube-informer.ts: \`Controller.for(factory, benchSets, { predicates: [generationChanged] }).owns(resources.configmaps${owns(s)})\`${s.kiStripsManagedFields === true ? ', the BenchSets\' managedFields stripped too (the Controller\'s default)' : ''}, writes through \`ctx.client\`, the kubeconfig read by \`loadKubeConfig({ lean: true })\` (no @kubernetes/client-node in the process), compiled by tsc, plain node${(s.args.kiNodeFlags ?? []).length === 0 ? '' : ` with \`${(s.args.kiNodeFlags ?? []).join(' ')}\``}); ` +
      "**client-node** (bench/operator/client-node.ts: two `makeInformer`s, a deduplicating queue with client-go's rules, workers writing with `CoreV1Api` and `CustomObjectsApi`). " +
      `Concurrency ${a.concurrency} on every side; no client-side rate limit on any.`,
    '',
    `The operator: a BenchSet (\`benchsets.bench.kube-informer.io\`, namespaced, status subresource) asks for ${a.children} ConfigMaps \`<set>-<i>\` holding its \`spec.data\`. The reconcile reads the set and each ConfigMap from the cache, **creates** a missing one (controller owner reference) or **updates** (PUT) one that differs, then **PUTs the status** (observedGeneration, ready) if it changed; an error requeues with the side's backoff (5 ms doubling on all three). Same reads and writes on every side: create/update, not apply.`,
    '',
    '- **converge**: the sets created with no children and no status, then the side started; seconds from its spawn until a watch of the harness\'s own sees every set ready (observedGeneration = generation, ready = children); CPU is the side\'s own (user + system, /proc) by then.',
    '- **reconciles/s at saturation**: the side restarted on the converged world, so every set is reconciled once and nothing is written; the number of sets over the time from the first reconcile\'s start to the last one\'s end; CPU per reconcile over that window (the side\'s `getrusage` / `process.cpuUsage`). The converge run is stopped only once the harness\'s watch has seen every set of the steady writes at its written generation, ready; the writes and (Node sides) the collector\'s pauses inside the window are stated under each table.',
    `- **write → reconcile**: after converge, ${fmt(a.rate)} spec changes per second for ${fmt(a.seconds)} s (JSON merge patch, a different set each time); from each write's answer to the start of the first reconcile that read that generation from the cache — all processes on one machine, epoch milliseconds to the microsecond on both ends.`,
    '- **peak RSS**: VmHWM of the side process (/proc/self/status) in the converge + steady run.',
    '',
  );
  for (const n of sizes) {
    const cr = (f: (r: OperatorRun) => number | undefined): number => of('controller-runtime', n, f).median;
    const rows = sides.map((id) => {
      const m = (f: (r: OperatorRun) => number | undefined): number => of(id, n, f).median;
      const conv = (r: OperatorRun): number | undefined => r.convergeSeconds;
      const rps = (r: OperatorRun): number | undefined => r.reconcilesPerSecond;
      const p99 = (r: OperatorRun): number | undefined => r.p99Ms;
      const rss = (r: OperatorRun): number | undefined => (r.run?.maxRssKiB ?? Number.NaN) / 1024;
      return [
        LABELS[id],
        fmtSummary(of(id, n, conv), 1),
        ratio(m(conv), cr(conv)),
        fmt(m((r) => r.convergeCpuSeconds), 1),
        fmtSummary(of(id, n, rps)),
        ratio(m(rps), cr(rps)),
        fmt(m((r) => r.cpuUsPerReconcile)),
        fmtSummary(of(id, n, (r) => r.p50Ms), 1),
        fmtSummary(of(id, n, p99), 1),
        ratio(m(p99), cr(p99)),
        `${fmt(m((r) => r.seen))} / ${fmt(m((r) => r.writes))}`,
        fmt(m(rss)),
        ratio(m(rss), cr(rss)),
        `${fmt(m((r) => r.run?.reconciles))} / ${fmt(m((r) => r.run?.errors))} / ${fmt(m((r) => r.run?.writes))}`,
      ];
    });
    const head = ['side', 'converge (s)', '÷ c-r', 'CPU to converge (s)', 'reconciles/s', '÷ c-r', 'CPU µs / reconcile', 'write → reconcile p50 (ms)', 'p99 (ms)', '÷ c-r', 'writes seen', 'peak RSS (MiB)', '÷ c-r', 'reconciles / failed / writes'];
    out.push(`### ${fmt(n)} BenchSets (${fmt(n * a.children)} ConfigMaps)`, '', `| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`), '');
    const windows = windowText(sides, (id) => s.runs.filter((r) => r.side === id && r.primaries === n));
    if (windows !== '') out.push(windows, '');
    const memory = memoryText(s.runs.filter((r) => r.side === 'kube-informer' && r.primaries === n));
    if (memory !== '') out.push(memory, '');
  }
  const targets: string[][] = [];
  for (const n of sizes) {
    const ki = (f: (r: OperatorRun) => number | undefined): number => of('kube-informer', n, f).median;
    const cr = (f: (r: OperatorRun) => number | undefined): number => of('controller-runtime', n, f).median;
    const verdict = (ok: boolean, v: number, limit: number): string => (!Number.isFinite(v) || !Number.isFinite(limit) ? 'not measured' : ok ? 'met' : `**missed** (${ratio(v, limit)})`);
    const rps = (r: OperatorRun): number | undefined => r.reconcilesPerSecond;
    const p99 = (r: OperatorRun): number | undefined => r.p99Ms;
    targets.push([`${fmt(n)} sets: reconciles/s ≥ controller-runtime's`, ratio(ki(rps), cr(rps)), verdict(ki(rps) >= cr(rps), ki(rps), cr(rps))]);
    targets.push([`${fmt(n)} sets: write → reconcile p99 ≤ controller-runtime's`, ratio(ki(p99), cr(p99)), verdict(ki(p99) <= cr(p99), ki(p99), cr(p99))]);
    const rss = (r: OperatorRun): number | undefined => r.run?.maxRssKiB;
    const bound = n > 1000 ? 1 : 2;
    targets.push([`${fmt(n)} sets: peak RSS ≤ ${bound.toFixed(1)}× controller-runtime's`, ratio(ki(rss), cr(rss)), verdict(ki(rss) <= bound * cr(rss), ki(rss), bound * cr(rss))]);
  }
  if (targets.length > 0) out.push('| target (kube-informer, same run, same server, equal concurrency) | measured (ratio of medians) | verdict |', '| --- | ---: | ---: |', ...targets.map((t) => `| ${t.join(' | ')} |`), '');
  const errors = [...s.errors, ...s.runs.flatMap((r) => r.errors.map((e) => `${r.side} ${fmt(r.primaries)} rep ${r.rep}: ${e}`))];
  if (errors.length > 0) out.push('Errors:', '', ...errors.map((e) => `- ${e.slice(0, 400)}`), '');
  return out.join('\n');
}
