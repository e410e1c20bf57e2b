// Per-resource cache options (`forResource(resource, options)`, a controller's `for`/`owns`/`watches`):
// what they mean, their checks, and which options belong to the whole factory instead.

import { InvalidOptionError, validateOptions, type OptionSchemaFor } from '../core/options.js';
import type { GroupVersionResource, PartialObjectMetadata } from '../core/types.js';
import type { Indexers } from '../store/types.js';

/**
 * How one resource is cached: the options of `SharedInformerFactory.forResource(resource, options)`,
 * `newInformer(resource, options)` and of a Controller's `for` / `owns` / `watches`. The factory keeps
 * ONE informer per resource: a second caller that passes an option with another value than the
 * existing informer's is refused (`INVALID_OPTION`, naming both callers and both values); a caller that
 * leaves an option out takes the existing informer as it is (see docs/store.md, "Per-resource cache
 * options").
 */
export interface ResourceCacheOptions<T> {
  /**
   * List and watch only these namespaces (one list and watch each, one cache): `forResource` returns a
   * `NamespaceSetInformer`, whose set can change while it runs. Replaces the factory's `namespace` for
   * this resource. Not for a cluster-scoped resource; never empty. Default: the factory's `namespace`
   * (every namespace without one).
   */
  namespaces?: readonly string[];
  /** A label selector for this resource's lists and watches, ANDed with the factory's. Default: the factory's alone. */
  labelSelector?: string;
  /** A field selector for this resource's lists and watches, ANDed with the factory's. Default: the factory's alone. */
  fieldSelector?: string;
  /**
   * Applied to each object of this resource before it enters the cache, after the factory's
   * `transform` (and after `stripManagedFields`). Compared by identity with another caller's. Default: none.
   */
  transform?: (obj: T) => T;
  /**
   * Cache `PartialObjectMetadata` (apiVersion `meta.k8s.io/v1`, kind `PartialObjectMetadata`, the
   * metadata alone) instead of whole objects: the server sends only metadata on every list and watch,
   * so the cache holds a fraction of the bytes. Read the body with a `get` when it is needed. A
   * `transform` given with it is probed once with an object that records what is read: one that reads
   * anything but `apiVersion`, `kind` and `metadata` is refused. Default `false`.
   */
  metadataOnly?: boolean;
  /**
   * Drop `metadata.managedFields` (server-side apply's bookkeeping, often the largest part of an object)
   * before objects enter the cache. Default `false` for `forResource` and `newInformer`; `true` for a
   * Controller's informers (pass `false` there to read managedFields from its cache, e.g. for `extract`).
   */
  stripManagedFields?: boolean;
  /**
   * How often every cached object of this resource is re-delivered to handlers, in ms (`0`: never).
   * Default: the factory's `customResync` entry for this resource, else its `resyncPeriodMs`; given
   * with a `customResync` entry of another value, it is refused.
   */
  resyncPeriodMs?: number;
  /**
   * Index functions by name, besides the factory's `namespace` index. Merged by name with those of
   * other callers (added to the shared informer); the same name with another function is refused.
   * Default: none.
   */
  indexers?: Indexers<T>;
}

/** {@link ResourceCacheOptions} of a metadata-only cache: its objects (and its transform's) are {@link PartialObjectMetadata}. */
export interface MetadataOnlyCacheOptions extends ResourceCacheOptions<PartialObjectMetadata> {
  /** The cache holds `PartialObjectMetadata` (the server is asked for metadata only). */
  metadataOnly: true;
}

/** {@link ResourceCacheOptions} with a namespace set: `forResource` returns a `NamespaceSetInformer`. */
export interface NamespaceSetCacheOptions<T> extends ResourceCacheOptions<T> {
  /** The namespaces cached, one list and watch each; changeable while running (`addNamespace`, `removeNamespace`). */
  namespaces: readonly string[];
}

/** The rule of each {@link ResourceCacheOptions} field. */
export const RESOURCE_CACHE_OPTION_SCHEMA = {
  namespaces: 'any',
  labelSelector: 'labelSelector',
  fieldSelector: 'fieldSelector',
  transform: 'function',
  metadataOnly: 'boolean',
  stripManagedFields: 'boolean',
  resyncPeriodMs: 'duration',
  indexers: 'object',
} as const satisfies OptionSchemaFor<ResourceCacheOptions<unknown>>;

/** The option names of {@link ResourceCacheOptions}. */

/** Options of the whole factory that a resource cannot have alone: where each belongs, for the error. */
const FACTORY_ONLY: Readonly<Record<string, string>> = {
  namespace: "the factory's one namespace for every informer; for this resource alone pass namespaces: ['...']",
  customResync: "the factory's per-resource table; for this resource alone pass resyncPeriodMs",
  shard: 'an option of the whole factory (new SharedInformerFactory(kubeConfig, { shard })), or of newInformer(resource, { shard })',
  logger: 'an option of the whole factory (new SharedInformerFactory(kubeConfig, { logger }))',
  informerOptions: 'an option of the whole factory (new SharedInformerFactory(kubeConfig, { informerOptions }))',
  onError: 'an option of the whole factory (new SharedInformerFactory(kubeConfig, { onError }))',
  agent: 'an option of the whole factory: every list and watch shares its connections (new SharedInformerFactory(kubeConfig, { agent }))',
  watchCoalesceMs: 'an option of the whole factory (new SharedInformerFactory(kubeConfig, { watchCoalesceMs }))',
  listWatchFor: 'an option of the whole factory (new SharedInformerFactory(undefined, { listWatchFor }))',
  clock: "an option of every informer: the factory's informerOptions.clock",
};

