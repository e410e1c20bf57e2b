// DeltaFIFO: the queue between the reflector and the informer, accumulating each key's changes in order.

import { InvalidObjectError, KubeInformerError } from '../core/errors.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, type KeyFunc } from '../core/keys.js';
import { InvalidOptionError, validateOptions } from '../core/options.js';
import { preview } from '../core/preview.js';
import { RingBuffer } from '../runtime/ring-buffer.js';
import { FifoClosedError, TransformFailedError } from './errors.js';
import type { ChangeProcessFunc, Delta, DeltaFIFOOptions, DeltaType, Deltas, KeyListerGetter, PopProcessFunc } from './types.js';
import { ListStaging, type FirstListSink } from './list-staging.js';
import { abortedPop, Turn, type Parked } from './turn.js';

/**
 * Internal (not exported by the package): offers `fifo` a page of a paged list in progress — `first`
 * starts a new list, `undefined` items drop what was staged — so that the `replace` ending the list
 * finds the keys of the objects it was given already computed (the reflector's `STAGE_LIST_PAGE`). Keys
 * only: nothing is queued, and `replace` uses a staged key only for the very object it was computed for,
 * at the same place in the list; the rest it computes as before.
 */
// Assigned once, by DeltaFIFO's static block (it reaches the private fields).
export let stageListPage: <T>(fifo: DeltaFIFO<T>, items: readonly T[] | undefined, first: boolean) => void;

/** Internal: gives `fifo` a {@link FirstListSink} (or takes it away). Assigned by DeltaFIFO's static block. */
export let setFirstListSink: <T>(fifo: DeltaFIFO<T>, sink: FirstListSink<T> | undefined) => void;

/**
 * A producer/consumer queue of per-key change lists, with client-go's DeltaFIFO (v0.32) semantics:
 *
 * - each key is queued once, at the position of its first pending change; its changes accumulate in
 *   arrival order and are handed out together by `pop`;
 * - two consecutive `Deleted` collapse into one, keeping the one that carries the most information
 *   (the older, unless the older is a {@link DeletedFinalStateUnknown} tombstone);
 * - `replace` (a full relist) queues `Replaced` (or `Sync`) for every listed item and a `Deleted`
 *   tombstone for every queued or known key the list no longer has;
 * - `resync` queues `Sync` for every known key that has nothing pending;
 * - `hasSynced` turns true once the first `replace`'s items (or, before any replace, the first
 *   add/update/delete) have all been popped and processed.
 *
 * `pop` hands one key's deltas to `process` and waits for it (sync or async). One `pop` processes at
 * a time: a second concurrent `pop` waits its turn (first come, first served). Adds made while
 * `process` runs are kept, in order.
 *
 * Warning: `pop` does not requeue on failure. When `process` throws or rejects, the deltas are gone
 * and `pop` rejects with that very error; the consumer decides what to do (the informer stops).
 *
 * Recovery: after {@link DeltaFIFO.close}, `pop` keeps handing out what is queued and then rejects with
 * a {@link FifoClosedError} (code `FIFO_CLOSED`), also waking every `pop` that was waiting.
 */
export class DeltaFIFO<T> {
  #items = new Map<string, Delta<T>[]>();
  readonly #queue = new RingBuffer<string>();
  #keyFunc: KeyFunc<T>;
  #knownObjects: KeyListerGetter<T> | undefined;
  #replaceType: DeltaType;
  #transformer: ((obj: T) => T) | undefined;
  #populated = false;
  #initialPopulationCount = 0;
  #closed = false;
  /** Who may process the next key: the `pop` holding the turn, those in line, the consumer parked in {@link DeltaFIFO.park}. */
  readonly #turn = new Turn<T>();
  /** The paged list in progress (see {@link stageListPage}) and the consumer's {@link FirstListSink}. */
  readonly #staging = new ListStaging<T>((obj) => this.#keyOf(obj));

  static {
    stageListPage = (fifo, items, first) => fifo.#staging.stage(items, first);
    setFirstListSink = (fifo, sink) => {
      fifo.#staging.sink = sink;
    };
  }

