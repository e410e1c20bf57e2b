// What a reconcile receives, and the writes it recorded that the next reconcile of its key waits to see.

import type { Clock } from '../core/clock.js';
import { splitMetaNamespaceKey } from '../core/keys.js';
import { AbortedError } from '../core/errors.js';
import { withFields, type Logger } from '../core/log.js';
import { InvalidOptionError } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { groupOf, type DeepReadonly } from '../core/types.js';
import type { ResourceEventHandler, SharedInformerRegistration } from '../informer/handler.js';
import type { AddEventHandlerOptions } from '../informer/options.js';
import type { ResourceClient } from '../listwatch/index.js';
import { ReconcileClient, type WriteRecorder } from './client.js';
import { misuse } from './outcomes.js';

/**
 * Why a reconcile runs (`ctx.reason`): the request that made the key due. Requests for one key merge
 * (the earliest due wins, as the scheduler merges them), so this is the reason of the winning one.
 *
 * - `watch`: an informer event of a watched resource — `role` `for` (the primary itself), `owns` (a
 *   child it controls) or `watches` (a mapped resource), `resource` its key (`apps/v1/deployments`),
 *   `event` the event kind; `initial` is true for an add of the informer's initial list or of the
 *   replay of its cache when the controller started (every primary is reconciled at the start so).
 * - `requeue`: the key's previous reconcile returned `Action.requeueAfter(afterMs)`.
 * - `retry`: the key's previous reconcile failed with `error`; the error policy asked for a retry
 *   (`ctx.attempt` counts the failures in a row).
 * - `resync`: `resyncPeriodMs` came round, or `controller.reconcileAll()` was called.
 * - `schedule`: `controller.schedule(key)` was called.
 * - `shard`: a sharded controller gained the key's slot and its caches synced.
 */
export type ReconcileReason =
  | {
      /** An informer event. */
      readonly kind: 'watch';
      /** Which watch of the builder: `for` (the primary), `owns` or `watches`. */
      readonly role: 'for' | 'owns' | 'watches';
      /** The watched resource's key: `v1/configmaps`, `example.com/v1/widgets`. */
      readonly resource: string;
      /** The event kind. */
      readonly event: 'add' | 'update' | 'delete';
      /** True for an add of the informer's initial list, or of the cache replayed when the controller started. */
      readonly initial: boolean;
    }
  | {
      /** The previous reconcile returned `Action.requeueAfter`. */
      readonly kind: 'requeue';
      /** The delay it asked for, in ms. */
      readonly afterMs: number;
    }
  | {
      /** A retry after a failed reconcile (the error policy's backoff). */
      readonly kind: 'retry';
      /** What the previous reconcile failed with. */
      readonly error: Error;
    }
  | {
      /** `resyncPeriodMs` or `reconcileAll()`. */
      readonly kind: 'resync';
    }
  | {
      /** `controller.schedule(key)`. */
      readonly kind: 'schedule';
    }
  | {
      /** A sharded controller gained the key's slot. */
      readonly kind: 'shard';
    };

/**
 * What `reconcile(key, ctx)` receives. The primary is read from the cache when the reconcile starts —
 * never kept from an event — so a reconcile always sees the newest state the cache has (level-triggered).
 */
