// A ResourceLock on a coordination.k8s.io/v1 Lease, through @kubernetes/client-node's CoordinationV1Api.

import { validateOptions } from '../core/options.js';
import { AbortedError } from '../core/errors.js';
import {
  LeaderElectionError,
  LockConflictError,
  LockNotFoundError,
  type LeaderElectionRecord,
  type ResourceLock,
} from './lock.js';
import { abortableWait } from '../core/abort.js';
import type { HasPermissions, Permission, Verb } from '../core/permissions.js';

/** The Lease fields the lock reads and writes (a structural subset of client-node's `V1Lease`). */
export interface LeaseObject {
  /** `coordination.k8s.io/v1`. */
  apiVersion?: string;
  /** `Lease`. */
  kind?: string;
  /** Object metadata; `resourceVersion` is what makes updates compare-and-swap. */
  metadata?: LeaseMetadata;
  /** The election record. */
  spec?: LeaseSpecFields;
}

/** The Lease metadata the lock uses. */
export interface LeaseMetadata {
  /** The Lease's name. */
  name?: string;
  /** The Lease's namespace. */
  namespace?: string;
  /** The version the next update must match. */
  resourceVersion?: string;
}

/** The Lease spec fields of an election record. Times are RFC 3339 with microseconds, or `Date`s. */
export interface LeaseSpecFields {
  /** The holder; `''` or absent when free. */
  holderIdentity?: string;
  /** The holder's lease duration in seconds. */
  leaseDurationSeconds?: number;
  /** When the holder acquired the lease. */
  acquireTime?: Date | string;
  /** When the holder last renewed. */
  renewTime?: Date | string;
  /** How many times the lease changed hands. */
  leaseTransitions?: number;
}

/**
 * The three calls the lock makes, with client-node's object-parameter signatures (1.x and 2.x):
 * `kc.makeApiClient(CoordinationV1Api)` satisfies it. Errors must carry the HTTP status as a numeric
 * `code` (client-node's `ApiException`) or `statusCode`.
 */
export interface LeaseClient {
  /** GET the Lease. */
  readNamespacedLease(param: { name: string; namespace: string }): Promise<LeaseObject>;
  /** POST a new Lease. */
  createNamespacedLease(param: { namespace: string; body: LeaseObject }): Promise<LeaseObject>;
  /** PUT the Lease (fails with 409 when `metadata.resourceVersion` is stale). */
  replaceNamespacedLease(param: { name: string; namespace: string; body: LeaseObject }): Promise<LeaseObject>;
}

/**
 * The call of client-node's `Watch` class (1.x and 2.x) the lock's {@link LeaseLock.watch} makes:
 * `new Watch(kc)` satisfies it. `callback` gets each event's type and object; `done` is called once
 * when the watch ends (with the error when it failed; an HTTP error carries `statusCode`); the
 * returned controller aborts it.
 */
export interface LeaseWatch {
  /** Opens a watch of `path` (`watch=true` and `queryParams` added to the URL). */
  watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController>;
}

/** Options of a {@link LeaseLock}. All are required but `watch`. */
export interface LeaseLockOptions {
  /** The API client, e.g. `kc.makeApiClient(CoordinationV1Api)`. */
  client: LeaseClient;
  /** The Lease's namespace. */
  namespace: string;
  /** The Lease's name (usually the controller's name). */
  name: string;
  /** This candidate's identity, unique among candidates (e.g. the pod name). */
  identity: string;
  /**
   * What watches the Lease, e.g. client-node's `new Watch(kc)`: with it, a following elector learns
   * of a release (or a new holder) as it happens and tries at once, instead of at its next poll
   * (`retryPeriodMs`, jittered: up to 4.4 s with the defaults); the lock then needs `watch` on its
   * Lease besides (see {@link LeaseLock.permissions}). Default: none (the elector polls).
   */
  watch?: LeaseWatch;
}

/** The HTTP status of a client-node failure, when there is one. */
function httpStatus(err: unknown): number | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const e = err as { code?: unknown; statusCode?: unknown; response?: { statusCode?: unknown } };
  for (const v of [e.code, e.statusCode, e.response?.statusCode]) if (typeof v === 'number') return v;
  return undefined;
}

