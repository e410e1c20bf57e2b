// The storm phase of `npm run bench -- --kubeconfig FILE --phases storm`: issue 50's restart storm on a real kube-apiserver.
//
// The operator of the operator phase (bench/lib/operator-phase.ts: BenchSets owning ConfigMaps), its world
// (bench/lib/operator-world.ts) and its side processes; sides: kube-informer's Controller with its priority
// scheduler (the default), the same with `priority: false` (FIFO, the order before issue 50), and
// controller-runtime v0.25.2 with its default priority queue.
//
// 1. `primaries` BenchSets created and converged once (the kube-informer side, until a watch of the
//    harness's own sees every set ready);
// 2. per repetition (`creations` of them) and side (order rotated each repetition): the side started
//    fresh on the converged world — its restart — so every set is reconciled again (writing nothing; each
//    reconcile waits `workMs` first, standing for an outside call, on every side). `delayMs` after the
//    side's first reconcile began (its `first` line), one new BenchSet `storm-<k>` is created, annotated
//    with the client's send time (STORM_ANNOTATION, so the side reports its reconcile starts). Latency:
//    from the send (epoch ms, taken just before the request) to the start of the new set's first reconcile
//    (the side's `starts`, epoch ms on the same machine). Storm: from the first reconcile's start to the
//    end of the `existing`-th reconcile (the side's `reconciled` line; the new set's, when it ran inside
//    the storm, counts: off by one reconcile of some thousands). The side is stopped once the
//    harness's watch sees the new set ready and the storm is over. New sets stay: later restarts have one
//    more primary each.
//
// The deterministic guard of the same order (no wall clock): test/controller/priority.test.ts, "restart storm".

import { cpus } from 'node:os';
import { quantile } from './controller-sides.js';
import { OperatorWorld } from './operator-world.js';
import { startSide, controllerRuntimeBinary, type SideProcess } from './operator-phase.js';
import { epochMs, STORM_ANNOTATION, type OperatorSideConfig } from './operator-side.js';
import type { ServerRunMeta } from './real-phase.js';
import type { StormArgs, StormSideId } from './storm-args.js';
import { fmt } from './stats.js';

/** One restart of one side. */
export interface StormRun {
  side: StormSideId;
  rep: number;
  /** The new primary's name. */
  name: string;
  /** Primaries in place at the restart (the new one not counted). */
  existing: number;
  /** ms from the spawn to the first reconcile's start. */
  spawnToFirstMs?: number;
  /** ms from the first reconcile's start to the new primary's create (sent). */
  createdAtMs?: number;
  /** ms from the create's send to the start of the new primary's first reconcile. */
  latencyMs?: number;
  /** Node sides: the collector's pauses (ms, count) between the create's send and the new set's first reconcile. */
  gcMs?: number;
  gcPauses?: number;
  /** ms from the first reconcile's start to the end of the `existing`-th. */
  stormMs?: number;
  /** Reconciles and writes of the whole restart. */
  reconciles?: number;
  writes?: number;
  errors: string[];
}

/** The storm section of a results file. */
export interface StormSection extends ServerRunMeta {
  args: StormArgs;
  /** Whether this build's Controller had the priority scheduler (`defaultPriority` exported): false on a build before issue 50, where every kube-informer side is FIFO. */
  kiPriority: boolean;
  /** Seconds to create the primaries, and for the kube-informer side to converge them. */
  resetSeconds?: number;
  convergeSeconds?: number;
  runs: StormRun[];
  errors: string[];
}

/** One side's figures over its runs (ms). */
export interface StormFigures {
  runs: number;
  p50: number;
  p99: number;
  max: number;
  stormMedian: number;
  createdAtMedian: number;
}

