// Options of the SharedIndexInformer, with their defaults and validation.

import type { Clock } from '../core/clock.js';
import type { LoggerOption } from '../core/log.js';
import { cacheMutationDetectorEnabled, type CacheMutationDetectorOptions } from '../mutation/detector.js';
import type { ReflectorErrorContext, ReflectorOptions } from '../reflector/types.js';
import type { Indexers } from '../store/types.js';
import { InvalidOptionError, omitRules, validateOptions, type OptionSchemaFor } from '../core/options.js';
import { REFLECTOR_OPTION_SCHEMA } from '../reflector/index.js';
import type { HandlerError } from './errors.js';
import type { IndexFuncError } from '../store/errors.js';
import type { HealthThresholds } from '../health/index.js';
import type { ErrorPolicy } from './listener.js';

/** Options of `SharedIndexInformer`. Every field is optional. */
export interface SharedIndexInformerOptions<T> {
  /** Name in errors, health and diagnostics. Default `'informer'`. */
  name?: string;
  /**
   * Default resync period of handlers, and the informer's resync check period, in ms. `0` = never; an
   * informer created with 0 never resyncs, whatever its handlers ask. Default 0.
   */
  resyncPeriodMs?: number;
  /** Index functions by name. More can be added later with `addIndexers`. Default `{}`. */
  indexers?: Indexers<T>;
  /**
   * Applied once to every object as it enters the queue, before anyone else sees it (e.g.
   * `stripManagedFields`). Not applied to tombstones or resyncs. Default: none.
   */
  transform?: (obj: T) => T;
  /**
   * Check that nobody mutates objects the cache hands out. Default: `true` when the environment
   * variable `KUBE_CACHE_MUTATION_DETECTOR` is `true`, else `false`.
   */
  detectMutations?: boolean;
  /**
   * Whether an update shares its unchanged parts with the cached object it replaces: after a watch event
   * that changed one annotation, `newObj.spec === oldObj.spec` in `onUpdate`, and the cache keeps only
   * the parts that changed. The garbage collector then has far less to copy and mark per event: CPU per
   * event and heap growth under churn fall (docs/operations.md, "Tuning CPU").
   *
   * Warning: `oldObj` and `newObj` then share objects, so changing a part of the old object an update
   * hands you changes the cached one. Cache objects are read-only; copy before changing either (set
   * `detectMutations` in tests to catch it). Objects a `transform` froze keep their own parts.
   * Default true.
   */
  shareUnchanged?: boolean;
  /**
   * Tuning of the mutation detector when detection is on (how often it compares, how long it keeps
   * copies, how many changed fields it lists). Defaults: the mutation room's (`periodMs` 1000, as in
   * client-go; `retentionMs` 120 000; `maxChanges` 20). The detector also compares once more
   * when the informer stops, so a mutation made less than `periodMs` before the stop still makes
   * `run()` reject with `CACHE_MUTATED`.
   */
  mutationDetection?: Pick<CacheMutationDetectorOptions, 'periodMs' | 'retentionMs' | 'maxChanges'>;
  /**
   * What a handler error does. `'stop'` (default): stop the informer; `run()` rejects with a
   * `HandlerError` (code `HANDLER_FAILED`) whose `cause` is the handler's error. `'report'`: pass the
   * error to `onError` and keep delivering (the failed notification counts as handled, so the
   * handler's `hasSynced` still turns true). `'report'` requires `onError`.
   */
  errorPolicy?: ErrorPolicy;
  /**
   * Receives handler errors under `errorPolicy: 'report'`, and index-function failures
   * ({@link IndexFuncError}: that one change is skipped, the cache keeps the object's previous state).
   * If it throws, the informer stops as under `'stop'`. Default: none.
   */
  onError?: (err: HandlerError | IndexFuncError) => void;
  /** Told about every list/watch error the reflector recovers from (client-go's watch error handler). Default: none. */
  onWatchError?: (err: Error, context: ReflectorErrorContext) => void;
  /** Time and timers. Default `realClock`. */
  clock?: Clock;
  /**
   * How long stopping waits for handler callbacks already running, in ms; past it `run()` settles
   * anyway (their late outcome is only published on the `informerHandlerError` channel). Default 500.
   */
  stopGraceMs?: number;
  /**
   * Whether the informer owns the ListerWatcher it was given: after stopping it calls its `close()`,
   * once, when it has one (`newListWatch`'s releases its pooled idle sockets and stays usable). Pass
   * `false` when you close it yourself (the factory does, for the ones it creates). Default true.
   */
  closeListerWatcher?: boolean;
  /** Thresholds of `health()`. Defaults: see {@link HealthThresholds}. */
  health?: HealthThresholds;
  /**
   * Before the first sync, this many list/watch failures in a row that retrying cannot fix (HTTP 400,
   * 401, 403, 404, 405, 406, 415, 422; a KubeConfig, TLS or DNS failure) make every sync wait reject
   * with the last one; the informer keeps retrying, and a later wait succeeds once it syncs. Default 3.
   */
  syncFailureThreshold?: number;
  /**
   * Before the first sync, once the API server has been unreachable (connection refused, host or
   * network unreachable, connect timeout) for this long, in ms, every sync wait rejects with the last
   * error; the informer keeps retrying. Default 10 000.
   */
  syncUnreachableMs?: number;
  /**
   * Where failures are logged: list/watch errors (warn; the first of each kind at once, then a count
   * every 30 s), sync waits giving up and fatal errors (error), recoveries (info). `false` prints
   * nothing. Default: `console`.
   */
  logger?: LoggerOption;
  /**
   * What a list answered 404 does — the resource is not served: its CRD was deleted, or is not created
   * yet. `'retry'`: an error like any other, retried with backoff; `/readyz` is not ready meanwhile,
   * and before the first sync, sync waits reject after `syncFailureThreshold` of them. `'absent'`: the
   * informer turns `absent` (`health().state`) — every cached object is delivered to the handlers as a
   * delete, the watch stops, one warning is logged — and counts as synced and ready with an empty cache
   * (`health().detail` names the resource); it lists again with the backoff (at once on `relist()`),
   * and when the resource is served again the list's objects arrive as adds (one info log).
   *
   * Warning: a misspelt resource answers 404 too: under `'absent'` it is logged (a warning at start,
   * saying it was never served) and shown in `health().detail`, but it never makes the informer unready.
   * Default `'retry'`.
   */
  onResourceMissing?: 'retry' | 'absent';
  /** More reflector options (page size, backoff, watch list, timeouts). Default: the reflector's. */
  reflector?: Omit<ReflectorOptions<T>, 'name' | 'resyncPeriodMs' | 'shouldResync' | 'clock' | 'onError' | 'knownObjects' | 'onResourceMissing'>;
}

