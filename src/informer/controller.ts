// The low-level controller: a reflector feeding a DeltaFIFO, the loop that pops it, and processDeltas.

import { realClock, type Clock } from '../core/clock.js';
import { TaskScope } from '../core/task-scope.js';
import { DeletedFinalStateUnknown } from '../core/keys.js';
import { getResourceVersion } from '../core/types.js';
import { toError } from '../core/errors.js';
import { channels, publish } from '../observability/channels.js';
import { isFifoClosedError } from '../fifo/errors.js';
import { stageListPage, type DeltaFIFO } from '../fifo/delta-fifo.js';
import type { ChangeProcessFunc, Delta, DeltaType, Deltas, PopProcessFunc } from '../fifo/types.js';
import { IndexedStore, putByKey } from '../store/index.js';
import type { Store } from '../store/types.js';
import type { ListerWatcher } from '../listwatch/types.js';
import { Reflector, REFLECTOR_OPTION_SCHEMA, STAGE_LIST_PAGE } from '../reflector/index.js';
import { omitRules, validateOptions } from '../core/options.js';
import type { ReflectorEvents } from '../reflector/events.js';
import type { ReflectorOptions, ReflectorStats } from '../reflector/types.js';
import { AlreadyStartedError } from '../core/errors.js';

/**
 * What {@link processDeltas} calls after each change is applied to the store. Any callback may return
 * a promise; the next delta is then applied only after it settles (a rejection stops the batch).
 */
export interface DeltaHandler<T> {
  /** The object was not in the store and now is. */
  onAdd(obj: T, isInInitialList: boolean): void | Promise<void>;
  /** The object replaced a cached one; `isSync` when this is a re-delivery of an unchanged object. */
  onUpdate(oldObj: T, newObj: T, isSync: boolean): void | Promise<void>;
  /** The object (or a tombstone) was removed from the store. */
  onDelete(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

/**
 * True when an update is a re-delivery rather than a change: a `Sync` delta (resync, or a relist
 * without `Replaced`), or a `Replaced` delta whose object carries the same, non-empty resource version
 * as the cached one (a relist that found it unchanged).
 *
 * Deliberately narrower than client-go HEAD, which treats any same-resource-version update as a sync
 * (including two objects without resource versions): an `Added`/`Updated` from a watch is always a change.
 */
export function isSyncDelta<T>(delta: Delta<T>, oldObj: T, newObj: T): boolean {
  return isSyncChange(delta.type, oldObj, newObj);
}

function isSyncChange<T>(type: DeltaType, oldObj: T, newObj: T): boolean {
  if (type === 'Sync') return true;
  if (type !== 'Replaced') return false;
  const oldRv = getResourceVersion(oldObj);
  return oldRv !== undefined && oldRv !== '' && oldRv === getResourceVersion(newObj);
}

function isThenable(value: unknown): value is PromiseLike<void> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<void>).then === 'function';
}

function applyChange<T>(
  handler: DeltaHandler<T>,
  store: Store<T>,
  type: DeltaType,
  object: T | DeletedFinalStateUnknown<T>,
  isInInitialList: boolean,
  key: string | undefined,
): void | Promise<void> {
  if (type === 'Deleted') {
    store.delete(object);
    return handler.onDelete(object);
  }
  if (object instanceof DeletedFinalStateUnknown) {
    // Only a Deleted delta may carry a tombstone; anything else is a queue bug, not user data.
    throw new TypeError(`a ${type} delta carried a DeletedFinalStateUnknown for ${object.key}`);
  }
  let old: T | undefined;
  if (key !== undefined && store instanceof IndexedStore) {
    // One lookup and one write with the queue's key, instead of building and hashing it twice.
    old = putByKey(store as IndexedStore<T>, key, object);
  } else {
    old = store.get(object);
    if (old !== undefined) store.update(object);
    else store.add(object);
  }
  if (old !== undefined) return handler.onUpdate(old, object, isSyncChange(type, old, object));
  return handler.onAdd(object, isInInitialList);
}

/**
 * Applies one key's deltas, oldest first, to `store` and calls `handler` after each (client-go's
 * `processDeltas`): `Added`/`Updated`/`Replaced`/`Sync` become an update when the store already holds
 * the key and an add otherwise; `Deleted` removes it. Handlers therefore always see the store already
 * updated. Runs synchronously while every callback is synchronous; returns a promise as soon as one
 * returns a promise. A throw (from the store or a handler) stops the remaining deltas of the batch.
 *
 * `key`, when given, is the deltas' key under the store's own key function (what a `DeltaFIFO` with
 * the same key function hands its `PopProcessFunc`): a store made by `newStore`/`newIndexer` then
 * looks the object up and writes it without computing the key again; its first such write checks the
 * key against the store's key function and throws `INVALID_OPTION` when they differ. Default: computed
 * by the store.
 */
export function processDeltas<T>(
  handler: DeltaHandler<T>,
  store: Store<T>,
  deltas: Deltas<T>,
  isInInitialList: boolean,
  key?: string,
): void | Promise<void> {
  return processFrom(handler, store, deltas, isInInitialList, key, 0);
}

