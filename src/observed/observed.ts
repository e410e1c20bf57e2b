// Read-your-own-writes: waiters for "the cache holds this resource version (or the object is gone)", and for "the cache saw this deletion".

import { AbortedError, InvalidObjectError } from '../core/errors.js';
import { DeletedFinalStateUnknown } from '../core/keys.js';
import { compareComparable, compareResourceVersion, isComparableResourceVersion } from '../core/index.js';

/** How `awaitObserved` ended: the cache holds the version (or newer), or the object is gone. */
export type Observed = 'observed' | 'gone';

/** What a write answered: its resource version, and whether it was the final state of a deletion. */
export interface Written {
  /** The resource version the API server answered with. */
  readonly rv: string;
  /**
   * The answer had `deletionTimestamp` and no finalizers. kube-apiserver answers an update that removed
   * the last finalizer of an object being deleted (which deletes it) with the object as written at the
   * version it was read at — a version the cache may hold, still with finalizers. A cached object at
   * that version with finalizers is then not the write: the wait goes on until a newer version or the
   * object's deletion (a pod answered mid-graceful-deletion has no finalizers in the cache either, so
   * it is observed at once).
   */
  readonly emptied: boolean;
}

/**
 * What a delete answered, for `awaitDeleted`: the object's uid when known (from the Status's
 * `details.uid` or the answered object). The deletion is observed once the cache no longer holds an
 * object of that key with that uid, or holds it with a `deletionTimestamp`.
 */
export interface Deleted {
  /** The deleted object's uid; `undefined` when unknown (then any object of the key counts as it). */
  readonly uid: string | undefined;
}

interface Waiter {
  readonly key: string;
  /** A version wait's version (`''` for a deletion wait). */
  readonly rv: string;
  readonly emptied: boolean;
  /** Set for a deletion wait. */
  readonly deleted: Deleted | undefined;
  readonly resolve: (how: Observed) => void;
  readonly reject: (err: Error) => void;
  readonly cleanup: () => void;
}

function finalizersOf(obj: unknown): number {
  const f = (obj as { metadata?: { finalizers?: unknown } } | null)?.metadata?.finalizers;
  return Array.isArray(f) ? f.length : 0;
}