export interface ReconcileContext<T> {
  /** The primary's key: `namespace/name`, or `name` for a cluster-scoped resource. */
  readonly key: string;
  /** The primary's namespace (`''` for a cluster-scoped resource). */
  readonly namespace: string;
  /** The primary's name. */
  readonly name: string;
  /**
   * The primary as the cache holds it when this reconcile started, or `undefined` when it is not
   * there: it was deleted (each deletion is reconciled once, so cleanup can run) or never existed.
   * Read-only: it is the cache's own object; copy it with `deepCopy` to build a write.
   */
  readonly object: DeepReadonly<T> | undefined;
  /**
   * Aborts when the controller stops (leadership lost, its signal aborted) or the reconcile passes
   * `reconcileTimeoutMs`. Pass it to every request the reconcile makes.
   */
  readonly signal: AbortSignal;
  /** How many reconciles of this key failed in a row before this one (0 after a success). */
  readonly attempt: number;
  /** Why this reconcile runs: which watch and event, a requeue, a retry, a resync (see {@link ReconcileReason}). */
  readonly reason: ReconcileReason;
  /**
   * This reconcile's id (a random UUID, controller-runtime's `reconcileID`): in every line the
   * controller logs about it, so one reconcile's lines can be found together.
   */
  readonly reconcileID: string;
  /** The controller's logger, adding `controller`, `key` and `reconcileID` to every line's fields. */
  readonly logger: Logger;
  /**
   * The objects of an owned resource (`owns`) whose controlling owner is this primary, from the cache.
   * Throws `INVALID_OPTION` for a resource the controller does not own — a programming error: a
   * reconcile that fails with it stops the controller (`run` rejects with it).
   */
  children<C>(resource: ResourceDescriptor<C>): Array<DeepReadonly<C>>;
  /**
   * Records a write this reconcile made — pass what the API server answered (it carries the new
   * `resourceVersion`). The next reconcile of this key waits until the cache of that resource holds
   * this version or newer, or has seen the object go (`awaitObserved`), at most `observeTimeoutMs` —
   * so it never acts on a cache older than its own last write. Throws `INVALID_OPTION` when the
   * object is of a resource the controller does not watch, or has no name or resource version — a
   * programming error: a reconcile that fails with it stops the controller (`run` rejects with it).
   */
  wrote(result: unknown): void;
  /**
   * A typed client for `resource` bound to this reconcile (see {@link ReconcileClient}): every request
   * carries `ctx.signal`, every write's answer is recorded as `ctx.wrote` records it (a delete as "the
   * cache no longer holds it, or holds it with a `deletionTimestamp`"), the field manager is the
   * controller's (`fieldManager`, default its `name`). Writes to a resource the controller does not
   * watch, and `dryRun` writes, are not recorded (no error). The controller makes one connection pool
   * per resource on first use and closes it when it stops; a reconcile that never calls this allocates
   * nothing for it.
   *
   * Throws `INVALID_OPTION` when the controller has no KubeConfig (its factory was made with
   * `listWatchFor` only and `ControllerOptions.kubeConfig` is not set) — a programming error: a
   * reconcile that fails with it stops the controller (`run` rejects with it).
   *
   * @example
   * ```ts
   * await ctx.client(resources.configMaps).apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
   * ```
   */
  client<C>(resource: ResourceDescriptor<C>): ReconcileClient<C>;
}

/**
 * What the controller uses of an informer: a factory's `SharedIndexInformer`, or — for a sharded
 * controller — a `ShardedInformer` over the owned slots.
 */
export interface SourceInformer {
  readonly name: string;
  addEventHandler(handler: ResourceEventHandler<unknown>, options?: AddEventHandlerOptions): SharedInformerRegistration;
  removeEventHandler(registration: SharedInformerRegistration): void;
  getIndexer(): { getByKey(key: string): unknown; listKeys(): string[]; list(): unknown[]; byIndex(indexName: string, indexedValue: string): unknown[] };
  isStarted(): boolean;
  isStopped(): boolean;
  awaitObserved(written: unknown, signal?: AbortSignal): Promise<unknown>;
  awaitDeleted(deleted: unknown, signal?: AbortSignal): Promise<unknown>;
}

/** A resource the controller reads, with its informer. */
export interface Source {
  readonly resource: ResourceDescriptor<unknown>;
  readonly informer: SourceInformer;
}

interface WrittenMeta {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

/** A recorded write: the object answered (wait for its version), or a deletion (wait for the cache to see it). */
interface Write {
  readonly informer: SourceInformer;
  readonly obj: WrittenMeta;
  readonly deletion: boolean;
}

/** A `DeleteResult` or a `Status`, as `ctx.wrote` may be given them. */
interface DeleteAnswer {
  gone?: unknown;
  object?: WrittenMeta;
  status?: StatusLike;
}

interface StatusLike {
  kind?: unknown;
  details?: { name?: string; group?: string; kind?: string; uid?: string };
}

/**
 * The writes each key's reconciles recorded (with `ctx.wrote`, or by `ctx.client`), kept until the
 * key's next reconcile has waited for the caches to observe them.
 */
export class ObservedWrites {
  readonly #owner: string;
  readonly #sources: readonly Source[];
  readonly #pending = new Map<string, Map<string, Write>>();

  constructor(owner: string, sources: readonly Source[]) {
    this.#owner = owner;
    this.#sources = sources;
  }

  /** Keys with writes not yet waited for. */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * Records `result` as written by a reconcile of `key` (the newest write of one object wins): what the
   * API server answered a write with, a `DeleteResult`, or a delete's `Status`. Throws `INVALID_OPTION`
   * (a misuse) for anything else, or a resource the controller does not watch.
   */
  record(key: string, result: unknown): void {
    const answer = result as (WrittenMeta & DeleteAnswer & StatusLike) | null;
    if (answer !== null && typeof answer === 'object' && typeof answer.gone === 'boolean') {
      const object = answer.object;
      if (object !== undefined && answer.gone === false) return this.record(key, object);
      if (object !== undefined) return this.#deletion(key, this.#sourceOf(object, 'ctx.wrote'), object, true);
      return this.#deletedStatus(key, answer.status);
    }
    if (answer?.kind === 'Status') return this.#deletedStatus(key, answer);
    const obj = answer;
    const name = obj?.metadata?.name;
    const rv = obj?.metadata?.resourceVersion;
    if (typeof obj?.apiVersion !== 'string' || typeof obj.kind !== 'string' || typeof name !== 'string' || typeof rv !== 'string' || rv === '') {
      throw misuse(
        new InvalidOptionError(
          `${this.#owner}: ctx.wrote needs the object the API server answered (apiVersion, kind, metadata.name and metadata.resourceVersion), a DeleteResult or a delete's Status`,
        ),
      );
    }
    this.#add(key, this.#sourceOf(obj, 'ctx.wrote'), obj, false);
  }

