// The object shapes every room shares: Kubernetes metadata, objects, and read-only views of them.

/** The subset of Kubernetes `ObjectMeta` the library reads. Other fields pass through untouched. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [k: string]: unknown;
}

/** Any Kubernetes object as the API server sends it: plain JSON with `metadata`. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** Identifies a resource: `group` is `''` for the core group (`/api/v1`). */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

type Primitive = string | number | boolean | bigint | symbol | undefined | null;

/**
 * A deeply read-only view of `T`. Objects the cache hands out are shared with every other reader, so
 * the types mark them read-only; to change one, copy it first (`structuredClone`).
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

/** A value or a promise of it: every callback may be sync or async. */
export type MaybePromise<T> = T | Promise<T>;

/** Reads `obj.metadata` when `obj` is an object with an object `metadata`; otherwise `undefined`. */
export function getMeta(obj: unknown): ObjectMeta | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  const meta = (obj as { metadata?: unknown }).metadata;
  return meta !== null && typeof meta === 'object' ? (meta as ObjectMeta) : undefined;
}

/** `metadata.resourceVersion` of an object, or `undefined`. */
export function getResourceVersion(obj: unknown): string | undefined {
  const rv = getMeta(obj)?.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}
