// A small typed client for one resource: the writes a controller makes (create, replace, patch, delete) and get.

import { validateOptions, InvalidOptionError } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { statusErrorFromResponse } from './errors.js';
import { readBody } from './list-watch.js';
import { resourcePath } from './paths.js';
import { Transport, type KubeConfigLike } from './transport.js';

/** Options of {@link newResourceClient}. */
export interface ResourceClientOptions {
  /** The `fieldManager` every write names (server-side field ownership). Default `'kube-informer'`. */
  fieldManager?: string;
  /** The `User-Agent` header. Default `'kube-informer'`. */
  userAgent?: string;
}

/** A JSON Patch (RFC 6902) operation. */
export interface JsonPatchOperation {
  /** `add`, `remove`, `replace`, `move`, `copy` or `test`. */
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  /** A JSON pointer: `/metadata/finalizers/0`. */
  path: string;
  /** The value of `add`, `replace` and `test`. */
  value?: unknown;
  /** The source pointer of `move` and `copy`. */
  from?: string;
}

/** What {@link ResourceClient.delete} accepts besides the name. */
export interface DeleteOptions {
  /** Delete only if the object still has this resource version / uid (409 Conflict otherwise). */
  preconditions?: {
    /** The resource version the object must still have. */
    resourceVersion?: string;
    /** The uid the object must still have (not a newer object of the same name). */
    uid?: string;
  };
  /** How dependents are deleted: `Foreground`, `Background` (the default server-side) or `Orphan`. */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

const JSON_TYPE = 'application/json';
const PATCH_TYPES = { json: 'application/json-patch+json', merge: 'application/merge-patch+json' } as const;

interface Meta {
  metadata?: { name?: string; namespace?: string };
}

/**
 * Reads and writes objects of one resource, typed by its descriptor, over the same transport as the
 * informers (the KubeConfig's credentials, a keep-alive pool). Each method takes an optional `signal`
 * and rejects with `ApiStatusError` for a non-2xx answer (its `statusCode` and Status `reason`: 404
 * NotFound, 409 Conflict, 422 Invalid …), `NetworkError`, `KubeConfigError` or `AbortedError`.
 * Namespaced resources need a namespace (`INVALID_OPTION` otherwise). Call `close()` when done: it
 * closes the pooled connections (incident 4: nothing left open).
 */
export class ResourceClient<T> {
  readonly #resource: ResourceDescriptor<T>;
  readonly #transport: Transport;
  readonly #fieldManager: string;

  /** Use {@link newResourceClient}. */
  constructor(kubeConfig: KubeConfigLike, resource: ResourceDescriptor<T>, options: ResourceClientOptions = {}) {
    validateOptions('ResourceClient', options, { fieldManager: 'string', userAgent: 'string' });
    this.#resource = resource;
    this.#transport = new Transport(kubeConfig, { userAgent: options.userAgent ?? 'kube-informer' });
    this.#fieldManager = options.fieldManager ?? 'kube-informer';
  }

  /** GET one object. */
  get(name: string, namespace?: string, signal?: AbortSignal): Promise<T> {
    return this.#call('GET', this.#path(namespace, name), undefined, undefined, signal);
  }

  /** POST a new object (its namespace from `metadata.namespace`). */
  create(obj: T, signal?: AbortSignal): Promise<T> {
    return this.#call('POST', this.#path((obj as Meta).metadata?.namespace), JSON.stringify(obj), JSON_TYPE, signal, true);
  }

  /** PUT the whole object; `metadata.resourceVersion` makes it compare-and-swap (409 when stale). */
  replace(obj: T, signal?: AbortSignal): Promise<T> {
    const m = (obj as Meta).metadata;
    return this.#call('PUT', this.#path(m?.namespace, this.#name(m?.name)), JSON.stringify(obj), JSON_TYPE, signal, true);
  }

  /** PUT the object's `status` through the status subresource. */
  replaceStatus(obj: T, signal?: AbortSignal): Promise<T> {
    const m = (obj as Meta).metadata;
    return this.#call('PUT', `${this.#path(m?.namespace, this.#name(m?.name))}/status`, JSON.stringify(obj), JSON_TYPE, signal, true);
  }

  /** PATCH with a JSON Patch (`'json'`, RFC 6902: use `test` operations as guards) or a JSON merge patch (`'merge'`). */
  patch(name: string, namespace: string | undefined, patch: readonly JsonPatchOperation[] | object, type: 'json' | 'merge', signal?: AbortSignal): Promise<T> {
    return this.#call('PATCH', this.#path(namespace, this.#name(name)), JSON.stringify(patch), PATCH_TYPES[type], signal, true);
  }

  /** PATCH the status subresource. */
  patchStatus(name: string, namespace: string | undefined, patch: readonly JsonPatchOperation[] | object, type: 'json' | 'merge', signal?: AbortSignal): Promise<T> {
    return this.#call('PATCH', `${this.#path(namespace, this.#name(name))}/status`, JSON.stringify(patch), PATCH_TYPES[type], signal, true);
  }

  /**
   * DELETE one object. Resolves with what the server answered: the final state, or — when it has
   * finalizers — the object as marked for deletion (`deletionTimestamp` set).
   */
  delete(name: string, namespace?: string, options: DeleteOptions = {}, signal?: AbortSignal): Promise<T> {
    try {
      validateOptions('ResourceClient.delete', options, { preconditions: { resourceVersion: 'string', uid: 'string' }, propagationPolicy: ['Foreground', 'Background', 'Orphan'] });
    } catch (err) {
      return Promise.reject(err);
    }
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'DeleteOptions', ...options });
    return this.#call('DELETE', this.#path(namespace, this.#name(name)), body, JSON_TYPE, signal);
  }

  /** Closes the pooled connections. The client can still be used (it opens new ones). */
  close(): void {
    this.#transport.close();
  }

  #name(name: string | undefined): string {
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError(`ResourceClient(${this.#resource.resource}): the object needs metadata.name`);
    return name;
  }

  #path(namespace: string | undefined, name?: string): string {
    const r = this.#resource;
    if (r.namespaced && (namespace === undefined || namespace === '')) {
      throw new InvalidOptionError(`ResourceClient(${r.resource}): ${r.resource} are namespaced; give a namespace`);
    }
    const base = resourcePath(r, r.namespaced ? namespace : undefined);
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  async #call(method: string, path: string, body: string | undefined, contentType: string | undefined, signal = new AbortController().signal, write = false): Promise<T> {
    const pathAndQuery = write ? `${path}?fieldManager=${encodeURIComponent(this.#fieldManager)}` : path;
    const { res, release } = await this.#transport.send(method, pathAndQuery, { accept: JSON_TYPE, body, contentType }, signal);
    const what = `${method} ${path}`;
    try {
      const text = await readBody(res, signal, what);
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) throw statusErrorFromResponse(res, text, what);
      return JSON.parse(text) as T;
    } finally {
      release();
    }
  }
}

/** A {@link ResourceClient} for `resource` on the KubeConfig's current cluster. */
export function newResourceClient<T>(kubeConfig: KubeConfigLike, resource: ResourceDescriptor<T>, options: ResourceClientOptions = {}): ResourceClient<T> {
  return new ResourceClient(kubeConfig, resource, options);
}