function processFrom<T>(
  handler: DeltaHandler<T>,
  store: Store<T>,
  deltas: Deltas<T>,
  isInInitialList: boolean,
  key: string | undefined,
  from: number,
): void | Promise<void> {
  for (let i = from; i < deltas.length; i++) {
    const delta = deltas[i];
    const result = applyChange(handler, store, delta.type, delta.object, isInInitialList, key);
    if (isThenable(result)) {
      return Promise.resolve(result).then(() => processFrom(handler, store, deltas, isInInitialList, key, i + 1));
    }
  }
}

/**
 * {@link processDeltas} of the one delta `{ type, object }` outside the initial list, without the list:
 * what `processDeltas(handler, store, [{ type, object }], false, key)` does, in the form a
 * {@link ChangeProcessFunc} takes it (`DeltaFIFO.park`'s single change, `ControllerConfig.processChange`).
 */
export function processChange<T>(
  handler: DeltaHandler<T>,
  store: Store<T>,
  type: 'Added' | 'Updated' | 'Deleted',
  object: T | DeletedFinalStateUnknown<T>,
  key?: string,
): void | Promise<void> {
  return applyChange(handler, store, type, object, false, key);
}

/** A running informer loop (client-go's `cache.Controller`). */
export interface InformerController {
  /**
   * Lists, watches and processes until `signal` aborts, then resolves once the watch is closed and
   * every timer cleared. Rejects when processing fails (a handler error): the watch is aborted first,
   * so the rejection comes promptly and leaves nothing running. A second call rejects with
   * `ALREADY_STARTED`.
   */
  run(signal: AbortSignal): Promise<void>;
  /** True once the first full list has been popped and processed. */
  hasSynced(): boolean;
  /** The reflector's resource version (`""` before the first list). */
  lastSyncResourceVersion(): string;
}

/** Configuration of {@link newController} (client-go's `cache.Config`). */
export interface ControllerConfig<T> {
  /** The queue the reflector fills and the loop pops. It is closed when the controller stops. */
  queue: DeltaFIFO<T>;
  /** Where objects come from. */
  listerWatcher: ListerWatcher<T>;
  /** Called with each popped key's deltas; a throw or rejection stops the controller with that error. */
  process: PopProcessFunc<T>;
  /**
   * Called instead of `process` with a single change the queue hands over at once (an event of a watch
   * the loop keeps up with: see `DeltaFIFO.park`); must do what `process([{ type, object }], false,
   * key)` would. When `process` is `processDeltas(handler, store, ...)`, give `(type, object, key) =>
   * processChange(handler, store, type, object, key)` (see {@link processChange}): the watch's common
   * event then skips the one-delta list. Default: `process` takes every change.
   */
  processChange?: ChangeProcessFunc<T>;
  /** Name in errors and diagnostics. Default `'controller'`. */
  name?: string;
  /** How often the reflector asks for a resync, in ms. Default 0 (never). */
  resyncPeriodMs?: number;
  /** Asked before each resync; false skips it. Default: always. */
  shouldResync?: () => boolean;
  /** Time and timers. Default `realClock`. */
  clock?: Clock;
  /**
   * How long stopping waits for a `process` call already running (a handler's async work), in ms.
   * Past it, `run()` settles anyway and the call's outcome is only published on the
   * `informerHandlerError` channel. Default 500.
   */
  stopGraceMs?: number;
  /**
   * Whether the controller owns the ListerWatcher: after stopping, it calls `close()` on it, once, when
   * it has one (`newListWatch`'s releases its pooled idle sockets; it stays usable). Set `false` when
   * something else created it and closes it (the `SharedIndexInformer` does). Default true.
   */
  closeListerWatcher?: boolean;
  /** Called once, synchronously, when {@link InformerController.hasSynced} turns true. */
  onSynced?: () => void;
  /** More reflector options (page size, backoff, watch list, onError hooks, known objects, ...). */
  reflector?: Omit<ReflectorOptions<T>, 'name' | 'resyncPeriodMs' | 'shouldResync' | 'clock'>;
}

/** An {@link InformerController} that also exposes its reflector's events and counters. */
export interface ReflectorController extends InformerController {
  /** The reflector's counters (all zero before `run()`). */
  reflectorStats(): ReflectorStats | undefined;
  /** The reflector's events (subscribe before `run()` to miss none). */
  readonly events: ReflectorEvents;
  /** Asks the reflector for a relist now (see `Reflector.requestRelist`). */
  requestRelist(): void;
}

/**
 * Calls `close()` on a ListerWatcher that has one (like `newListWatch`'s, which releases its pooled
 * idle sockets); a throw there is published on the `reflectorError` channel, never raised.
 */
export function closeListerWatcher(lw: unknown): void {
  const close = (lw as { close?: unknown } | null)?.close;
  if (typeof close !== 'function') return;
  try {
    (close as () => void).call(lw);
  } catch (err) {
    publish(channels.reflectorError, { name: 'listerWatcher.close', error: toError(err), phase: 'close', action: 'warn' });
  }
}

