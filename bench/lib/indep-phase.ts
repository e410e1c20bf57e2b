// The independent phase of `npm run bench` (issue 29): the outside harness's shape, and its section of docs/benchmarks.md.
//
// A loopback pod server in a child process (bench/lib/indep-server.ts: ~4.6 KB pods with managedFields,
// pages of 500, list items without kind/apiVersion, watch objects with them, MODIFIED events generated
// live and written 64 KiB at a time) instead of the fake API server; kube-informer as a user builds it
// (`ki-dist`: `new SharedIndexInformer(newListWatch(kubeConfig, { group: '', version: 'v1', resource:
// 'pods' }))` and one handler, imported from the package's `dist/`), against the same raw floor and
// client-node contenders as the other phases. At each --indep-pods size, every repetition runs every
// contender once (order rotated): it syncs, the runner then arms the burst, the server generates the
// --indep-events events into that contender's watch, and the contender exits once it has seen them all.

import { cpus } from 'node:os';
import type { BenchArgs } from './args.js';
import { buildBench, buildDist, compiled } from './build.js';
import type { IndepBurst, IndepCommand, IndepLoad } from './indep-server.js';
import { CONTENDERS, startContender } from './processes.js';
import { DEFAULT_SHAPE, type ContenderId, type ContenderLine, type DoneLine, type IndepShape, type SyncedLine } from './protocol.js';
import { forkRpc, type RpcChild } from './rpc.js';
import { fmt, fmtSummary, summarize, type Summary } from './stats.js';

/** One contender child of the phase. */
export interface IndepRun {
  id: ContenderId;
  pods: number;
  rep: number;
  lines: ContenderLine[];
  /** The server's side of the burst. */
  burst?: IndepBurst;
}

/** The independent section of a results file. */
export interface IndepSection {
  date: string;
  command: string;
  durationMinutes: number;
  node: string;
  cpus: string;
  events: number;
  reps: number;
  /** Bytes of one pod as a watch object. */
  podBytes: number;
  /** The shape served (the default is the outside harness's). */
  shape: IndepShape;
  runs: IndepRun[];
  errors: string[];
}

