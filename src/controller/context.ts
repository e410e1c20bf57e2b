// What a reconcile receives: the reconcile context, its reason, its lazily made signal.

import { randomUUID } from 'node:crypto';
import { splitMetaNamespaceKey } from '../core/keys.js';
import { withFields, type LogFields, type Logger } from '../core/log.js';
import type { ObjectOf, ResourceDescriptor } from '../core/resources.js';
import type { DeepReadonly, PartialObjectMetadata } from '../core/types.js';
import type { ResourceClient } from '../listwatch/index.js';
import { ReconcileClient, type PermissionCheck, type WriteRecorder } from './client.js';
import type { ObservedWrites } from './writes.js';

/**
 * Why a reconcile runs (`ctx.reason`): the request that made the key due. Requests for one key merge
 * (the earliest due wins, as the scheduler merges them), so this is the reason of the winning one.
 *
 * - `watch`: an informer event of a watched resource — `role` `for` (the primary itself), `owns` (a
 *   child it controls) or `watches` (a mapped resource), `resource` its key (`apps/v1/deployments`),
 *   `event` the event kind; `initial` is true for an add of the informer's initial list or of the
 *   replay of its cache when the controller started (every primary is reconciled at the start so);
 *   `unchanged` is true for an update that changed nothing (same `resourceVersion`: a resync, a relist).
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
      /**
       * True for an update whose old and new objects have the same `resourceVersion`: nothing changed
       * (an informer resync, or a relist that found the object as the cache had it). Absent otherwise.
       */
      readonly unchanged?: boolean;
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
    }
  | {
      /** The key's namespace was added to the controller's set (`Controller.addNamespace`) and its caches synced. */
      readonly kind: 'namespace';
    };

/**
 * What `ctx.children(resource)` holds for `D`: {@link PartialObjectMetadata} when `D` is among `M`, the
 * owned resources cached metadata-only; else the descriptor's object type.
 */
export type ChildOf<D, M> = [M] extends [never] ? ObjectOf<D> : D extends M ? PartialObjectMetadata : ObjectOf<D>;

/**
 * What `reconcile(key, ctx)` receives. The primary is read from the cache when the reconcile starts —
 * never kept from an event — so a reconcile always sees the newest state the cache has (level-triggered).
 * `M`: the owned resources cached metadata-only (see {@link Reconciler}).
 */
export interface ReconcileContext<T, M extends ResourceDescriptor<unknown> = never> {
  /** The primary's key: `namespace/name`, or `name` for a cluster-scoped resource. */
  readonly key: string;
  /**
   * The cluster the request came from, as its provider named it, for a `MultiClusterController` (then
   * `object`, `children` and `client` address that cluster); `undefined` in a single-cluster `Controller`.
   */
  readonly cluster: string | undefined;
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
   * The priority this reconcile was started with: the highest of the key's merged requests (see
   * `ControllerOptions.priority`; a retry keeps its failed run's). `0` when the controller's priorities are off.
   */
  readonly priority: number;
  /**
   * This reconcile's id (a random UUID, controller-runtime's `reconcileID`): in every line the
   * controller logs about it, so one reconcile's lines can be found together.
   */
  readonly reconcileID: string;
  /**
   * The controller's logger, adding `controller`, `key` and `reconcileID` (and `cluster`, of many) to every line's fields —
   * and `traceId` and `spanId` of the reconcile span when the controller traces (`tracerProvider`).
   */
  readonly logger: Logger;
  /**
   * The objects of an owned resource (`owns`) whose controlling owner is this primary, from the cache.
   * Throws `INVALID_OPTION` for a resource the controller does not own — a programming error: a
   * reconcile that fails with it stops the controller (`run` rejects with it). The children of a
   * resource owned with `metadataOnly: true` are `PartialObjectMetadata` (typed so): read a child's
   * body with `ctx.client(resource).get(...)` when the reconcile needs it.
   */
  children<D extends ResourceDescriptor<unknown>>(resource: D): Array<DeepReadonly<ChildOf<D, M>>>;
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

/** A traced reconcile (option `tracerProvider`): the trace ids its log lines carry, the client spans. */
export interface RunTrace {
  /** `traceId` and `spanId` of the reconcile span. */
  readonly fields: LogFields;
  /** `client` with a span around each write. */
  client<C>(client: ResourceClient<C>, resource: ResourceDescriptor<C>): ResourceClient<C>;
  /** The reconcile's context was made (its priority, when the scheduler has priorities, becomes an attribute). */
  started(ctx: object): void;
}

/**
 * One reconcile in flight: its signal ({@link LazySignal}), its `reconcileID` (a random UUID, made on
 * first use: most reconciles neither log nor read it, and a UUID was a sixteenth of a cold
 * reconcile's CPU), and the timeout error once its deadline passed.
 */
export class ReconcileRun extends LazySignal {
  readonly key: string;
  /** The priority it started with. */
  readonly priority: number;
  timedOut: Error | undefined;
  /** Its span, when the controller traces (else undefined). */
  trace: RunTrace | undefined;
  #id: string | undefined;

