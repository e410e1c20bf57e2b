// The vocabulary of the DeltaFIFO: delta types, deltas, the known-objects view and the options.

import type { DeletedFinalStateUnknown, KeyFunc } from '../core/keys.js';

/**
 * What happened to an object:
 * - `Added`, `Updated`, `Deleted`: a watch event (or a direct call) said so;
 * - `Replaced`: the object was in a full relist (`replace`) and `emitDeltaTypeReplaced` is on;
 * - `Sync`: the object was in a relist with `emitDeltaTypeReplaced` off, or a periodic `resync`
 *   re-delivered what the cache already holds.
 */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/**
 * One change to one object. `object` is the object's state after the change; for a `Deleted` it may
 * be a {@link DeletedFinalStateUnknown} when the deletion was inferred from a relist.
 */
export interface Delta<T> {
  /** What happened. */
  readonly type: DeltaType;
  /** The object after the change, or a tombstone for an inferred deletion. */
  readonly object: T | DeletedFinalStateUnknown<T>;
}

/** The pending changes of one key, oldest first; never empty when handed out by the queue. */
export type Deltas<T> = readonly Delta<T>[];

/**
 * The consumer's view of what it already knows (in an informer: the indexer). The DeltaFIFO asks it
 * which keys exist so `replace` can infer deletions and `resync` can re-deliver objects.
 */
export interface KeyListerGetter<T> {
  /** Every key the consumer holds. */
  listKeys(): string[];
  /** The object held under `key`, or `undefined` when there is none. */
  getByKey(key: string): T | undefined;
}

/**
 * The function `pop` hands one key's deltas to. `isInInitialList` is true while the queue has not yet
 * synced, i.e. for the items of the first `replace`; `key` is the deltas' key as the queue's key
 * function computed it (pass it on to {@link processDeltas} when the store keys objects the same way,
 * and the store finds the object without computing its key again). May be async; a throw or a
 * rejection makes `pop` reject with that very error.
 */
export type PopProcessFunc<T> = (deltas: Deltas<T>, isInInitialList: boolean, key: string) => void | Promise<void>;

/**
 * What a parked consumer may give {@link DeltaFIFO.park} besides its `PopProcessFunc`: called with one
 * change the queue hands over at once (an `add`, `update` or `delete` that found nothing queued and
 * nobody popping, after the initial list), instead of `process([{ type, object }], false, key)`. It must
 * do exactly what that call would: it saves the one-delta list and whatever the general function does
 * to walk it, on the path a watch takes for nearly every event. May be async, like `process`.
 */
export type ChangeProcessFunc<T> = (type: 'Added' | 'Updated' | 'Deleted', object: T | DeletedFinalStateUnknown<T>, key: string) => void | Promise<void>;

/** Options of {@link DeltaFIFO}. */
export interface DeltaFIFOOptions<T> {
  /**
   * Computes an object's key. A {@link DeletedFinalStateUnknown} never reaches it: its own `key` is
   * used. Default: `metaNamespaceKeyFunc` (`namespace/name`, or `name` when cluster-scoped).
   */
  keyFunc?: KeyFunc<T>;
  /**
   * What the consumer already holds. With it, `replace` emits a `Deleted` tombstone for every known
   * key missing from the list, `delete` of a known key is queued, and `resync` works. Default: none
   * (`resync` is then a no-op and only queued keys produce inferred deletions).
   */
  knownObjects?: KeyListerGetter<T>;
  /**
   * Emit `Replaced` for the items of a `replace` instead of `Sync`. Informers turn this on so a
   * relisted object can be told apart from a periodic resync. Default: `false` (client-go's legacy).
   */
  emitDeltaTypeReplaced?: boolean;
  /**
   * Applied once to every object as it enters the queue through `add`, `update`, `delete` and
   * `replace` (also when `replace` emits `Sync`). Not applied to tombstones nor to the objects
   * `resync` takes from `knownObjects` (they were transformed when they first came in). It may modify
   * the object in place and return it. A throw fails the call with a `TransformFailedError`
   * (code `TRANSFORM_FAILED`) and leaves the queue unchanged. Default: none.
   */
  transform?: (obj: T) => T;
}

/** The oldest delta of a non-empty `Deltas`, or `undefined` for an empty one. */
export function oldestDelta<T>(deltas: Deltas<T>): Delta<T> | undefined {
  return deltas.length === 0 ? undefined : deltas[0];
}

/** The newest delta of a non-empty `Deltas`, or `undefined` for an empty one. */
export function newestDelta<T>(deltas: Deltas<T>): Delta<T> | undefined {
  return deltas.length === 0 ? undefined : deltas[deltas.length - 1];
}
