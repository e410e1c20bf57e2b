// The one partition core: one SharedIndexInformer per part (a shard slot, a namespace), handlers fanned out
// to every part present and future, reads unioned, parts added and removed while running.

import type { DeepReadonly } from '../core/types.js';
import { toError } from '../core/errors.js';
import { TaskScope } from '../core/task-scope.js';
import type { Observed } from '../observed/index.js';
import type { InformerHealth } from '../health/index.js';
import { InformerStoppedError } from './errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from './handler.js';
import { ADD_EVENT_HANDLER_OPTION_SCHEMA, type AddEventHandlerOptions } from './options.js';
import { PartitionedRegistration, type PartSet } from './partitioned-registration.js';
import type { SharedIndexInformer } from './shared-index-informer.js';
import { validateOptions } from '../core/options.js';

/** A promise and its resolve (Node 20 has no `Promise.withResolvers`). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The union of the parts' indexers: what a partitioned cache can answer. */
export interface PartitionedIndexer<T> {
  /** The cached object under `key` in any part (the cache's own: read-only). */
  getByKey(key: string): DeepReadonly<T> | undefined;
  /** The keys of every part. */
  listKeys(): string[];
  /** Every cached object of the parts. */
  list(): DeepReadonly<T>[];
  /** The objects of every part indexed under `indexedValue` (an index of the part informers). */
  byIndex(indexName: string, indexedValue: string): DeepReadonly<T>[];
}

/** How a {@link Partitions} is set up. @hidden */
export interface PartitionsOptions<K, T> {
  /** The informer's name (its option checks name it). */
  name: string;
  /** `sharded informer cms`: the informer as messages and task names name it. */
  label: string;
  /** `slot 3`, `namespace a`: a part as task names name it. */
  partName: (key: K) => string;
  /** A new, unstarted informer over one part; run and stopped by the core. */
  informerFor: (key: K) => SharedIndexInformer<T>;
  /** The order of {@link Partitions.keys}. */
  compare: (a: K, b: K) => number;
  /**
   * Which part's index answers `byIndex(indexName, value)` alone (the namespace index of a namespace
   * set); `undefined` asks every part.
   */
  indexPart?: (indexName: string, value: string) => K | undefined;
  /**
   * Sets aside a part whose informer cannot sync (`whenSynced` rejects: 403, 404, ...): it counts for
   * no sync (the others sync and deliver without it) until it syncs. `failed` and `recovered` are told.
   * Without it, such a part fails the registrations' `whenSynced` (its error).
   */
  isolate?: { failed: (key: K, err: Error) => void; recovered: (key: K) => void };
}

interface PartInformer<T> {
  readonly informer: SharedIndexInformer<T>;
  /** Stops this part's informer (the scope waits for it). */
  readonly stop: AbortController;
  /** Resolved when the informer syncs (its `synced` event) or the part ends. */
  readonly synced: { promise: Promise<void>; resolve: () => void };
}

/**
 * The partition core of `ShardedInformer` and `NamespaceSetInformer`: the parts running now, each its
 * own `SharedIndexInformer`; handlers added apply to every part, present and future; reads span the
 * parts. What the parts are is its owner's business: {@link Partitions.add} and {@link Partitions.remove}.
 * @hidden
 */
export class Partitions<K, T> {
  readonly #options: PartitionsOptions<K, T>;
  readonly #parts = new Map<K, PartInformer<T>>();
  readonly #registrations = new Set<PartitionedRegistration<K, T>>();
  readonly #indexer: PartitionedIndexer<T>;
  readonly #partSet: PartSet<K>;
  #scope: TaskScope | undefined;
  #state: 'new' | 'running' | 'stopped' = 'new';
  #changed = signal();
  #handlerCount = 0;
  /** The parts set aside (`isolate`), with why. */
  readonly #failed = new Map<K, Error>();

