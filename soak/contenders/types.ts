// What the soak needs from an informer under test: start, read its cache, read its progress, stop.

import type { FakeApiServer } from '../../src/testing/index.js';
import type { SoakHandler } from '../recorder.js';

/** Counters a contender keeps about the errors it was told of. */
export interface ContenderStats {
  /** Errors reported through the contender's error hook. */
  readonly errors: number;
  /** The same, by error code (or HTTP status, or error name). */
  readonly errorsByCode: Readonly<Record<string, number>>;
  /** Times the contender restarted its list/watch after an error (its own retries, or ours for client-node). */
  readonly restarts: number;
}

/** One informer under test, driving the soak's handlers. */
export interface Contender {
  /** Name in reports (`kube-informer`, `client-node`). */
  readonly name: string;
  /** Starts listing and watching in the background. */
  start(): void;
  /** True once the first list was delivered. */
  synced(): boolean;
  /** The cache: `namespace/name → resourceVersion`. */
  cache(): Map<string, string>;
  /** The resource version the contender's watch has reached (`0n` when unknown). */
  progressRv(): bigint;
  /** Error counters. */
  stats(): ContenderStats;
  /**
   * Stops and resolves once the contender says it is stopped. Resolves with the fatal error when the
   * contender failed on its own (e.g. `run()` rejected), else undefined.
   */
  stop(): Promise<Error | undefined>;
  /** Abort listeners still attached to signals the contender was given (0 when it takes none). */
  leftoverListeners(): number;
}

/** What a contender factory gets. */
export interface ContenderContext {
  /** The fake API server to list and watch. */
  readonly server: FakeApiServer;
  /** The handlers to register, in order. */
  readonly handlers: ReadonlyArray<{ readonly name: string; readonly handler: SoakHandler }>;
}

/** Builds a contender (not started). */
export type ContenderFactory = (ctx: ContenderContext) => Contender;

/** Parses a decimal resource version to a bigint; `0n` for anything else. */
export function rvToBigInt(rv: string | undefined): bigint {
  return typeof rv === 'string' && /^[0-9]+$/.test(rv) ? BigInt(rv) : 0n;
}

/** Counts an error under its code, HTTP status or name. */
export function errorLabel(err: unknown): string {
  const e = err as { code?: unknown; statusCode?: unknown; name?: unknown } | null;
  if (e !== null && typeof e === 'object') {
    if (typeof e.code === 'string' || typeof e.code === 'number') return String(e.code);
    if (typeof e.statusCode === 'number') return `HTTP ${e.statusCode}`;
    if (typeof e.name === 'string') return e.name;
  }
  return typeof err;
}
