// One soak run: fake API server, workload, faults, one contender with a fast and a slow handler, exact checks.

import { startFakeApiServer } from '../src/testing/index.js';
import {
  activeResources,
  describeAnomaly,
  describeDivergence,
  diffStates,
  heapAfterGc,
  heapReport,
  mb,
  processListeners,
  ProcessGuard,
  resourcesBeyond,
  waitForResourcesToSettle,
  type Divergence,
  type HeapReport,
  type ResourceCounts,
} from './check.js';
import type { ContenderFactory, ContenderStats } from './contenders/types.js';
import { FaultScheduler, type FaultKind, type FaultRecord } from './faults.js';
import { Prng } from './prng.js';
import { HandlerRecorder } from './recorder.js';
import { SOAK_RESOURCE, Workload, type SoakObject } from './workload.js';

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** The seed: fixes the workload's operations and the fault plan. */
  seed: number;
  /** Workload writes after the prefill. */
  events: number;
  /** The contender under test. */
  contender: ContenderFactory;
  /** Fault kinds to draw from. Default: none. */
  faults?: readonly FaultKind[];
  /** One fault per this many writes, on average. Default 500. */
  faultEveryWrites?: number;
  /** Writes per second. Default 1000. */
  rate?: number;
  /** Objects created before the contender starts. Default 300. */
  prefill?: number;
  /** Population the workload steers towards. Default 500. */
  targetObjects?: number;
  /** How long to wait for quiescence once the workload stops, in ms. Default 20 000. */
  settleTimeoutMs?: number;
  /** The slow handler waits `slowMs` every `slowEvery` calls (about 1400 calls/s). Defaults 3 and 2. */
  slowEvery?: number;
  /** See `slowEvery`. */
  slowMs?: number;
  /** Changes the fake server remembers for watch replay. Default 2000. */
  historyLimit?: number;
  /** Heap growth over the run (after GC) that fails it, in bytes; `Infinity` = report only. Default 8 MB. */
  maxHeapGrowthBytes?: number;
  /** Progress lines go here. Default: none. */
  log?: (line: string) => void;
}

/** The outcome of one run. Empty `failures` = it passed. */
export interface SoakResult {
  readonly contender: string;
  readonly seed: number;
  readonly events: number;
  /** Wall time of the whole run, in ms. */
  readonly wallMs: number;
  /** Time from the workload's last write to quiescence (or to the settle timeout), in ms. */
  readonly settleMs: number;
  /** Quiescence reached: cache and every handler equal the server, no fault pending. */
  readonly converged: boolean;
  readonly faults: readonly FaultRecord[];
  /** Cache vs server. */
  readonly storeDivergences: readonly Divergence[];
  /** Replayed handler histories vs server (every handler). */
  readonly handlerDivergences: readonly Divergence[];
  /** History anomalies per handler (rv regressions, add of a present key, ...). */
  readonly anomalies: Readonly<Record<string, { count: number; rvRegressions: number; first: string[] }>>;
  readonly handlerCalls: Readonly<Record<string, { add: number; update: number; delete: number }>>;
  readonly unhandledRejections: number;
  readonly uncaughtExceptions: number;
  /** Handles and requests still active after stop, beyond those before start. */
  readonly leftoverResources: ResourceCounts;
  /** Abort listeners left on the contender's signal, plus process listeners added and not removed. */
  readonly leftoverListeners: number;
  readonly heap: HeapReport | undefined;
  /** The contender stopped on its own with this error. */
  readonly fatal: string | undefined;
  readonly stats: ContenderStats;
  /** Why the run failed; empty when it passed. The first line is the first divergence, when there is one. */
  readonly failures: readonly string[];
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(cond: () => boolean, timeoutMs: number, stepMs = 10): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() >= deadline) return false;
    await delay(stepMs);
  }
  return true;
}

