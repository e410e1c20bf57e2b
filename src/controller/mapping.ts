// From a watched object to the keys of the primaries it concerns: the primary itself, its controlling owner, or a user mapping.

import { DeletedFinalStateUnknown, namespacedKey } from '../core/keys.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { groupOf, type DeepReadonly } from '../core/types.js';

/** A primary to reconcile: its name, and its namespace (absent or `''` for a cluster-scoped primary). */
export interface ObjectRef {
  /** The primary's name. */
  readonly name: string;
  /** The primary's namespace; absent or `''` for cluster-scoped resources. */
  readonly namespace?: string;
}

/**
 * Maps an object of a watched resource to the primaries it concerns, as keys (`namespace/name`, or
 * `name` for cluster-scoped primaries) or {@link ObjectRef}s. Called for both states of an update.
 * Must not throw: it runs on the informer's delivery path and a throw stops the controller.
 */
export type MapFunc<W> = (obj: DeepReadonly<W>) => Iterable<string | ObjectRef>;

/** The key of a primary: `namespace/name`, or `name` when it has no namespace. */
export function refKey(ref: string | ObjectRef): string {
  if (typeof ref === 'string') return ref;
  return namespacedKey(ref.namespace, ref.name);
}

interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  controller?: boolean;
}

/**
 * The key of `obj`'s controlling owner when that owner is of `owner`'s group and kind (any version),
 * else `undefined` — controller-runtime's `EnqueueRequestForOwner` with `OnlyControllerOwner`, kube-rs's
 * `trigger_owners`. Only the reference with `controller: true` counts: an object has at most one
 * controller, and other owners (garbage-collection-only references) do not make it a child. The owner
 * is looked up in the object's namespace (owner references cannot cross namespaces); a cluster-scoped
 * owner is keyed by name alone.
 */
export function controllerOwnerKey(obj: unknown, owner: Pick<ResourceDescriptor, 'group' | 'kind' | 'namespaced'>): string | undefined {
  const metadata = (obj as { metadata?: { namespace?: string; ownerReferences?: readonly OwnerReference[] } } | null)?.metadata;
  const refs = metadata?.ownerReferences;
  if (refs === undefined) return undefined;
  for (const ref of refs) {
    if (ref.controller !== true) continue;
    if (ref.kind !== owner.kind || ref.apiVersion === undefined || groupOf(ref.apiVersion) !== owner.group || typeof ref.name !== 'string') return undefined;
    return refKey({ name: ref.name, namespace: owner.namespaced ? metadata?.namespace : undefined });
  }
  return undefined;
}

/** The object of an informer's delete notification: a tombstone's last known state, or the object. */
export function unwrapTombstone<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}