  constructor(options: PartitionsOptions<K, T>) {
    this.#options = options;
    this.#partSet = {
      label: options.label,
      isStopped: () => this.isStopped(),
      keys: () => this.keys(),
      changed: () => this.#changed.promise,
      isFailed: (key) => this.#failed.has(key),
      failed: (key, err) => this.#setAside(key, err),
    };
    const informers = (): Array<SharedIndexInformer<T>> => [...this.#parts.values()].map((p) => p.informer);
    this.#indexer = {
      getByKey: (key) => {
        for (const informer of informers()) {
          const obj = informer.getIndexer().getByKey(key);
          if (obj !== undefined) return obj;
        }
        return undefined;
      },
      listKeys: () => informers().flatMap((i) => i.getIndexer().listKeys()),
      list: () => informers().flatMap((i) => i.getIndexer().list()),
      byIndex: (index, value) => {
        const only = this.#options.indexPart?.(index, value);
        if (only !== undefined) return this.#parts.get(only)?.informer.getIndexer().byIndex(index, value) ?? [];
        return informers().flatMap((i) => i.getIndexer().byIndex(index, value));
      },
    };
  }

  /** Adds `handler` to every part's informer, present and future (see `ShardedInformer.addEventHandler`). */
  addEventHandler(handler: ResourceEventHandler<T>, options: AddEventHandlerOptions = {}): SharedInformerRegistration {
    validateOptions(`${this.#options.name}.addEventHandler`, options, ADD_EVENT_HANDLER_OPTION_SCHEMA);
    const name = options.name ?? `handler-${++this.#handlerCount}`;
    const registration = new PartitionedRegistration<K, T>(this.#partSet, handler, { ...options, name });
    this.#registrations.add(registration);
    for (const [key, p] of this.#parts) registration.attach(key, p.informer);
    return registration;
  }

  /** Removes a handler from every part; harmless for a foreign or removed registration. */
  removeEventHandler(registration: SharedInformerRegistration): void {
    const mine = registration as PartitionedRegistration<K, T>;
    if (!this.#registrations.delete(mine)) return;
    mine.detachAll();
    this.#notify();
  }

  /** The parts running now, in `compare` order. */
  keys(): K[] {
    return [...this.#parts.keys()].sort(this.#options.compare);
  }

  /** The informer of part `key`, while it runs. */
  informerOf(key: K): SharedIndexInformer<T> | undefined {
    return this.#parts.get(key)?.informer;
  }

  /** The union of the parts' caches. */
  getIndexer(): PartitionedIndexer<T> {
    return this.#indexer;
  }

  /** True when every part's informer has synced or is set aside (also when there is none). */
  hasSynced(): boolean {
    return [...this.#parts].every(([key, p]) => p.informer.hasSynced() || this.#failed.has(key));
  }

  /** Why part `key` is set aside (`isolate`), or `undefined`. */
  failure(key: K): Error | undefined {
    return this.#failed.get(key);
  }

  /** Resolves on the next change of the parts or of their failures (or on stop). */
  changed(): Promise<void> {
    return this.#changed.promise;
  }

  /**
   * Resolves `true` once `key`'s informer has synced, `false` when `key` is not (or no longer) a part
   * or the run stopped first. Rejects when that informer cannot sync (its `whenSynced` error), and
   * when `signal` aborts.
   */
  async whenPartSynced(key: K, signal?: AbortSignal): Promise<boolean> {
    const p = this.#parts.get(key);
    if (p === undefined) return false;
    try {
      await p.informer.whenSynced(signal);
      return true;
    } catch (err) {
      if (signal?.aborted !== true && (this.#parts.get(key) !== p || this.#state === 'stopped')) return false; // dropped meanwhile
      throw err;
    }
  }

  /** `awaitObserved` on part `key`'s informer; `undefined` at once when there is no such part. */
  async awaitObserved(key: K, written: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    const informer = this.#parts.get(key)?.informer;
    return informer === undefined ? undefined : informer.awaitObserved(written, signal);
  }

  /** `awaitDeleted` on part `key`'s informer; `undefined` at once when there is no such part. */
  async awaitDeleted(key: K, deleted: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    const informer = this.#parts.get(key)?.informer;
    return informer === undefined ? undefined : informer.awaitDeleted(deleted, signal);
  }

  /** `health()` of each part's informer, in `compare` order. */
  health(): Array<[K, InformerHealth]> {
    return this.keys().map((key) => [key, (this.#parts.get(key) as PartInformer<T>).informer.health()]);
  }

  /** Whether `run` was called. */
  isStarted(): boolean {
    return this.#state !== 'new';
  }

  /** Whether `run` ended: the core cannot run again. */
  isStopped(): boolean {
    return this.#state === 'stopped';
  }

  /** Whether parts can be added now (running, not stopping). */
  isRunning(): boolean {
    return this.#scope?.state === 'open';
  }

  /**
   * Runs until `signal` aborts, then stops every part's informer and resolves; `started` is called once
   * the core can take parts. Rejects when a part's informer fails, having stopped the others, or on
   * {@link Partitions.fail}; with `INFORMER_STOPPED` when run a second time.
   */
  async run(signal: AbortSignal, started: () => void): Promise<void> {
    if (this.#state !== 'new') throw new InformerStoppedError(`${this.#options.label} has run already; create a new one`);
    this.#state = 'running';
    const scope = new TaskScope({ name: this.#options.label, signal });
    this.#scope = scope;
    // One listener stops every part's informer when the run ends (a per-part `AbortSignal.any` would pile
    // one listener per part on the scope's signal).
    scope.signal.addEventListener('abort', () => {
      this.#parts.forEach((p) => p.stop.abort());
      for (const r of this.#registrations) r.stop();
    }, { once: true });
    try {
      started();
      await scope.closed();
    } finally {
      this.#state = 'stopped';
      const reason = scope.failure ?? new InformerStoppedError(`${this.#options.label} has stopped`);
      for (const r of this.#registrations) r.end(reason);
      for (const p of this.#parts.values()) p.synced.resolve();
      this.#parts.clear();
      this.#failed.clear();
      this.#scope = undefined;
      this.#notify();
    }
  }

  /** Fails the run with `err` (no silent gap in the cache). */
  fail(name: string, err: unknown): void {
    void this.#scope?.spawn(name, () => Promise.reject(toError(err)));
  }

  /**
   * Starts part `key`'s informer (made by `informerFor`, whose error is thrown) and attaches every
   * handler. Returns false when the core is not running or the part exists.
   */
  add(key: K): boolean {
    const scope = this.#scope;
    if (scope === undefined || scope.state !== 'open' || this.#parts.has(key)) return false;
    const informer = this.#options.informerFor(key);
    for (const r of this.#registrations) r.attach(key, informer);
    const stop = new AbortController();
    const part: PartInformer<T> = { informer, stop, synced: signal() };
    this.#parts.set(key, part);
    if (this.#options.isolate !== undefined) {
      informer.on('synced', () => part.synced.resolve());
      void this.#follow(key, part);
    }
    void scope.spawn(this.#options.partName(key), async () => {
      try {
        await informer.run(stop.signal); // stopped with its part, or by run's end
      } finally {
        for (const r of this.#registrations) r.left(informer);
      }
    });
    this.#notify();
    return true;
  }

  /**
   * Drops part `key`: it leaves the reads and the sync at once and its informer stops. With
   * `asDeletes`, every handler gets its cached objects as deletes first, after what it had buffered
   * (`SharedIndexInformer.deleteAllOnStop`); without, the handlers are detached at once. Returns false
   * for an unknown part.
   */
  remove(key: K, asDeletes: boolean): boolean {
    const p = this.#parts.get(key);
    if (p === undefined) return false;
    this.#parts.delete(key);
    this.#failed.delete(key);
    p.synced.resolve();
    for (const r of this.#registrations) r.detach(key, asDeletes);
    const scope = this.#scope;
    if (asDeletes && scope !== undefined) p.informer.deleteAllOnStop(scope.signal);
    p.stop.abort();
    this.#notify();
    return true;
  }

  /** Follows a part's sync for `isolate`: set aside while it cannot sync, back once it syncs. */
  async #follow(key: K, part: PartInformer<T>): Promise<void> {
    for (;;) {
      try {
        await part.informer.whenSynced();
      } catch (err) {
        if (this.#parts.get(key) !== part) return; // removed, or the run ended
        this.#setAside(key, err);
        await part.synced.promise;
        if (this.#parts.get(key) !== part) return;
        continue;
      }
      if (this.#parts.get(key) !== part) return;
      if (this.#failed.delete(key)) {
        this.#options.isolate?.recovered(key);
        this.#notify();
      }
      return;
    }
  }

  /** Sets part `key` aside for `err` (see `isolate`); false when this core does not isolate. */
  #setAside(key: K, err: unknown): boolean {
    const isolate = this.#options.isolate;
    if (isolate === undefined) return false;
    if (!this.#parts.has(key) || this.#failed.has(key)) return true;
    const error = toError(err);
    this.#failed.set(key, error);
    isolate.failed(key, error);
    this.#notify();
    return true;
  }

  #notify(): void {
    const done = this.#changed;
    this.#changed = signal();
    done.resolve();
  }
}