  /**
   * Records the answer of a write to `resource` made by `ctx.client` (no error: a resource the
   * controller does not watch, or an answer without a resource version, is not recorded).
   */
  recordFor(key: string, resource: ResourceDescriptor<unknown>, result: unknown): void {
    const obj = result as WrittenMeta | null;
    const source = this.#sources.find((s) => s.resource === resource) ?? this.#sources.find((s) => s.resource.kind === resource.kind && s.resource.group === resource.group);
    const rv = obj?.metadata?.resourceVersion;
    if (source === undefined || typeof obj?.metadata?.name !== 'string' || typeof rv !== 'string' || rv === '') return;
    this.#add(key, source, obj, false);
  }

  /** Records a deletion of `resource`'s `namespace/name` (with its uid, when known) made by `ctx.client`; unwatched: not recorded. */
  recordDeletionFor(key: string, resource: ResourceDescriptor<unknown>, name: string, namespace: string | undefined, uid: string | undefined): void {
    const source = this.#sources.find((s) => s.resource === resource) ?? this.#sources.find((s) => s.resource.kind === resource.kind && s.resource.group === resource.group);
    if (source === undefined) return;
    this.#add(key, source, { metadata: { name, namespace: resource.namespaced ? namespace : undefined, uid } }, true);
  }

  #deletedStatus(key: string, status: StatusLike | undefined): void {
    const d = status?.details;
    if (typeof d?.name !== 'string' || typeof d.kind !== 'string') {
      throw misuse(new InvalidOptionError(`${this.#owner}: ctx.wrote got a delete's answer without details (name, kind); record deletes by writing through ctx.client`));
    }
    const group = d.group ?? '';
    // A DELETE's Status names the plural resource in details.kind (kube-apiserver); the kind is accepted too.
    const source = this.#sources.find((s) => s.resource.group === group && (s.resource.resource === d.kind || s.resource.kind === d.kind));
    if (source === undefined) throw this.#unwatched(`${d.kind} (group ${JSON.stringify(group)})`);
    let namespace: string | undefined;
    if (source.resource.namespaced) {
      // A Status names no namespace: the reconcile's own is the only one it can be recorded in.
      namespace = splitMetaNamespaceKey(key).namespace;
      if (namespace === '') {
        throw misuse(new InvalidOptionError(`${this.#owner}: ctx.wrote got the Status of a delete of ${d.kind} ${d.name}, which names no namespace, in a reconcile of a cluster-scoped key; write through ctx.client, which knows it`));
      }
    }
    this.#deletion(key, source, { metadata: { name: d.name, namespace, uid: d.uid } }, false);
  }

  #deletion(key: string, source: Source, obj: WrittenMeta, fromObject: boolean): void {
    const m = obj.metadata;
    if (typeof m?.name !== 'string') throw misuse(new InvalidOptionError(`${this.#owner}: ctx.wrote got a DeleteResult whose object has no metadata.name`));
    this.#add(key, source, fromObject ? { metadata: { name: m.name, namespace: m.namespace, uid: m.uid } } : obj, true);
  }

  #sourceOf(obj: WrittenMeta, what: string): Source {
    const group = typeof obj.apiVersion === 'string' ? groupOf(obj.apiVersion) : undefined;
    const source = this.#sources.find((s) => s.resource.kind === obj.kind && s.resource.group === group);
    if (source === undefined) throw this.#unwatched(`${String(obj.kind)} (${String(obj.apiVersion)})`, what);
    return source;
  }

  #unwatched(what: string, by = 'ctx.wrote'): Error {
    return misuse(new InvalidOptionError(`${this.#owner}: ${by} got a ${what}, which this controller does not watch; only writes to watched resources can be waited for`));
  }

  #add(key: string, source: Source, obj: WrittenMeta, deletion: boolean): void {
    let writes = this.#pending.get(key);
    if (writes === undefined) {
      writes = new Map<string, Write>();
      this.#pending.set(key, writes);
    }
    const m = obj.metadata;
    writes.set(`${source.resource.group}/${source.resource.kind}/${m?.namespace ?? ''}/${m?.name ?? ''}`, { informer: source.informer, obj, deletion });
  }

  /**
   * Waits until every write recorded for `key` is observed by its cache, then forgets them. Gives up
   * on a write after `timeoutMs` with a warning (the reconcile then runs on the cache it has).
   * Rejects only when `signal` aborts.
   */
  async settle(key: string, signal: AbortSignal, timeoutMs: number, clock: Clock, logger: Logger): Promise<void> {
    const writes = this.#pending.get(key);
    if (writes === undefined) return;
    this.#pending.delete(key);
    const deadline = new AbortController();
    const timer = clock.setTimeout(() => deadline.abort(), timeoutMs);
    const wait = AbortSignal.any([signal, deadline.signal]);
    try {
      await Promise.all(
        [...writes.values()].map(async ({ informer, obj, deletion }) => {
          try {
            await (deletion ? informer.awaitDeleted(obj, wait) : informer.awaitObserved(obj, wait));
          } catch (err) {
            if (signal.aborted) throw err;
            const ref = `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;
            const what = deletion ? `deletion of ${informer.name} ${ref}` : `${obj.kind} ${ref} at resourceVersion ${obj.metadata?.resourceVersion}`;
            const why = deadline.signal.aborted && err instanceof AbortedError ? `not in the cache after ${timeoutMs} ms` : String(err);
            logger.warn(`${this.#owner}: reconciling ${key} without waiting for its write of ${what} to be observed: ${why}`, { key, resource: deletion ? informer.name : obj.kind, error: why });
          }
        }),
      );
    } finally {
      clock.clearTimeout(timer);
    }
  }

  /** Forgets every recorded write (the controller stopped). */
  clear(): void {
    this.#pending.clear();
  }
}

