// The vocabulary of the reflector's state machine: results it is fed, plans, store operations, reports.

import { toError } from '../core/errors.js';
import type { ListOptions, ObjectList, WatchEvent } from '../listwatch/types.js';
import type { WatchListVerdict } from '../listwatch/index.js';
import { ResourceVersionGuardDisabledError } from './errors.js';
import type { RegressionInfo } from './errors.js';
import type { AbsentEvent, BookmarkEvent, ListedEvent, ReflectorErrorEvent, WatchEventReport } from './events.js';
import type { ReflectorAction, ReflectorPhase } from './types.js';
import type { Versions, VersionsAfter } from './versions.js';
import type { EventRules, EventVerdict } from './watch-event.js';

/** A persistent list, newest first: appending never copies (a state's pages or streamed events). */
export interface Chain<V> {
  /** The newest value. */
  readonly last: V;
  /** Everything before it. */
  readonly before: Chain<V> | undefined;
}

/** Appends `value` to a chain. */
export function chain<V>(before: Chain<V> | undefined, value: V): Chain<V> {
  return { last: value, before };
}

/** A chain's values, oldest first. */
export function chainValues<V>(c: Chain<V> | undefined): V[] {
  const out: V[] = [];
  for (let at = c; at !== undefined; at = at.before) out.push(at.last);
  return out.reverse();
}

/**
 * The per-watch rule of client-go v0.36: a watch opened at `""` or `"0"` first sends synthetic ADDED
 * events in no version order, so it adopts no version until its first non-ADDED event.
 */
export interface Session {
  /** The watch started at a concrete version (or continues a streamed list): every event counts. */
  readonly fromStart: boolean;
  /** A MODIFIED, DELETED or BOOKMARK has been seen on this watch. */
  readonly sawNonAdded: boolean;
  /**
   * An event other than an ERROR has arrived on this watch. A watch whose first event is an ERROR was
   * refused by the server that answered it (e.g. 410 too old resource version): it never opened.
   */
  readonly delivered: boolean;
}

/** A store operation, applied by the driver in order; the first that throws is fed back as `storeFailed`. */
export type StoreOp<T> =
  | { readonly kind: 'replace'; readonly items: T[]; readonly resourceVersion: string }
  | { readonly kind: 'add' | 'update' | 'delete'; readonly object: T }
  | { readonly kind: 'resourceVersion'; readonly resourceVersion: string }
  | { readonly kind: 'resync' };

/**
 * What happened to the request in flight, or a timer, as the driver saw it:
 * - `page`: a list request answered (a first page, a next page, or a whole list);
 * - `opened`: a watch request answered; `event`: the open stream delivered one event;
 * - `closed`: the server ended the stream (how long it lasted, how many events it carried, the
 *   `timeoutSeconds` it asked for, in ms);
 * - `timedOut`: no answer within the limit (a list past `listTimeoutMs`, a watch that did not connect,
 *   a stream silent past its idle limit);
 * - `failed`: the request or the stream threw; `storeFailed`: a store operation threw;
 * - `slept`: the backoff ended; `resyncDue`: the resync timer fired; `aborted`: the signal aborted;
 * - `relistDue`: a relist was asked for (`Reflector.requestRelist`): the open watch, or the watch being
 *   opened, was dropped for it.
 */
export type Result<T> =
  | { readonly kind: 'page'; readonly page: ObjectList<T> }
  | { readonly kind: 'opened' }
  | { readonly kind: 'event'; readonly event: WatchEvent<T> }
  | { readonly kind: 'closed'; readonly lastedMs: number; readonly received: number; readonly requestedTimeoutMs: number }
  | { readonly kind: 'timedOut'; readonly afterMs: number }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'storeFailed'; readonly error: unknown; readonly op: StoreOp<T>['kind'] }
  | { readonly kind: 'slept' }
  | { readonly kind: 'resyncDue' }
  | { readonly kind: 'relistDue' }
  | { readonly kind: 'aborted' };

/** Every result kind, for exhaustive tests. */
export const RESULT_KINDS = [
  'page', 'opened', 'event', 'closed', 'timedOut', 'failed', 'storeFailed', 'slept', 'resyncDue', 'relistDue', 'aborted',
] as const satisfies readonly Result<unknown>['kind'][];

/**
 * The request a state asks for: a list (a first page, a next page, a relist at a version or at `""`),
 * a watch (classic or streaming; the driver adds `timeoutSeconds`), the next event of the open stream,
 * a backoff sleep (never shorter than `atLeastMs`, a Retry-After; `then` says what it defers: `recheck`
 * is the wait of a resource not served, which a relist asked for ends at once), or stop.
 */
