// The operator phase's shared pieces: the bench CRD's types, the reconcile's desired state, and the JSON-line protocol a Node side prints (as bench/controller-runtime/main.go does).
//
// A side module calls `runOperatorSide(start)` with the config as its one argument (JSON). It prints
//   {"type":"start","t":…}                           at once (epoch ms)
//   {"type":"first","t":…}                           when the first reconcile starts (epoch ms; the storm phase times its creation from it)
//   {"type":"reconciled","count":…,"firstStartMs":…,"atMs":…,"cpuAtFirstMs":…,"cpuMs":…}   when `expect` reconciles completed
//   {"type":"final","reconciles":…,"errors":…,"writes":…,"cpuMs":…,"maxRssKiB":…,"memoryAtPeak":{…},"starts":[[key,gen,ms],…],"windowGc":{…}}   at stdin EOF, then exits
// `starts`: the reconciles that began on a BenchSet of generation ≥ 2 (the writer's spec changes) or one
// carrying the {@link STORM_ANNOTATION} (the storm phase's new primaries).
// `windowGc` (Node sides only, once `expect` reconciles completed): the collector's pauses that began
// between the first reconcile's start and the `expect`-th one's end, by kind (`WindowGc`). `stormGc` (Node
// sides): per start of an annotated set, [key, start ms, the collector's pause ms, pauses] since the create's send.

import { readFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * Epoch milliseconds with sub-millisecond precision (`performance.timeOrigin + performance.now()`):
 * write answers and reconcile starts are compared across processes, and the Go side reports
 * microseconds — whole milliseconds (`Date.now()`) on one side only would bias its latencies by half a
 * millisecond on average, at p99 figures of a few milliseconds.
 */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The bench CRD's group, version and plural (bench/lib/operator-world.ts installs it). */
export const BENCH_GROUP = 'bench.kube-informer.io';
/** The version of the bench CRD. */
export const BENCH_VERSION = 'v1';
/** The plural of the bench CRD. */
export const BENCH_PLURAL = 'benchsets';

/**
 * The annotation the storm phase (bench/lib/storm-phase.ts) puts on each primary it creates during a
 * restart storm (its value: the client's send time, epoch ms): every side reports the reconcile starts of
 * such a set in `starts`, whatever its generation.
 */
export const STORM_ANNOTATION = 'bench.kube-informer.io/storm';

/** The primary: `spec.children` ConfigMaps `<name>-<i>`, each holding `spec.data`. */
export interface BenchSet {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; uid: string; generation: number; resourceVersion?: string; [k: string]: unknown };
  spec: { children: number; data?: Record<string, string> };
  status?: { observedGeneration?: number; ready?: number };
}

/** What the parent gives a side (argv[2], JSON). */
export interface OperatorSideConfig {
  kubeconfig: string;
  namespace: string;
  /** Reconciles at once (controller-runtime's MaxConcurrentReconciles). */
  concurrency: number;
  /** Print a `reconciled` line once this many reconciles completed (0: never). */
  expect: number;
  /** Milliseconds each reconcile waits before its work, standing for an outside call (the storm phase; default 0: none). */
  workMs?: number;
  /** The kube-informer side: the Controller's FIFO order (`priority: false`) instead of its priority scheduler. */
  fifo?: boolean;
}

/** What a side tells the harness. */
export interface OperatorProbe {
  /**
   * A reconcile of `key` began on a BenchSet of `generation` (`createdAt`: the value of its
   * {@link STORM_ANNOTATION}, when it has one); returns its end, told whether it failed.
   */
  start(key: string, generation: number, createdAt?: number): (failed: boolean) => void;
  /** One write request is about to be sent. */
  write(): void;
}

/** Whether a ConfigMap's data equals the set's data (both absent or empty count as equal). */
export function sameData(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => a![k] === b?.[k]);
}

