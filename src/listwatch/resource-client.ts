// A typed client for one resource: get, list, create, update, patch, server-side apply, delete, the status and scale subresources.

import { validateOptions, InvalidOptionError, type OptionSchema } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { applyConflictFromStatus, checkApplyConfiguration, checkFieldManager, isBuiltInGroup } from './apply.js';
import type {
  ApplyConfiguration,
  ApplyOptions,
  ClientListOptions,
  DeleteOptions,
  DeleteResult,
  JsonPatchOperation,
  PatchType,
  ReadOptions,
  Scale,
  Status,
  WriteOptions,
} from './client-types.js';
import { statusErrorFromResponse } from './errors.js';
import { readBody } from './transport.js';
import { resourcePath } from './paths.js';
import { Transport, type KubeConfigLike } from './transport.js';
import type { ObjectList } from './types.js';

export type { JsonPatchOperation } from './client-types.js';

/** Options of {@link newResourceClient}. */
export interface ResourceClientOptions {
  /** The `fieldManager` every write names (server-side field ownership), at most 128 characters. Default `'kube-informer'`. */
  fieldManager?: string;
  /** The `User-Agent` header. Default `'kube-informer'`. */
  userAgent?: string;
}

const JSON_TYPE = 'application/json';
const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;
const APPLY_TYPE = 'application/apply-patch+yaml';

const WRITE_SCHEMA: OptionSchema = { dryRun: 'boolean', fieldManager: 'string', signal: 'object' };
const READ_SCHEMA: OptionSchema = { signal: 'object' };
const DELETE_SCHEMA: OptionSchema = {
  preconditions: { resourceVersion: 'string', uid: 'string' },
  propagationPolicy: ['Foreground', 'Background', 'Orphan'],
  gracePeriodSeconds: 'count',
  dryRun: 'boolean',
  signal: 'object',
};
const LIST_SCHEMA: OptionSchema = {
  namespace: 'string',
  labelSelector: 'labelSelector',
  fieldSelector: 'fieldSelector',
  limit: 'count',
  continue: 'string',
  resourceVersion: 'string',
  resourceVersionMatch: ['NotOlderThan', 'Exact'],
  signal: 'object',
};
const APPLY_SCHEMA: OptionSchema = { fieldManager: 'string', force: 'boolean', dryRun: 'boolean', signal: 'object' };

interface Meta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; deletionTimestamp?: string; finalizers?: readonly string[]; deletionGracePeriodSeconds?: number };
}

/** Options of {@link ResourceClient.createOrUpdate}. */
export interface CreateOrUpdateOptions extends WriteOptions {
  /** How many times a 409 (a concurrent create or update) starts over from the read. Default 0 (controller-runtime's). */
  conflictRetries?: number;
}

/** What {@link ResourceClient.createOrUpdate} did, and the object as the server answered (or as read, when unchanged). */
export interface CreateOrUpdateResult<T> {
  /** `created`, `updated`, or `unchanged` (nothing was written). */
  result: 'created' | 'updated' | 'unchanged';
  /** The object. */
  object: T;
}

/** An AbortSignal given where options are taken is shorthand for `{ signal }`. */
function opts<O extends { signal?: AbortSignal }>(options: O | AbortSignal | undefined): O {
  return options instanceof AbortSignal ? ({ signal: options } as O) : (options ?? ({} as O));
}

/**
 * Reads and writes objects of one resource, typed by its descriptor, over the same transport as the
 * informers (the KubeConfig's credentials, a keep-alive pool). Each method takes an options object
 * (where an `AbortSignal` alone is shorthand for `{ signal }`) and rejects with `ApiStatusError` for
 * a non-2xx answer (its `statusCode` and Status `reason`: test them with `isNotFound`, `isConflict`
 * …), `ApplyConflictError` for an apply conflict, `NetworkError`, `KubeConfigError` or `AbortedError`.
 * Mistakes found before sending — a namespaced resource without a namespace, an object without
 * `metadata.name`, an `update` without `metadata.resourceVersion`, a strategic merge patch of a custom
 * resource, an apply configuration without its identity, a field manager over 128 characters, an
 * unknown option — reject with `INVALID_OPTION` and send nothing. Call `close()` when done: it closes
 * the pooled connections.
 */