/** The `message` of the Status an API error carries (client-node's `ApiException` body: a 403 names the verb and resource refused), if any. */
function statusMessage(err: unknown): string | undefined {
  let body: unknown = (err as { body?: unknown } | null)?.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  const message = (body as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' && message !== '' ? message : undefined;
}

/** A client-node failure in words: `HTTP <status>: <the Status message>` when it has a status, else its message. */
function describeFailure(err: unknown): string {
  const status = httpStatus(err);
  const message = statusMessage(err);
  return status === undefined ? String((err as Error)?.message ?? err) : `HTTP ${status}${message === undefined ? '' : `: ${message}`}`;
}

/** Formats a Date the way the API server's MicroTime expects (six fractional digits). */
function microTime(date: Date | undefined): string | undefined {
  return date === undefined ? undefined : date.toISOString().replace(/Z$/, '000Z');
}

function parseTime(value: Date | string | undefined): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? new Date(value.getTime()) : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * A {@link ResourceLock} on a `coordination.k8s.io/v1` Lease. `update` sends the `resourceVersion` of the
 * Lease as last read or written, so a concurrent writer makes it fail with {@link LockConflictError}
 * (HTTP 409); a missing Lease is {@link LockNotFoundError} (404); anything else is a
 * {@link LeaderElectionError} with the client's error as `cause`.
 *
 * ```ts
 * const lock = new LeaseLock({
 *   client: kc.makeApiClient(CoordinationV1Api), namespace: 'kube-system', name: 'my-controller',
 *   identity: process.env.POD_NAME!,
 * });
 * ```
 *
 * The client cannot cancel a request in flight; when `signal` aborts, the call rejects at once and its
 * late answer is ignored.
 */
export class LeaseLock implements ResourceLock, HasPermissions {
  readonly #client: LeaseClient;
  readonly #namespace: string;
  readonly #name: string;
  readonly #identity: string;
  readonly #watching: boolean;
  #lease: LeaseObject | undefined;

  /** See {@link LeaseLockOptions}. Throws `INVALID_OPTION` for an option of the wrong type or an unknown one. */
  constructor(options: LeaseLockOptions) {
    validateOptions('LeaseLock', options, { client: 'object', namespace: 'string', name: 'string', identity: 'string', watch: 'object' });
    this.#client = options.client;
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#identity = options.identity;
    const watcher = options.watch;
    this.#watching = watcher !== undefined;
    this.watch = watcher === undefined ? undefined : (onChange, signal) => this.#watchLease(watcher, onChange, signal);
  }

  /**
   * With the option `watch`: watches this one Lease (`fieldSelector=metadata.name=<name>`) and reports
   * its record — the current one first, then each change; a deleted Lease as a record with no holder —
   * until `signal` aborts (resolves) or the watch ends (resolves) or fails (rejects with a
   * {@link LeaderElectionError} naming the HTTP status). See `ResourceLock.watch`. `undefined` without
   * the option.
   */
  readonly watch: ((onChange: (record: LeaderElectionRecord) => void, signal: AbortSignal) => Promise<void>) | undefined;

  #watchLease(watcher: LeaseWatch, onChange: (record: LeaderElectionRecord) => void, signal: AbortSignal): Promise<void> {
    const what = `watch lease ${this.describe()}`;
    const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#namespace)}/leases`;
    return new Promise<void>((resolve, reject) => {
      let controller: AbortController | undefined;
      let settled = false;
      const finish = (err?: unknown): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        controller?.abort();
        if (err === undefined || err === null) resolve();
        else reject(err instanceof LeaderElectionError ? err : new LeaderElectionError('lock-failed', `${what} failed: ${describeFailure(err)}`, { cause: err }));
      };
      const onAbort = (): void => finish();
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) return finish();
      const onEvent = (phase: string, object: unknown): void => {
        if (settled) return;
        if (phase === 'ADDED' || phase === 'MODIFIED') onChange(leaseToRecord(object as LeaseObject));
        else if (phase === 'DELETED') onChange({ holderIdentity: '', leaseDurationSeconds: 0, leaderTransitions: 0 });
        else if (phase === 'ERROR') finish(new LeaderElectionError('lock-failed', `${what}: the server ended it: ${statusMessage({ body: object }) ?? JSON.stringify(object)}`));
      };
      const opening = Promise.resolve().then(() => watcher.watch(path, { fieldSelector: `metadata.name=${this.#name}` }, onEvent, (err) => finish(err)));
      opening.then(
        (c) => {
          controller = c;
          if (settled) c.abort();
        },
        (err: unknown) => finish(err ?? new Error('the watch could not be opened')),
      );
    });
  }

  /** Reads the Lease and returns its record. */
  async get(signal?: AbortSignal): Promise<LeaderElectionRecord> {
    const lease = await this.#call('get', this.#client.readNamespacedLease({ name: this.#name, namespace: this.#namespace }), signal);
    this.#lease = lease;
    return leaseToRecord(lease);
  }

  /** Creates the Lease holding `record`. */
  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const body: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#name, namespace: this.#namespace },
      spec: recordToSpec(record),
    };
    this.#lease = await this.#call('create', this.#client.createNamespacedLease({ namespace: this.#namespace, body }), signal);
  }

  /** Replaces the Lease's record, compare-and-swap on the last seen `resourceVersion`. */
  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const last = this.#lease;
    if (last === undefined) {
      throw new LeaderElectionError('not-initialized', 'lease not initialized: call get or create first');
    }
    const body: LeaseObject = { ...last, spec: { ...last.spec, ...recordToSpec(record) } };
    const request = this.#client.replaceNamespacedLease({ name: this.#name, namespace: this.#namespace, body });
    this.#lease = await this.#call('update', request, signal);
  }

  /**
   * What the lock needs (see `HasPermissions`): `get` and `update` of its Lease by name — and `watch`
   * with the option `watch` (a watch with `fieldSelector=metadata.name=<name>` is authorized as a
   * request for that name, so `resourceNames` narrows it too) — and `create` of Leases in its
   * namespace (a create names no object, so RBAC cannot narrow it to one name).
   */
  permissions(): Permission[] {
    const lease = { group: 'coordination.k8s.io', resource: 'leases', namespace: this.#namespace };
    const reason = `leader election lock ${this.describe()}`;
    const verbs: Verb[] = this.#watching ? ['get', 'update', 'watch'] : ['get', 'update'];
    return [
      { ...lease, verbs, resourceNames: [this.#name], reason },
      { ...lease, verbs: ['create'], reason },
    ];
  }

  /** This candidate's identity. */
  identity(): string {
    return this.#identity;
  }

  /** `<namespace>/<name>`. */
  describe(): string {
    return `${this.#namespace}/${this.#name}`;
  }

  async #call(op: string, request: Promise<LeaseObject>, signal: AbortSignal | undefined): Promise<LeaseObject> {
    try {
      return await abortableWait(request, signal, `${op} lease ${this.describe()}: stopped waiting, the signal was aborted`);
    } catch (err) {
      if (err instanceof AbortedError) throw err;
      const status = httpStatus(err);
      const what = `${op} lease ${this.describe()}`;
      if (status === 409) throw new LockConflictError(`${what}: conflict (409)`, { cause: err });
      if (status === 404) throw new LockNotFoundError(`${what}: not found (404)`, { cause: err });
      throw new LeaderElectionError('lock-failed', `${what} failed: ${describeFailure(err)}`, { cause: err });
    }
  }
}

/** The record a Lease holds. */
export function leaseToRecord(lease: LeaseObject): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: parseTime(spec.acquireTime),
    renewTime: parseTime(spec.renewTime),
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
}

function recordToSpec(record: LeaderElectionRecord): LeaseSpecFields {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: microTime(record.acquireTime),
    renewTime: microTime(record.renewTime),
    leaseTransitions: record.leaderTransitions,
  };
}
