// The real-apiserver phase of `npm run bench -- --kubeconfig FILE`, and its section of docs/benchmarks.md.
//
// Against a real kube-apiserver there is no recorded history to replay, so the phase is built from writes:
// 1. a writer process (bench/lib/real-writer.ts) creates a fresh namespace and writes pods into it with a
//    bounded number of requests in flight, topping up from one --pods size to the next;
// 2. at each size, every contender (one child process at a time, order rotated per repetition) syncs the
//    namespace's pods, as in the fake-server sync phase;
// 3. on the first size, each contender then syncs and watches while the writer patches --events pods as
//    fast as the server accepts them: the writer's rate is the ceiling, the contender's events/s is judged
//    against it, and its CPU per event is its own cost;
// 4. the pods are deleted with DELETE on the collection (no namespace controller runs on a bare
//    apiserver, so deleting the namespace alone would leave them), then the namespace.
// Contenders get the kubeconfig and the namespace in their config; the server, etcd and the writer are
// never measured.

import { cpus } from 'node:os';
import { join } from 'node:path';
import type { BenchArgs } from './args.js';
import { benchDir, CONTENDERS, startContender } from './processes.js';
import type { ContenderConfig, ContenderId, ContenderLine, ContenderMode, DoneLine, SyncedLine } from './protocol.js';
import { fmt, fmtSummary, summarize, type Summary } from './stats.js';
import type { CleanupStats, SampleStats, WriterCommand, WriteStats } from './real-writer.js';
import { forkRpc, type RpcChild } from './rpc.js';

/** One contender child of the real phase. */
export interface RealRun {
  phase: 'sync' | 'watch';
  id: ContenderId;
  pods: number;
  rep: number;
  lines: ContenderLine[];
  /** Watch runs: the writer's patches while the contender watched. */
  writer?: WriteStats;
  /** Watch runs: ms from the writer's last response to the contender's `done` line (≤ 0: it kept up). */
  drainMs?: number;
  /**
   * Watch runs: pod watchers kube-apiserver closed as unresponsive during the run (its
   * `apiserver_terminated_watchers_total`, read before the contender started and after it exited).
   */
  terminated?: number;
}

/** What every section measured against a real kube-apiserver records about its run. */
export interface ServerRunMeta {
  date: string;
  command: string;
  durationMinutes: number;
  node: string;
  cpus: string;
  /** kube-apiserver's `/version` gitVersion. */
  serverVersion: string;
}

/** The real-apiserver section of a results file. */
export interface RealSection extends ServerRunMeta {
  namespace: string;
  /** The writer's requests in flight. */
  writers: number;
  /** The writer's pace during the watch, patches/s (`--real-rate`); 0 or absent: as fast as the server accepts them. */
  rate?: number;
  /** Patches per watch run. */
  events: number;
  reps: number;
  /** Each top-up: the namespace's pods after it, how many were added, the writes (creates + status writes). */
  loads: Array<{ pods: number; added: number; stats: WriteStats }>;
  /** Pod sizes as served, after the first load. */
  sample?: SampleStats;
  runs: RealRun[];
  cleanup?: CleanupStats;
  /** What went wrong outside a contender (a load, the cleanup). */
  errors: string[];
}

