// The object shapes every room shares: Kubernetes metadata, objects, and read-only views of them.

/** The subset of Kubernetes `ObjectMeta` the library reads. Other fields pass through untouched. */
export interface ObjectMeta {
  /** The object's name, unique within its namespace. */
  name?: string;
  /** The namespace; absent or `''` for a cluster-scoped object. */
  namespace?: string;
  /** The server-assigned unique id of this incarnation of the object. */
  uid?: string;
  /** The opaque version of the object; compare with {@link compareResourceVersion}, never `Number()`. */
  resourceVersion?: string;
  /** Labels, matched by label selectors. */
  labels?: Record<string, string>;
  /** Annotations: free-form metadata. */
  annotations?: Record<string, string>;
  [k: string]: unknown;
}

/** Any Kubernetes object as the API server sends it: plain JSON with `metadata`. */
export interface KubeObject {
  /** `group/version` (or `v1` for the core group). */
  apiVersion?: string;
  /** The object's kind, e.g. `Pod`. */
  kind?: string;
  /** Standard object metadata. */
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