/** Options of `addEventHandler`. */
export interface AddEventHandlerOptions {
  /**
   * This handler's resync period in ms (0 = never). Below 1000 it is raised to 1000; after the
   * informer started, below the informer's check period it is raised to it. Default: the informer's
   * `resyncPeriodMs`.
   */
  resyncPeriodMs?: number;
  /** The handler's name in errors and health. Default `handler-<n>`. */
  name?: string;
}

/** Reads `KUBE_CACHE_MUTATION_DETECTOR` (client-go's switch). */
export function mutationDetectionFromEnv(): boolean {
  return cacheMutationDetectorEnabled();
}

/** The rules of {@link AddEventHandlerOptions} (the sharded informer's `addEventHandler` takes the same). */
export const ADD_EVENT_HANDLER_OPTION_SCHEMA = { resyncPeriodMs: 'duration', name: 'string' } as const satisfies OptionSchemaFor<AddEventHandlerOptions>;

/** The rules of {@link SharedIndexInformerOptions} (the factory's `informerOptions` takes most of them). */
export const INFORMER_OPTION_SCHEMA = {
  name: 'string',
  resyncPeriodMs: 'duration',
  indexers: 'object',
  transform: 'function',
  detectMutations: 'boolean',
  shareUnchanged: 'boolean',
  mutationDetection: { periodMs: 'positiveDuration', retentionMs: 'duration', maxChanges: 'positiveCount' } satisfies OptionSchemaFor<SharedIndexInformerOptions<unknown>['mutationDetection']>,
  errorPolicy: ['stop', 'report'],
  onError: 'function',
  onWatchError: 'function',
  clock: 'clock',
  stopGraceMs: 'duration',
  closeListerWatcher: 'boolean',
  health: { watchStallMs: 'duration', slowHandlerMs: 'duration', watchDisconnectedMs: 'duration' } satisfies OptionSchemaFor<HealthThresholds>,
  syncFailureThreshold: 'positiveCount',
  syncUnreachableMs: 'duration',
  logger: 'logger',
  onResourceMissing: ['retry', 'absent'],
  reflector: omitRules(REFLECTOR_OPTION_SCHEMA, 'name', 'resyncPeriodMs', 'shouldResync', 'clock', 'onError', 'knownObjects', 'onResourceMissing'),
} as const satisfies OptionSchemaFor<SharedIndexInformerOptions<unknown>>;

/** Throws {@link InvalidOptionError} for out-of-range options. */
export function validateInformerOptions<T>(options: SharedIndexInformerOptions<T>): void {
  validateOptions('SharedIndexInformer', options as SharedIndexInformerOptions<unknown>, INFORMER_OPTION_SCHEMA);
  if (options.errorPolicy === 'report' && typeof options.onError !== 'function') {
    throw new InvalidOptionError("SharedIndexInformer: errorPolicy 'report' needs an onError hook: handler errors must go somewhere");
  }
}