export class ResourceClient<T> {
  readonly #resource: ResourceDescriptor<T>;
  readonly #transport: Transport;
  readonly #fieldManager: string;

  /** Use {@link newResourceClient}. */
  constructor(kubeConfig: KubeConfigLike, resource: ResourceDescriptor<T>, options: ResourceClientOptions = {}) {
    validateOptions('ResourceClient', options, { fieldManager: 'string', userAgent: 'string' });
    this.#resource = resource;
    this.#fieldManager = options.fieldManager ?? 'kube-informer';
    checkFieldManager(`ResourceClient(${resource.resource})`, this.#fieldManager);
    this.#transport = new Transport(kubeConfig, { userAgent: options.userAgent ?? 'kube-informer' });
  }

  /** GET one object. */
  async get(name: string, namespace?: string, options?: ReadOptions | AbortSignal): Promise<T> {
    const o = this.#check('get', opts(options), READ_SCHEMA);
    return this.#send('GET', this.#path(namespace, this.#name(name)), undefined, undefined, o.signal);
  }

  /**
   * GET a list (one page): selectors, `limit`/`continue` paging and `resourceVersion` /
   * `resourceVersionMatch` as the Kubernetes API defines them. Follow `metadata.continue` for the
   * next page; a 410 Expired (`isGone`) means the continue token is too old: list again from the start.
   */
  async list(options?: ClientListOptions | AbortSignal): Promise<ObjectList<T>> {
    const o = this.#check('list', opts(options), LIST_SCHEMA);
    const params = new URLSearchParams();
    for (const k of ['labelSelector', 'fieldSelector', 'continue', 'resourceVersion', 'resourceVersionMatch'] as const) {
      const v = o[k];
      if (v !== undefined && v !== '') params.set(k, v);
    }
    if (o.limit !== undefined && o.limit > 0) params.set('limit', String(o.limit));
    const base = resourcePath(this.#resource, this.#resource.namespaced ? o.namespace : undefined);
    const query = params.toString();
    return this.#send('GET', query === '' ? base : `${base}?${query}`, undefined, undefined, o.signal);
  }

  /** POST a new object (its namespace from `metadata.namespace`). 409 AlreadyExists when the name is taken. */
  async create(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    const o = this.#check('create', opts(options), WRITE_SCHEMA);
    return this.#write('POST', this.#path((obj as Meta).metadata?.namespace), obj, JSON_TYPE, o);
  }

  /**
   * PUT the whole object with optimistic concurrency: `metadata.resourceVersion` is required
   * (`INVALID_OPTION` without it), and a stale one is refused with 409 Conflict (`isConflict`): read
   * again and retry. Use {@link replace} to overwrite without the check.
   */
  async update(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    const o = this.#check('update', opts(options), WRITE_SCHEMA);
    this.#requireVersion('update', obj);
    return this.#put('', obj, o);
  }

  /** PUT the whole object; `metadata.resourceVersion`, when set, makes it compare-and-swap (409 when stale). */
  async replace(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    return this.#put('', obj, this.#check('replace', opts(options), WRITE_SCHEMA));
  }

  /** GET the object through the status subresource. */
  async getStatus(name: string, namespace?: string, options?: ReadOptions | AbortSignal): Promise<T> {
    const o = this.#check('getStatus', opts(options), READ_SCHEMA);
    return this.#send('GET', `${this.#path(namespace, this.#name(name))}/status`, undefined, undefined, o.signal);
  }

  /** PUT the object's `status` through the status subresource, with optimistic concurrency (`metadata.resourceVersion` required). */
  async updateStatus(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    const o = this.#check('updateStatus', opts(options), WRITE_SCHEMA);
    this.#requireVersion('updateStatus', obj);
    return this.#put('/status', obj, o);
  }

  /** PUT the object's `status` through the status subresource; `metadata.resourceVersion`, when set, makes it compare-and-swap. */
  async replaceStatus(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    return this.#put('/status', obj, this.#check('replaceStatus', opts(options), WRITE_SCHEMA));
  }

  /**
   * PATCH with a JSON Patch (`'json'`, RFC 6902: use `test` operations as guards), a JSON merge patch
   * (`'merge'`) or a strategic merge patch (`'strategic'`: built-in resources only — refused with
   * `INVALID_OPTION` for a custom resource, which the server would refuse with 415).
   */
  async patch(name: string, namespace: string | undefined, patch: readonly JsonPatchOperation[] | object, type: PatchType, options?: WriteOptions | AbortSignal): Promise<T> {
    const o = this.#check('patch', opts(options), WRITE_SCHEMA);
    return this.#write('PATCH', this.#path(namespace, this.#name(name)), patch, this.#patchType(type), o);
  }

  /** PATCH the status subresource (see {@link ResourceClient.patch} for the types). */
  async patchStatus(name: string, namespace: string | undefined, patch: readonly JsonPatchOperation[] | object, type: PatchType, options?: WriteOptions | AbortSignal): Promise<T> {
    const o = this.#check('patchStatus', opts(options), WRITE_SCHEMA);
    return this.#write('PATCH', `${this.#path(namespace, this.#name(name))}/status`, patch, this.#patchType(type), o);
  }

  /**
   * Server-side apply: sends `config` as an apply patch (`application/apply-patch+yaml`; JSON is
   * YAML). The object is created when absent; the fields `config` sets become owned by the field
   * manager; fields it owned before and `config` leaves out are removed (unless another manager owns
   * them). A field another manager owns with another value is a conflict: the request fails with
   * `ApplyConflictError` (409, from `kube-informer/objects`) naming each manager and field, unless `force` takes them.
   * `config` must carry `apiVersion`, `kind`, `metadata.name` (and `metadata.namespace` for a
   * namespaced resource): `INVALID_OPTION` before sending otherwise.
   */
  async apply(config: ApplyConfiguration<T>, options: ApplyOptions = {}): Promise<T> {
    return this.#apply('', 'apply', config, options);
  }

  /** Server-side apply of `config.status` through the status subresource (see {@link apply}). */
  async applyStatus(config: ApplyConfiguration<T>, options: ApplyOptions = {}): Promise<T> {
    return this.#apply('/status', 'applyStatus', config, options);
  }

  /** GET the scale subresource (`autoscaling/v1` Scale) of a workload. */
  async getScale(name: string, namespace?: string, options?: ReadOptions | AbortSignal): Promise<Scale> {
    const o = this.#check('getScale', opts(options), READ_SCHEMA);
    return this.#send('GET', `${this.#path(namespace, this.#name(name))}/scale`, undefined, undefined, o.signal);
  }

  /** PUT the scale subresource: `spec.replicas`; `metadata.resourceVersion`, when set, makes it compare-and-swap. */
  async updateScale(scale: Scale, options?: WriteOptions | AbortSignal): Promise<Scale> {
    const o = this.#check('updateScale', opts(options), WRITE_SCHEMA);
    const m = scale.metadata;
    const body: Scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', ...scale };
    return this.#write('PUT', `${this.#path(m?.namespace, this.#name(m?.name))}/scale`, body, JSON_TYPE, o);
  }

  /**
   * DELETE one object. Resolves with a {@link DeleteResult}: `{ gone: true, status }` when the server
   * deleted it and answered a `Status` (most resources), `{ gone: true, object }` when it answered
   * the final state (pods), `{ gone: false, object }` when the object is only marked for deletion
   * (`deletionTimestamp` set) and finalizers (or a grace period) hold it. 404 NotFound when it is
   * not there (`isNotFound`); 409 Conflict when a precondition fails.
   */
  async delete(name: string, namespace?: string, options: DeleteOptions = {}, signal?: AbortSignal): Promise<DeleteResult<T>> {
    const o = this.#check('delete', options, DELETE_SCHEMA);
    const { signal: inner, dryRun, ...rest } = o;
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...rest };
    const path = this.#path(namespace, this.#name(name)) + (dryRun === true ? '?dryRun=All' : '');
    const answer = await this.#send<T | Status>('DELETE', path, JSON.stringify(body), JSON_TYPE, signal ?? inner);
    if ((answer as { kind?: unknown }).kind === 'Status') return { gone: true, status: answer as Status };
    const meta = (answer as Meta).metadata;
    const held = meta?.deletionTimestamp !== undefined && ((meta.finalizers?.length ?? 0) > 0 || (meta.deletionGracePeriodSeconds ?? 0) > 0);
    return held ? { gone: false, object: answer as T } : { gone: true, object: answer as T };
  }

  /**
   * Creates or updates one object with controller-runtime's `CreateOrUpdate` semantics: reads the
   * object `obj` names (`metadata.name`, `metadata.namespace`); when absent, calls `mutate(obj)` and
   * creates it (`created`); when present, calls `mutate` on a copy of the live object and updates it
   * (`updated`, optimistic concurrency: the read's `resourceVersion`) — or writes nothing when
   * `mutate` changed nothing (`unchanged`). `mutate` must not change the name or namespace
   * (`INVALID_OPTION`). A concurrent writer makes the write fail with 409 (`isConflict`,
   * `isAlreadyExists`); `conflictRetries` reads and mutates again that many times before rejecting.
   */
  async createOrUpdate(obj: T, mutate: (obj: T) => void | Promise<void>, options: CreateOrUpdateOptions = {}): Promise<CreateOrUpdateResult<T>> {
    const o = this.#check('createOrUpdate', options, { ...WRITE_SCHEMA, conflictRetries: 'count' });
    const { conflictRetries = 0, ...write } = o;
    const m = (obj as Meta).metadata;
    const name = this.#name(m?.name);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#createOrUpdateOnce(obj, name, m?.namespace, mutate, write);
      } catch (err) {
        const code = (err as { statusCode?: unknown }).statusCode;
        if (code !== 409 || attempt >= conflictRetries || write.signal?.aborted === true) throw err;
      }
    }
  }

  async #createOrUpdateOnce(obj: T, name: string, namespace: string | undefined, mutate: (obj: T) => void | Promise<void>, write: WriteOptions): Promise<CreateOrUpdateResult<T>> {
    let live: T | undefined;
    try {
      live = await this.get(name, namespace, { signal: write.signal });
    } catch (err) {
      if ((err as { statusCode?: unknown }).statusCode !== 404) throw err;
    }
    if (live === undefined) {
      const fresh = structuredClone(obj);
      await mutate(fresh);
      this.#sameKey(fresh, name, namespace);
      return { result: 'created', object: await this.create(fresh, write) };
    }
    const before = JSON.stringify(live);
    await mutate(live);
    this.#sameKey(live, name, namespace);
    if (JSON.stringify(live) === before) return { result: 'unchanged', object: live };
    return { result: 'updated', object: await this.update(live, write) };
  }

  #sameKey(obj: T, name: string, namespace: string | undefined): void {
    const m = (obj as Meta).metadata;
    if (m?.name !== name || (this.#resource.namespaced && m.namespace !== namespace)) {
      throw new InvalidOptionError(`ResourceClient(${this.#resource.resource}).createOrUpdate: mutate must not change the name or namespace (${namespace ?? ''}/${name} became ${m?.namespace ?? ''}/${m?.name ?? ''})`);
    }
  }

  /** Closes the pooled connections. The client can still be used (it opens new ones). */
  close(): void {
    this.#transport.close();
  }

  #check<O>(verb: string, options: O, schema: OptionSchema): O {
    // Checked as `unknown`: each verb's schema above is written out in full (every key of its options type).
    const value: unknown = options;
    validateOptions(`ResourceClient(${this.#resource.resource}).${verb}`, value, schema);
    return options;
  }

  #name(name: string | undefined): string {
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError(`ResourceClient(${this.#resource.resource}): the object needs metadata.name`);
    return name;
  }

  #requireVersion(verb: string, obj: T): void {
    const rv = (obj as Meta).metadata?.resourceVersion;
    if (typeof rv !== 'string' || rv === '') {
      throw new InvalidOptionError(`ResourceClient(${this.#resource.resource}).${verb}: the object needs metadata.resourceVersion (optimistic concurrency); use replace() to overwrite without it`);
    }
  }

  #patchType(type: PatchType): string {
    if (!Object.hasOwn(PATCH_TYPES, type)) throw new InvalidOptionError(`ResourceClient(${this.#resource.resource}).patch: the patch type must be 'json', 'merge' or 'strategic', got ${JSON.stringify(type)}`);
    if (type === 'strategic' && !isBuiltInGroup(this.#resource.group)) {
      throw new InvalidOptionError(
        `ResourceClient(${this.#resource.resource}.${this.#resource.group}).patch: a strategic merge patch works on built-in resources only; the server refuses it for a custom resource (use 'merge', 'json' or apply)`,
      );
    }
    return PATCH_TYPES[type];
  }

  #path(namespace: string | undefined, name?: string): string {
    const r = this.#resource;
    if (r.namespaced && (namespace === undefined || namespace === '')) {
      throw new InvalidOptionError(`ResourceClient(${r.resource}): ${r.resource} are namespaced; give a namespace`);
    }
    const base = resourcePath(r, r.namespaced ? namespace : undefined);
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  #put(sub: string, obj: T, o: WriteOptions): Promise<T> {
    const m = (obj as Meta).metadata;
    return this.#write('PUT', `${this.#path(m?.namespace, this.#name(m?.name))}${sub}`, obj, JSON_TYPE, o);
  }

  async #apply(sub: string, verb: string, config: ApplyConfiguration<T>, options: ApplyOptions): Promise<T> {
    const o = this.#check(verb, options, APPLY_SCHEMA);
    const fieldManager = o.fieldManager ?? this.#fieldManager;
    const owner = `ResourceClient(${this.#resource.resource}).${verb}`;
    checkFieldManager(owner, fieldManager);
    const { name, namespace } = checkApplyConfiguration(owner, this.#resource, config);
    const params = new URLSearchParams({ fieldManager });
    if (o.force === true) params.set('force', 'true');
    if (o.dryRun === true) params.set('dryRun', 'All');
    const path = `${this.#path(namespace, name)}${sub}?${params.toString()}`;
    return this.#send('PATCH', path, JSON.stringify(config), APPLY_TYPE, o.signal, (err) => applyConflictFromStatus(err, fieldManager));
  }

  #write<R>(method: string, path: string, body: unknown, contentType: string, o: WriteOptions): Promise<R> {
    const fieldManager = o.fieldManager ?? this.#fieldManager;
    if (o.fieldManager !== undefined) checkFieldManager(`ResourceClient(${this.#resource.resource})`, fieldManager);
    const params = new URLSearchParams({ fieldManager });
    if (o.dryRun === true) params.set('dryRun', 'All');
    return this.#send(method, `${path}?${params.toString()}`, JSON.stringify(body), contentType, o.signal);
  }

  async #send<R>(
    method: string,
    pathAndQuery: string,
    body: string | undefined,
    contentType: string | undefined,
    signal = new AbortController().signal,
    refine?: (err: ReturnType<typeof statusErrorFromResponse>) => Error,
  ): Promise<R> {
    const { res, release } = await this.#transport.send(method, pathAndQuery, { accept: JSON_TYPE, body, contentType }, signal);
    const what = `${method} ${pathAndQuery.split('?')[0]}`;
    try {
      const text = await readBody(res, signal, what);
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) {
        const err = statusErrorFromResponse(res, text, what);
        throw refine === undefined ? err : refine(err);
      }
      return JSON.parse(text) as R;
    } finally {
      release();
    }
  }
}

/** A {@link ResourceClient} for `resource` on the KubeConfig's current cluster. */
export function newResourceClient<T>(kubeConfig: KubeConfigLike, resource: ResourceDescriptor<T>, options: ResourceClientOptions = {}): ResourceClient<T> {
  return new ResourceClient(kubeConfig, resource, options);
}
