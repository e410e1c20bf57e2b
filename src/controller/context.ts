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
}

/** A resource the controller reads, with its informer. */
export interface Source {
  readonly resource: ResourceDescriptor<unknown>;
  readonly informer: SourceInformer;
}

interface WrittenMeta {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/**
 * The writes each key's reconciles recorded with `ctx.wrote`, kept until the key's next reconcile
 * has waited for the caches to observe them.
 */
export class ObservedWrites {
  readonly #owner: string;
  readonly #sources: readonly Source[];
  readonly #pending = new Map<string, Map<string, { informer: SourceInformer; obj: WrittenMeta }>>();

  constructor(owner: string, sources: readonly Source[]) {
    this.#owner = owner;
    this.#sources = sources;
  }

  /** Keys with writes not yet waited for. */
  get size(): number {
    return this.#pending.size;
  }

  /** Records `result` as written by a reconcile of `key` (the newest write of one object wins). */
  record(key: string, result: unknown): void {
    const obj = result as WrittenMeta | null;
    const name = obj?.metadata?.name;
    const rv = obj?.metadata?.resourceVersion;
    if (typeof obj?.apiVersion !== 'string' || typeof obj.kind !== 'string' || typeof name !== 'string' || typeof rv !== 'string' || rv === '') {
      throw misuse(
        new InvalidOptionError(
          `${this.#owner}: ctx.wrote needs the object the API server answered (apiVersion, kind, metadata.name and metadata.resourceVersion)`,
        ),
      );
    }
    const group = groupOf(obj.apiVersion);
    const source = this.#sources.find((s) => s.resource.kind === obj.kind && s.resource.group === group);
    if (source === undefined) {
      throw misuse(
        new InvalidOptionError(
          `${this.#owner}: ctx.wrote got a ${obj.kind} (${obj.apiVersion}), which this controller does not watch; only writes to watched resources can be waited for`,
        ),
      );
    }
    let writes = this.#pending.get(key);
    if (writes === undefined) {
      writes = new Map<string, { informer: SourceInformer; obj: WrittenMeta }>();
      this.#pending.set(key, writes);
    }
    writes.set(`${obj.apiVersion}/${obj.kind}/${obj.metadata?.namespace ?? ''}/${name}`, { informer: source.informer, obj });
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
        [...writes.values()].map(async ({ informer, obj }) => {
          try {
            await informer.awaitObserved(obj, wait);
          } catch (err) {
            if (signal.aborted) throw err;
            const what = `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name} at resourceVersion ${obj.metadata?.resourceVersion}`;
            const why = deadline.signal.aborted && err instanceof AbortedError ? `not in the cache after ${timeoutMs} ms` : String(err);
            logger.warn(`${this.#owner}: reconciling ${key} without waiting for its write of ${what} to be observed: ${why}`, { key, resource: obj.kind, error: why });
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
}
