// The in-memory object store both fakes share: objects per resource, one global resourceVersion, history.

import { validateOptions, type OptionSchemaFor } from '../core/options.js';
import { randomUUID } from 'node:crypto';
import { ApiStatusError } from '../core/errors.js';
import { namespacedKey } from '../core/keys.js';
import type { KubeObject, ObjectMeta } from '../core/types.js';
import { mergeSortedKeys, sortedKeys, pageEntries, type PageOptions, type PageResult, type StoredEntry } from './state-paging.js';
import { statusBody } from './status.js';

export type { StoredEntry };

/** The kind of change a {@link StateChange} records (the watch event type it becomes). */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One recorded change: what became the watch event at `rv`. */
export interface StateChange {
  /** The resourceVersion of the change (global, strictly increasing). */
  readonly rv: number;
  /** The resource it happened to (the state's resource name, e.g. `pods` or `leases.coordination.k8s.io`). */
  readonly resource: string;
  /** ADDED, MODIFIED or DELETED. */
  readonly type: ChangeType;
  /** The object after the change (for DELETED: its final state, stamped with the deletion's rv). */
  readonly entry: StoredEntry;
  /** The object before the change, when there was one. */
  readonly prev: StoredEntry | undefined;
  /** False for the `...DropWatch` variants: recorded, but not sent to open watches. */
  readonly broadcast: boolean;
}

/** Options of {@link ResourceState}. */
export interface ResourceStateOptions {
  /** How many changes to remember per resource for watch replay; older ones are forgotten (→ 410). Default 10 000. */
  historyLimit?: number;
  /** The resourceVersion of the empty state; the first change gets this + 1. Default 0. */
  initialResourceVersion?: number;
}

/** Options of a single write to a {@link ResourceState}. */
export interface StateWriteOptions {
  /** Send the change to open watches. Default true; false records it for relists and replays only. */
  broadcast?: boolean;
  /** Precondition: the stored object's resourceVersion must equal this, else 409 Conflict. */
  expectResourceVersion?: string;
  /** Precondition (delete): the stored object's uid must equal this, else 409 Conflict. */
  expectUid?: string;
  /** `update` of a missing object creates it instead of failing with 404. Default false. */
  allowCreate?: boolean;
  /**
   * Check and answer as for a real write, but change nothing (`dryRun=All`): no new resourceVersion,
   * no history, no watch event. The answer keeps the stored resourceVersion (none for a create). Default false.
   */
  dryRun?: boolean;
}

const WRITE_OPTION_SCHEMA = {
  broadcast: 'boolean',
  expectResourceVersion: 'string',
  expectUid: 'string',
  allowCreate: 'boolean',
  dryRun: 'boolean',
} as const satisfies OptionSchemaFor<StateWriteOptions>;

interface ResourceSlot {
  readonly objects: Map<string, StoredEntry>;
  sorted: string[] | undefined;
  /** Keys created since `sorted` was built (merged in on the next page). */
  added: string[];
  /** Keys deleted since `sorted` was built (still in `sorted` until the next page). */
  removed: number;
  readonly history: StateChange[];
  head: number;
  floor: number;
  readonly listeners: Set<(change: StateChange) => void>;
}

/**
 * The state behind both fakes: objects per resource keyed by namespace/name, a global integer
 * resourceVersion that every change bumps and writes into the stored object's metadata, a bounded
 * history of changes per resource for watch replay, and compaction. Objects going in and out are
 * copies. Failures are {@link ApiStatusError}s shaped like the API server's (404 NotFound, 409
 * AlreadyExists / Conflict, 410 Expired), so the HTTP fake can send them as they are.
 */
export class ResourceState {
  #rv: number;
  #globalFloor: number;
  #historyLimit: number;
  #slots = new Map<string, ResourceSlot>();

  constructor(options: ResourceStateOptions = {}) {
    validateOptions('ResourceState', options, { historyLimit: 'count', initialResourceVersion: 'count' });
    this.#rv = options.initialResourceVersion ?? 0;
    this.#globalFloor = this.#rv;
    this.#historyLimit = Math.max(1, options.historyLimit ?? 10_000);
  }

