// The stream phase of `npm run bench -- --kubeconfig FILE --phases stream`: streaming lists (WatchList)
// against paged lists on a real kube-apiserver, and the relist after a 410, with its section of
// docs/benchmarks.md.
//
// 1. The real phase's writer (bench/lib/real-writer.ts) writes --stream-pods pods into a fresh namespace, once.
// 2. Sync: per repetition, each side (streaming, paged; order alternated) is one child process
//    (bench/lib/stream-side.ts) starting --stream-informers informers at once over that namespace. The
//    client's peak RSS is its VmHWM; the API server's is sampled from /proc/<pid>/status every 50 ms
//    (VmRSS) with its VmHWM reset (`clear_refs`) before each side, so each side's peak is its own —
//    though the Go heap the previous side grew may still be held, which is why the order alternates.
// 3. Relist: per repetition, each side is one child process with one informer synced, then a 410 and
//    its relist: the peak heapUsed over the steady heap (after GC).
// 4. The pods are deleted.
// The server's process is found by its --secure-port (the kubeconfig's port); --apiserver-pid overrides.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { StreamArgs } from './args.js';
import type { ServerRunMeta } from './real-phase.js';
import type { CleanupStats, WriterCommand, WriteStats } from './real-writer.js';
import { forkRpc, type RpcChild } from './rpc.js';
import { benchDir } from './processes.js';
import { fmt, fmtSummary, summarize, type Summary } from './stats.js';
import type { RelistAnswer, StreamSideCommand, SyncAnswer } from './stream-side.js';

/** One side's sync run. */
export interface StreamSyncRun {
  side: 'streaming' | 'paged';
  /** The code measured (`--stream-label`), when named. */
  label?: string;
  rep: number;
  answer?: SyncAnswer;
  /** kube-apiserver: VmRSS before the side started, the peak during it (max of samples and VmHWM), bytes. */
  serverRssBefore?: number;
  serverPeakRss?: number;
  error?: string;
}

/** One side's relist run. */
export interface StreamRelistRun {
  side: 'streaming' | 'paged';
  /** The code measured (`--stream-label`), when named. */
  label?: string;
  rep: number;
  answer?: RelistAnswer;
  error?: string;
}

/** The stream section of a results file. */
export interface StreamSection extends ServerRunMeta {
  namespace: string;
  pods: number;
  informers: number;
  reps: number;
  load?: WriteStats;
  sync: StreamSyncRun[];
  relist: StreamRelistRun[];
  cleanup?: CleanupStats;
  errors: string[];
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The kube-apiserver process listening on the kubeconfig's port. */
function findApiServer(kubeconfig: string): number | undefined {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const port = new URL(kc.getCurrentCluster()?.server ?? 'https://127.0.0.1:443').port || '443';
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('kube-apiserver') === true && args.includes(`--secure-port=${port}`)) return Number(entry);
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return undefined;
}

function statusOf(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? Number.NaN : Number(m[1]) * 1024;
}

/** Samples a process's RSS until stopped; the peak includes its VmHWM (reset at the start when allowed). */
function watchServer(pid: number | undefined): { before: number | undefined; stop(): number | undefined } {
  if (pid === undefined) return { before: undefined, stop: () => undefined };
  let reset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    reset = false;
  }
  const before = statusOf(pid, 'VmRSS');
  let peak = before;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, statusOf(pid, 'VmRSS'));
    } catch {
      // the server went away: the last peak stands
    }
  }, 50);
  return {
    before,
    stop: () => {
      clearInterval(timer);
      try {
        if (reset) peak = Math.max(peak, statusOf(pid, 'VmHWM'));
      } catch {
        // as above
      }
      return peak;
    },
  };
}

function startSide(): RpcChild<StreamSideCommand> {
  return forkRpc<StreamSideCommand>(join(benchDir, 'lib', 'stream-side.ts'), {
    name: 'stream side',
    serial: true,
    execArgv: ['--import', 'tsx', '--expose-gc', '--max-old-space-size=8192'],
  });
}