/** An AbortController made only when its signal is first asked for; an abort before that is kept. */
export class LazySignal {
  #controller: AbortController | undefined;
  #reason: { value: unknown } | undefined;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason.value);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#reason !== undefined) return;
    this.#reason = { value: reason };
    this.#controller?.abort(reason);
  }
}

/** The {@link ReconcileContext} of one reconcile: a class, so a reconcile allocates one object, not closures. */
export class ReconcileCtx<T> implements ReconcileContext<T> {
  readonly key: string;
  readonly object: DeepReadonly<T> | undefined;
  readonly attempt: number;
  readonly reason: ReconcileReason;
  readonly reconcileID: string;
  readonly #log: Logger;
  #logger: Logger | undefined;
  readonly #lazy: LazySignal;
  readonly #children: <C>(resource: ResourceDescriptor<C>, key: string, namespace: string) => Array<DeepReadonly<C>>;
  readonly #writes: ObservedWrites;
  readonly #clientOf: <C>(resource: ResourceDescriptor<C>) => ResourceClient<C>;
  #bound: Map<ResourceDescriptor<unknown>, ReconcileClient<unknown>> | undefined;
  #recorder: WriteRecorder | undefined;

  constructor(
    key: string,
    object: DeepReadonly<T> | undefined,
    lazy: LazySignal,
    attempt: number,
    reason: ReconcileReason,
    reconcileID: string,
    logger: Logger,
    children: <C>(resource: ResourceDescriptor<C>, key: string, namespace: string) => Array<DeepReadonly<C>>,
    writes: ObservedWrites,
    clientOf: <C>(resource: ResourceDescriptor<C>) => ResourceClient<C>,
  ) {
    this.key = key;
    this.object = object;
    this.#lazy = lazy;
    this.attempt = attempt;
    this.reason = reason;
    this.reconcileID = reconcileID;
    this.#log = logger;
    this.#children = children;
    this.#writes = writes;
    this.#clientOf = clientOf;
  }

  /** Made on first use (most reconciles log nothing): the controller's logger with `key` and `reconcileID`. */
  get logger(): Logger {
    return (this.#logger ??= withFields(this.#log, { key: this.key, reconcileID: this.reconcileID }));
  }

  get namespace(): string {
    return splitMetaNamespaceKey(this.key).namespace;
  }

  get name(): string {
    return splitMetaNamespaceKey(this.key).name;
  }

  get signal(): AbortSignal {
    return this.#lazy.signal;
  }

  children<C>(resource: ResourceDescriptor<C>): Array<DeepReadonly<C>> {
    return this.#children(resource, this.key, this.namespace);
  }

  wrote(result: unknown): void {
    this.#writes.record(this.key, result);
  }

  client<C>(resource: ResourceDescriptor<C>): ReconcileClient<C> {
    const bound = (this.#bound ??= new Map());
    let client = bound.get(resource) as ReconcileClient<C> | undefined;
    if (client === undefined) {
      const recorder = (this.#recorder ??= {
        wrote: (r, answer) => this.#writes.recordFor(this.key, r, answer),
        deleted: (r, name, namespace, uid) => this.#writes.recordDeletionFor(this.key, r, name, namespace, uid),
      });
      client = new ReconcileClient(this.#clientOf(resource), resource, this.signal, recorder);
      bound.set(resource, client);
    }
    return client;
  }
}
