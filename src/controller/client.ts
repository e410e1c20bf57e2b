// The client bound to a reconcile (`ctx.client(resource)`): its signal on every request, every write's answer recorded for read-your-writes.

import type { ResourceDescriptor } from '../core/resources.js';
import type { Verb } from '../core/permissions.js';
import type {
  ApplyConfiguration,
  ApplyOptions,
  ClientListOptions,
  CreateOrUpdateOptions,
  CreateOrUpdateResult,
  DeleteOptions,
  DeleteResult,
  JsonPatchOperation,
  ObjectList,
  PatchType,
  ReadOptions,
  ResourceClient,
  Scale,
  WriteOptions,
} from '../listwatch/index.js';

/** Where a {@link ReconcileClient} records what it wrote: the reconcile's key in the controller's `ObservedWrites`. */
export interface WriteRecorder {
  /** Records the answer of a write (an object with a resource version). */
  wrote(resource: ResourceDescriptor<unknown>, answer: unknown): void;
  /** Records a deletion of `namespace/name` (its uid when known). */
  deleted(resource: ResourceDescriptor<unknown>, name: string, namespace: string | undefined, uid: string | undefined): void;
}

interface Meta {
  metadata?: { uid?: string; name?: string; namespace?: string };
}

/**
 * The controller's check of one request (see `ControllerBuilder.uses`): throws
 * `PERMISSION_NOT_DECLARED` when the controller declared its uses and none covers the request.
 */
export type PermissionCheck = (resource: ResourceDescriptor<unknown>, verb: Verb, subresource: string | undefined, namespace: string | undefined, name: string | undefined) => void;

const NO_CHECK: PermissionCheck = () => undefined;

/**
 * A typed client for one resource, bound to one reconcile — what `ctx.client(resource)` returns. It
 * has {@link ResourceClient}'s methods with the same arguments and answers, and adds two things:
 *
 * - every request carries the reconcile's signal (`ctx.signal`), combined with the `signal` a call
 *   passes: a controller's stop or the reconcile's deadline aborts it;
 * - every write's answer is recorded for read-your-writes, as `ctx.wrote` records it: the key's next
 *   reconcile waits (at most `observeTimeoutMs`) until the caches hold what this one wrote. A delete
 *   is recorded as "the cache no longer holds the object (with that uid), or holds it with a
 *   `deletionTimestamp`". Writes with `dryRun: true`, `createOrUpdate` answers `unchanged`, and
 *   writes to a resource the controller does not watch (`for`, `owns`, `watches`) are not recorded
 *   — nothing could observe them — and that is no error.
 *
 * - every request is checked against what the controller declared (`ControllerBuilder.uses`, plus the
 *   `list` its informers need): once it declared anything, a request none covers rejects with
 *   `PERMISSION_NOT_DECLARED` naming the missing rule, before anything is sent.
 *
 * The field manager of every write is the controller's (`ControllerOptions.fieldManager`, default its
 * `name`), unless a call's options name another.
 *
 * Warning: a watched resource's write the controller's informer cannot see — an object in another
 * namespace than the factory's, or without the labels of its `labelSelector` — is waited for until
 * `observeTimeoutMs` passes (a warning is logged): keep writes inside what the factory watches.
 */
export class ReconcileClient<T> {
  readonly #client: ResourceClient<T>;
  readonly #resource: ResourceDescriptor<T>;
  readonly #signal: AbortSignal;
  readonly #recorder: WriteRecorder;
  readonly #check: PermissionCheck;

  /**
   * Made by `ctx.client(resource)`.
   * @hidden
   */
  constructor(client: ResourceClient<T>, resource: ResourceDescriptor<T>, signal: AbortSignal, recorder: WriteRecorder, check: PermissionCheck = NO_CHECK) {
    this.#client = client;
    this.#resource = resource;
    this.#signal = signal;
    this.#recorder = recorder;
    this.#check = check;
  }

  /** The resource this client reads and writes. */
  get resource(): ResourceDescriptor<T> {
    return this.#resource;
  }

  /** GET one object (see `ResourceClient.get`). */
  async get(name: string, namespace?: string, options?: ReadOptions | AbortSignal): Promise<T> {
    this.#allow('get', undefined, namespace, name);
    return this.#client.get(name, namespace, this.#bind(options));
  }

  /** GET a list, one page (see `ResourceClient.list`). */
  async list(options?: ClientListOptions | AbortSignal): Promise<ObjectList<T>> {
    this.#allow('list', undefined, options instanceof AbortSignal ? undefined : options?.namespace, undefined);
    return this.#client.list(this.#bind(options));
  }

  /** POST a new object (see `ResourceClient.create`); the answer is recorded. */
  async create(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    this.#allow('create', undefined, (obj as Meta).metadata?.namespace, undefined);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.create(obj, o), o);
  }

  /** PUT the whole object with optimistic concurrency (see `ResourceClient.update`); the answer is recorded. */
  async update(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    this.#allowObject('update', undefined, obj);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.update(obj, o), o);
  }

  /** PUT the whole object (see `ResourceClient.replace`); the answer is recorded. */
  async replace(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    this.#allowObject('update', undefined, obj);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.replace(obj, o), o);
  }

  /** GET the object through the status subresource (see `ResourceClient.getStatus`). */
  async getStatus(name: string, namespace?: string, options?: ReadOptions | AbortSignal): Promise<T> {
    this.#allow('get', 'status', namespace, name);
    return this.#client.getStatus(name, namespace, this.#bind(options));
  }

