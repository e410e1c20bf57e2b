// A SharedIndexInformer's write path: how the deltas the process loop pops are written into its cache
// (one by one, as a single watched change, or as a first list taken whole), and what follows each write:
// the read-your-writes waiters are told, the mutation detector keeps a copy, the catch-up waiters check,
// and the handlers get their notification.

import type { Clock } from '../core/clock.js';
import { keyOf, type DeletedFinalStateUnknown } from '../core/keys.js';
import type { MutationDetector } from '../mutation/detector.js';
import { channels, publish } from '../observability/channels.js';
import type { CatchUpWaiters, ObservedWaiters } from '../observed/index.js';
import { IndexFuncError } from '../store/errors.js';
import type { Indexer } from '../store/types.js';
import type { ChangeProcessFunc, Deltas, PopProcessFunc } from '../fifo/types.js';
import { processChange, processDeltas, type DeltaHandler } from './controller.js';
import type { HandlerError } from './errors.js';
import { FirstList, shareUnchanged } from './perf/index.js';
import type { SharedProcessor } from './processor.js';

/** The informer's parts a {@link CacheWrites} tells of each write. */
export interface CacheWritesDeps<T> {
  /** The informer's name, on the diagnostics channel. */
  readonly name: string;
  /** The informer's cache. */
  readonly indexer: Indexer<T>;
  /** The handlers' listeners. */
  readonly processor: SharedProcessor<T>;
  /** The waiters of `awaitObserved` and `awaitDeleted`. */
  readonly observed: ObservedWaiters;
  /** The waiters of `awaitResourceVersion` and `relist`. */
  readonly catchUp: CatchUpWaiters;
  /** The clock of each notification's `at`. */
  readonly clock: Clock;
  /** The `shareUnchanged` option: an update shares its unchanged parts with the object it replaces. */
  readonly share: boolean;
  /**
   * `errorPolicy: 'report'`: each delta is applied on its own, and an index function that throws skips
   * only its delta (see {@link CacheWrites.processReportingIndexErrors}).
   */
  readonly reportIndexErrors: boolean;
  /** The `onError` option: index-function failures under `errorPolicy: 'report'`. */
  readonly onError: ((err: HandlerError | IndexFuncError) => void) | undefined;
  /**
   * The queue's key is the indexer's, so the write path may use it: true when nothing transforms the
   * objects (both key them by namespace/name, but the queue keys an object before its transform, as
   * client-go's).
   */
  readonly keyed: boolean;
}

/** The informer's {@link DeltaHandler}: the process loop calls it after each write into the cache. */
export class CacheWrites<T> implements DeltaHandler<T> {
  readonly #name: string;
  readonly #indexer: Indexer<T>;
  readonly #processor: SharedProcessor<T>;
  readonly #observed: ObservedWaiters;
  readonly #catchUp: CatchUpWaiters;
  readonly #clock: Clock;
  readonly #share: boolean;
  readonly #reportIndexErrors: boolean;
  readonly #onError: ((err: HandlerError | IndexFuncError) => void) | undefined;
  readonly #keyed: boolean;
  readonly #cached = (key: string): unknown => this.#indexer.getByKey(key);
  #detector: MutationDetector | undefined;

