// The soak's fault scheduler: a seeded plan of faults, injected one at a time, each timed until the informer recovers.

import type { FakeApiServer, FaultSpec } from '../src/testing/index.js';
import type { Prng } from './prng.js';

/** Every fault the soak knows, by name (the `--faults` list). */
export const FAULT_KINDS = [
  'watch-end',
  'compaction-410',
  'http-500',
  'http-429',
  'stall',
  'malformed-line',
  'duplicate-event',
  'regressed-event',
  'server-restart',
] as const;

/** One fault kind. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** What each kind does, for reports. */
export const FAULT_DESCRIPTIONS: Record<FaultKind, string> = {
  'watch-end': 'watch ended mid-stream (clean end or dropped connection, after 1–30 events)',
  'compaction-410': 'history compacted, watches closed: the re-watch gets an in-stream 410 Expired',
  'http-500': 'the next list or watch answers 500',
  'http-429': 'the next list or watch answers 429 with Retry-After: 1',
  stall: 'the next watch answers 200 and then sends nothing (a silent, half-open connection)',
  'malformed-line': 'a truncated JSON line in the watch stream',
  'duplicate-event': 'an event sent twice in a row',
  'regressed-event': 'a DELETED event carrying an older resource version (kubernetes #58545)',
  'server-restart': 'every connection dropped, the server listens again with its state kept',
};

const STREAM_KINDS = new Set<FaultKind>(['watch-end', 'malformed-line', 'duplicate-event', 'regressed-event']);

/** Parses a `--faults` value: `all`, `none`, or a comma list of kinds. Throws on an unknown kind. */
export function parseFaultKinds(value: string): FaultKind[] {
  if (value === 'all') return [...FAULT_KINDS];
  if (value === 'none' || value === '') return [];
  return value.split(',').map((s) => {
    const k = s.trim() as FaultKind;
    if (!FAULT_KINDS.includes(k)) throw new Error(`unknown fault "${s}"; known: ${FAULT_KINDS.join(', ')}`);
    return k;
  });
}

/** One fault of the plan and what became of it. */
export interface FaultRecord {
  /** The fault. */
  readonly kind: FaultKind;
  /** The workload write after which it is due. */
  readonly dueAtWrite: number;
  /** Events into the next watch at which a stream fault fires (0 for other kinds). */
  readonly afterEvents: number;
  /** Abrupt end (dropped connection) for `watch-end`. */
  readonly abrupt: boolean;
  /** When it was injected (ms since the soak started), or undefined when never injected. */
  injectedAtMs?: number;
  /** When a request consumed it (ms since the soak started). */
  consumedAtMs?: number;
  /** The resource version the informer must reach to have got past the fault. */
  targetRv?: bigint;
  /** When the informer had recovered (ms since the soak started), or undefined when it never did. */
  recoveredAtMs?: number;
}

/** Options of {@link FaultScheduler}. */
export interface FaultSchedulerOptions {
  /** The kinds to draw from. Empty = no faults. */
  kinds: readonly FaultKind[];
  /** Workload writes (after the prefill). */
  events: number;
  /** One fault per this many writes, on average. Default 500. */
  everyWrites?: number;
}

/**
 * Draws the fault plan from the seed (which kind, after which write, its parameters), injects each
 * fault when its write is reached, and records when a request consumed it and when the informer had
 * caught up with the server's resource version as of the fault. Faults are injected in plan order,
 * and one for a request only once the previous one was consumed (so they never pile up in the
 * server's queue): a stalled watch delays the faults behind it, and the workload may end first.
 */
export class FaultScheduler {
  readonly #server: FakeApiServer;
  readonly #plan: FaultRecord[] = [];
  readonly #specs = new Map<FaultRecord, FaultSpec>();
  readonly #t0: number;
  #next = 0;

  /** Builds the plan at once from `prng`; `t0` is the soak's start (`performance.now()`). */
  constructor(server: FakeApiServer, prng: Prng, options: FaultSchedulerOptions, t0: number) {
    this.#server = server;
    this.#t0 = t0;
    if (options.kinds.length === 0) return;
    const every = options.everyWrites ?? 500;
    const count = Math.floor(options.events / every);
    for (let i = 0; i < count; i++) {
      const kind = prng.pick(options.kinds);
      const dueAtWrite = i * every + prng.int(Math.floor(every / 4), every - 1);
      const afterEvents = prng.int(1, 30);
      const abrupt = prng.chance(0.5);
      this.#plan.push({ kind, dueAtWrite, afterEvents, abrupt });
    }
  }