  /** PUT the status with optimistic concurrency (see `ResourceClient.updateStatus`); the answer is recorded. */
  async updateStatus(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    this.#allowObject('update', 'status', obj);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.updateStatus(obj, o), o);
  }

  /** PUT the status (see `ResourceClient.replaceStatus`); the answer is recorded. */
  async replaceStatus(obj: T, options?: WriteOptions | AbortSignal): Promise<T> {
    this.#allowObject('update', 'status', obj);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.replaceStatus(obj, o), o);
  }

  /** PATCH (JSON, merge or strategic merge; see `ResourceClient.patch`); the answer is recorded. */
  async patch(name: string, namespace: string | undefined, patch: readonly JsonPatchOperation[] | object, type: PatchType, options?: WriteOptions | AbortSignal): Promise<T> {
    this.#allow('patch', undefined, namespace, name);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.patch(name, namespace, patch, type, o), o);
  }

  /** PATCH the status subresource (see `ResourceClient.patchStatus`); the answer is recorded. */
  async patchStatus(name: string, namespace: string | undefined, patch: readonly JsonPatchOperation[] | object, type: PatchType, options?: WriteOptions | AbortSignal): Promise<T> {
    this.#allow('patch', 'status', namespace, name);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.patchStatus(name, namespace, patch, type, o), o);
  }

  /** Server-side apply (see `ResourceClient.apply`); the field manager defaults to the controller's. The answer is recorded. */
  async apply(config: ApplyConfiguration<T>, options: ApplyOptions = {}): Promise<T> {
    this.#allowObject('patch', undefined, config);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.apply(config, o), o);
  }

  /** Server-side apply of the status (see `ResourceClient.applyStatus`). The answer is recorded. */
  async applyStatus(config: ApplyConfiguration<T>, options: ApplyOptions = {}): Promise<T> {
    this.#allowObject('patch', 'status', config);
    const o = this.#bind(options);
    return this.#wrote(await this.#client.applyStatus(config, o), o);
  }

  /** GET the scale subresource (see `ResourceClient.getScale`). */
  async getScale(name: string, namespace?: string, options?: ReadOptions | AbortSignal): Promise<Scale> {
    this.#allow('get', 'scale', namespace, name);
    return this.#client.getScale(name, namespace, this.#bind(options));
  }

  /** PUT the scale subresource (see `ResourceClient.updateScale`); recorded as a write of the workload at the answer's resource version. */
  async updateScale(scale: Scale, options?: WriteOptions | AbortSignal): Promise<Scale> {
    this.#allowObject('update', 'scale', scale);
    const o = this.#bind(options);
    const answer = await this.#client.updateScale(scale, o);
    const m = answer.metadata;
    if (o.dryRun !== true && m?.name !== undefined) this.#recorder.wrote(this.#resource, { metadata: { name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion } });
    return answer;
  }

  /**
   * DELETE one object (see `ResourceClient.delete`). Recorded as a deletion: the key's next reconcile
   * waits until the cache no longer holds the object (that uid) or holds it with a `deletionTimestamp`.
   * A 404 rejects as with `ResourceClient` (nothing is recorded).
   */
  async delete(name: string, namespace?: string, options: DeleteOptions = {}, signal?: AbortSignal): Promise<DeleteResult<T>> {
    this.#allow('delete', undefined, namespace, name);
    const o = this.#bind(signal === undefined ? options : { ...options, signal: combine(options.signal, signal) });
    const result = await this.#client.delete(name, namespace, o);
    if (o.dryRun !== true) {
      const uid = (result.object as Meta | undefined)?.metadata?.uid ?? (result.gone ? result.status?.details?.uid : undefined);
      this.#recorder.deleted(this.#resource, name, namespace, uid);
    }
    return result;
  }

  /**
   * Creates or updates one object with controller-runtime's `CreateOrUpdate` semantics (see
   * `ResourceClient.createOrUpdate`); a `created` or `updated` answer is recorded.
   */
  async createOrUpdate(obj: T, mutate: (obj: T) => void | Promise<void>, options: CreateOrUpdateOptions = {}): Promise<CreateOrUpdateResult<T>> {
    // It may read, create and update: all three are checked before the read.
    this.#allowObject('get', undefined, obj);
    this.#allow('create', undefined, (obj as Meta).metadata?.namespace, undefined);
    this.#allowObject('update', undefined, obj);
    const o = this.#bind(options);
    const result = await this.#client.createOrUpdate(obj, mutate, o);
    if (result.result !== 'unchanged') this.#wrote(result.object, o);
    return result;
  }

  #allow(verb: Verb, subresource: string | undefined, namespace: string | undefined, name: string | undefined): void {
    this.#check(this.#resource, verb, subresource, namespace, name);
  }

  #allowObject(verb: Verb, subresource: string | undefined, obj: unknown): void {
    const m = (obj as Meta | undefined)?.metadata;
    this.#check(this.#resource, verb, subresource, m?.namespace, m?.name);
  }

  #wrote<R>(answer: R, o: { dryRun?: boolean }): R {
    if (o.dryRun !== true) this.#recorder.wrote(this.#resource, answer);
    return answer;
  }

  /** `options` with the reconcile's signal (combined with the one it carries). */
  #bind<O extends { signal?: AbortSignal }>(options: O | AbortSignal | undefined): O {
    if (options instanceof AbortSignal) return { signal: combine(options, this.#signal) } as O;
    const o = options ?? ({} as O);
    return { ...o, signal: combine(o.signal, this.#signal) };
  }
}

function combine(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a === undefined || a === b ? b : AbortSignal.any([a, b]);
}