/** The controller owner reference to `set` (controller: true, blockOwnerDeletion: true, as controller-runtime's SetControllerReference). */
export function ownerReference(set: BenchSet): { apiVersion: string; kind: string; name: string; uid: string; controller: boolean; blockOwnerDeletion: boolean } {
  return { apiVersion: `${BENCH_GROUP}/${BENCH_VERSION}`, kind: 'BenchSet', name: set.metadata.name, uid: set.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** Whether `refs` has a controller reference to `set`'s uid. */
export function controlledBy(refs: ReadonlyArray<{ uid?: string; controller?: boolean }> | undefined, set: BenchSet): boolean {
  return refs?.some((r) => r.controller === true && r.uid === set.metadata.uid) ?? false;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** VmHWM of /proc/self/status in KiB (the peak resident set), 0 if unreadable. */
function maxRssKiB(): number {
  try {
    const m = /VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

/**
 * The garbage collector's pauses inside the saturation window, by kind (Node's `gc` performance
 * entries: their `duration` is the main thread's pause; concurrent marking on helper threads is not in
 * it, only in the CPU figures).
 */
export interface WindowGc {
  /** Scavenges (young generation): count and ms. */
  minor: number;
  minorMs: number;
  /** Mark-compacts (whole heap): count and ms. */
  major: number;
  majorMs: number;
  /** Incremental marking steps and weak callbacks: count and ms. */
  other: number;
  otherMs: number;
}

/** Sums the pauses of `gcs` ([kind, epoch start ms, ms]) that began within [from, to]. */
function windowGc(gcs: ReadonlyArray<readonly [number, number, number]>, from: number, to: number): WindowGc {
  const w: WindowGc = { minor: 0, minorMs: 0, major: 0, majorMs: 0, other: 0, otherMs: 0 };
  for (const [kind, at, ms] of gcs) {
    if (at < from || at > to) continue;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      w.minor++;
      w.minorMs += ms;
    } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      w.major++;
      w.majorMs += ms;
    } else {
      w.other++;
      w.otherMs += ms;
    }
  }
  return w;
}

/**
 * Where a Node side's memory stood when its resident set was at its largest (sampled every 100 ms):
 * MiB of the resident set, the V8 heap committed (by space: new = the young generation, old, code, large
 * objects …), the heap in use, memory held outside the heap (`external`, of which `arrayBuffers`: socket
 * and decoder buffers). What is left of the resident set is Node's own (the binary, its libraries, the
 * parser's and compiler's malloc, thread stacks).
 */
export interface MemoryAtPeak {
  rss: number;
  heapCommitted: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  spaces: Record<string, number>;
}

const mib = (b: number): number => Math.round((b / 1048576) * 10) / 10;

/** Samples `process.memoryUsage()` every 100 ms and keeps the sample with the largest resident set. */
function memorySampler(): () => MemoryAtPeak | undefined {
  let best: MemoryAtPeak | undefined;
  const sample = (): void => {
    const m = process.memoryUsage();
    if (best !== undefined && mib(m.rss) <= best.rss) return;
    const spaces: Record<string, number> = {};
    for (const s of getHeapSpaceStatistics()) spaces[s.space_name.replace(/_space$/, '')] = mib(s.space_size);
    best = { rss: mib(m.rss), heapCommitted: mib(m.heapTotal), heapUsed: mib(m.heapUsed), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers), spaces };
  };
  setInterval(sample, 100).unref();
  return () => (sample(), best);
}

const print = (line: object): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

/** Runs a side: `start` builds and starts the operator (resolving or not); the harness prints the protocol's lines. */
export function runOperatorSide(start: (cfg: OperatorSideConfig, probe: OperatorProbe) => Promise<void>): void {
  print({ type: 'start', t: epochMs() });
  const cfg = JSON.parse(process.argv[2] ?? '{}') as OperatorSideConfig;
  let reconciles = 0;
  let errors = 0;
  let writes = 0;
  let firstStartMs = 0;
  let cpuAtFirstMs = 0;
  let reconciledAtMs = 0;
  const starts: Array<[string, number, number]> = [];
  /** The storm phase's annotated sets: key, the create's send time, a reconcile's start (epoch ms). */
  const stormWindows: Array<[string, number, number]> = [];
  const gcs: Array<[number, number, number]> = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push([((e as { detail?: unknown }).detail as { kind: number }).kind, performance.timeOrigin + e.startTime, e.duration]);
  }).observe({ entryTypes: ['gc'] });
  const memory = memorySampler();
  const probe: OperatorProbe = {
    start(key, generation, createdAt) {
      const t = epochMs();
      if (firstStartMs === 0) {
        firstStartMs = t;
        cpuAtFirstMs = cpuMs();
        print({ type: 'first', t });
      }
      if (generation > 1 || createdAt !== undefined) starts.push([key, generation, t]);
      if (createdAt !== undefined) stormWindows.push([key, createdAt, t]);
      return (failed) => {
        if (failed) errors++;
        if (++reconciles === cfg.expect) {
          reconciledAtMs = epochMs();
          print({ type: 'reconciled', count: cfg.expect, firstStartMs, atMs: reconciledAtMs, cpuAtFirstMs, cpuMs: cpuMs() });
        }
      };
    },
    write: () => void writes++,
  };
  process.stdin.resume();
  process.stdin.on('end', () => {
    const gc = reconciledAtMs === 0 ? undefined : windowGc(gcs, firstStartMs, reconciledAtMs);
    // Per annotated start: the collector's pauses (ms, count) that began between the create's send and it.
    const stormGc = stormWindows.map(([key, from, to]) => {
      const w = windowGc(gcs, from, to);
      return [key, to, w.minorMs + w.majorMs + w.otherMs, w.minor + w.major + w.other];
    });
    print({ type: 'final', reconciles, errors, writes, cpuMs: cpuMs(), maxRssKiB: maxRssKiB(), memoryAtPeak: memory(), starts, windowGc: gc, stormGc });
    process.exit(0);
  });
  start(cfg, probe).catch((err: unknown) => {
    process.stderr.write(`operator side: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