/** The writer child: one command at a time over IPC (lib/rpc.ts). */
function startWriter(): RpcChild<WriterCommand> {
  return forkRpc<WriterCommand>(join(benchDir, 'lib', 'real-writer.ts'), { name: 'writer', serial: true, execArgv: ['--import', 'tsx'] });
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Runs the real phase; resolves with its section (partial, with `errors`, if something failed). */
export async function runRealPhase(args: BenchArgs, command: string, log: (msg: string) => void): Promise<RealSection> {
  const kubeconfig = args.kubeconfig!;
  const started = Date.now();
  const namespace = `kube-informer-bench-${started.toString(36)}`;
  const section: RealSection = {
    date: new Date(started).toISOString(),
    command,
    durationMinutes: 0,
    node: process.version,
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    serverVersion: '?',
    namespace,
    writers: args.writers,
    rate: args.realRate,
    events: args.events,
    reps: args.reps,
    loads: [],
    runs: [],
    errors: [],
  };
  const sizes = [...new Set(args.pods)].filter((n) => n > 0).sort((a, b) => a - b);
  const writer = startWriter();
  const record = (run: RealRun): void => {
    section.runs.push({ ...run, lines: run.lines.filter((l) => l.type !== 'sample') });
    const parts = run.lines.map((l) => {
      if (l.type === 'synced') return `sync ${(l.syncMs / 1000).toFixed(2)}s heap/pod ${Math.round((l.heapAfter - l.heapBefore) / Math.max(1, l.cached))}B`;
      if (l.type === 'done') return `${Math.round(l.events / l.seconds)} ev/s ${((l.cpuMs * 1000) / l.events).toFixed(1)}µs CPU/ev`;
      if (l.type === 'error') return `ERROR ${l.message}`;
      return '';
    });
    if (run.writer !== undefined) parts.push(`writer ${Math.round(run.writer.writes / run.writer.seconds)} writes/s, drain ${Math.round(run.drainMs ?? Number.NaN)} ms`);
    if (run.terminated !== undefined) parts.push(`${run.terminated} watcher(s) closed by the server as unresponsive`);
    log(`real ${run.phase} ${run.id} pods=${run.pods} rep=${run.rep}: ${parts.filter(Boolean).join(', ')}`);
  };
  const config = (id: ContenderId, mode: ContenderMode, pods: number): ContenderConfig => {
    const spec = CONTENDERS[id];
    return {
      id, url: '', token: '', kubeconfig, namespace, mode, pods, events: mode === 'watch' ? args.events : 0,
      handlers: spec.handlers, metadataOnly: spec.metadataOnly ?? false, strip: spec.strip ?? false, watchList: spec.watchList ?? false, coalesceMs: spec.coalesceMs, noShare: spec.noShare,
      sampleMs: 10_000, syncTimeoutMs: Math.max(120_000, pods * 3),
    };
  };

  const syncOnce = async (id: ContenderId, pods: number, rep: number): Promise<void> => {
    const cfg = config(id, 'sync', pods);
    const child = startContender(cfg, args.profile.includes(id));
    const limit = setTimeout(() => void child.stop(), cfg.syncTimeoutMs + 60_000);
    await child.exited;
    clearTimeout(limit);
    record({ phase: 'sync', id, pods, rep, lines: child.lines });
  };

  const watchOnce = async (id: ContenderId, pods: number, rep: number): Promise<void> => {
    const cfg = config(id, 'watch', pods);
    const terminatedBefore = await writer.call<number | undefined>({ cmd: 'terminated' }).catch(() => undefined);
    const child = startContender(cfg, args.profile.includes(id));
    let doneAt: number | undefined;
    const first = new Promise<ContenderLine | undefined>((resolve) => {
      child.onLine((l) => {
        if (l.type === 'done') doneAt = performance.now();
        if (l.type === 'synced' || l.type === 'error') resolve(l);
      });
      void child.exited.then(() => resolve(undefined));
    });
    const limit = setTimeout(() => void child.stop(), cfg.syncTimeoutMs + 60_000);
    const synced = await first;
    clearTimeout(limit);
    const terminatedSince = async (): Promise<number | undefined> => {
      const after = terminatedBefore === undefined ? undefined : await writer.call<number | undefined>({ cmd: 'terminated' }).catch(() => undefined);
      return after === undefined || terminatedBefore === undefined ? undefined : after - terminatedBefore;
    };
    if (synced?.type !== 'synced') {
      await child.stop();
      record({ phase: 'watch', id, pods, rep, lines: child.lines, terminated: await terminatedSince() });
      return;
    }
    let stats: WriteStats | undefined;
    try {
      stats = await writer.call<WriteStats>({ cmd: 'patch', count: args.events, pods, rate: args.realRate });
    } catch (err) {
      child.lines.push({ type: 'error', message: `writer: ${message(err)}`, cached: synced.cached });
    }
    const writerEnd = performance.now();
    // The contender exits after its `done` line; one that missed events is stopped (SIGKILL after 30 s more).
    const grace = setTimeout(() => void child.stop(), 120_000);
    await child.exited;
    clearTimeout(grace);
    if (doneAt === undefined && !child.lines.some((l) => l.type === 'error')) {
      child.lines.push({ type: 'error', message: `fewer than ${args.events} MODIFIED notifications within 120 s of the writer's last response`, cached: synced.cached });
    }
    record({ phase: 'watch', id, pods, rep, lines: child.lines, writer: stats, drainMs: doneAt === undefined ? undefined : doneAt - writerEnd, terminated: await terminatedSince() });
  };

  try {
    await writer.call({ cmd: 'init', kubeconfig, namespace, concurrency: args.writers });
    section.serverVersion = await writer.call<string>({ cmd: 'version' });
    log(`real: kube-apiserver ${section.serverVersion}; namespace ${namespace} (deleted at the end; if this run is interrupted, delete its pods with DELETE /api/v1/namespaces/${namespace}/pods?gracePeriodSeconds=0)`);
    await writer.call({ cmd: 'setup' });
    let loaded = 0;
    for (const [si, pods] of sizes.entries()) {
      log(`real: writing pods ${loaded}…${pods - 1} (create, then status) with ${args.writers} requests in flight`);
      const stats = await writer.call<WriteStats>({ cmd: 'load', from: loaded, to: pods, status: true });
      section.loads.push({ pods, added: pods - loaded, stats });
      log(`real: ${pods} pods: ${stats.writes} writes in ${stats.seconds.toFixed(1)}s (${Math.round(stats.writes / stats.seconds)} writes/s, p50 ${stats.p50Ms.toFixed(0)} ms, p99 ${stats.p99Ms.toFixed(0)} ms, ${stats.retries} retries)`);
      loaded = pods;
      if (si === 0) {
        section.sample = await writer.call<SampleStats>({ cmd: 'sample' });
        log(`real: ${Math.round(section.sample.podBytes)} B/pod as served, ${Math.round(section.sample.metaBytes)} B/pod metadata-only`);
      }
      for (let rep = 0; rep < args.reps; rep++) {
        const ids = args.contenders;
        const order = ids.map((_, i) => ids[(i + rep) % ids.length]);
        for (const id of order) {
          await syncOnce(id, pods, rep);
          if (si === 0 && args.events > 0 && id !== 'ki-watchlist') await watchOnce(id, pods, rep);
        }
      }
    }
  } catch (err) {
    section.errors.push(message(err));
    log(`real: ${message(err)}`);
  } finally {
    try {
      log(`real: deleting the pods of ${namespace}`);
      section.cleanup = await writer.call<CleanupStats>({ cmd: 'cleanup' });
      log(`real: cleanup in ${section.cleanup.seconds.toFixed(1)}s (${section.cleanup.rounds} collection deletes, ${section.cleanup.remaining} pods left; namespace DELETE → ${section.cleanup.namespaceStatus})`);
    } catch (err) {
      section.errors.push(`cleanup: ${message(err)}`);
      log(`real: cleanup failed: ${message(err)}`);
    }
    await writer.close();
  }
  section.durationMinutes = (Date.now() - started) / 60_000;
  return section;
}

const REFS: ContenderId[] = ['raw', 'client-node', 'client-go'];
const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—');
const table = (head: string[], rows: string[][]): string[] => [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
const syncedLine = (r: RealRun): SyncedLine | undefined => r.lines.find((l): l is SyncedLine => l.type === 'synced');
const doneLine = (r: RealRun): DoneLine | undefined => r.lines.find((l): l is DoneLine => l.type === 'done');

/** The "Real kube-apiserver" section of docs/benchmarks.md. */
export function realMarkdown(s: RealSection): string {
  const ids = (Object.keys(CONTENDERS) as ContenderId[]).filter((id) => s.runs.some((r) => r.id === id));
  const refs = REFS.filter((r) => ids.includes(r));
  const sizes = [...new Set(s.runs.filter((r) => r.phase === 'sync').map((r) => r.pods))].sort((a, b) => a - b);
  const runs = (id: ContenderId, phase: RealRun['phase'], pods?: number): RealRun[] => s.runs.filter((r) => r.id === id && r.phase === phase && (pods === undefined || r.pods === pods));
  const syncSecs = (id: ContenderId, pods: number): Summary => summarize(runs(id, 'sync', pods).map(syncedLine).filter((l) => l !== undefined).map((l) => l.syncMs / 1000));
  const watch = (id: ContenderId, f: (d: DoneLine, r: RealRun) => number): Summary => summarize(runs(id, 'watch').flatMap((r) => { const d = doneLine(r); return d === undefined ? [] : [f(d, r)]; }));
  const writerRate = (r: RealRun): number => (r.writer === undefined ? Number.NaN : r.writer.writes / r.writer.seconds);
  const load = s.loads.at(-1);
  const totalWrites = s.loads.reduce((n, l) => n + l.stats.writes, 0);
  const totalSeconds = s.loads.reduce((n, l) => n + l.stats.seconds, 0);

  const out: string[] = ['## Real kube-apiserver', ''];
  out.push(
    `Measured on ${s.date.slice(0, 10)} with \`${s.command}\` (${fmt(s.durationMinutes, 0)} min, on the same machine as the server: kube-apiserver ${s.serverVersion} and its etcd, \`scripts/apiserver/start.sh\`; Node ${s.node}, ${s.cpus}). ` +
      `A writer process (\`bench/lib/real-writer.ts\`, ${s.writers} requests in flight) wrote ${fmt(load?.pods ?? Number.NaN)} pods into a fresh namespace — \`makePod(i)\` created, then its status written through \`pods/status\` as a kubelet would — ${fmt(totalWrites)} writes at ${fmt(totalWrites / totalSeconds)} writes/s; ` +
      `as served, a pod is ${fmt(s.sample?.podBytes ?? Number.NaN)} bytes of JSON (${fmt(s.sample?.metaBytes ?? Number.NaN)} as \`PartialObjectMetadata\`), more than the fake server's: kube-apiserver replaces the pod's managedFields with its own record of the two writes and its service-account admission adds a projected token volume. ` +
      `Every contender watches that namespace only; one child process at a time, order rotated every repetition, ${s.reps} repetition${s.reps === 1 ? '' : 's'}; min / **median** / max, ratios of medians. The server, etcd and the writer share the machine's cores with the client, so the wall-clock figures are the machine's as much as the client's.`,
    '',
  );
  out.push('### Initial sync', '', 'Seconds from creating the client to: its cache holds every pod of the namespace and every handler has had its initial adds. Requests as in the fake-server phases, to the namespace\'s path (raw, kube-informer, client-go: `resourceVersion=0&limit=500`; client-node: an unpaginated list); heap per cached pod as in "Heap per cached pod".', '');
  for (const pods of sizes) {
    const rows = ids.filter((id) => runs(id, 'sync', pods).length > 0).map((id) => {
      const lines = runs(id, 'sync', pods).map(syncedLine).filter((l) => l !== undefined);
      return [
        CONTENDERS[id].label,
        fmtSummary(syncSecs(id, pods), 2),
        ...refs.map((r) => ratio(syncSecs(id, pods).median, syncSecs(r, pods).median)),
        fmt(summarize(lines.map((l) => (l.syncCpuMs * 1000) / l.cached)).median),
        fmt(summarize(lines.map((l) => (l.heapAfter - l.heapBefore) / l.cached)).median),
      ];
    });
    out.push(`#### ${fmt(pods)} pods`, '', ...table(['contender', 'seconds', ...refs.map((r) => `÷ ${r}`), 'CPU ms per 1000 pods', 'heap per pod (bytes)'], rows), '');
  }
  const watchers = ids.filter((id) => runs(id, 'watch').length > 0);
  if (watchers.length > 0) {
    const pods = s.runs.find((r) => r.phase === 'watch')?.pods ?? Number.NaN;
    out.push(
      '### Watch throughput under a writer',
      '',
      `With ${fmt(pods)} pods cached, the writer patches one annotation of ${fmt(s.events)} pods (round-robin, ${s.writers} in flight) ${(s.rate ?? 0) > 0 ? `at ${fmt(s.rate ?? 0)} patches per second, the same pace for every contender` : 'as fast as the server accepts them'}, while the one contender of that repetition watches; every patch is one MODIFIED event. ` +
        'A real server cannot hand a client events faster than it commits writes, so the writer is the ceiling: **÷ writer** is the contender\'s events/s over the writer\'s writes/s in the same repetition (1.00× = it kept up), and **drain** is the time from the writer\'s last response to the contender\'s last notification. ' +
        'Events/s and CPU are measured as in "Watch throughput" (first notification to last); CPU per event — the client process\'s own user + system time — is the figure that compares the clients here.',
      '',
    );
    const cpuTp = (id: ContenderId): Summary => watch(id, (d) => d.events / (d.cpuMs / 1000));
    const rows = watchers.map((id) => [
      CONTENDERS[id].label,
      fmtSummary(summarize(runs(id, 'watch').map(writerRate))),
      fmtSummary(watch(id, (d) => d.events / d.seconds)),
      ratio(summarize(runs(id, 'watch').flatMap((r) => { const d = doneLine(r); return d === undefined ? [] : [d.events / d.seconds / writerRate(r)]; })).median, 1),
      fmtSummary(summarize(runs(id, 'watch').flatMap((r) => (r.drainMs === undefined ? [] : [r.drainMs])))),
      fmtSummary(watch(id, (d) => (d.cpuMs * 1000) / d.events), 1),
      fmt(cpuTp(id).median),
      ...refs.map((r) => ratio(cpuTp(id).median, cpuTp(r).median)),
    ]);
    out.push(...table(['contender', 'writer writes/s', 'events/s', '÷ writer', 'drain (ms)', 'CPU µs/event', 'events per CPU-second', ...refs.map((r) => `÷ ${r}`)], rows), '');
    const lat = s.runs.flatMap((r) => (r.writer === undefined ? [] : [r.writer]));
    const closed = watchers.filter((id) => runs(id, 'watch').some((r) => r.terminated !== undefined));
    if (closed.length > 0) {
      const per = closed.map((id) => `${CONTENDERS[id].label} ${runs(id, 'watch').map((r) => (r.terminated === undefined ? '?' : String(r.terminated))).join(' / ')}`);
      out.push(`Watches the server closed as unresponsive (kube-apiserver's \`apiserver_terminated_watchers_total\` for pods, read before and after each watch run; every client watches again from its last version): ${per.join('; ')}.`, '');
    }
    if (lat.length > 0) out.push(`The writer's patch latency (each run's median, then the median over runs): p50 ${fmt(summarize(lat.map((w) => w.p50Ms)).median, 1)} ms, p99 ${fmt(summarize(lat.map((w) => w.p99Ms)).median, 1)} ms.`, '');
  }
  if (s.cleanup !== undefined) out.push(`Cleanup: the namespace's pods deleted with ${s.cleanup.rounds} DELETE request${s.cleanup.rounds === 1 ? '' : 's'} on the collection (\`gracePeriodSeconds=0\`: no kubelet confirms a deletion) in ${fmt(s.cleanup.seconds, 1)} s, ${fmt(s.cleanup.remaining)} left; then the namespace (HTTP ${s.cleanup.namespaceStatus}).`, '');
  const errors = [...s.errors, ...s.runs.flatMap((r) => r.lines.flatMap((l) => (l.type === 'error' ? [`${r.id} ${r.phase} ${r.pods}: ${l.message}`] : [])))];
  if (errors.length > 0) out.push('Errors:', '', ...errors.map((e) => `- ${e.slice(0, 400)}`), '');
  return out.join('\n');
}