/** p50 / p99 / max of the latencies of `runs`, and the median storm length and create time. */
export function stormFigures(runs: readonly StormRun[]): StormFigures {
  const lat = runs.map((r) => r.latencyMs).filter((x): x is number => x !== undefined).sort((a, b) => a - b);
  const med = (f: (r: StormRun) => number | undefined): number => quantile(runs.map(f).filter((x): x is number => x !== undefined).sort((a, b) => a - b), 0.5);
  return { runs: lat.length, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat.at(-1) ?? Number.NaN, stormMedian: med((r) => r.stormMs), createdAtMedian: med((r) => r.createdAtMs) };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects after `ms` with `what`; the timer does not hold the process. */
function deadline(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms).unref());
}

/** Whether this build's Controller has the priority scheduler (issue 50's `defaultPriority`). */
async function hasPriority(): Promise<boolean> {
  const controller = (await import('../../src/controller.js')) as Record<string, unknown>;
  return 'defaultPriority' in controller;
}

/** Runs the storm phase against the server of `kubeconfig`; `previous` (a `--merge`d section of the same shape) keeps its runs of the sides this run leaves out. */
export async function runStormPhase(kubeconfig: string, args: StormArgs, command: string, log: (msg: string) => void, previous?: StormSection): Promise<StormSection> {
  const started = Date.now();
  const namespace = `kube-informer-storm-${started.toString(36)}`;
  const section: StormSection = { date: new Date(started).toISOString(), command, durationMinutes: 0, node: process.version, cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`, serverVersion: '?', args, kiPriority: await hasPriority(), runs: [], errors: [] };
  const world = await OperatorWorld.open(kubeconfig, namespace, args.children, 32);
  const n = args.primaries;
  const timeoutMs = 60_000 + n * 20;
  try {
    if (args.sides.includes('controller-runtime')) controllerRuntimeBinary();
    section.serverVersion = await world.version();
    await world.setup();
    section.resetSeconds = await world.reset(n);
    log(`storm: kube-apiserver ${section.serverVersion}; namespace ${namespace} (deleted at the end); ${fmt(n)} BenchSets created in ${fmt(section.resetSeconds, 1)} s; the Controller ${section.kiPriority ? 'has' : 'has NO'} priority scheduler`);
    section.convergeSeconds = await converge(world, kubeconfig, args, timeoutMs);
    log(`storm: converged in ${fmt(section.convergeSeconds, 1)} s; ${args.creations} restarts per side, a new BenchSet ${args.delayMs} ms into each storm, ${args.workMs} ms of work per reconcile, concurrency ${args.concurrency}`);
    let created = 0;
    for (let rep = 0; rep < args.creations; rep++) {
      const order = args.sides.map((_, i) => args.sides[(i + rep) % args.sides.length]);
      for (const side of order) {
        const run = await restart(world, kubeconfig, side, rep, n + created, `storm-${created}`, args, timeoutMs);
        created++;
        section.runs.push(run);
        log(`storm ${side} rep=${rep}: first reconcile ${fmt(run.spawnToFirstMs ?? Number.NaN)} ms after spawn; created ${fmt(run.createdAtMs ?? Number.NaN)} ms into the storm; reconciled ${fmt(run.latencyMs ?? Number.NaN, 1)} ms later${run.gcMs === undefined ? '' : ` (the collector paused ${fmt(run.gcMs, 1)} ms in ${run.gcPauses} pauses between)`}; storm ${fmt(run.stormMs ?? Number.NaN)} ms${run.errors.length > 0 ? `; ERRORS ${run.errors.join('; ')}` : ''}`);
      }
    }
  } catch (err) {
    section.errors.push(message(err));
    log(`storm: ${message(err)}`);
  } finally {
    await world.cleanup().catch((err: unknown) => section.errors.push(`cleanup: ${message(err)}`));
  }
  if (previous !== undefined && previous.args.primaries === n && previous.args.workMs === args.workMs && previous.args.delayMs === args.delayMs) {
    const kept = previous.runs.filter((r) => !args.sides.includes(r.side));
    section.runs.unshift(...kept);
    if (kept.length > 0) section.args = { ...args, sides: [...new Set([...previous.args.sides, ...args.sides])] };
  }
  section.durationMinutes = (Date.now() - started) / 60_000;
  return section;
}

/** The side process config of a storm run. */
function sideConfig(kubeconfig: string, world: OperatorWorld, args: StormArgs, expect: number, workMs: number, fifo: boolean): OperatorSideConfig {
  return { kubeconfig, namespace: world.namespace, concurrency: args.concurrency, expect, workMs, fifo };
}

/** Rejects once `proc` exits. */
function exitOf(proc: SideProcess, what: string): Promise<never> {
  return proc.line('never').then(() => Promise.reject(new Error(`the side exited (code ${proc.child.exitCode}) before ${what}`)));
}

/** Converges the primaries once with the kube-informer side (no work per reconcile); resolves with the seconds from its spawn. */
async function converge(world: OperatorWorld, kubeconfig: string, args: StormArgs, timeoutMs: number): Promise<number> {
  const watch = await world.watchReady(args.primaries);
  const proc = startSide('kube-informer', sideConfig(kubeconfig, world, args, 0, 0, false), args.kiNodeFlags);
  try {
    const readyAt = await Promise.race([watch.allReady(timeoutMs), exitOf(proc, 'every set was ready')]);
    return (readyAt - proc.spawnedAt) / 1000;
  } finally {
    watch.close();
    await proc.stop();
  }
}

/** One restart of `side` on `existing` converged primaries, creating `name` `delayMs` into the storm. */
async function restart(world: OperatorWorld, kubeconfig: string, side: StormSideId, rep: number, existing: number, name: string, args: StormArgs, timeoutMs: number): Promise<StormRun> {
  const run: StormRun = { side, rep, name, existing, errors: [] };
  const watch = await world.watchReady(existing + 1);
  const cfg = sideConfig(kubeconfig, world, args, existing, args.workMs, side === 'kube-informer-fifo');
  const proc = startSide(side === 'controller-runtime' ? 'controller-runtime' : 'kube-informer', cfg, args.kiNodeFlags);
  try {
    const limit = deadline(timeoutMs, `${side}: the storm was not over`);
    const first = await Promise.race([proc.line<{ t: number }>('first'), exitOf(proc, 'its first reconcile'), limit]);
    if (first === undefined) throw new Error('the side exited before its first reconcile');
    run.spawnToFirstMs = first.t - proc.spawnedAt;
    await sleep(first.t + args.delayMs - epochMs());
    const sentAt = epochMs();
    await world.create(name, name, { [STORM_ANNOTATION]: sentAt.toFixed(3) });
    run.createdAtMs = sentAt - first.t;
    await Promise.race([watch.allReady(timeoutMs), exitOf(proc, `${name} was ready`), limit]);
    const over = await Promise.race([proc.line<{ firstStartMs: number; atMs: number }>('reconciled'), exitOf(proc, 'the storm was over'), limit]);
    if (over !== undefined) run.stormMs = over.atMs - over.firstStartMs;
    const final = await proc.stop();
    if (final === undefined) throw new Error('the side exited without its final line');
    run.reconciles = final.reconciles;
    run.writes = final.writes;
    const key = `${world.namespace}/${name}`;
    const starts = final.starts.filter(([k]) => k === key).map(([, , t]) => t);
    if (starts.length === 0) run.errors.push(`no reconcile of ${name} reported`);
    else {
      const at = Math.min(...starts);
      run.latencyMs = at - sentAt;
      const gc = final.stormGc?.find(([k, t]) => k === key && t === at);
      if (gc !== undefined) [run.gcMs, run.gcPauses] = [gc[2], gc[3]];
    }
  } catch (err) {
    run.errors.push(message(err));
    await proc.stop();
  } finally {
    watch.close();
  }
  return run;
}