class ProcessController<T> implements ReflectorController {
  readonly #config: ControllerConfig<T>;
  readonly #clock: Clock;
  readonly #name: string;
  readonly #reflector: Reflector<T>;
  #started = false;
  #synced = false;

  constructor(config: ControllerConfig<T>) {
    this.#config = config;
    this.#clock = config.clock ?? realClock;
    this.#name = config.name ?? 'controller';
    const queue = config.queue;
    const store = {
      // A change may be processed inside these calls (DeltaFIFO.park): the first one can sync the queue.
      add: (obj: T) => {
        queue.add(obj);
        this.#checkSynced();
      },
      update: (obj: T) => {
        queue.update(obj);
        this.#checkSynced();
      },
      delete: (obj: T) => {
        queue.delete(obj);
        this.#checkSynced();
      },
      replace: (items: T[], rv: string) => {
        queue.replace(items, rv);
        this.#checkSynced();
      },
      resync: () => queue.resync(),
      // The keys of a paged list's pages, computed while the next page is on its way.
      [STAGE_LIST_PAGE]: (items: readonly T[] | undefined, first: boolean) => stageListPage(queue, items, first),
    };
    this.#reflector = new Reflector<T>(config.listerWatcher, store, {
      ...config.reflector,
      name: this.#name,
      resyncPeriodMs: config.resyncPeriodMs ?? 0,
      shouldResync: config.shouldResync,
      clock: this.#clock,
    });
  }

  get events(): ReflectorEvents {
    return this.#reflector.events;
  }

  hasSynced(): boolean {
    return this.#config.queue.hasSynced();
  }

  lastSyncResourceVersion(): string {
    return this.#reflector.lastSyncResourceVersion();
  }

  reflectorStats(): ReflectorStats | undefined {
    return this.#reflector.stats();
  }

  requestRelist(): void {
    this.#reflector.requestRelist();
  }

  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(this.#name);
    this.#started = true;
    // The reflector is ours and stops promptly, so it is always waited for; the process loop runs user
    // code, so once stopping it gets `stopGraceMs` (a child scope with that grace) and is then abandoned.
    const scope = new TaskScope({
      name: this.#name,
      signal,
      clock: this.#clock,
      onLateFailure: (error) => publish(channels.informerHandlerError, { name: this.#name, error, late: true }),
    });
    const queue = this.#config.queue;
    const closeQueue = (): void => queue.close();
    if (scope.signal.aborted) closeQueue();
    else scope.signal.addEventListener('abort', closeQueue, { once: true });
    const loop = scope.child('process loop', { graceMs: this.#config.stopGraceMs ?? 500 });
    void scope.spawn('reflector', (s) => this.#reflector.run(s));
    void loop.spawn('process loop', (s) => this.#processLoop(s));
    try {
      await scope.closed();
    } finally {
      if (this.#config.closeListerWatcher !== false) closeListerWatcher(this.#config.listerWatcher);
    }
  }

  #checkSynced(): void {
    if (this.#synced || !this.#config.queue.hasSynced()) return;
    this.#synced = true;
    this.#config.onSynced?.();
  }

  async #processLoop(signal: AbortSignal): Promise<void> {
    const queue = this.#config.queue;
    const process = this.#config.process;
    const guarded: PopProcessFunc<T> = (deltas, isInInitialList, key) => {
      // Items still queued when the controller stops are dropped, not processed.
      if (signal.aborted) return;
      return process(deltas, isInInitialList, key);
    };
    const processChange = this.#config.processChange;
    const guardedChange: ChangeProcessFunc<T> | undefined =
      processChange === undefined ? undefined : (type, object, key) => (signal.aborted ? undefined : processChange(type, object, key));
    while (!signal.aborted) {
      // What is queued is drained without a promise per key. On an empty queue the loop parks: a change
      // that comes while it waits is processed at once by the producer's call (see DeltaFIFO.park).
      const taken = queue.tryPop(guarded);
      if (taken === undefined) {
        try {
          await queue.park(guarded, guardedChange);
        } catch (err) {
          if (isFifoClosedError(err)) return;
          throw err;
        }
      } else if (!Array.isArray(taken)) {
        await taken;
      }
      this.#checkSynced();
    }
  }
}

/**
 * Creates a low-level controller (client-go's `cache.New(config)`): a reflector lists and watches
 * into `config.queue`, and a loop pops each key's deltas and hands them to `config.process`.
 *
 * Unlike client-go, a failing `process` stops the controller: `run()` aborts the reflector, closes
 * the queue and rejects with that error (never a hang behind a wait on the watch, kubernetes #93641).
 */
export function newController<T>(config: ControllerConfig<T>): ReflectorController {
  validateOptions('newController', config, {
    queue: 'object',
    listerWatcher: 'object',
    process: 'function',
    processChange: 'function',
    name: 'string',
    resyncPeriodMs: 'duration',
    shouldResync: 'function',
    clock: 'clock',
    stopGraceMs: 'duration',
    closeListerWatcher: 'boolean',
    onSynced: 'function',
    reflector: omitRules(REFLECTOR_OPTION_SCHEMA, 'name', 'resyncPeriodMs', 'shouldResync', 'clock'),
  });
  return new ProcessController(config);
}