  /**
   * Creates an empty queue; see {@link DeltaFIFOOptions} for the options and their defaults. Throws
   * `INVALID_OPTION` for an option of the wrong type or an unknown one.
   */
  constructor(options: DeltaFIFOOptions<T> = {}) {
    validateOptions('DeltaFIFO', options, { keyFunc: 'function', knownObjects: 'object', emitDeltaTypeReplaced: 'boolean', transform: 'function' });
    this.#keyFunc = options.keyFunc ?? (metaNamespaceKeyFunc);
    this.#knownObjects = options.knownObjects;
    this.#replaceType = options.emitDeltaTypeReplaced === true ? 'Replaced' : 'Sync';
    this.#transformer = options.transform;
  }

  /** Queues an `Added` delta for `obj` (after the transformer). Throws on an object with no key. */
  add(obj: T): void {
    const key = this.#keyOf(obj);
    this.#populated = true;
    this.#offer(key, 'Added', this.#transform(key, obj));
  }

  /** Queues an `Updated` delta for `obj` (after the transformer). Throws on an object with no key. */
  update(obj: T): void {
    const key = this.#keyOf(obj);
    this.#populated = true;
    this.#offer(key, 'Updated', this.#transform(key, obj));
  }

  /**
   * Queues a `Deleted` delta for `obj`, unless the key is unknown: neither queued nor (with
   * `knownObjects`) held by the consumer — then it was already deleted by a relist and nothing is
   * queued. A tombstone may be passed; its own key is used and it is not transformed.
   */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.#keyOf(obj);
    this.#populated = true;
    if (!this.#items.has(key) && (this.#knownObjects === undefined || this.#knownObjects.getByKey(key) === undefined)) {
      return;
    }
    this.#offer(key, 'Deleted', obj instanceof DeletedFinalStateUnknown ? obj : this.#transform(key, obj));
  }

  /**
   * A full relist. Queues `Replaced` (with `emitDeltaTypeReplaced`) or `Sync` for every item, then a
   * `Deleted` carrying a {@link DeletedFinalStateUnknown} for every key the list does not have: first
   * the queued keys, in queue order (the tombstone holds the newest queued object), then the keys of
   * `knownObjects` that have nothing queued, in `listKeys()` order (the tombstone holds the known
   * object, or `undefined` when `getByKey` has none). The first `replace` defines the initial list
   * that {@link DeltaFIFO.hasSynced} waits for. `resourceVersion` is not used by the queue.
   *
   * Every key and transform is computed before anything is queued: when one throws, the queue is
   * left unchanged. An item that is the `knownObjects` copy itself is not transformed again.
   */
  replace(items: readonly T[], resourceVersion: string): void {
    void resourceVersion;
    const n = items.length;
    const keys = new Array<string>(n);
    const staged = this.#staging.take(items, keys);
    let objects: readonly T[];
    try {
      for (let i = staged; i < n; i++) keys[i] = this.#keyOf(items[i]);
      // An item that is the known object itself (a relist keeps the cached copy of an unchanged object,
      // see the reflector's `unchanged`) was transformed when it entered the cache: not again.
      const known = this.#knownObjects;
      objects = this.#transformer === undefined ? items : items.map((item, i) => (known !== undefined && known.getByKey(keys[i]) === item ? item : this.#transform(keys[i], item)));
    } catch (err) {
      this.#staging.drop();
      throw err;
    }
    const known = this.#knownObjects?.listKeys() ?? [];
    // Nothing queued and nothing known (the first list, as a rule): nothing can have been deleted, so
    // the listed keys need no set of their own.
    if (this.#items.size === 0 && known.length === 0) {
      this.#replaceFresh(keys, objects, staged);
      return;
    }
    this.#staging.drop();
    const listed = new Set<string>();
    for (let i = 0; i < n; i++) {
      listed.add(keys[i]);
      this.#enqueue(keys[i], this.#replaceType, objects[i]);
    }

    let queuedDeletions = 0;
    for (const [key, deltas] of this.#items) {
      if (listed.has(key)) continue;
      const newest = deltas[deltas.length - 1];
      // A tombstone after a Deleted would collapse into it (dedup keeps the informative one).
      if (newest.type === 'Deleted') continue;
      const last = newest.object instanceof DeletedFinalStateUnknown ? newest.object.obj : newest.object;
      this.#enqueue(key, 'Deleted', new DeletedFinalStateUnknown<T>(key, last));
      queuedDeletions++;
    }

    for (const key of known) {
      if (listed.has(key) || this.#items.has(key)) continue;
      const obj = this.#knownObjects?.getByKey(key) as T;
      this.#enqueue(key, 'Deleted', new DeletedFinalStateUnknown<T>(key, obj));
      queuedDeletions++;
    }
    this.#populatedWith(listed.size + queuedDeletions);
  }

  /**
   * A replace with nothing queued and nothing known. A parked consumer takes the items at once, one by
   * one, as it takes a change (see {@link DeltaFIFO.park}): the same calls in the same order as `tryPop`
   * would make, without a queue entry per item — a first list of 10 000 objects no longer fills the
   * queue only to empty it. It stops at the first item whose processing does not end synchronously (a
   * promise: the rest is queued behind it; a throw: the consumer gets the error, the rest is queued) or
   * that queued something (a consumer that calls back into the queue: what it queued goes behind the
   * rest of the list, where it would have been). `hasSynced` counts only what is left, plus an item in
   * flight or one that threw.
   */
  #replaceFresh(keys: readonly string[], objects: readonly T[], staged: number): void {
    const n = keys.length;
    if (this.#takeWhole(keys, objects, staged)) return;
    let i = 0;
    /** The last item handed over did not end well and synchronously: it is in flight, or it threw. */
    let unfinished = false;
    while (i < n && this.#canHandOver()) {
      const isInInitialList = !this.hasSynced();
      unfinished = !this.#handOver(keys[i], this.#replaceType, objects[i], isInInitialList);
      i++;
    }
    const later = i < n && this.#items.size > 0 ? this.#takeAll() : undefined;
    for (; i < n; i++) this.#enqueue(keys[i], this.#replaceType, objects[i]);
    // An item in flight is counted until it settles. One that threw stays counted: its consumer has the
    // error, and the list it belonged to was not processed, so the queue never reports it synced (as
    // with `pop`, whose failing consumer never looks at `hasSynced` again).
    this.#populatedWith(this.#items.size + (unfinished ? 1 : 0));
    if (later !== undefined) for (const [key, deltas] of later) for (const d of deltas) this.#enqueue(key, d.type, d.object);
  }

  /**
   * A fresh list handed to the {@link FirstListSink} whole, when there is one and the consumer is
   * parked: the turn is held while it takes it, as for one item. False when it did not (nothing happened).
   */
  #takeWhole(keys: readonly string[], objects: readonly T[], staged: number): boolean {
    const sink = this.#staging.sink;
    if (sink === undefined) return false;
    if (keys.length === 0 || !this.#canHandOver()) {
      sink.drop();
      return false;
    }
    const isInInitialList = !this.hasSynced();
    this.#turn.hold();
    let took: boolean;
    try {
      took = sink.take(keys, objects, staged, isInInitialList);
    } catch (error) {
      // The consumer's own processing failed: it gets the error, as from one item handed over, and the
      // list stays unsynced (see #replaceFresh).
      this.#popped();
      this.#turn.unpark({ error });
      this.#populatedWith(1);
      return true;
    }
    if (!took) {
      this.#turn.letGo();
      return false;
    }
    this.#populatedWith(0);
    this.#popped();
    return true;
  }

  /** Takes every queued key out, in queue order, with its deltas (to queue them again behind others). */
  #takeAll(): Array<[string, Delta<T>[]]> {
    const out: Array<[string, Delta<T>[]]> = [];
    for (let key = this.#queue.shift(); key !== undefined; key = this.#queue.shift()) out.push([key, this.#items.get(key) as Delta<T>[]]);
    this.#items.clear();
    return out;
  }

  /** The first replace sets how many keys must be processed before {@link DeltaFIFO.hasSynced}. */
  #populatedWith(count: number): void {
    if (this.#populated) return;
    this.#populated = true;
    this.#initialPopulationCount = count;
  }

  /**
   * Queues `Sync` for every key of `knownObjects` that has nothing pending (a pending change is newer
   * than what the consumer holds, so a `Sync` would deliver an older state after it). The objects are
   * not transformed again. A no-op without `knownObjects`.
   */
  resync(): void {
    const known = this.#knownObjects;
    if (known === undefined) return;
    for (const k of known.listKeys()) {
      const obj = known.getByKey(k);
      if (obj === undefined) continue;
      const key = this.#keyOf(obj);
      if (this.#items.has(key)) continue;
      this.#enqueue(key, 'Sync', obj);
    }
  }

  /**
   * Takes the oldest queued key and calls `process(deltas, isInInitialList)`, waiting for it when it
   * is async. Resolves with the deltas once `process` finished; rejects with `process`'s own error
   * when it throws or rejects (the deltas are not requeued). Waits while the queue is empty; rejects
   * with a {@link FifoClosedError} (code `FIFO_CLOSED`) when the queue is closed and empty.
   *
   * Only one `pop` runs `process` at a time; concurrent calls wait their turn in call order.
   *
   * `signal` bounds the wait for an item (or a turn): when it aborts first, `pop` rejects with an
   * `AbortedError` (code `ABORTED`) having taken nothing; at once when it has already aborted. Once
   * `process` has been called, the signal no longer matters — `pop` waits for it.
   */
  async pop(process: PopProcessFunc<T>, signal?: AbortSignal): Promise<Deltas<T>> {
    if (signal?.aborted) throw abortedPop(signal);
    const turn = this.#turn;
    if (turn.taken || this.#items.size === 0) {
      if (this.#closed && !turn.taken && this.#items.size === 0) {
        throw new FifoClosedError();
      }
      for (;;) {
        await turn.wait(signal);
        if (this.#items.size > 0) break;
        this.#releaseTurn();
        if (this.#closed) throw new FifoClosedError();
      }
    } else {
      turn.hold();
    }

    return this.#take(process);
  }

  /**
   * {@link DeltaFIFO.pop} without the wait: when no `pop` is running or waiting and a key is queued,
   * takes the oldest and calls `process` at once. Returns the deltas when `process` returned
   * synchronously, a promise settling like `pop`'s when it returned one, and `undefined` when it took
   * nothing (the queue is empty, closed or busy) — then `pop` is the way to wait. A loop that drains
   * what is queued with it saves a promise per key; the order is `pop`'s.
   */
  tryPop(process: PopProcessFunc<T>): Deltas<T> | Promise<Deltas<T>> | undefined {
    if (this.#turn.taken || this.#items.size === 0) return undefined;
    this.#turn.hold();
    return this.#take(process);
  }

  /**
   * Waits, as the queue's one consumer loop, until {@link DeltaFIFO.tryPop} may take something: a key
   * was queued, the turn came free with keys queued, or the queue closed. Meanwhile a change that
   * arrives while nothing is queued and nobody pops (and the initial list is done) is handed to
   * `process` at once, inside the `add`, `update` or `delete` that brought it, without being queued:
   * a consumer that keeps up pays no promise and no queue entry per change — a watch delivering one
   * event per chunk. So are the items of a `replace` that finds nothing queued and nothing known (a
   * first list), one by one, inside the `replace`, with `isInInitialList` as `tryPop` would give it;
   * `hasSynced` turns true when the last has been processed. Order is kept: anything queued is taken
   * by `tryPop` first, and from the first item whose processing is async, or that queues something,
   * the rest of the list is queued.
   *
   * `change`, when given, takes a single change handed over that way (from `add`, `update` or
   * `delete`; not the items of a `replace`) in place of `process([{ type, object }], false, key)`, and
   * must do the same (see {@link ChangeProcessFunc}). Default: `process` takes every change.
   *
   * Rejects with a {@link FifoClosedError} when the queue is closed and empty, and with `process`'s
   * (or `change`'s) own error when a change handed over that way fails (the producer's call returns
   * normally); an async `process` is waited for before it settles. One consumer may park at a time (a
   * second `park` while one waits is `INVALID_OPTION`).
   */
  park(process: PopProcessFunc<T>, change?: ChangeProcessFunc<T>): Promise<void> {
    const turn = this.#turn;
    if (turn.parked !== undefined) return Promise.reject(new InvalidOptionError('DeltaFIFO.park: a consumer is already parked'));
    if (!turn.busy && this.#items.size > 0) return Promise.resolve();
    if (!turn.busy && this.#closed) return Promise.reject(new FifoClosedError());
    // A `pop` holding the turn wakes it when the turn comes free (#releaseTurn).
    return new Promise<void>((resolve, reject) => {
      turn.park({ process, change, settle: (failure) => (failure === undefined ? resolve() : reject(failure.error)) });
    });
  }

  /** Takes the oldest key (the caller holds the turn) and processes it; the turn is released after. */
  #take(process: PopProcessFunc<T>): Deltas<T> | Promise<Deltas<T>> {
    const key = this.#queue.shift() as string;
    const deltas = this.#items.get(key) as Delta<T>[];
    this.#items.delete(key);
    const isInInitialList = !this.hasSynced();
    let result: ReturnType<PopProcessFunc<T>>;
    try {
      result = process(deltas, isInInitialList, key);
    } catch (err) {
      this.#popped();
      throw err;
    }
    if (result !== undefined && result !== null && typeof result.then === 'function') {
      return Promise.resolve(result).then(
        () => {
          this.#popped();
          return deltas;
        },
        (err: unknown) => {
          this.#popped();
          throw err;
        },
      );
    }
    this.#popped();
    return deltas;
  }

  /** A popped key's processing ended. */
  #popped(): void {
    // Counted down only once processing ended, so hasSynced() never turns true while the last
    // initial item is still being handled.
    if (this.#initialPopulationCount > 0) this.#initialPopulationCount--;
    this.#releaseTurn();
  }

  /** How many keys are queued (a key being processed by `pop` no longer counts). */
  get size(): number {
    return this.#items.size;
  }

  /** The newest object (or tombstone) of each queued key, in queue order. A fresh array. */
  list(): Array<T | DeletedFinalStateUnknown<T>> {
    const out: Array<T | DeletedFinalStateUnknown<T>> = [];
    for (const deltas of this.#items.values()) out.push(deltas[deltas.length - 1].object);
    return out;
  }

  /** The queued keys, oldest first (the order `pop` will hand them out). A fresh array. */
  listKeys(): string[] {
    return this.#queue.toArray();
  }

  /** A copy of the deltas queued under `obj`'s key, or `undefined` when none are. */
  get(obj: T | DeletedFinalStateUnknown<T>): Deltas<T> | undefined {
    return this.getByKey(this.#keyOf(obj));
  }

  /** A copy of the deltas queued under `key`, or `undefined` when none are. */
  getByKey(key: string): Deltas<T> | undefined {
    const deltas = this.#items.get(key);
    return deltas === undefined ? undefined : deltas.slice();
  }

  /**
   * The key of an object, a tombstone (its own `key`) or a `Deltas` list (its newest object's key).
   * Throws {@link InvalidObjectError} (code `INVALID_OBJECT`) when there is none.
   */
  keyOf(obj: T | DeletedFinalStateUnknown<T> | Deltas<T>): string {
    if (Array.isArray(obj)) {
      const deltas = obj as Deltas<T>;
      if (deltas.length === 0) throw new InvalidObjectError('an empty Deltas list has no key');
      return this.#keyOf(deltas[deltas.length - 1].object);
    }
    return this.#keyOf(obj as T | DeletedFinalStateUnknown<T>);
  }

  /**
   * True once the first `replace` has been fully popped and processed — or, when an add, update or
   * delete came before any `replace`, right away. Never turns false again.
   */
  hasSynced(): boolean {
    return this.#populated && this.#initialPopulationCount === 0;
  }

  /**
   * Closes the queue: `pop` hands out what is still queued, then rejects with `FIFO_CLOSED`; every
   * waiting `pop` is woken. Later adds are still accepted (and drained). Idempotent.
   */
  close(): void {
    this.#closed = true;
    this.#turn.passOn();
    this.#turn.unpark(undefined);
  }

  /** True after {@link DeltaFIFO.close}. */
  isClosed(): boolean {
    return this.#closed;
  }

  #keyOf(obj: T | DeletedFinalStateUnknown<T>): string {
    if (obj instanceof DeletedFinalStateUnknown) return obj.key;
    try {
      return this.#keyFunc(obj);
    } catch (err) {
      if (err instanceof KubeInformerError) throw err;
      throw new InvalidObjectError(`couldn't compute the key of ${preview(obj)}`, { cause: err });
    }
  }

  #transform(key: string, obj: T): T {
    const transformer = this.#transformer;
    if (transformer === undefined) return obj;
    try {
      return transformer(obj);
    } catch (err) {
      throw new TransformFailedError(key, obj, err);
    }
  }

  /** Appends a delta to `key`, collapsing two trailing deletes, and queues the key when it is new. */
  #enqueue(key: string, type: DeltaType, object: T | DeletedFinalStateUnknown<T>): void {
    const deltas = this.#items.get(key);
    if (deltas === undefined) {
      this.#items.set(key, [{ type, object }]);
      this.#queue.push(key);
      if (!this.#turn.passOn()) this.#turn.unpark(undefined);
      return;
    }
    const lastIndex = deltas.length - 1;
    if (type === 'Deleted' && deltas[lastIndex].type === 'Deleted') {
      // Keep the older delete unless it is a tombstone: a real object says more than a tombstone.
      if (deltas[lastIndex].object instanceof DeletedFinalStateUnknown) deltas[lastIndex] = { type, object };
      return;
    }
    deltas.push({ type, object });
  }

  /** Ends a `pop`'s turn, passing it on when a waiter has something to do (an item, or the close). */
  #releaseTurn(): void {
    this.#turn.release(this.#items.size > 0 || this.#closed);
  }

  /**
   * A change for `key`: processed at once by the parked consumer when nothing is queued, nobody else
   * pops and the initial list is done (see {@link DeltaFIFO.park}); queued otherwise.
   */
  #offer(key: string, type: DeltaType, object: T | DeletedFinalStateUnknown<T>): void {
    if (this.#initialPopulationCount > 0 || !this.#canHandOver()) this.#enqueue(key, type, object);
    else this.#handOver(key, type, object, false);
  }

  /** Whether a change may go to the parked consumer at once: one is parked, nothing is queued, nobody else pops, open. */
  #canHandOver(): boolean {
    return this.#turn.parkedAlone && this.#items.size === 0 && !this.#closed;
  }

  /**
   * Hands one change to the parked consumer (the caller checked {@link DeltaFIFO.#canHandOver}) and
   * accounts for it as `pop` does. True when its processing ended synchronously and well; false when it
   * threw (the consumer is woken with the error) or returned a promise (the consumer waits for it,
   * holding the turn).
   */
  #handOver(key: string, type: DeltaType, object: T | DeletedFinalStateUnknown<T>, isInInitialList: boolean): boolean {
    const parked = this.#turn.parked as Parked<T>;
    this.#turn.hold();
    let result: ReturnType<PopProcessFunc<T>>;
    try {
      // A single change after the initial list goes to the consumer's `change` when it gave one.
      const change = parked.change;
      result = change !== undefined && !isInInitialList && type !== 'Replaced' && type !== 'Sync' ? change(type, object, key) : parked.process([{ type, object }], isInInitialList, key);
    } catch (error) {
      this.#popped();
      this.#turn.unpark({ error });
      return false;
    }
    if (result !== undefined && result !== null && typeof result.then === 'function') {
      // The consumer waits for it, holding the turn, as `pop` does for an async `process`.
      this.#turn.leave();
      Promise.resolve(result).then(
        () => {
          this.#popped();
          parked.settle(undefined);
        },
        (error: unknown) => {
          this.#popped();
          parked.settle({ error });
        },
      );
      return false;
    }
    this.#popped();
    return true;
  }
}