/** Options of one resource that the factory cannot have for all: where each belongs, for the error. */
const RESOURCE_ONLY: Readonly<Record<string, string>> = {
  namespaces: 'an option of one resource (factory.forResource(resource, { namespaces })); the factory has namespace, one namespace for every informer',
  metadataOnly: 'an option of one resource: factory.forResource(resource, { metadataOnly: true }) (or a controller\'s owns(resource, { metadataOnly: true }))',
  stripManagedFields: 'an option of one resource: factory.forResource(resource, { stripManagedFields: true }); for every informer pass transform: stripManagedFields',
  indexers: 'an option of one resource: factory.forResource(resource, { indexers }) (or informer.addIndexers)',
};

/** Refuses a factory option passed to `owner` (a per-resource call) with where it belongs. */
function refuseFactoryOptions(owner: string, options: object, allowed: readonly string[]): void {
  for (const key of Object.keys(options)) {
    const where = allowed.includes(key) ? undefined : FACTORY_ONLY[key];
    if (where !== undefined) throw new InvalidOptionError(`${owner}: option ${key} is not a per-resource option: it is ${where}`);
  }
}

/** Refuses per-resource options given to the factory's constructor, with where they belong. */
export function refuseResourceOptions(owner: string, options: unknown): void {
  if (options === null || typeof options !== 'object') return;
  for (const key of Object.keys(options)) {
    const where = RESOURCE_ONLY[key];
    if (where !== undefined) throw new InvalidOptionError(`${owner}: option ${key} is not a factory option: it is ${where}`);
  }
}

/**
 * Checks the cache options of `resource` given to `owner`: a factory option in the wrong place, the
 * rules of {@link RESOURCE_CACHE_OPTION_SCHEMA} (with the closest name for a misspelt one),
 * `namespaces` (a non-empty array of distinct non-empty names; not for a cluster-scoped resource),
 * and a metadata-only `transform` that reads more than metadata. `extra` names the caller's own further
 * options (a controller's `predicates`), checked by the caller.
 */
export function checkCacheOptions(owner: string, resource: GroupVersionResource & { namespaced?: boolean }, options: unknown, extra: readonly string[] = []): void {
  if (options === undefined) return;
  if (options !== null && typeof options === 'object') refuseFactoryOptions(owner, options, extra);
  const own: Record<string, 'any'> = Object.fromEntries(extra.map((k) => [k, 'any' as const]));
  validateOptions<Record<string, unknown>>(owner, options as Record<string, unknown>, { ...RESOURCE_CACHE_OPTION_SCHEMA, ...own });
  const o = options as ResourceCacheOptions<unknown>;
  if (o.namespaces !== undefined) checkNamespaces(owner, resource, o.namespaces);
  if (o.indexers !== undefined) {
    for (const [name, fn] of Object.entries(o.indexers)) {
      if (typeof fn !== 'function') throw new InvalidOptionError(`${owner}: option indexers.${name} must be an index function, got ${typeof fn}`);
    }
  }
  if (o.metadataOnly === true && o.transform !== undefined) probeMetadataTransform(owner, o.transform);
}

function checkNamespaces(owner: string, resource: { namespaced?: boolean; resource: string }, namespaces: unknown): void {
  if (!Array.isArray(namespaces) || namespaces.some((n) => typeof n !== 'string' || n === '')) {
    throw new InvalidOptionError(`${owner}: option namespaces must be an array of namespace names, got ${JSON.stringify(namespaces)}`);
  }
  if (namespaces.length === 0) {
    throw new InvalidOptionError(`${owner}: option namespaces is empty: a cache of no namespace would never hold anything (leave the option out for the factory's namespace)`);
  }
  const seen = new Set<string>();
  for (const n of namespaces as string[]) {
    if (seen.has(n)) throw new InvalidOptionError(`${owner}: option namespaces names ${n} twice`);
    seen.add(n);
  }
  if (resource.namespaced === false) {
    throw new InvalidOptionError(`${owner}: option namespaces: ${resource.resource} is cluster-scoped (its objects live in no namespace)`);
  }
}

/** What a transform of a metadata-only cache may read: a PartialObjectMetadata has nothing else. */
const METADATA_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Calls `transform` once with a PartialObjectMetadata whose other fields record what is read: a
 * transform that reads `spec`, `status`, `data`, ... would see `undefined` on every object of a
 * metadata-only cache, so it is refused, naming what it read. A throw of the probe itself is left to
 * the informer (the same object shape reaches it there).
 */
function probeMetadataTransform(owner: string, transform: (obj: unknown) => unknown): void {
  const read = new Set<string>();
  const probe = new Proxy(
    { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'probe', namespace: 'probe', resourceVersion: '1', labels: {}, annotations: {} } },
    {
      get(target, prop, receiver) {
        if (typeof prop === 'string' && !METADATA_FIELDS.has(prop) && prop !== 'then' && prop !== 'toJSON' && prop !== 'constructor') read.add(prop);
        return Reflect.get(target, prop, receiver) as unknown;
      },
    },
  );
  try {
    transform(probe);
  } catch {
    // judged by what it read before it threw
  }
  if (read.size > 0) {
    const fields = [...read].join(', ');
    throw new InvalidOptionError(
      `${owner}: option transform reads ${fields}, which a metadataOnly cache never has (its objects are PartialObjectMetadata: apiVersion, kind and metadata only); ` +
        'drop metadataOnly, or write the transform over metadata alone',
    );
  }
}
