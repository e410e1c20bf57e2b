// Event handler contracts: what informers call, registrations, and the filtering adapter.

import { DeletedFinalStateUnknown } from '../core/keys.js';
import type { DeepReadonly } from '../core/types.js';

/**
 * Receives an informer's notifications. Every callback is optional and may be sync or async; a
 * thrown error and a rejected promise are treated the same (see the informer's `errorPolicy`). A
 * handler is sent only the notifications it has a callback for when each is made: without `onAdd`, the
 * objects of an initial list take no place in its buffer and do not hold its registration's sync.
 *
 * - `onAdd(obj, isInInitialList)`: an object appeared; `isInInitialList` is true for objects of the
 *   first list (and for the replayed current items a handler receives when it joins a running informer).
 * - `onUpdate(oldObj, newObj)`: an object changed, or was re-delivered by a resync or relist (then
 *   both carry the same resource version). `oldObj` is the last cached state; intermediate states
 *   may be skipped.
 * - `onDelete(obj)`: an object was deleted. When the deletion was noticed by a relist, `obj` is a
 *   {@link DeletedFinalStateUnknown} whose `obj` is the last known (possibly stale) state.
 *
 * Objects are typed {@link DeepReadonly}, as listers return them: they are the cache's own, shared
 * with every other handler and lister. To change one, copy it with {@link deepCopy}. A helper that
 * only reads should take `DeepReadonly<T>` (a plain `T` is assignable to it).
 *
 * Warning: the types are a compile-time guard only; `detectMutations` catches a write at run time.
 */
export interface ResourceEventHandler<T> {
  /** An object was added (or replayed as part of an initial list). */
  onAdd?: (obj: DeepReadonly<T>, isInInitialList: boolean) => void | Promise<void>;
  /** An object changed, or was re-delivered by a resync. */
  onUpdate?: (oldObj: DeepReadonly<T>, newObj: DeepReadonly<T>) => void | Promise<void>;
  /** An object was deleted; a tombstone when the final state is unknown. */
  onDelete?: (obj: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>) => void | Promise<void>;
}

/** What `addEventHandler` returns: a handle to check this handler's sync state and to remove it. */
export interface ResourceEventHandlerRegistration {
  /**
   * True once the informer has synced **and** this handler has processed every notification of the
   * initial list (client-go's registration `HasSynced`).
   */
  hasSynced(): boolean;
}

/**
 * The registration the shared informer hands out: {@link ResourceEventHandlerRegistration} plus a
 * name, a promise form of `hasSynced`, and the handler's delivery statistics.
 */
export interface SharedInformerRegistration extends ResourceEventHandlerRegistration {
  /** The handler's name (from the options, or generated: `handler-1`, ...). */
  readonly name: string;
  /** The handler's effective resync period in ms (0 = never); see `AddEventHandlerOptions.resyncPeriodMs`. */
  readonly resyncPeriodMs: number;
  /**
   * Resolves once {@link ResourceEventHandlerRegistration.hasSynced} is true. Rejects when the
   * informer stops or fails first (with the failure as `cause`), when this handler is removed before
   * syncing, or when `signal` aborts.
   */
  whenSynced(signal?: AbortSignal): Promise<void>;
}

/**
 * Wraps `handler` so only objects passing `filter` reach it, with client-go's update rule: both pass →
 * `onUpdate`; only the new one → `onAdd(new, false)`; only the old one → `onDelete(old)`; neither →
 * nothing. A tombstone is tested on its `obj`.
 */
export function filteringResourceEventHandler<T>(
  filter: (obj: DeepReadonly<T>) => boolean,
  handler: ResourceEventHandler<T>,
): ResourceEventHandler<T> {
  return {
    onAdd(obj, isInInitialList) {
      if (filter(obj)) return handler.onAdd?.(obj, isInInitialList);
    },
    onUpdate(oldObj, newObj) {
      const oldOk = filter(oldObj);
      const newOk = filter(newObj);
      if (oldOk && newOk) return handler.onUpdate?.(oldObj, newObj);
      if (newOk) return handler.onAdd?.(newObj, false);
      if (oldOk) return handler.onDelete?.(oldObj);
    },
    onDelete(obj) {
      if (filter(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj)) return handler.onDelete?.(obj);
    },
  };
}
