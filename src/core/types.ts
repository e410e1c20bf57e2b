// The object shapes every room shares: Kubernetes metadata, objects, read-only views of them, and the copy that makes one writable.

import type { ObjectMeta as WireObjectMeta } from 'kubernetes-types/meta/v1.js';

/**
 * Kubernetes `ObjectMeta` as JSON: every field of the wire type (from `kubernetes-types`), with the
 * server-set ones writable so test kits and transforms can fill them. Timestamps are RFC 3339 strings.
 * Objects from the cache are read through {@link DeepReadonly}, which makes all of it read-only again.
 */
export type ObjectMeta = { -readonly [K in keyof WireObjectMeta]: WireObjectMeta[K] };

/**
 * Any Kubernetes object as the API server sends it: plain JSON with `metadata`. Every object type of
 * `kubernetes-types` (`Pod`, `ConfigMap`, ...) is assignable to it.
 */
export interface KubeObject {
  /** `group/version` (or `v1` for the core group). */
  apiVersion?: string;
  /** The object's kind, e.g. `Pod`. */
  kind?: string;
  /** Standard object metadata. */
  metadata?: ObjectMeta;
}

/**
 * What a metadata-only list or watch returns for each object (`meta.k8s.io/v1` `PartialObjectMetadata`,
 * client-go's metadata informer): the object's metadata and nothing else — no `spec`, no `status`, no
 * `data`. What a cache made with `metadataOnly: true` holds; fetch the body with a `get` when it is needed.
 */
export interface PartialObjectMetadata {
  /** Always `meta.k8s.io/v1`. */
  apiVersion?: string;
  /** Always `PartialObjectMetadata`. */
  kind?: string;
  /** The object's metadata, as the full object has it (name, namespace, labels, owner references, resourceVersion, ...). */
  metadata?: ObjectMeta;
}

/** Identifies a resource: `group` is `''` for the core group (`/api/v1`). */
export interface GroupVersionResource {
  /** The API group, `''` for the core group. */
  group: string;
  /** The API version, e.g. `v1`. */
  version: string;
  /** The plural resource name, e.g. `pods`. */
  resource: string;
}

type Primitive = string | number | boolean | bigint | symbol | undefined | null;

/**
 * A deeply read-only view of `T`: what informers hand to handlers and listers return. Objects the
 * cache hands out are shared with every other reader, so the types mark them read-only; to change
 * one, copy it first with {@link deepCopy}.
 *
 * A plain `T` is assignable to `DeepReadonly<T>`, so a function that only reads should take
 * `DeepReadonly<T>`: it then accepts cached objects and your own alike.
 *
 * Warning: this is a compile-time guard only. At run time the `detectMutations` option (or
 * `KUBE_CACHE_MUTATION_DETECTOR=true`) catches writes that get past it.
 */
export type DeepReadonly<T> = unknown extends T
  ? T
  : T extends Primitive
  ? T
  : T extends (...args: never[]) => unknown
    ? T
    : T extends ReadonlyArray<infer U>
      ? ReadonlyArray<DeepReadonly<U>>
      : T extends ReadonlyMap<infer K, infer V>
        ? ReadonlyMap<DeepReadonly<K>, DeepReadonly<V>>
        : T extends ReadonlySet<infer U>
          ? ReadonlySet<DeepReadonly<U>>
          : { readonly [P in keyof T]: DeepReadonly<T[P]> };

/**
 * The opposite of {@link DeepReadonly}: `T` with every `readonly` removed, deeply (read-only arrays,
 * maps and sets become mutable ones). What {@link deepCopy} returns when it infers its type.
 */
export type DeepMutable<T> = unknown extends T
  ? T
  : T extends Primitive
  ? T
  : T extends (...args: never[]) => unknown
    ? T
    : T extends ReadonlyArray<infer U>
      ? DeepMutable<U>[]
      : T extends ReadonlyMap<infer K, infer V>
        ? Map<DeepMutable<K>, DeepMutable<V>>
        : T extends ReadonlySet<infer U>
          ? Set<DeepMutable<U>>
          : { -readonly [P in keyof T]: DeepMutable<T[P]> };

/**
 * A deep, mutable copy of an object from the cache (a handler's argument, a lister's result): the way
 * to get something you may change — to build an update, a patch, or your own state. Nothing the copy
 * holds is shared with the cache.
 *
 * Without a type argument, the copy's type is {@link DeepMutable} of the argument's, which is
 * assignable to the plain type: `const copy: Pod = deepCopy(pod)`.
 *
 * Uses `structuredClone`: objects from the API server are plain JSON, which it copies exactly. (A
 * class instance, e.g. one built by a `transform`, comes back as a plain object.)
 *
 * @example
 * ```ts
 * pods.addEventHandler({
 *   onUpdate: async (_old, pod) => {
 *     const next = deepCopy<Pod>(pod); // `pod` is the cache's own, read-only; `next` is yours
 *     (next.metadata!.labels ??= {}).seen = 'yes';
 *     await api.replaceNamespacedPod({ name: next.metadata!.name!, namespace: next.metadata!.namespace!, body: next });
 *   },
 * });
 * ```
 */
export function deepCopy<T>(obj: T): DeepMutable<T>;
/**
 * A deep, mutable copy typed exactly `T`: `deepCopy<Pod>(pod)` takes the `DeepReadonly<Pod>` a
 * handler or lister gives and returns a `Pod`.
 */
export function deepCopy<T>(obj: DeepReadonly<T>): T;
export function deepCopy(obj: unknown): unknown {
  return structuredClone(obj);
}

/** A value or a promise of it: every callback may be sync or async. */
export type MaybePromise<T> = T | Promise<T>;

/** Reads `obj.metadata` when `obj` is an object with an object `metadata`; otherwise `undefined`. */
export function getMeta(obj: unknown): ObjectMeta | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  const meta = (obj as { metadata?: unknown }).metadata;
  return meta !== null && typeof meta === 'object' ? (meta) : undefined;
}

/** The API group of an `apiVersion`: `apps` of `apps/v1`, `''` (the core group) of `v1`. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** `metadata.resourceVersion` of an object, or `undefined`. */
export function getResourceVersion(obj: unknown): string | undefined {
  const rv = getMeta(obj)?.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}
