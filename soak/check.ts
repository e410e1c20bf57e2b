// The soak's exact checks: cache vs server, handler replays, history anomalies, rejections, leftovers, heap.

import type { HistoryAnomaly } from './recorder.js';

/** One key on which two states disagree. */
export interface Divergence {
  /** Which comparison: `store` (the informer's cache) or `handler:<name>` (a replayed handler history). */
  readonly where: string;
  /** `namespace/name`. */
  readonly key: string;
  /** The server's resource version, or undefined when the server does not have the key. */
  readonly server: string | undefined;
  /** The informer's (or handler's) resource version, or undefined when it does not have the key. */
  readonly informer: string | undefined;
}

/**
 * Every key on which `actual` differs from `expected` (missing, extra, or another resource version),
 * sorted by key so the first divergence of two runs with one seed is the same.
 */
export function diffStates(where: string, expected: ReadonlyMap<string, string>, actual: ReadonlyMap<string, string>): Divergence[] {
  const out: Divergence[] = [];
  for (const [key, rv] of expected) {
    const got = actual.get(key);
    if (got !== rv) out.push({ where, key, server: rv, informer: got });
  }
  for (const [key, rv] of actual) {
    if (!expected.has(key)) out.push({ where, key, server: undefined, informer: rv });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Describes a divergence in one line. */
export function describeDivergence(d: Divergence): string {
  if (d.informer === undefined) return `${d.where}: ${d.key} is missing (server has rv ${d.server})`;
  if (d.server === undefined) return `${d.where}: ${d.key} (rv ${d.informer}) no longer exists on the server`;
  return `${d.where}: ${d.key} has rv ${d.informer}, server has rv ${d.server}`;
}

/** Describes a history anomaly in one line. */
export function describeAnomaly(handler: string, a: HistoryAnomaly): string {
  return `handler:${handler}: ${a.kind} on ${a.key} at call ${a.call} (${a.detail})`;
}

/** Counts of `process.getActiveResourcesInfo()` by resource type. */
export type ResourceCounts = Record<string, number>;

/** The process's active handles and requests (sockets, servers, timers, ...), counted by type. */
export function activeResources(): ResourceCounts {
  const counts: ResourceCounts = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

/** What `now` holds beyond `baseline`: `{ TCPSocketWrap: 2 }` means two sockets more than before. */
export function resourcesBeyond(baseline: ResourceCounts, now: ResourceCounts): ResourceCounts {
  const extra: ResourceCounts = {};
  for (const [type, n] of Object.entries(now)) {
    const more = n - (baseline[type] ?? 0);
    if (more > 0) extra[type] = more;
  }
  return extra;
}

/**
 * Polls until nothing beyond `baseline` is active or `withinMs` passed (closing sockets take a few
 * turns of the event loop); returns what is still extra (empty when clean).
 */
export async function waitForResourcesToSettle(baseline: ResourceCounts, withinMs: number): Promise<ResourceCounts> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const extra = resourcesBeyond(baseline, activeResources());
    if (Object.keys(extra).length === 0 || performance.now() >= deadline) return extra;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Names of the process events that had listeners, with counts (to spot listeners left behind). */
export function processListeners(): ResourceCounts {
  const counts: ResourceCounts = {};
  for (const name of process.eventNames()) counts[String(name)] = process.listenerCount(name);
  return counts;
}

/** Heap usage after a full GC, in bytes; undefined when the process was not started with `--expose-gc`. */
export function heapAfterGc(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return undefined;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Counts unhandled promise rejections and uncaught exceptions while installed. An uncaught exception
 * is recorded instead of crashing the soak, so the run still reports its seed.
 */
export class ProcessGuard {
  #rejections: unknown[] = [];
  #exceptions: unknown[] = [];
  readonly #onRejection = (reason: unknown): void => {
    this.#rejections.push(reason);
  };
  readonly #onException = (err: unknown): void => {
    this.#exceptions.push(err);
  };

  /** Starts counting. */
  install(): this {
    process.on('unhandledRejection', this.#onRejection);
    process.on('uncaughtException', this.#onException);
    return this;
  }

  /** Stops counting (removes both listeners). */
  uninstall(): void {
    process.off('unhandledRejection', this.#onRejection);
    process.off('uncaughtException', this.#onException);
  }

  /** Unhandled rejections seen so far. */
  get rejections(): readonly unknown[] {
    return this.#rejections;
  }

  /** Uncaught exceptions seen so far. */
  get exceptions(): readonly unknown[] {
    return this.#exceptions;
  }
}

/** Heap samples over a run, after GC. */
export interface HeapReport {
  /** Heap after GC once the informer had synced and the server's history was full, in bytes. */
  readonly baselineBytes: number;
  /** Heap after GC once the informer stopped, in bytes. */
  readonly finalBytes: number;
  /** Largest heap sampled during the run (after GC), in bytes. */
  readonly peakBytes: number;
  /** `finalBytes - baselineBytes`. */
  readonly growthBytes: number;
  /** Samples taken. */
  readonly samples: number;
}

/** Builds a {@link HeapReport}; undefined without samples (no `--expose-gc`). */
export function heapReport(baseline: number | undefined, samples: readonly number[], final: number | undefined): HeapReport | undefined {
  if (baseline === undefined || final === undefined) return undefined;
  const peak = Math.max(baseline, final, ...samples);
  return { baselineBytes: baseline, finalBytes: final, peakBytes: peak, growthBytes: final - baseline, samples: samples.length + 2 };
}

/** Formats bytes as MB with one decimal. */
export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
