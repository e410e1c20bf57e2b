// newInformer / newIndexerInformer: one handler, called inline by the process loop (no buffering).

import type { Clock } from '../core/clock.js';
import { deletionHandlingMetaNamespaceKeyFunc, keyOf } from '../core/keys.js';
import { DeltaFIFO } from '../fifo/delta-fifo.js';
import type { ListerWatcher } from '../listwatch/types.js';
import type { ReflectorOptions } from '../reflector/types.js';
import { omitRules, validateOptions, type OptionSchemaFor } from '../core/options.js';
import { REFLECTOR_OPTION_SCHEMA } from '../reflector/index.js';
import { newIndexer, newStore } from '../store/store.js';
import type { Indexer, Indexers, Store } from '../store/types.js';
import { HandlerError, type HandlerEventKind } from './errors.js';
import type { ResourceEventHandler } from './handler.js';
import { newController, processDeltas, type InformerController, type DeltaHandler } from './controller.js';

/** Options of {@link newInformer}. */
export interface InformerOptions<T> {
  /** How often every cached object is re-delivered as an update, in ms. Default 0 (never). */
  resyncPeriodMs?: number;
  /** Applied to every object before it enters the cache (e.g. `stripManagedFields`). Default: none. */
  transform?: (obj: T) => T;
  /** Name in errors and diagnostics. Default `'informer'`. */
  name?: string;
  /** Time and timers. Default `realClock`. */
  clock?: Clock;
  /** How long stopping waits for a handler call already running, in ms. Default 500. */
  stopGraceMs?: number;
  /** After stopping, call `close()` on the ListerWatcher when it has one. Default true. */
  closeListerWatcher?: boolean;
  /** Told about every list/watch error the reflector recovers from. Default: none. */
  onWatchError?: ReflectorOptions<T>['onError'];
  /** More reflector options (page size, backoff, watch list, ...). Default: the reflector's. */
  reflector?: Omit<ReflectorOptions<T>, 'name' | 'resyncPeriodMs' | 'shouldResync' | 'clock' | 'onError'>;
}

const NEW_INFORMER_OPTION_SCHEMA = {
  resyncPeriodMs: 'duration',
  transform: 'function',
  name: 'string',
  clock: 'clock',
  stopGraceMs: 'duration',
  closeListerWatcher: 'boolean',
  onWatchError: 'function',
  reflector: omitRules(REFLECTOR_OPTION_SCHEMA, 'name', 'resyncPeriodMs', 'shouldResync', 'clock', 'onError'),
} as const satisfies OptionSchemaFor<InformerOptions<unknown>>;

/** What {@link newInformer} returns. */
export interface InformerResult<T> {
  /** The cache the controller keeps in sync. */
  store: Store<T>;
  /** Runs the list/watch/process loop. */
  controller: InformerController;
}

/** What {@link newIndexerInformer} returns. */
export interface IndexerInformerResult<T> {
  /** The indexed cache the controller keeps in sync. */
  indexer: Indexer<T>;
  /** Runs the list/watch/process loop. */
  controller: InformerController;
}

/** Options of {@link newIndexerInformer}: {@link InformerOptions} plus the indexers. */
export interface IndexerInformerOptions<T> extends InformerOptions<T> {
  /** Index functions by name. Required (may be `{}`). */
  indexers: Indexers<T>;
}

/**
 * Calls the user's handler, turning a throw or a rejection into a {@link HandlerError}. Promises are
 * returned as they are so the process loop awaits them: the handler runs strictly one call at a time.
 */
function inlineHandler<T>(handler: ResourceEventHandler<T>, name: string): DeltaHandler<T> {
  const guard = (kind: HandlerEventKind, obj: unknown, call: () => void | Promise<void>): void | Promise<void> => {
    const wrap = (err: unknown): never => {
      throw new HandlerError(name, kind, keyOf(obj), err);
    };
    let result: void | Promise<void>;
    try {
      result = call();
    } catch (err) {
      return wrap(err);
    }
    if (result !== undefined && result !== null && typeof (result).then === 'function') {
      return Promise.resolve(result).then(() => undefined, wrap);
    }
  };
  // The handler gets the store's objects as they are, typed read-only (see ResourceEventHandler).
  const h = handler as ResourceEventHandler<unknown>;
  return {
    onAdd: (obj, isInInitialList) => guard('add', obj, () => h.onAdd?.(obj, isInInitialList)),
    onUpdate: (oldObj, newObj) => guard('update', newObj, () => h.onUpdate?.(oldObj, newObj)),
    onDelete: (obj) => guard('delete', obj, () => h.onDelete?.(obj)),
  };
}

function build<T>(
  lw: ListerWatcher<T>,
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  options: InformerOptions<T>,
): InformerController {
  const name = options.name ?? 'informer';
  const queue = new DeltaFIFO<T>({ knownObjects: store, emitDeltaTypeReplaced: true, transform: options.transform });
  const inline = inlineHandler(handler, name);
  return newController<T>({
    queue,
    listerWatcher: lw,
    name,
    process: (deltas, isInInitialList) => processDeltas(inline, store, deltas, isInInitialList),
    resyncPeriodMs: options.resyncPeriodMs ?? 0,
    clock: options.clock,
    stopGraceMs: options.stopGraceMs,
    closeListerWatcher: options.closeListerWatcher,
    reflector: { ...options.reflector, knownObjects: store, onError: options.onWatchError },
  });
}

/**
 * A non-shared informer (client-go's `NewInformer`): a store kept in sync with the server, and a
 * controller that calls `handler` inline for each change — one call at a time, in order, an async
 * handler awaited before the next change is processed.
 *
 * Handler errors propagate: a handler that throws or rejects stops the controller, whose `run()`
 * rejects (within the stop grace) with a {@link HandlerError} (code `HANDLER_FAILED`) whose `cause`
 * is the handler's error. The watch is aborted and no timer is left behind.
 *
 * @example
 * ```ts
 * const { store, controller } = newInformer(lw, { onAdd: (pod) => queue.add(key(pod)) });
 * await controller.run(signal); // rejects if a handler fails
 * ```
 */
export function newInformer<T>(
  lw: ListerWatcher<T>,
  handler: ResourceEventHandler<T>,
  options: InformerOptions<T> = {},
): InformerResult<T> {
  validateOptions('newInformer', options, NEW_INFORMER_OPTION_SCHEMA);
  const store = newStore<T>(deletionHandlingMetaNamespaceKeyFunc);
  return { store, controller: build(lw, handler, store, options) };
}

/** Like {@link newInformer}, with an {@link Indexer} as the cache (client-go's `NewIndexerInformer`). */
export function newIndexerInformer<T>(
  lw: ListerWatcher<T>,
  handler: ResourceEventHandler<T>,
  options: IndexerInformerOptions<T>,
): IndexerInformerResult<T> {
  validateOptions('newIndexerInformer', options, { ...NEW_INFORMER_OPTION_SCHEMA, indexers: 'object' });
  const indexer = newIndexer<T>(deletionHandlingMetaNamespaceKeyFunc, options.indexers);
  return { indexer, controller: build(lw, handler, indexer, options) };
}