export type Plan =
  | { readonly kind: 'list'; readonly options: ListOptions }
  | { readonly kind: 'watch'; readonly options: ListOptions; readonly streaming: boolean }
  | { readonly kind: 'read' }
  | { readonly kind: 'sleep'; readonly atLeastMs: number; readonly then: 'relist' | 'rewatch' | 'recheck' }
  | { readonly kind: 'stop'; readonly error: Error | undefined };

/**
 * What the reflector reports; the driver publishes each as the event of the same name, except
 * `watchRefused` (the open watch's first event was an ERROR: it ends as refused, see `WatchEndedEvent`).
 */
export type Report =
  | { readonly kind: 'listed'; readonly payload: Omit<ListedEvent, 'failuresBefore'> }
  | { readonly kind: 'event'; readonly payload: WatchEventReport }
  | { readonly kind: 'bookmark'; readonly payload: BookmarkEvent }
  | { readonly kind: 'error'; readonly payload: ReflectorErrorEvent }
  | { readonly kind: 'regression'; readonly payload: RegressionInfo }
  | { readonly kind: 'watchRefused' }
  | { readonly kind: 'absent'; readonly payload: AbsentEvent }
  | { readonly kind: 'watchListUnsupported'; readonly error: Error };

/** The reflector's options, as the machine needs them. */
export interface MachineEnv<T> extends EventRules<T> {
  /** Explicit list page size, or undefined for client-go's rules. */
  readonly pageSize: number | undefined;
  /**
   * Start each cycle with a streaming list: `true`, `false`, or `'auto'` — unless `watchListVerdict`
   * says the server refused them; under `'auto'` a refusal is reported as `watchListUnsupported`, and a
   * paged list follows, not as a failure.
   */
  readonly useWatchList: boolean | 'auto';
  /** Under `'auto'`: what is known of the server's streaming lists, read at each cycle's start. Default: unknown. */
  readonly watchListVerdict?: () => WatchListVerdict;
  /** Stop (with the error) at the end of the first cycle instead of backing off (`listAndWatch`). */
  readonly oneCycle: boolean;
  /**
   * The cached copy of `key` (`knownObjects`) when its resource version is `resourceVersion`, else
   * undefined: a read without side effects. A list keeps that copy instead of the one just decoded, so
   * a relist does not hold a second copy of every unchanged object until it is complete.
   */
  readonly unchanged?: (key: string, resourceVersion: string) => T | undefined;
  /** What a list answered 404 (the resource is not served) does: retry with backoff, or turn `absent`. */
  readonly onResourceMissing: 'retry' | 'absent';
  /** The resource version of the cached copy of `key` (`knownObjects`): a read without side effects. */
  readonly storedVersion: ((key: string) => string | undefined) | undefined;
}

/** A watch that closes sooner than this, with no event, is a very short watch (client-go's rule). */
export const VERY_SHORT_WATCH_MS = 1000;

/** The empty list of a transition without store operations or reports (shared, frozen). */
const NONE: readonly never[] = Object.freeze([]);

/** Collects one transition's store operations and reports (the machine's only mutable helper). */
export class Effects<T, S> {
  /** The reflector's options. */
  readonly env: MachineEnv<T>;
  // Made on first use: most transitions (an event in the watch phase) fill few, or none.
  #ops: StoreOp<T>[] | undefined;
  #reports: Report[] | undefined;

  constructor(env: MachineEnv<T>) {
    this.env = env;
  }

  /** Adds a store operation. */
  op(op: StoreOp<T>): void {
    if (this.#ops === undefined) this.#ops = [op];
    else this.#ops.push(op);
  }

  /** Adds a report. */
  report(report: Report): void {
    if (this.#reports === undefined) this.#reports = [report];
    else this.#reports.push(report);
  }

  /** Adds an error report. */
  error(error: unknown, phase: ReflectorPhase, action: ReflectorAction, requestFailed: boolean): void {
    this.report({ kind: 'error', payload: { name: this.env.name, error: toError(error), phase, action, requestFailed } });
  }

  /** What became of one non-bookmark event. */
  seen(v: EventVerdict<T>, outcome: 'applied' | 'collected' | 'dropped'): void {
    const key = v.kind === 'change' ? v.key : undefined;
    const resourceVersion = v.kind === 'change' || v.kind === 'foreign' ? v.resourceVersion : '';
    this.report({ kind: 'event', payload: { type: v.type, key, resourceVersion, outcome } });
  }

  /** Takes a version rule's answer; the first non-integer version is reported once (the guard turns off). */
  versions(after: VersionsAfter): Versions {
    if (after.disabledBy !== undefined) {
      this.error(new ResourceVersionGuardDisabledError(this.env.name, after.disabledBy), 'guard', 'warn', false);
    }
    return after.versions;
  }

  /** The transition to `state`, with everything collected. */
  to(state: S): { readonly state: S; readonly ops: readonly StoreOp<T>[]; readonly reports: readonly Report[] } {
    return { state, ops: this.#ops ?? NONE, reports: this.#reports ?? NONE };
  }
}