  /** `deps` are the informer's parts that hear of each write. */
  constructor(deps: CacheWritesDeps<T>) {
    this.#name = deps.name;
    this.#indexer = deps.indexer;
    this.#processor = deps.processor;
    this.#observed = deps.observed;
    this.#catchUp = deps.catchUp;
    this.#clock = deps.clock;
    this.#share = deps.share;
    this.#reportIndexErrors = deps.reportIndexErrors;
    this.#onError = deps.onError;
    this.#keyed = deps.keyed;
    // A watched change the queue hands over at once (nearly every event of a watch the informer keeps
    // up with) skips the one-delta list; 'report' applies each delta on its own and keeps `process`.
    this.processChange = this.#reportIndexErrors
      ? undefined
      : (type, object, key) => processChange(this, this.#indexer, type, object, this.#keyed ? key : undefined);
  }

  /** The process loop's `process`: writes one key's deltas into the cache. */
  readonly process: PopProcessFunc<T> = (deltas, isInInitialList, key) =>
    this.#reportIndexErrors
      ? this.processReportingIndexErrors(deltas, isInInitialList, this.#keyed ? key : undefined)
      : processDeltas(this, this.#indexer, deltas, isInInitialList, this.#keyed ? key : undefined);

  /** The process loop's `processChange` (see `ControllerConfig.processChange`); none under 'report'. */
  readonly processChange: ChangeProcessFunc<T> | undefined;

  /**
   * The queue's sink for a fresh first list taken whole (perf/first-list.ts), while `eligible()`, and
   * only where the one-by-one hand-over would do exactly the same (nothing transforms the objects).
   */
  firstList(eligible: () => boolean): FirstList<T> | undefined {
    if (!this.#keyed) return undefined;
    return new FirstList<T>({
      indexer: this.#indexer,
      eligible: () => !this.#reportIndexErrors && this.#detector === undefined && this.#observed.size === 0 && eligible(),
      onAdded: (objects, isInInitialList, newest) => this.addedList(objects, isInInitialList, newest),
    });
  }

  /** The mutation detector of the run, once it detects: it keeps a copy of every object written. */
  get detector(): MutationDetector | undefined {
    return this.#detector;
  }

  set detector(detector: MutationDetector | undefined) {
    this.#detector = detector;
  }

  /** The object was not in the cache and now is. */
  onAdd(obj: T, isInInitialList: boolean): void {
    this.#observed.applied(obj, keyOf, this.#cached);
    this.#detector?.addObject(keyOf(obj) ?? '', obj);
    this.#catchUp.check();
    if (this.#processor.wants('add', false)) this.#processor.distribute({ kind: 'add', obj, isInInitialList, at: this.#clock.now() }, false);
  }

  /** The object replaced a cached one (`isSync`: re-delivered unchanged). */
  onUpdate(oldObj: T, newObj: T, isSync: boolean): void {
    // Before anyone sees newObj (the detector's copy, waiters, handlers): see perf/share-unchanged.ts.
    if (this.#share) shareUnchanged(oldObj, newObj);
    this.#observed.applied(newObj, keyOf, this.#cached);
    this.#detector?.addObject(keyOf(newObj) ?? '', newObj);
    this.#catchUp.check();
    if (this.#processor.wants('update', isSync)) this.#processor.distribute({ kind: 'update', oldObj, newObj, at: this.#clock.now() }, isSync);
  }

  /** The object (or a tombstone) left the cache. */
  onDelete(obj: T | DeletedFinalStateUnknown<T>): void {
    this.#observed.applied(obj, keyOf, this.#cached);
    this.#catchUp.check();
    if (this.#processor.wants('delete', false)) this.#processor.distribute({ kind: 'delete', obj, at: this.#clock.now() }, false);
  }

  /**
   * A first list taken whole (perf/first-list.ts) is the indexer's contents: what `onAdd` of each
   * object would do, in one pass. The watermark moves once (nobody waits in `awaitObserved`, or the
   * list would have gone one by one); the catch-up waiters are checked once (what they read, the
   * queue's size and the synced version, does not change while the adds are told); the notifications
   * share one clock reading, the moment the list was applied.
   */
  addedList(objects: readonly T[], isInInitialList: boolean, newest: string | undefined): void {
    this.#observed.appliedList(newest);
    this.#catchUp.check();
    if (!this.#processor.wants('add', false)) return;
    const at = this.#clock.now();
    for (let i = 0; i < objects.length; i++) this.#processor.distribute({ kind: 'add', obj: objects[i], isInInitialList, at }, false);
  }

  /**
   * Under `errorPolicy: 'report'`, applies each delta on its own so that an index function that throws
   * skips only that delta: the store keeps the object's previous state (the failed write changed
   * nothing), the error goes to `onError`, and later deltas of the same key still apply.
   */
  async processReportingIndexErrors(deltas: Deltas<T>, isInInitialList: boolean, key: string | undefined): Promise<void> {
    for (const delta of deltas) {
      try {
        await processDeltas(this, this.#indexer, [delta], isInInitialList, key);
      } catch (err) {
        if (!(err instanceof IndexFuncError)) throw err;
        publish(channels.informerHandlerError, { name: this.#name, error: err });
        this.#onError?.(err);
      }
    }
  }
}