/** Runs one soak and checks it exactly. Never throws for a contender's misbehaviour: it reports it. */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const guard = new ProcessGuard().install();
  const prng = new Prng(options.seed);
  const workloadPrng = prng.fork();
  const faultPrng = prng.fork();
  const server = await startFakeApiServer({ historyLimit: options.historyLimit ?? 2000, recordRequests: false });
  try {
    const workload = new Workload(server, workloadPrng, { targetObjects: options.targetObjects });
    workload.prefill(options.prefill ?? 300);
    const fast = new HandlerRecorder({ name: 'fast' });
    const slow = new HandlerRecorder({ name: 'slow', slowEvery: options.slowEvery ?? 3, slowMs: options.slowMs ?? 2 });
    const handlers = [fast, slow];
    const baselineResources = activeResources();
    const baselineListeners = processListeners();
    const contender = options.contender({ server, handlers: handlers.map((h) => ({ name: h.name, handler: h })) });
    const truth = (): Map<string, string> =>
      new Map(server.list<SoakObject>(SOAK_RESOURCE).map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o.metadata?.resourceVersion ?? '']));
    const failures: string[] = [];

    contender.start();
    if (!(await until(() => contender.synced(), 10_000))) failures.push(`${contender.name} did not sync within 10 s`);

    const events = options.events;
    const rate = options.rate ?? 1000;
    const t0 = performance.now();
    const scheduler = new FaultScheduler(server, faultPrng, { kinds: options.faults ?? [], events, everyWrites: options.faultEveryWrites }, t0);
    const heapSamples: number[] = [];
    let heapBaseline: number | undefined;
    let nextHeapAt = 0;
    let done = 0;
    while (done < events) {
      const due = Math.min(events, Math.floor(((performance.now() - t0) * rate) / 1000));
      while (done < due) {
        workload.step();
        done++;
        await scheduler.maybeInject(done);
      }
      scheduler.observe(contender.progressRv());
      const now = performance.now();
      if (now >= nextHeapAt && done >= events / 4) {
        const h = heapAfterGc();
        if (h !== undefined) {
          if (heapBaseline === undefined) heapBaseline = h;
          else heapSamples.push(h);
        }
        nextHeapAt = performance.now() + 1000;
        log(`  ${done}/${events} writes, ${scheduler.records().filter((f) => f.injectedAtMs !== undefined).length} faults, heap ${h === undefined ? 'n/a' : mb(h)}`);
      }
      await delay(5);
    }

    // Quiescence: no more writes; wait until the cache and every handler equal the server.
    const writesEnd = performance.now();
    const settleTimeout = options.settleTimeoutMs ?? 20_000;
    const finalRv = BigInt(server.resourceVersion());
    const quiet = (): boolean => {
      scheduler.settle(finalRv, contender.progressRv());
      if (scheduler.hasPending()) return false;
      const t = truth();
      if (diffStates('store', t, contender.cache()).length > 0) return false;
      return handlers.every((h) => diffStates(h.name, t, h.state()).length === 0);
    };
    const converged = await until(quiet, settleTimeout, 25);
    const settleMs = performance.now() - writesEnd;
    if (converged) scheduler.markAllRecovered();

    const t = truth();
    const storeDivergences = diffStates('store', t, contender.cache());
    const handlerDivergences = handlers.flatMap((h) => diffStates(`handler:${h.name}`, t, h.state()));
    const firstDivergence = storeDivergences[0] ?? handlerDivergences[0];
    if (firstDivergence !== undefined) {
      failures.unshift(`first divergence: ${describeDivergence(firstDivergence)}`);
      failures.push(`${storeDivergences.length} store divergence(s), ${handlerDivergences.length} handler divergence(s)`);
    }
    if (!converged) failures.push(`no quiescence within ${settleTimeout} ms${scheduler.hasPending() ? ' (a fault was never consumed)' : ''}`);
    const anomalies: Record<string, { count: number; rvRegressions: number; first: string[] }> = {};
    for (const h of handlers) {
      const a = h.anomalies();
      anomalies[h.name] = {
        count: a.count,
        rvRegressions: a.byKind['rv-regression'] ?? 0,
        first: a.first.map((x) => describeAnomaly(h.name, x)),
      };
      if (a.count > 0) failures.push(`${a.count} history anomaly(ies); first: ${describeAnomaly(h.name, a.first[0])}`);
    }

    const stopTimeout = Symbol('timeout');
    let stopTimer: ReturnType<typeof setTimeout> | undefined;
    const stopped = await Promise.race([
      contender.stop(),
      new Promise<typeof stopTimeout>((resolve) => (stopTimer = setTimeout(() => resolve(stopTimeout), 10_000))),
    ]);
    clearTimeout(stopTimer);
    const fatal = stopped === stopTimeout ? new Error('stop() did not resolve within 10 s') : stopped;
    if (fatal !== undefined) failures.push(`${contender.name} failed: ${fatal.message}`);
    const leftoverResources = await waitForResourcesToSettle(baselineResources, 3_000);
    if (Object.keys(leftoverResources).length > 0) failures.push(`left active after stop: ${JSON.stringify(leftoverResources)}`);
    const extraProcessListeners = Object.values(resourcesBeyond(baselineListeners, processListeners())).reduce((a, b) => a + b, 0);
    const leftoverListeners = contender.leftoverListeners() + extraProcessListeners;
    if (leftoverListeners > 0) failures.push(`${leftoverListeners} listener(s) left after stop`);

    const heap = heapReport(heapBaseline, heapSamples, heapAfterGc());
    const maxGrowth = options.maxHeapGrowthBytes ?? 8 * 1024 * 1024;
    if (heap !== undefined && heap.growthBytes > maxGrowth) {
      failures.push(`heap grew by ${mb(heap.growthBytes)} over the run (limit ${mb(maxGrowth)})`);
    }
    await delay(0);
    if (guard.rejections.length > 0) failures.push(`${guard.rejections.length} unhandled rejection(s); first: ${String(guard.rejections[0])}`);
    if (guard.exceptions.length > 0) failures.push(`${guard.exceptions.length} uncaught exception(s); first: ${String(guard.exceptions[0])}`);
    const notInjected = scheduler.remaining();
    if (notInjected > 0) log(`  ${notInjected} planned fault(s) never injected (an earlier one was never consumed)`);

    return {
      contender: contender.name,
      seed: options.seed,
      events,
      wallMs: performance.now() - started,
      settleMs,
      converged,
      faults: scheduler.records(),
      storeDivergences,
      handlerDivergences,
      anomalies,
      handlerCalls: Object.fromEntries(handlers.map((h) => [h.name, h.counts()])),
      unhandledRejections: guard.rejections.length,
      uncaughtExceptions: guard.exceptions.length,
      leftoverResources,
      leftoverListeners,
      heap,
      fatal: fatal?.message,
      stats: contender.stats(),
      failures,
    };
  } finally {
    await server.close();
    guard.uninstall();
  }
}