  /** The current global resourceVersion, as a number. */
  currentResourceVersion(): number {
    return this.#rv;
  }

  /** The oldest resourceVersion a watch on `resource` can start from: every change after it is remembered. */
  replayFloor(resource: string): number {
    const slot = this.#slots.get(resource);
    return Math.max(this.#globalFloor, slot?.floor ?? 0);
  }

  /** The stored version of one object, or undefined. */
  get(resource: string, namespace: string, name: string): StoredEntry | undefined {
    return this.#slots.get(resource)?.objects.get(namespacedKey(namespace, name));
  }

  /** How many objects `resource` holds. */
  size(resource: string): number {
    return this.#slots.get(resource)?.objects.size ?? 0;
  }

  /** Every stored object of `resource` (in `namespace` when given), in key order. */
  entries(resource: string, namespace?: string): StoredEntry[] {
    return this.page(resource, { namespace }).entries;
  }

  /** Creates an object; assigns a uid when it has none. Throws 409 AlreadyExists when the key is taken. */
  create(resource: string, obj: KubeObject, options: StateWriteOptions = {}): StoredEntry {
    validateOptions('ResourceState.create', options, WRITE_OPTION_SCHEMA);
    const slot = this.#slot(resource);
    const { namespace, name } = identity(obj);
    const key = namespacedKey(namespace, name);
    if (slot.objects.has(key)) {
      throw statusError(409, 'AlreadyExists', `${resource} "${name}" already exists`, resource, name);
    }
    const uid = typeof obj.metadata?.uid === 'string' && obj.metadata.uid !== '' ? obj.metadata.uid : randomUUID();
    return this.#record(slot, resource, 'ADDED', obj, key, undefined, { uid }, options);
  }

  /** Replaces an object (keeping its uid). Throws 404 when missing, 409 Conflict on a failed precondition. */
  update(resource: string, obj: KubeObject, options: StateWriteOptions = {}): StoredEntry {
    validateOptions('ResourceState.update', options, WRITE_OPTION_SCHEMA);
    const slot = this.#slot(resource);
    const { namespace, name } = identity(obj);
    const key = namespacedKey(namespace, name);
    const prev = slot.objects.get(key);
    if (prev === undefined) {
      if (options.allowCreate) return this.create(resource, obj, options);
      throw statusError(404, 'NotFound', `${resource} "${name}" not found`, resource, name);
    }
    checkPreconditions(resource, prev, options);
    return this.#record(slot, resource, 'MODIFIED', obj, key, prev, { uid: prev.meta.uid }, options);
  }

  /**
   * Deletes an object. The DELETED change carries its final state (`finalState` when given, else the
   * stored object) stamped with a new resourceVersion. Throws 404 when missing, 409 on a precondition.
   */
  delete(
    resource: string,
    namespace: string,
    name: string,
    options: StateWriteOptions & { finalState?: KubeObject } = {},
  ): StoredEntry {
    validateOptions('ResourceState.delete', options, { ...WRITE_OPTION_SCHEMA, finalState: 'object' });
    const slot = this.#slot(resource);
    const key = namespacedKey(namespace, name);
    const prev = slot.objects.get(key);
    if (prev === undefined) throw statusError(404, 'NotFound', `${resource} "${name}" not found`, resource, name);
    checkPreconditions(resource, prev, options);
    const final = options.finalState ?? (JSON.parse(prev.json) as KubeObject);
    return this.#record(slot, resource, 'DELETED', final, key, prev, { uid: prev.meta.uid }, options);
  }

  /**
   * Rewrites the stored body of an object in place: the same resourceVersion and uid, no change
   * recorded, no watch event — how a fake shows what the API server does on every read (a default
   * the object's CRD gained after the object was written). Returns false when the object is not stored.
   */
  rewrite(resource: string, obj: KubeObject): boolean {
    const slot = this.#slots.get(resource);
    const { namespace, name } = identity(obj);
    const key = namespacedKey(namespace, name);
    const prev = slot?.objects.get(key);
    if (slot === undefined || prev === undefined) return false;
    const meta: ObjectMeta = { ...(obj.metadata ?? {}), resourceVersion: prev.meta.resourceVersion, uid: prev.meta.uid };
    slot.objects.set(key, { ...prev, json: JSON.stringify({ ...obj, metadata: meta }), meta: structuredClone(meta) });
    return true;
  }

  /**
   * The changes of `resource` after `rv`, oldest first, or `undefined` when some of them were
   * forgotten (compaction, or the history limit): the caller answers 410 Expired.
   */
  changesSince(resource: string, rv: number): StateChange[] | undefined {
    if (rv < this.replayFloor(resource)) return undefined;
    const slot = this.#slots.get(resource);
    if (slot === undefined) return [];
    const h = slot.history;
    let lo = slot.head;
    let hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h[mid].rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return h.slice(lo);
  }

  /** Forgets every change up to `rv` (default: all of them). Watches and Exact lists from before it get 410. */
  compact(rv: number = this.#rv): void {
    this.#globalFloor = Math.max(this.#globalFloor, Math.min(rv, this.#rv));
    for (const slot of this.#slots.values()) {
      while (slot.head < slot.history.length && slot.history[slot.head].rv <= this.#globalFloor) slot.head++;
      slot.floor = Math.max(slot.floor, this.#globalFloor);
      trimHead(slot);
    }
  }

  /** Forgets the whole history of `resource` (or of every resource): only future changes can be watched. */
  forgetHistory(resource?: string): void {
    const slots = resource === undefined ? [...this.#slots.values()] : [this.#slot(resource)];
    for (const slot of slots) {
      slot.history.length = 0;
      slot.head = 0;
      slot.floor = this.#rv;
    }
  }

  /** Calls `listener` synchronously after every broadcast change of `resource`. Returns the unsubscribe. */
  subscribe(resource: string, listener: (change: StateChange) => void): () => void {
    const slot = this.#slot(resource);
    slot.listeners.add(listener);
    return () => slot.listeners.delete(listener);
  }

  /** How many listeners are subscribed across all resources (for leak checks). */
  listenerCount(): number {
    let n = 0;
    for (const slot of this.#slots.values()) n += slot.listeners.size;
    return n;
  }

  /**
   * One page of `resource` in key order, as it was at `atRv` (default: now), rebuilt from the history.
   * Throws 410 Expired when `atRv` is older than the history reaches.
   */
  page(resource: string, options: PageOptions = {}): PageResult {
    validateOptions('ResourceState.page', options, { namespace: 'string', atRv: 'count', after: 'string', limit: 'count', filter: 'function' });
    const slot = this.#slot(resource);
    const at = options.atRv ?? this.#rv;
    let overlay: Map<string, StoredEntry | null> | undefined;
    if (at < this.#rv) {
      const changes = this.changesSince(resource, at);
      if (changes === undefined) {
        throw expiredError(at, this.replayFloor(resource));
      }
      if (changes.length > 0) {
        overlay = new Map();
        for (const c of changes) if (!overlay.has(c.entry.key)) overlay.set(c.entry.key, c.prev ?? null);
      }
    }
    if (slot.sorted === undefined || slot.added.length + slot.removed > slot.sorted.length / 2) {
      slot.sorted = sortedKeys(slot.objects);
    } else if (slot.added.length > 0 || slot.removed > 0) {
      slot.sorted = mergeSortedKeys(slot.sorted, slot.added.sort(), slot.objects);
    }
    slot.added = [];
    slot.removed = 0;
    return pageEntries(slot.sorted, slot.objects, overlay, Math.min(at, this.#rv), options);
  }

  #slot(resource: string): ResourceSlot {
    let slot = this.#slots.get(resource);
    if (slot === undefined) {
      slot = { objects: new Map(), sorted: undefined, added: [], removed: 0, history: [], head: 0, floor: 0, listeners: new Set() };
      this.#slots.set(resource, slot);
    }
    return slot;
  }

  #record(
    slot: ResourceSlot,
    resource: string,
    type: ChangeType,
    obj: KubeObject,
    key: string,
    prev: StoredEntry | undefined,
    stamp: { uid: unknown },
    options: StateWriteOptions,
  ): StoredEntry {
    if (options.dryRun === true) {
      const dry: ObjectMeta = { ...(obj.metadata ?? {}) };
      if (prev === undefined) delete dry.resourceVersion;
      else dry.resourceVersion = prev.meta.resourceVersion;
      if (typeof stamp.uid === 'string') dry.uid = stamp.uid;
      const { namespace, name } = identity(obj);
      return { key, namespace, name, rv: prev?.rv ?? 0, json: JSON.stringify({ ...obj, metadata: dry }), meta: structuredClone(dry) };
    }
    const rv = this.#rv + 1;
    const meta: ObjectMeta = { ...(obj.metadata ?? {}), resourceVersion: String(rv) };
    if (typeof stamp.uid === 'string') meta.uid = stamp.uid;
    const json = JSON.stringify({ ...obj, metadata: meta });
    const { namespace, name } = identity(obj);
    const entry: StoredEntry = { key, namespace, name, rv, json, meta: structuredClone(meta) };
    this.#rv = rv;
    if (type === 'DELETED') {
      slot.objects.delete(key);
      if (slot.sorted !== undefined) slot.removed++;
    } else {
      if (prev === undefined && slot.sorted !== undefined) slot.added.push(key);
      slot.objects.set(key, entry);
    }
    const change: StateChange = { rv, resource, type, entry, prev, broadcast: options.broadcast !== false };
    slot.history.push(change);
    while (slot.history.length - slot.head > this.#historyLimit) slot.floor = slot.history[slot.head++].rv;
    trimHead(slot);
    if (change.broadcast) for (const listener of [...slot.listeners]) listener(change);
    return entry;
  }
}

function trimHead(slot: ResourceSlot): void {
  if (slot.head > 1024 && slot.head * 2 > slot.history.length) {
    slot.history.splice(0, slot.head);
    slot.head = 0;
  }
}

function identity(obj: KubeObject): { namespace: string; name: string } {
  const name = obj?.metadata?.name;
  if (typeof name !== 'string' || name === '') {
    throw statusError(422, 'Invalid', 'the object has no metadata.name');
  }
  const ns = obj.metadata?.namespace;
  return { namespace: typeof ns === 'string' ? ns : '', name };
}

function checkPreconditions(resource: string, prev: StoredEntry, options: StateWriteOptions): void {
  const rv = options.expectResourceVersion;
  if (rv !== undefined && rv !== '' && rv !== prev.meta.resourceVersion) {
    throw statusError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${prev.name}": the object has been modified; please apply your changes to the latest version and try again`,
      resource,
      prev.name,
    );
  }
  if (options.expectUid !== undefined && options.expectUid !== prev.meta.uid) {
    throw statusError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${prev.name}": Precondition failed: UID in precondition: ${options.expectUid}, UID in object meta: ${String(prev.meta.uid)}`,
      resource,
      prev.name,
    );
  }
}

/** An {@link ApiStatusError} carrying a Kubernetes `Status` body, as the API server would send it. */
export function statusError(code: number, reason: string, message: string, kind?: string, name?: string): ApiStatusError {
  const status = statusBody(code, message, reason, kind !== undefined ? detailsOf(kind, name) : undefined);
  return new ApiStatusError(code, message, { reason, status });
}

function detailsOf(resource: string, name: string | undefined): Record<string, string> {
  const dot = resource.indexOf('.');
  return {
    ...(name !== undefined ? { name } : {}),
    ...(dot > 0 ? { group: resource.slice(dot + 1) } : {}),
    kind: dot > 0 ? resource.slice(0, dot) : resource,
  };
}

/** The 410 Expired error for a resourceVersion older than the remembered history, as kube-apiserver words it. */
export function expiredError(rv: number | string, floor: number): ApiStatusError {
  return statusError(410, 'Expired', `too old resource version: ${rv} (${floor})`);
}

/**
 * The answer kube-apiserver gives a read at a resourceVersion it has not reached: 504 Timeout with the
 * cause `ResourceVersionTooLarge` (what client-go's `isTooLargeResourceVersionError` looks for).
 */
export function tooLargeError(rv: string, current: number): ApiStatusError {
  const message = `Too large resource version: ${rv}, current: ${current}`;
  const status = statusBody(504, message, 'Timeout', {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
  return new ApiStatusError(504, message, { reason: 'Timeout', status, retryAfterSeconds: 1 });
}
