// Object keys ("namespace/name") and the tombstone for deletions whose final state is unknown.

import { InvalidObjectError, KubeInformerError, ErrorCodes } from './errors.js';
import { preview } from './preview.js';
import { getMeta } from './types.js';

/**
 * A tombstone: the object was deleted while the watch was down, so its final state is unknown. `obj`
 * is the last state the cache knew. Handlers' `onDelete` receives either the object or one of these.
 */
export class DeletedFinalStateUnknown<T> {
  /** The deleted object's key. */
  readonly key: string;
  /** The last state of the object the cache knew; it may be stale. */
  readonly obj: T;
  constructor(key: string, obj: T) {
    this.key = key;
    this.obj = obj;
  }
}

/** Computes an object's key; throws {@link InvalidObjectError} for an object that has no name. */
export type KeyFunc<T> = (obj: T | DeletedFinalStateUnknown<T>) => string;

/**
 * The standard key: `namespace/name`, or `name` for a cluster-scoped object. A string is taken as an
 * explicit key and returned as-is (client-go's `ExplicitKey`).
 *
 * Throws {@link InvalidObjectError} (code `INVALID_OBJECT`) when the object has no metadata or no
 * non-empty string `metadata.name`; the message shows a short preview of the object.
 */
export function metaNamespaceKeyFunc(obj: unknown): string {
  if (typeof obj === 'string') return obj;
  const meta = getMeta(obj);
  if (meta === undefined) {
    throw new InvalidObjectError(`object has no metadata, so it has no key: ${preview(obj)}`);
  }
  const { name, namespace } = meta;
  if (typeof name !== 'string' || name === '') {
    throw new InvalidObjectError(`object has no metadata.name, so it has no key: ${preview(obj)}`);
  }
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') {
    throw new InvalidObjectError(`object's metadata.namespace is not a string: ${preview(obj)}`);
  }
  return namespacedKey(namespace, name);
}

/**
 * The key of `name` in `namespace`: `namespace/name`, or `name` when the namespace is empty or absent
 * (cluster-scoped). Every key in the library is built here.
 */
export function namespacedKey(namespace: string | null | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Like {@link metaNamespaceKeyFunc}, but a {@link DeletedFinalStateUnknown} yields its own key. */
export function deletionHandlingMetaNamespaceKeyFunc(obj: unknown): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  return metaNamespaceKeyFunc(obj);
}

/**
 * {@link deletionHandlingMetaNamespaceKeyFunc}, or `undefined` for an object that has no key: for code
 * that must not throw on a bad object (a guard, a log line).
 */
export function keyOf(obj: unknown): string | undefined {
  try {
    return deletionHandlingMetaNamespaceKeyFunc(obj);
  } catch {
    return undefined;
  }
}

/**
 * Splits a key made by {@link metaNamespaceKeyFunc}: `name` → `{namespace: '', name}`,
 * `ns/name` → `{namespace: 'ns', name}`. Throws (code `INVALID_KEY`) on anything else.
 */
export function splitMetaNamespaceKey(key: string): {
  /** The namespace part; `''` for a cluster-scoped key. */
  namespace: string;
  /** The name part. */
  name: string;
} {
  const parts = key.split('/');
  if (parts.length === 1) return { namespace: '', name: parts[0] };
  if (parts.length === 2) return { namespace: parts[0], name: parts[1] };
  throw new KubeInformerError(ErrorCodes.INVALID_KEY, `unexpected key format: ${preview(key, 120)}`);
}