/** Runs the stream phase; resolves with its section (partial, with `errors`, if something failed). */
export async function runStreamPhase(kubeconfig: string, args: StreamArgs, command: string, log: (msg: string) => void, previous?: StreamSection): Promise<StreamSection> {
  const started = Date.now();
  const namespace = args.namespace ?? `kube-informer-stream-${started.toString(36)}`;
  const parts = args.parts ?? ['sync', 'relist'];
  const section: StreamSection = {
    date: new Date(started).toISOString(), command, durationMinutes: 0, node: process.version,
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`, serverVersion: '?', namespace, pods: args.pods,
    informers: args.informers, reps: args.reps, sync: [], relist: [], errors: [],
  };
  // The runs of an earlier run on the same pods (another build of the code) are kept beside this one's.
  if (previous !== undefined && previous.namespace === namespace) {
    section.sync.push(...previous.sync);
    section.relist.push(...previous.relist);
    section.load = previous.load;
    section.command = `${previous.command}; then ${command}`;
  }
  const label = args.label;
  const pid = args.apiServerPid ?? findApiServer(kubeconfig);
  if (pid === undefined) section.errors.push('kube-apiserver process not found: its RSS is not reported');
  const writer = forkRpc<WriterCommand>(join(benchDir, 'lib', 'real-writer.ts'), { name: 'writer', serial: true, execArgv: ['--import', 'tsx'] });
  const sides: Array<'streaming' | 'paged'> = args.first === 'streaming' ? ['streaming', 'paged'] : ['paged', 'streaming'];
  try {
    await writer.call({ cmd: 'init', kubeconfig, namespace, concurrency: args.writers });
    section.serverVersion = await writer.call<string>({ cmd: 'version' });
    if (args.namespace === undefined) {
      await writer.call({ cmd: 'setup' });
      log(`stream: writing ${args.pods} pods into ${namespace} (kube-apiserver ${section.serverVersion}, pid ${pid ?? '?'})`);
      section.load = await writer.call<WriteStats>({ cmd: 'load', from: 0, to: args.pods, status: false });
      log(`stream: ${section.load.writes} writes in ${section.load.seconds.toFixed(1)} s`);
    } else {
      log(`stream: the ${args.pods} pods of ${namespace}, as they are (kube-apiserver ${section.serverVersion}, pid ${pid ?? '?'})`);
    }
    for (let rep = 0; rep < args.reps; rep++) {
      for (const side of !parts.includes('sync') ? [] : rep % 2 === 0 ? sides : [...sides].reverse()) {
        const child = startSide();
        const server = watchServer(pid);
        const run: StreamSyncRun = { side, rep, label, serverRssBefore: server.before };
        try {
          run.answer = await child.call<SyncAnswer>({ cmd: 'sync', kubeconfig, namespace, informers: args.informers, watchList: side === 'streaming', pods: args.pods });
        } catch (err) {
          run.error = message(err);
        } finally {
          run.serverPeakRss = server.stop();
          await child.close();
        }
        section.sync.push(run);
        const a = run.answer;
        log(`stream sync ${side} rep=${rep}: ${a === undefined ? `ERROR ${run.error}` : `${(a.syncMs / 1000).toFixed(1)} s, client peak RSS ${mib(a.peakRss)} MiB, heap ${mib(a.heapAfter)} MiB`}; server RSS ${mib(run.serverRssBefore)} → peak ${mib(run.serverPeakRss)} MiB`);
      }
      for (const side of !parts.includes('relist') ? [] : rep % 2 === 0 ? sides : [...sides].reverse()) {
        const child = startSide();
        const run: StreamRelistRun = { side, rep, label };
        try {
          run.answer = await child.call<RelistAnswer>({ cmd: 'relist', kubeconfig, namespace, watchList: side === 'streaming', pods: args.pods });
        } catch (err) {
          run.error = message(err);
        } finally {
          await child.close();
        }
        section.relist.push(run);
        const a = run.answer;
        log(`stream relist ${side} rep=${rep}: ${a === undefined ? `ERROR ${run.error}` : `steady ${mib(a.steadyHeap)} MiB, peak ${mib(a.peakHeap)} MiB (${(a.peakHeap / a.steadyHeap).toFixed(2)}×), ${a.samples} samples, ${a.relistMs.toFixed(0)} ms`}`);
      }
    }
  } catch (err) {
    section.errors.push(message(err));
    log(`stream: ${message(err)}`);
  } finally {
    try {
      if (args.namespace === undefined && args.keep !== true) section.cleanup = await writer.call<CleanupStats>({ cmd: 'cleanup' });
      else log(`stream: ${namespace} left as it is`);
    } catch (err) {
      section.errors.push(`cleanup: ${message(err)}`);
    }
    await writer.close();
  }
  section.durationMinutes = (Date.now() - started) / 60_000;
  return section;
}

const mib = (n: number | undefined): string => (n === undefined ? '?' : (n / 2 ** 20).toFixed(0));
const table = (head: string[], rows: string[][]): string[] => [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
const inMib = (values: Array<number | undefined>): Summary => summarize(values.filter((v): v is number => v !== undefined && Number.isFinite(v)).map((v) => v / 2 ** 20));

/** The "Streaming lists" section of docs/benchmarks.md. */
export function streamMarkdown(s: StreamSection): string {
  // The newest label's runs are the figures of the targets; an earlier label's rows stand beside them.
  const labels = [...new Set([...s.sync, ...s.relist].map((r) => r.label))];
  const current = [...s.sync, ...s.relist].at(-1)?.label;
  const runs = (side: StreamSyncRun['side'], label = current): StreamSyncRun[] => s.sync.filter((r) => r.side === side && r.label === label && r.answer !== undefined);
  const relists = (side: StreamRelistRun['side'], label = current): StreamRelistRun[] => s.relist.filter((r) => r.side === side && r.label === label && r.answer !== undefined);
  const rowsOf = <R>(has: (side: 'streaming' | 'paged', label: string | undefined) => boolean, row: (side: 'streaming' | 'paged', label: string | undefined) => R): R[] =>
    labels.flatMap((label) => (['streaming', 'paged'] as const).filter((side) => has(side, label)).map((side) => row(side, label)));
  const name = (side: string, label: string | undefined): string => (label === undefined ? side : `${side} (${label})`);
  const clientPeak = (side: StreamSyncRun['side'], label = current): Summary => inMib(runs(side, label).map((r) => r.answer?.peakRss));
  const serverPeak = (side: StreamSyncRun['side'], label = current): Summary => inMib(runs(side, label).map((r) => r.serverPeakRss));
  const serverGrowth = (side: StreamSyncRun['side'], label = current): Summary => inMib(runs(side, label).map((r) => (r.serverPeakRss === undefined || r.serverRssBefore === undefined ? undefined : r.serverPeakRss - r.serverRssBefore)));
  const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—');
  const verdict = (ok: boolean): string => (ok ? 'met' : '**not met**');
  const out: string[] = ['## Streaming lists (WatchList) and the relist', ''];
  out.push(
    `Measured on ${s.date.slice(0, 10)} with \`${s.command}\` (${fmt(s.durationMinutes, 0)} min; kube-apiserver ${s.serverVersion} and its etcd on the same machine, \`scripts/apiserver/start.sh\`; Node ${s.node}, ${s.cpus}). ` +
      `The real phase's writer created ${fmt(s.pods)} pods (\`makePod(i)\`, no status write) in a fresh namespace${s.load === undefined ? '' : ` (${fmt(s.load.writes)} writes in ${fmt(s.load.seconds, 0)} s)`}. ` +
      `**Sync**: one child process per side and repetition (${s.reps} each, order alternated) starts ${s.informers} \`SharedIndexInformer\`s at once, each with its own \`newListWatch\` over that namespace's pods, with \`useWatchList: true\` (streaming: one watch with \`sendInitialEvents=true\` each) or \`false\` (paged: \`resourceVersion=0&limit=500\`, which kube-apiserver serves whole from its watch cache); ` +
      'client peak RSS is the process\'s `VmHWM`, the API server\'s the largest `VmRSS` sampled every 50 ms from `/proc/<pid>/status` during the side (and its `VmHWM`, reset with `clear_refs` before each side). ' +
      'The API server gives memory back to the system slowly, so what one side grew it to carries over to the next: the first side\'s growth is the clean figure, which is why the order alternates (`--stream-first` picks the first). ' +
      '**Relist**: one informer synced, heap after two GCs = steady; then its watch is ended and the next watch answered 410 (too old resource version, injected in the client: the relist that follows is the real request to the real server, as after a compaction); `heapUsed` sampled every 2 ms until the relisted items were processed. min / **median** / max.',
    '',
  );
  const cs = clientPeak('streaming');
  const cp = clientPeak('paged');
  out.push('### Initial sync', '');
  out.push(...table(['side', 'seconds', 'client peak RSS (MiB)', 'client heap after GC (MiB)', 'API server peak RSS (MiB)', 'API server RSS growth (MiB)'], rowsOf((side, label) => runs(side, label).length > 0, (side, label) => [
    name(side, label),
    fmtSummary(summarize(runs(side, label).map((r) => r.answer!.syncMs / 1000)), 1),
    fmtSummary(clientPeak(side, label)),
    fmtSummary(inMib(runs(side, label).map((r) => r.answer?.heapAfter))),
    fmtSummary(serverPeak(side, label)),
    fmtSummary(serverGrowth(side, label)),
  ])), '');
  const rs = (side: StreamRelistRun['side'], label = current): Summary => summarize(relists(side, label).map((r) => r.answer!.peakHeap / r.answer!.steadyHeap));
  out.push('### Relist after a 410', '');
  out.push(...table(['side', 'steady heap (MiB)', 'peak heap (MiB)', 'peak ÷ steady', 'relist (s)'], rowsOf((side, label) => relists(side, label).length > 0, (side, label) => [
    name(side, label),
    fmtSummary(inMib(relists(side, label).map((r) => r.answer?.steadyHeap))),
    fmtSummary(inMib(relists(side, label).map((r) => r.answer?.peakHeap))),
    fmtSummary(rs(side, label), 2),
    fmtSummary(summarize(relists(side, label).map((r) => r.answer!.relistMs / 1000)), 1),
  ])), '');
  const streamRelist = rs('streaming').median;
  const pagedRelist = rs('paged').median;
  out.push('### Targets', '');
  out.push(...table(['target', 'measured', 'verdict'], [
    [`client peak RSS streaming ≤ 0.8× paged (${fmt(s.pods)} pods, ${s.informers} informers at once)`, `${ratio(cs.median, cp.median)} (${fmt(cs.median)} vs ${fmt(cp.median)} MiB)`, verdict(cs.median <= 0.8 * cp.median)],
    ['API server peak RSS, streaming and paged', `${fmt(serverPeak('streaming').median)} vs ${fmt(serverPeak('paged').median)} MiB (${ratio(serverPeak('streaming').median, serverPeak('paged').median)})`, 'reported'],
    [`relist peak ≤ 1.2× steady heap (${fmt(s.pods)} pods), streaming`, `${fmt(streamRelist, 2)}×`, verdict(streamRelist <= 1.2)],
    [`relist peak ≤ 1.2× steady heap (${fmt(s.pods)} pods), paged`, `${fmt(pagedRelist, 2)}×`, verdict(pagedRelist <= 1.2)],
  ]), '');
  const errors = [...s.errors, ...s.sync.flatMap((r) => (r.error === undefined ? [] : [`sync ${r.side} ${r.rep}: ${r.error}`])), ...s.relist.flatMap((r) => (r.error === undefined ? [] : [`relist ${r.side} ${r.rep}: ${r.error}`]))];
  if (errors.length > 0) out.push('Errors:', '', ...errors.map((e) => `- ${e.slice(0, 400)}`), '');
  return out.join('\n');
}
