// The child-process side of a Node contender: measure sync, watch throughput and steady memory, print JSON lines.
//
// A contender module calls `runContender(start)`. `start` builds the client under test and returns a
// `Running`; the harness takes heap (after GC) and CPU before it, waits for the sync, prints a
// `synced` line, then in mode `watch` waits until every handler saw `events` MODIFIED notifications
// (counted through `hooks.modified(handlerIndex)`) and prints `done`, or in mode `steady` prints a
// memory `sample` every `sampleMs` until stdin closes (the runner's lifeline). Needs `--expose-gc`.

import { readdirSync, readFileSync } from 'node:fs';
import type { KubeConfigLike } from '../../src/listwatch/index.js';
import type { ContenderConfig, ContenderLine } from './protocol.js';

/** Callbacks the client under test calls. */
export interface Hooks {
  /** Handler `h` received one MODIFIED notification. */
  modified(h: number): void;
  /** Something went wrong that the client reported instead of throwing (e.g. an informer `error` event). */
  error(err: unknown): void;
}

/** A started client under test. */
export interface Running {
  /** Resolves once the client considers itself synced (and every handler saw its initial adds). */
  synced: Promise<void>;
  /** Objects in the client's cache. */
  size(): number;
}

const gc = (globalThis as { gc?: () => void }).gc;

function collect(): NodeJS.MemoryUsage {
  if (gc === undefined) throw new Error('run contenders with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage();
}

/**
 * CPU ms of each thread of this process, user and system apart, by name (`main` for the JavaScript
 * thread; V8's GC and compiler helpers and libuv's pool are named `node`), and how often the main thread
 * slept (`main wakeups`), from /proc; `{}` where /proc has no per-thread stats.
 */
function threadCpuMs(): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = tid === String(process.pid) ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      // utime and stime are the stat file's 14th and 15th fields, in clock ticks (USER_HZ, 100 per second).
      out[`${name} user`] = (out[`${name} user`] ?? 0) + Number(fields[11]) * 10;
      out[`${name} system`] = (out[`${name} system`] ?? 0) + Number(fields[12]) * 10;
      if (name === 'main') {
        // How often the thread went to sleep and was woken (each is a trip through the kernel).
        const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
        out['main wakeups'] = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      }
    }
  } catch {
    return {};
  }
  return out;
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function print(line: ContenderLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function message(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/**
 * The fake and independent servers' URL and token as a `KubeConfigLike` (three methods, no
 * @kubernetes/client-node: loading client-node's `KubeConfig` costs a process some 0.5 s and 70 MiB,
 * which the raw baseline never pays). Plain HTTP: no TLS material.
 */
export function urlTokenKubeConfig(cfg: ContenderConfig): KubeConfigLike {
  const cluster = { name: 'bench', server: cfg.url, skipTLSVerify: true };
  const user = { name: 'bench', token: cfg.token };
  return {
    getCurrentCluster: () => cluster,
    getCurrentUser: () => user,
    applyToHTTPSOptions: async (opts) => {
      opts.headers = { ...opts.headers, Authorization: `Bearer ${cfg.token}` };
    },
  };
}

/** Runs one contender in this process, as told by the JSON config in `process.argv[2]`. */
export async function runContender(start: (cfg: ContenderConfig, hooks: Hooks) => Running | Promise<Running>): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as ContenderConfig;
  const counts = new Array<number>(cfg.handlers).fill(0);
  let finished = 0;
  let firstAt = 0;
  let firstCpu = 0;
  let firstThreads: Record<string, number> = {};
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const errors: string[] = [];
  let failSync!: (err: Error) => void;
  const syncFailed = new Promise<never>((_, reject) => (failSync = reject));
  syncFailed.catch(() => {});
  const hooks: Hooks = {
    modified(h) {
      const n = ++counts[h];
      if (n === 1 && h === 0) {
        firstAt = performance.now();
        firstCpu = cpuMs();
        firstThreads = threadCpuMs();
      }
      if (n === cfg.events && ++finished === counts.length) resolveDone();
    },
    error(err) {
      errors.push(message(err));
      // Any error before the sync fails the run at once: client-node reports a failed list as an
      // `error` event and never syncs; kube-informer's reflector would retry the same list forever.
      failSync(new Error(errors[errors.length - 1]));
    },
  };

  const before = collect();
  const cpu0 = cpuMs();
  const t0 = performance.now();
  const startedMs = t0;
  let running: Running | undefined;
  try {
    running = await start(cfg, hooks);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not synced after ${cfg.syncTimeoutMs} ms`)), cfg.syncTimeoutMs);
    });
    await Promise.race([running.synced, timeout, syncFailed]);
    clearTimeout(timer);
    if (running.size() < cfg.pods) throw new Error(`synced with ${running.size()} of ${cfg.pods} objects`);
  } catch (err) {
    // An error the client reported is the message itself; anything else (the timeout) lists what was reported.
    const text = err instanceof Error ? err.message : String(err);
    const seen = errors.length > 0 && !errors.includes(text) ? ` (reported: ${errors.slice(-3).join(' | ')})` : '';
    print({ type: 'error', message: `${text}${seen}`, cached: running?.size() ?? 0 });
    process.exit(0);
  }
  const sinceStartMs = performance.now();
  const syncMs = sinceStartMs - t0;
  const syncCpuMs = cpuMs() - cpu0;
  const after = collect();
  print({ type: 'synced', syncMs, syncCpuMs, cached: running.size(), heapBefore: before.heapUsed, heapAfter: after.heapUsed, rss: after.rss, runtime: process.version, startedMs, sinceStartMs });

  if (cfg.mode === 'watch') {
    await done;
    const seconds = (performance.now() - firstAt) / 1000;
    const cpu = cpuMs() - firstCpu;
    const mem = collect();
    const threads = threadCpuMs();
    for (const name of Object.keys(threads)) threads[name] -= firstThreads[name] ?? 0;
    print({ type: 'done', events: cfg.events, seconds, cpuMs: cpu, heapAfter: mem.heapUsed, rss: mem.rss, threadCpuMs: threads });
    process.exit(0);
  }
  if (cfg.mode === 'steady') {
    const sample = (): void => {
      const mem = collect();
      print({ type: 'sample', t: (performance.now() - t0) / 1000, heap: mem.heapUsed, rss: mem.rss, events: counts[0], cpuMs: cpuMs() - cpu0 });
    };
    sample();
    setInterval(sample, cfg.sampleMs);
    process.stdin.on('end', () => process.exit(0)).resume();
    return;
  }
  process.exit(0);
}