  /** The plan and its outcomes so far. */
  records(): readonly FaultRecord[] {
    return this.#plan;
  }

  /** Faults of the plan not injected yet. */
  remaining(): number {
    return this.#plan.length - this.#next;
  }

  /** True while an injected fault still waits in the server's queue. */
  hasPending(): boolean {
    return this.#specs.size > 0;
  }

  /** Injects every fault that is due at `writes`. */
  async maybeInject(writes: number): Promise<void> {
    this.#pollConsumption();
    while (this.#next < this.#plan.length && writes >= this.#plan[this.#next].dueAtWrite) {
      const f = this.#plan[this.#next];
      const spec = this.#spec(f);
      if (spec !== undefined && this.#specs.size > 0) return;
      this.#next++;
      f.injectedAtMs = this.#now();
      if (spec !== undefined) {
        this.#server.injectFault(spec);
        this.#specs.set(f, spec);
        // Client-node never re-watches on its own: end the open watches (as a server timeout would) so
        // the fault reaches the next request of every contender alike.
        this.#server.endWatches();
        continue;
      }
      if (f.kind === 'compaction-410') {
        this.#server.compact();
        this.#server.endWatches();
      } else if (f.kind === 'server-restart') {
        await this.#server.restart();
      }
      this.#consumed(f);
    }
  }

  /** Marks recoveries: a consumed fault is recovered once `progressRv` reaches its target. */
  observe(progressRv: bigint): void {
    this.#pollConsumption();
    for (let i = 0; i < this.#next; i++) {
      const f = this.#plan[i];
      if (f.recoveredAtMs === undefined && f.targetRv !== undefined && progressRv >= f.targetRv) f.recoveredAtMs = this.#now();
    }
  }

  /** Caps targets at the final resource version (no more writes come) and marks recoveries then. */
  settle(finalRv: bigint, progressRv: bigint): void {
    this.#pollConsumption();
    for (let i = 0; i < this.#next; i++) {
      const f = this.#plan[i];
      if (f.targetRv !== undefined && f.targetRv > finalRv) f.targetRv = finalRv;
    }
    this.observe(progressRv);
  }

  /** Marks every consumed, unrecovered fault recovered now (the exact check just passed). */
  markAllRecovered(): void {
    for (let i = 0; i < this.#next; i++) {
      const f = this.#plan[i];
      if (f.consumedAtMs !== undefined && f.recoveredAtMs === undefined) f.recoveredAtMs = this.#now();
    }
  }

  #pollConsumption(): void {
    if (this.#specs.size === 0) return;
    const pending = new Set(this.#server.pendingFaults());
    for (const [f, spec] of this.#specs) {
      if (pending.has(spec)) continue;
      this.#specs.delete(f);
      this.#consumed(f);
    }
  }

  #consumed(f: FaultRecord): void {
    f.consumedAtMs = this.#now();
    // A stream fault fires `afterEvents` events into the watch that consumed it; that watch replays from
    // the informer's resource version, at most the server's now, one event per resource version. Any
    // fault is only behind the informer once it has seen at least one newer event (or list).
    const stream = STREAM_KINDS.has(f.kind) ? BigInt(f.afterEvents) : 0n;
    f.targetRv = BigInt(this.#server.resourceVersion()) + stream + 1n;
  }

  #spec(f: FaultRecord): FaultSpec | undefined {
    switch (f.kind) {
      case 'watch-end':
        return { type: 'endWatch', afterEvents: f.afterEvents, abrupt: f.abrupt };
      case 'http-500':
        return { verb: ['list', 'watch'], type: 'status', code: 500 };
      case 'http-429':
        return { verb: ['list', 'watch'], type: 'status', code: 429, retryAfterSeconds: 1 };
      case 'stall':
        return { verb: 'watch', type: 'stall', sendHeaders: true };
      case 'malformed-line':
        return { type: 'malformedLine', afterEvents: f.afterEvents };
      case 'duplicate-event':
        return { type: 'duplicateEvent', afterEvents: f.afterEvents };
      case 'regressed-event':
        return { type: 'regressedEvent', afterEvents: f.afterEvents };
      default:
        return undefined;
    }
  }

  #now(): number {
    return performance.now() - this.#t0;
  }
}