function rvOf(obj: unknown): string | undefined {
  const rv = (obj as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === 'string' && isComparableResourceVersion(rv) ? rv : undefined;
}

/**
 * The waiters of one informer's `awaitObserved`. The informer calls {@link ObservedWaiters.applied}
 * after each change it applied to its indexer (before handlers run), with the key and the object (a
 * delete's final state, or a tombstone). A waiter resolves `'observed'` when its key's cached object
 * reaches its resource version, and `'gone'` when its key is absent from the cache while the cache has
 * applied a change at least that new (the watermark: the highest resource version applied) — this
 * covers an object created and deleted by someone else before the wait began. It relies on what a
 * watch guarantees: changes of a resource arrive in resource-version order, so a cache that applied
 * version X has applied every change before X.
 *
 * Cost: with no waiter, `applied` is one resource-version comparison; with waiters, a map lookup per
 * change, plus a check of the waiters whose object is absent when the watermark moves.
 */
export class ObservedWaiters {
  readonly #byKey = new Map<string, Set<Waiter>>();
  /** Keys with waiters whose object the cache does not hold: rechecked when the watermark moves. */
  readonly #absent = new Set<string>();
  #count = 0;
  #watermark = '';

  /** Waiters not settled yet (for tests and health). */
  get size(): number {
    return this.#count;
  }

  /**
   * Waits for `key` at `rv`; `cached(key)` reads the informer's indexer. Rejects with `ABORTED` when
   * `signal` aborts.
   */
  wait(key: string, written: Written, cached: (key: string) => unknown, signal: AbortSignal | undefined): Promise<Observed> {
    return this.#wait(key, written.rv, written.emptied, undefined, `${key} at resource version ${written.rv}`, cached, signal);
  }

  /**
   * Waits until the cache saw `key` deleted: it does not hold it (or holds another object of that
   * name: another uid), `'gone'`, or holds it with a `deletionTimestamp`, `'observed'`. Rejects with
   * `ABORTED` when `signal` aborts.
   */
  waitDeleted(key: string, deleted: Deleted, cached: (key: string) => unknown, signal: AbortSignal | undefined): Promise<Observed> {
    return this.#wait(key, '', false, deleted, `the deletion of ${key}`, cached, signal);
  }

  #wait(key: string, rv: string, emptied: boolean, deleted: Deleted | undefined, what: string, cached: (key: string) => unknown, signal: AbortSignal | undefined): Promise<Observed> {
    const now = this.#check({ rv, emptied, deleted }, cached(key));
    if (now !== undefined) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(new AbortedError(`stopped waiting for ${what}: the signal was aborted`));
    return new Promise<Observed>((resolve, reject) => {
      const onAbort = (): void => {
        this.#remove(waiter);
        reject(new AbortedError(`stopped waiting for ${what}: the signal was aborted`, { cause: signal?.reason }));
      };
      const waiter: Waiter = {
        key,
        rv,
        emptied,
        deleted,
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      let set = this.#byKey.get(key);
      if (set === undefined) {
        set = new Set();
        this.#byKey.set(key, set);
      }
      set.add(waiter);
      this.#count++;
      if (cached(key) === undefined) this.#absent.add(key);
    });
  }

  /**
   * Called after the indexer applied a change; `obj` is the new state, or the deleted one, and
   * `keyOf(obj)` its key (computed only while someone waits).
   */
  applied(obj: unknown, keyOf: (obj: unknown) => string | undefined, cached: (key: string) => unknown): void {
    const state = obj instanceof DeletedFinalStateUnknown ? undefined : obj;
    const moved = this.#advance(rvOf(state));
    if (this.#count === 0) return;
    const key = keyOf(obj) ?? '';
    if (obj instanceof DeletedFinalStateUnknown) {
      // A relist found it gone: whatever was written, the cache has moved past it.
      this.#settleAll(key, 'gone');
    } else {
      this.#recheck(key, cached);
    }
    if (moved) for (const k of [...this.#absent]) if (k !== key) this.#recheck(k, cached);
  }

  /**
   * What {@link ObservedWaiters.applied} of each object of a whole list leaves while nobody waits (the
   * informer's first list taken whole, `first-list.ts`): the watermark moves to `newest`, the highest
   * comparable resource version among the objects, computed by the caller while it held them anyway.
   * Only while {@link ObservedWaiters.size} is 0: a waiter needs each object checked.
   */
  appliedList(newest: string | undefined): void {
    if (this.#count !== 0) throw new Error('ObservedWaiters.appliedList while someone waits');
    this.#advance(newest);
  }

  /** Moves the watermark to `rv` (comparable, or `undefined` for none) when it is newer; true when it moved. */
  #advance(rv: string | undefined): boolean {
    // Both are comparable (rvOf and the list's newest are checked; the watermark is one of them), so they are not checked again.
    if (rv === undefined || (this.#watermark !== '' && compareComparable(rv, this.#watermark) <= 0)) return false;
    this.#watermark = rv;
    return true;
  }

  /** Rejects every waiter with `err` (the informer stopped). */
  failAll(err: Error): void {
    for (const set of this.#byKey.values()) {
      for (const w of set) {
        w.cleanup();
        w.reject(err);
      }
    }
    this.#byKey.clear();
    this.#absent.clear();
    this.#count = 0;
  }

  #check({ rv, emptied, deleted }: Pick<Waiter, 'rv' | 'emptied' | 'deleted'>, current: unknown): Observed | undefined {
    if (deleted !== undefined) {
      const meta = (current as { metadata?: { uid?: unknown; deletionTimestamp?: unknown } } | undefined)?.metadata;
      if (current === undefined || (deleted.uid !== undefined && meta?.uid !== undefined && meta.uid !== deleted.uid)) return 'gone';
      return typeof meta?.deletionTimestamp === 'string' ? 'observed' : undefined;
    }
    if (current !== undefined) {
      const have = rvOf(current);
      if (have === undefined) return undefined;
      const order = compareResourceVersion(have, rv);
      return order > 0 || (order === 0 && !(emptied && finalizersOf(current) > 0)) ? 'observed' : undefined;
    }
    return this.#watermark !== '' && compareResourceVersion(this.#watermark, rv) >= 0 ? 'gone' : undefined;
  }

  #recheck(key: string, cached: (key: string) => unknown): void {
    const set = this.#byKey.get(key);
    if (set === undefined) return;
    const current = cached(key);
    if (current === undefined) this.#absent.add(key);
    else this.#absent.delete(key);
    for (const w of set) {
      const how = this.#check(w, current);
      if (how !== undefined) {
        this.#remove(w);
        w.resolve(how);
      }
    }
  }

  #settleAll(key: string, how: Observed): void {
    const set = this.#byKey.get(key);
    if (set === undefined) return;
    for (const w of [...set]) {
      this.#remove(w);
      w.resolve(how);
    }
  }

  #remove(w: Waiter): void {
    const set = this.#byKey.get(w.key);
    if (set === undefined || !set.delete(w)) return;
    if (set.size === 0) {
      this.#byKey.delete(w.key);
      this.#absent.delete(w.key);
    }
    this.#count--;
    w.cleanup();
  }
}

/** Checks what `awaitObserved` was given: an object with a name and a comparable resource version. */
export function checkWritten(owner: string, written: unknown): Written {
  const meta = (written as { metadata?: { name?: unknown; resourceVersion?: unknown; deletionTimestamp?: unknown } } | null)?.metadata;
  const rv = meta?.resourceVersion;
  if (typeof meta?.name !== 'string' || meta.name === '' || typeof rv !== 'string') {
    throw new InvalidObjectError(`${owner}.awaitObserved needs the object the API server answered, with metadata.name and metadata.resourceVersion`);
  }
  if (!isComparableResourceVersion(rv)) {
    throw new InvalidObjectError(`${owner}.awaitObserved: resource version ${JSON.stringify(rv)} is not comparable (not a decimal number), so "this version or newer" cannot be decided`);
  }
  return { rv, emptied: typeof meta.deletionTimestamp === 'string' && finalizersOf(written) === 0 };
}

/** Checks what `awaitDeleted` was given: an object (or a reference) with `metadata.name`; reads its uid. */
export function checkDeleted(owner: string, deleted: unknown): Deleted {
  const meta = (deleted as { metadata?: { name?: unknown; uid?: unknown } } | null)?.metadata;
  if (typeof meta?.name !== 'string' || meta.name === '') {
    throw new InvalidObjectError(`${owner}.awaitDeleted needs the deleted object (or { metadata: { name, namespace, uid } })`);
  }
  return { uid: typeof meta.uid === 'string' && meta.uid !== '' ? meta.uid : undefined };
}
