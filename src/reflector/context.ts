// The state one reflector shares between its list, watch and streaming-list steps (internal).

import type { Clock } from '../core/clock.js';
import type { ListerWatcher } from '../listwatch/types.js';
import type { Backoff } from './backoff.js';
import { retryAfterMs } from './errors.js';
import type { ResourceVersionGuard } from './resource-version-guard.js';
import type { ReflectorRecorder } from './stats.js';
import type { KnownObjectsGetter, ReflectorPhase, ReflectorStore } from './types.js';

/** Mutable request-planning state of a reflector (internal). */
export interface ReflectorState {
  /** The held version was refused by a LIST (410 or too large): the next list asks for `""`. */
  rvUnavailable: boolean;
  /** A `"0"` list came back paginated: the server has no watch cache for it, so keep paging. */
  paginatedResult: boolean;
  /** A regression was rejected: the next list asks for the held version with `NotOlderThan`. */
  repairPending: boolean;
}

/** Everything the reflector's steps share (internal; not exported from the package). */
export interface ReflectorContext<T> {
  readonly name: string;
  readonly lw: ListerWatcher<T>;
  readonly store: ReflectorStore<T>;
  readonly clock: Clock;
  readonly random: () => number;
  readonly keyFunc: (obj: T) => string;
  readonly knownObjects: KnownObjectsGetter<T> | undefined;
  readonly expectedKind: string | undefined;
  readonly expectedApiVersion: string | undefined;
  /** The explicit page size, or undefined for client-go's rules. */
  readonly pageSize: number | undefined;
  readonly minWatchTimeoutMs: number;
  readonly listTimeoutMs: number;
  readonly watchIdleMarginMs: number;
  readonly guard: ResourceVersionGuard;
  readonly recorder: ReflectorRecorder;
  readonly backoff: Backoff;
  readonly state: ReflectorState;
}

/** The wait before retrying after `err`: the next backoff step, but never less than its Retry-After. */
export function delayAfter<T>(ctx: ReflectorContext<T>, err: unknown): number {
  return Math.max(ctx.backoff.next(), retryAfterMs(err));
}

/** A random watch `timeoutSeconds` in `[min, 2*min)` (at least 1). */
export function watchTimeoutSeconds<T>(ctx: ReflectorContext<T>): number {
  const min = ctx.minWatchTimeoutMs;
  const r = Math.min(Math.max(ctx.random(), 0), 0.999_999);
  return Math.max(1, Math.floor((min + r * min) / 1000));
}

const phases = new WeakMap<object, ReflectorPhase>();

/** Marks where `err` happened, for the report of the error that ends a cycle; returns `err`. */
export function tagPhase<E>(err: E, phase: ReflectorPhase): E {
  if (err !== null && typeof err === 'object' && !phases.has(err)) phases.set(err, phase);
  return err;
}

/** The phase `err` was tagged with, or `fallback`. */
export function phaseOf(err: unknown, fallback: ReflectorPhase): ReflectorPhase {
  return (err !== null && typeof err === 'object' && phases.get(err)) || fallback;
}
