// Graceful deletion with finalizers, as kube-apiserver does it: a DELETE marks, the last finalizer's removal deletes.

import type { KubeObject, ObjectMeta } from '../../core/types.js';
import { statusError, type ResourceState, type StateWriteOptions, type StoredEntry } from '../resource-state.js';

/** The server's time as metadata timestamps write it: RFC 3339, whole seconds. */
export function metaTime(now: () => Date): string {
  return now().toISOString().replace(/\.\d+Z$/, 'Z');
}

function finalizersOf(meta: ObjectMeta | undefined): readonly string[] {
  return meta?.finalizers ?? [];
}

/**
 * Deletes an object the way kube-apiserver does: when it has finalizers, it is only marked — its
 * `deletionTimestamp` set (once; a second DELETE changes nothing), `deletionGracePeriodSeconds: 0`, its
 * `generation` bumped when it has one — and stays until the last finalizer is removed. Without
 * finalizers it is deleted at once. Returns the stored entry (marked) or the deleted final state.
 */
export function deleteOrMark(state: ResourceState, stateKey: string, namespace: string, name: string, now: () => Date, options: StateWriteOptions = {}): StoredEntry {
  const prev = state.get(stateKey, namespace, name);
  if (prev === undefined || finalizersOf(prev.meta).length === 0) return state.delete(stateKey, namespace, name, options);
  if (options.expectUid !== undefined && options.expectUid !== prev.meta.uid) {
    throw statusError(409, 'Conflict', `Precondition failed: UID in precondition: ${options.expectUid}, UID in object meta: ${prev.meta.uid}`, stateKey, name);
  }
  if (options.expectResourceVersion !== undefined && options.expectResourceVersion !== prev.meta.resourceVersion) {
    throw statusError(409, 'Conflict', `Precondition failed: ResourceVersion in precondition: ${options.expectResourceVersion}, ResourceVersion in object meta: ${prev.meta.resourceVersion}`, stateKey, name);
  }
  if (prev.meta.deletionTimestamp !== undefined) return prev; // already being deleted: nothing changes
  const obj = JSON.parse(prev.json) as KubeObject;
  const meta: ObjectMeta = { ...obj.metadata, deletionTimestamp: metaTime(now), deletionGracePeriodSeconds: 0 };
  if (typeof meta.generation === 'number') meta.generation += 1;
  return state.update(stateKey, { ...obj, metadata: meta }, { broadcast: options.broadcast, dryRun: options.dryRun });
}

/**
 * The rules an update or patch of an object follows (kube-apiserver's): `deletionTimestamp` and
 * `deletionGracePeriodSeconds` are the server's — a write cannot set, change or clear them; no new
 * finalizer may be added to an object being deleted (422); and when a write leaves an object being
 * deleted without finalizers, the object is deleted. Returns the object to store, or `'delete'`.
 */
export function applyDeletionRules(prev: StoredEntry, next: KubeObject, resource: string): KubeObject | 'delete' {
  const meta: ObjectMeta = { ...(next.metadata ?? {}) };
  const deleting = prev.meta.deletionTimestamp;
  if (deleting === undefined) {
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    return { ...next, metadata: meta };
  }
  meta.deletionTimestamp = deleting;
  meta.deletionGracePeriodSeconds = prev.meta.deletionGracePeriodSeconds ?? 0;
  const before = new Set(finalizersOf(prev.meta));
  const added = finalizersOf(meta).filter((f) => !before.has(f));
  if (added.length > 0) {
    throw statusError(422, 'Invalid', `${resource} "${prev.name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`, resource, prev.name);
  }
  if (finalizersOf(meta).length === 0) return 'delete';
  return { ...next, metadata: meta };
}
