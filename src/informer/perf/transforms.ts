// Ready-made informer transforms: strip managedFields and bulky annotations, compose transforms.

import { getMeta } from '../../core/types.js';

/** A transform applied to each object before it enters the cache (the informer's `transform` option). */
export type TransformFunc<T> = (obj: T) => T;

/** The annotation `kubectl apply` stores the whole last-applied object in. */
export const LAST_APPLIED_CONFIGURATION_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Removes `metadata.managedFields` (server-side-apply bookkeeping, often the largest part of an
 * object) to save memory. Returns a shallow copy with a new `metadata`; the input is not changed.
 * Objects without managed fields (and non-objects) are returned as they are, so it is idempotent.
 *
 * @example
 * ```ts
 * new SharedIndexInformer(lw, { transform: stripManagedFields });
 * ```
 */
export function stripManagedFields<T>(obj: T): T {
  const meta = getMeta(obj);
  if (meta === undefined || !('managedFields' in meta)) return obj;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...(obj as object), metadata: rest } as T;
}

/**
 * Makes a transform that removes the named annotations (a shallow copy; the input is not changed).
 * An object left with no annotations loses the `annotations` field.
 */
export function stripAnnotations<T>(...names: string[]): TransformFunc<T> {
  const drop = new Set(names);
  return (obj: T): T => {
    const meta = getMeta(obj);
    const annotations = meta?.annotations;
    if (meta === undefined || annotations === null || typeof annotations !== 'object') return obj;
    const keys = Object.keys(annotations);
    if (!keys.some((k) => drop.has(k))) return obj;
    const kept: Record<string, string> = {};
    for (const k of keys) if (!drop.has(k)) kept[k] = annotations[k];
    const { annotations: _old, ...rest } = meta;
    const metadata = Object.keys(kept).length === 0 ? rest : { ...rest, annotations: kept };
    return { ...(obj as object), metadata } as T;
  };
}

/** Removes managed fields and the `kubectl apply` last-applied annotation: the usual memory diet. */
export function stripBulkyMetadata<T>(obj: T): T {
  return stripLastApplied(stripManagedFields(obj)) as T;
}

const stripLastApplied = stripAnnotations<unknown>(LAST_APPLIED_CONFIGURATION_ANNOTATION);

/** Runs transforms left to right: `composeTransforms(a, b)(x)` is `b(a(x))`. */
export function composeTransforms<T>(...transforms: TransformFunc<T>[]): TransformFunc<T> {
  return (obj: T): T => transforms.reduce((acc, fn) => fn(acc), obj);
}