/** The server child, commands matched to answers by id (a burst answers late). */
function startIndepServer(): RpcChild<IndepCommand> {
  return forkRpc<IndepCommand>(compiled('lib/indep-server.ts'), { name: 'indep server', execArgv: ['--expose-gc', '--max-old-space-size=8192'] });
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Runs the independent phase; resolves with its section (with `errors` if something failed). */
export async function runIndepPhase(args: BenchArgs, command: string, log: (msg: string) => void): Promise<IndepSection> {
  const started = Date.now();
  const { pods: sizes, events, reps, contenders, shape } = args.indep;
  buildBench(log);
  buildDist(log);
  const section: IndepSection = { date: new Date(started).toISOString(), command, durationMinutes: 0, node: process.version, cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`, events, reps, podBytes: Number.NaN, shape, runs: [], errors: [] };
  const server = startIndepServer();
  try {
    for (const pods of sizes) {
      const load = await server.call<IndepLoad>({ cmd: 'load', pods, shape });
      section.podBytes = load.podBytes;
      log(`indep: ${pods} pods of ${Math.round(load.podBytes)} B served from a child process (${JSON.stringify(shape)}); ${events} MODIFIED events per watch`);
      for (let rep = 0; rep < reps; rep++) {
        for (const id of contenders.map((_, i) => contenders[(i + rep) % contenders.length])) {
          const spec = CONTENDERS[id];
          const child = startContender({ id, url: load.url, token: load.token, mode: 'watch', pods, events, handlers: spec.handlers, metadataOnly: false, strip: false, watchList: false, sampleMs: 10_000, syncTimeoutMs: Math.max(120_000, pods * 3) }, args.profile.includes(id));
          let burst: Promise<IndepBurst> | undefined;
          child.onLine((l) => {
            if (l.type === 'synced') burst = server.call<IndepBurst>({ cmd: 'burst', events });
          });
          const limit = setTimeout(() => void child.stop(), Math.max(120_000, pods * 3) + 300_000);
          await child.exited;
          clearTimeout(limit);
          // A burst whose watch never opened (the contender failed) would wait forever: don't.
          const result = burst === undefined ? undefined : await Promise.race([burst, new Promise<undefined>((r) => setTimeout(() => r(undefined), 5_000))]);
          await server.call({ cmd: 'reset' });
          const run: IndepRun = { id, pods, rep, lines: child.lines, burst: result };
          section.runs.push(run);
          log(`indep ${id} pods=${pods} rep=${rep}: ${describeRun(run)}`);
        }
      }
    }
  } catch (err) {
    section.errors.push(message(err));
    log(`indep: ${message(err)}`);
  } finally {
    await server.close();
  }
  section.durationMinutes = (Date.now() - started) / 60_000;
  return section;
}

const syncedLine = (r: IndepRun): SyncedLine | undefined => r.lines.find((l): l is SyncedLine => l.type === 'synced');
const doneLine = (r: IndepRun): DoneLine | undefined => r.lines.find((l): l is DoneLine => l.type === 'done');

function describeRun(r: IndepRun): string {
  const s = syncedLine(r);
  const d = doneLine(r);
  const e = r.lines.find((l) => l.type === 'error');
  const parts = [];
  if (s) parts.push(`sync ${Math.round(s.syncMs)} ms (from the process start ${Math.round(s.sinceStartMs ?? Number.NaN)} ms, the client created at ${Math.round(s.startedMs ?? Number.NaN)} ms) heap/pod ${Math.round((s.heapAfter - s.heapBefore) / s.cached)} B`);
  if (d) parts.push(`${Math.round(d.events / d.seconds)} ev/s ${((d.cpuMs * 1000) / d.events).toFixed(1)} µs CPU/ev`);
  if (r.burst) parts.push(`server ${((r.burst.cpuMs * 1000) / r.burst.events).toFixed(1)} µs CPU/ev`);
  if (e?.type === 'error') parts.push(`ERROR ${e.message}`);
  return parts.join(', ');
}

/** The figures of one contender at one size. */
interface Figures {
  syncMs: Summary;
  /** CPU of the client process during the sync, ms: steadier than the wall-clock time on a shared machine. */
  syncCpuMs: Summary;
  heapPerPod: Summary;
  /** From the process's start to the sync (imports included), and to the client's creation, ms. */
  sinceStartMs: Summary;
  startedMs: Summary;
  eventsPerSecond: Summary;
  cpuPerEvent: Summary;
}

function figures(s: IndepSection, id: ContenderId, pods: number): Figures {
  const runs = s.runs.filter((r) => r.id === id && r.pods === pods);
  const syn = runs.map(syncedLine).filter((l) => l !== undefined);
  const don = runs.map(doneLine).filter((l) => l !== undefined);
  return {
    syncMs: summarize(syn.map((l) => l.syncMs)),
    syncCpuMs: summarize(syn.map((l) => l.syncCpuMs)),
    heapPerPod: summarize(syn.map((l) => (l.heapAfter - l.heapBefore) / l.cached)),
    sinceStartMs: summarize(syn.map((l) => l.sinceStartMs ?? Number.NaN)),
    startedMs: summarize(syn.map((l) => l.startedMs ?? Number.NaN)),
    eventsPerSecond: summarize(don.map((l) => l.events / l.seconds)),
    cpuPerEvent: summarize(don.map((l) => (l.cpuMs * 1000) / l.events)),
  };
}

const ratio3 = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(3)}×` : '—');
const table = (head: string[], rows: string[][]): string[] => [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)];

/** The "Independent harness" section of docs/benchmarks.md. */
export function indepMarkdown(s: IndepSection): string {
  const ids = (Object.keys(CONTENDERS) as ContenderId[]).filter((id) => s.runs.some((r) => r.id === id));
  const sizes = [...new Set(s.runs.map((r) => r.pods))].sort((a, b) => a - b);
  const ki = ids.includes('ki-dist') ? 'ki-dist' : 'ki-1';
  const out: string[] = ['## Independent harness (issue 29)', ''];
  const changed = Object.entries(s.shape).filter(([k, v]) => DEFAULT_SHAPE[k as keyof IndepShape] !== v);
  if (changed.length > 0) out.push(`**Not the outside harness's shape:** ${changed.map(([k, v]) => `${k}=${v}`).join(', ')} (\`--indep-shape\`).`, '');
  out.push(
    `Measured on ${s.date.slice(0, 10)} with \`${s.command}\` (${fmt(s.durationMinutes, 0)} min; Node ${s.node}, ${s.cpus}). ` +
      `Not the fake API server: a loopback pod server in a child process (\`bench/lib/indep-server.ts\`), ${fmt(s.podBytes)}-byte pods with managedFields, pages of 500, list items without kind/apiVersion and watch objects with them; once a contender is synced, the server generates ${fmt(s.events)} MODIFIED events live into its watch (each pod modified and serialised during the burst) and writes them in 64 KiB chunks. ` +
      "kube-informer is `ki-dist`: `new SharedIndexInformer(newListWatch(kubeConfig, { group: '', version: 'v1', resource: 'pods' }))` with one handler, imported from the package's `dist/` (`npm run build`) as a user's program imports it. " +
      `${s.reps} repetitions, contenders interleaved; min / **median** / max, ratios of medians. Sync: from creating the client to its cache holding every pod; watch: first MODIFIED notification to the last; CPU of the client process only; heap per pod after GC once synced.`,
    '',
  );
  const rows: string[][] = [];
  for (const pods of sizes) {
    const raw = figures(s, 'raw', pods);
    const cn = figures(s, 'client-node', pods);
    for (const id of ids) {
      const f = figures(s, id, pods);
      rows.push([fmt(pods), CONTENDERS[id].label, fmtSummary(f.syncMs), ratio3(f.syncMs.median, raw.syncMs.median), fmt(f.syncCpuMs.median), ratio3(f.syncCpuMs.median, raw.syncCpuMs.median), fmtSummary(f.eventsPerSecond), ratio3(f.eventsPerSecond.median, raw.eventsPerSecond.median), ratio3(f.eventsPerSecond.median, cn.eventsPerSecond.median), fmtSummary(f.cpuPerEvent, 1), ratio3(raw.cpuPerEvent.median, f.cpuPerEvent.median), fmt(f.heapPerPod.median), ratio3(f.heapPerPod.median, raw.heapPerPod.median)]);
    }
  }
  const fromStart: string[][] = [];
  for (const pods of sizes) {
    const raw = figures(s, 'raw', pods);
    for (const id of ids) {
      const f = figures(s, id, pods);
      if (Number.isFinite(f.sinceStartMs.median)) fromStart.push([fmt(pods), CONTENDERS[id].label, fmtSummary(f.startedMs), fmtSummary(f.sinceStartMs), ratio3(f.sinceStartMs.median, raw.sinceStartMs.median)]);
    }
  }
  const syncTable = table(['pods', 'contender', 'sync (ms)', 'sync ÷ raw', 'sync CPU (ms)', 'CPU ÷ raw', 'events/s', '÷ raw', '÷ client-node', 'CPU µs/event', 'raw CPU ÷ it', 'heap B/pod', 'heap ÷ raw'], rows);
  out.push(...syncTable, '');
  if (fromStart.length > 0) {
    out.push(
      "The sync again, timed as a harness that times the whole process sees it: from the process's start (`performance.timeOrigin`: Node's own start, the imports — kube-informer's package, the harness's — and the harness's setup) to the cache holding every pod; the first column is the part before the client is created.",
      '',
      ...table(['pods', 'contender', 'process start → client created (ms)', 'process start → synced (ms)', '÷ raw'], fromStart),
      '',
    );
  }
  const verdicts: string[][] = [];
  const check = (what: string, value: number, limit: number, higher: boolean): void => {
    const ok = Number.isFinite(value) ? (higher ? value >= limit : value <= limit) : undefined;
    verdicts.push([what, Number.isFinite(value) ? `${value.toFixed(3)}×` : '—', ok === undefined ? 'not measured' : ok ? 'met' : '**missed**']);
  };
  for (const pods of sizes) {
    const k = figures(s, ki, pods);
    const raw = figures(s, 'raw', pods);
    const cn = figures(s, 'client-node', pods);
    check(`${fmt(pods)} pods: watch ≥ 0.95× raw`, k.eventsPerSecond.median / raw.eventsPerSecond.median, 0.95, true);
    check('… on CPU (raw\'s CPU µs/event ÷ its)', raw.cpuPerEvent.median / k.cpuPerEvent.median, 0.95, true);
    check(`${fmt(pods)} pods: watch ≥ client-node`, k.eventsPerSecond.median / cn.eventsPerSecond.median, 1, true);
    check('… on CPU', cn.cpuPerEvent.median / k.cpuPerEvent.median, 1, true);
    check(`${fmt(pods)} pods: sync ≤ 1.1× raw`, k.syncMs.median / raw.syncMs.median, 1.1, false);
    check('… on CPU', k.syncCpuMs.median / raw.syncCpuMs.median, 1.1, false);
    if (Number.isFinite(k.sinceStartMs.median)) check('… timed from the process start', k.sinceStartMs.median / raw.sinceStartMs.median, 1.1, false);
    check(`${fmt(pods)} pods: heap ≤ 1.02× raw`, k.heapPerPod.median / raw.heapPerPod.median, 1.02, false);
  }
  out.push(...table([`target (${ki})`, 'measured', 'verdict'], verdicts), '');
  const errors = [...s.errors, ...s.runs.flatMap((r) => r.lines.flatMap((l) => (l.type === 'error' ? [`${r.id} ${r.pods}: ${l.message}`] : [])))];
  if (errors.length > 0) out.push('Errors:', '', ...errors.map((e) => `- ${e.slice(0, 400)}`), '');
  return out.join('\n');
}