  constructor(key: string, priority: number) {
    super();
    this.key = key;
    this.priority = priority;
  }

  get id(): string {
    return (this.#id ??= randomUUID());
  }
}

/** The {@link ReconcileContext} of one reconcile: a class, so a reconcile allocates one object, not closures. */
export class ReconcileCtx<T> implements ReconcileContext<T> {
  readonly key: string;
  readonly cluster: string | undefined;
  readonly object: DeepReadonly<T> | undefined;
  readonly attempt: number;
  readonly reason: ReconcileReason;
  readonly priority: number;
  readonly #log: Logger;
  #logger: Logger | undefined;
  readonly #lazy: ReconcileRun;
  readonly #children: <C>(resource: ResourceDescriptor<C>, key: string, namespace: string) => Array<DeepReadonly<C>>;
  readonly #writes: ObservedWrites;
  readonly #clientOf: <C>(resource: ResourceDescriptor<C>) => ResourceClient<C>;
  readonly #check: PermissionCheck;
  #bound: Map<ResourceDescriptor<unknown>, ReconcileClient<unknown>> | undefined;
  #recorder: WriteRecorder | undefined;

  constructor(
    key: string,
    object: DeepReadonly<T> | undefined,
    lazy: ReconcileRun,
    attempt: number,
    reason: ReconcileReason,
    priority: number,
    logger: Logger,
    children: <C>(resource: ResourceDescriptor<C>, key: string, namespace: string) => Array<DeepReadonly<C>>,
    writes: ObservedWrites,
    clientOf: <C>(resource: ResourceDescriptor<C>) => ResourceClient<C>,
    check: PermissionCheck,
    cluster: string | undefined,
  ) {
    this.key = key;
    this.cluster = cluster;
    this.object = object;
    this.#lazy = lazy;
    this.attempt = attempt;
    this.reason = reason;
    this.priority = priority;
    this.#log = logger;
    this.#children = children;
    this.#writes = writes;
    this.#clientOf = clientOf;
    this.#check = check;
  }

  get reconcileID(): string {
    return this.#lazy.id;
  }

  /** Made on first use (most reconciles log nothing): the controller's logger with `key` and `reconcileID` (and, traced, `traceId` and `spanId`). */
  get logger(): Logger {
    return (this.#logger ??= withFields(this.#log, { key: this.key, reconcileID: this.reconcileID, ...this.#lazy.trace?.fields }));
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

  children<D extends ResourceDescriptor<unknown>>(resource: D): Array<DeepReadonly<ChildOf<D, never>>> {
    return this.#children(resource, this.key, this.namespace) as Array<DeepReadonly<ChildOf<D, never>>>;
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
      const shared = this.#clientOf(resource);
      const trace = this.#lazy.trace;
      client = new ReconcileClient(trace === undefined ? shared : trace.client(shared, resource), resource, this.signal, recorder, this.#check);
      bound.set(resource, client);
    }
    return client;
  }
}
