// SharedIndexInformer: one reflector and one indexer shared by many independently buffered handlers.

import { abortableWait, raceAbort } from '../core/abort.js';
import { realClock, wallTime, type Clock } from '../core/clock.js';
import { AlreadyStartedError, InvalidResourceVersionError } from '../core/errors.js';
import { deletionHandlingMetaNamespaceKeyFunc, keyOf, type KeyFunc } from '../core/keys.js';
import { RateLimitedLog, errorFields, resolveLogger, withFields } from '../core/log.js';
import { validateOptions } from '../core/options.js';
import { isComparableResourceVersion } from '../core/resource-version.js';
import { TaskScope } from '../core/task-scope.js';
import { channels, publish } from '../observability/channels.js';
import { DeltaFIFO, setFirstListSink } from '../fifo/delta-fifo.js';
import type { ListerWatcher } from '../listwatch/types.js';
import { Hurry, hurriedBy } from '../listwatch/index.js';
import { newLister, type Lister } from '../store/lister.js';
import { newIndexer } from '../store/store.js';
import type { Indexer, Indexers } from '../store/types.js';
import { readonlyIndexer, type ReadonlyIndexer, type ReadonlyStore } from '../store/index.js';
import { CacheMutationDetector } from '../mutation/detector.js';
import { computeHealth, SourceHealth, SyncCondition, SyncFailureTracker, type InformerHealth, type InformerState } from '../health/index.js';
import { CatchUpWaiters, checkDeleted, checkWritten, ObservedWaiters, type Observed } from '../observed/index.js';
import { CacheWrites } from './cache-writes.js';
import { closeListerWatcher, newController, type ReflectorController } from './controller.js';
import { InformerStoppedError } from './errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from './handler.js';
import { InformerEvents, type InformerEventListeners, type InformerEventName } from './informer-events.js';
import { informerEventStream, type InformerEventStream, type InformerEventStreamOptions } from './events-stream.js';
import { mutationDetectionFromEnv, validateInformerOptions, ADD_EVENT_HANDLER_OPTION_SCHEMA, type AddEventHandlerOptions, type SharedIndexInformerOptions } from './options.js';
import { SharedProcessor } from './processor.js';
import { ReflectorFollower } from './reflector-follower.js';
import { Registrations, type Registration } from './registrations.js';

const keyFunc = deletionHandlingMetaNamespaceKeyFunc as KeyFunc<unknown>;

/** Each informer's own (writable) indexer, for {@link informerIndexer}. */
const writableIndexers = new WeakMap<SharedIndexInformer<unknown>, Indexer<unknown>>();

/**
 * The informer's own cache, writable — for pipelines assembled by hand (from `kube-informer/cache`)
 * and for tests that corrupt a cache on purpose (a drift audit's). Writing to it bypasses the handlers
 * and the resource-version guard; the informer's next relist or watch event wins. Everyone else reads
 * through `getIndexer()`, a read-only view.
 */
export function informerIndexer<T>(informer: SharedIndexInformer<T>): Indexer<T> {
  const indexer = writableIndexers.get(informer as SharedIndexInformer<unknown>);
  if (indexer === undefined) throw new TypeError('informerIndexer: not a SharedIndexInformer');
  return indexer as Indexer<T>;
}

/**
 * client-go's `SharedIndexInformer`: one list+watch and one indexed cache, shared by any number of
 * handlers. Each handler has its own unbounded buffer and delivery loop, so a slow handler delays only
 * itself (watch its backlog in {@link SharedIndexInformer.health}).
 *
 * Handler errors propagate: under the default `errorPolicy: 'stop'`, a handler that throws or rejects
 * stops the informer — the watch is aborted, timers cleared — and `run()` rejects within
 * `stopGraceMs` with a `HandlerError` (code `HANDLER_FAILED`) whose `cause` is the handler's error.
 * With `detectMutations`, a change to a handed-out object makes `run()` reject with `CACHE_MUTATED`.
 *
 * Recovery: list/watch failures are retried forever by the reflector (see `onWatchError`,
 * `health()`, and `whenSynced()`, which rejects on persistent 401/403/404). A stopped informer
 * cannot be restarted: create a new one.
 *
 * Warning: handed-out objects are the cache's own; never mutate them.
 */
export class SharedIndexInformer<T> {
  readonly #lw: ListerWatcher<T>;
  readonly #options: SharedIndexInformerOptions<T>;
  readonly #name: string;
  readonly #clock: Clock;
  readonly #indexer: Indexer<T>;
  /** What `getIndexer()`/`getStore()` hand out: the reads of `#indexer`, objects typed read-only. */
  readonly #view: ReadonlyIndexer<T>;
  readonly #processor: SharedProcessor<T>;
  /** What health() knows of the watch, from the reflector's events. */
  readonly #source: SourceHealth;
  readonly #synced = new SyncCondition(() => this.hasSynced());
  readonly #registrations: Registrations<T>;
  /**
   * The run's lifetime and the informer's one lifecycle state: `undefined` before `run()`; `open` while
   * running; `stopping` once the caller's signal aborted or the first failure (`scope.failure`) aborted
   * it; `closed` once the teardown is done.
   */
  #scope: TaskScope | undefined;
  #controller: ReflectorController | undefined;
  readonly #syncFailures: SyncFailureTracker;
  readonly #log: RateLimitedLog;
  readonly #events: InformerEvents<T> = new InformerEvents<T>({
    addEventHandler: (handler, options) => this.addEventHandler(handler, options),
    removeEventHandler: (registration) => this.removeEventHandler(registration),
    fail: (err) => this.#fail(err),
  });
  readonly #writes: CacheWrites<T>;
  readonly #observed = new ObservedWaiters();
  /** The waits on this cache, told to the watch: a coalescing watch holds no read during one. */
  readonly #hurry = new Hurry();
  #fifo: DeltaFIFO<T> | undefined;
  /** Set by {@link SharedIndexInformer.deleteAllOnStop}: bounds the delivery of the deletes at stop. */
  #deletesOnStop: AbortSignal | undefined;
  readonly #catchUp = new CatchUpWaiters(() => ({ resourceVersion: this.lastSyncResourceVersion(), drained: this.#fifo?.size === 0 }));
  readonly #cached = (key: string): unknown => this.#indexer.getByKey(key);
  /** See {@link SharedIndexInformerOptions.onResourceMissing}; set before `run` by {@link SharedIndexInformer.setOnResourceMissing}. */
  #onResourceMissing: 'retry' | 'absent';

  /** Throws `INVALID_OPTION` for out-of-range options (see {@link SharedIndexInformerOptions}). */
  constructor(lw: ListerWatcher<T>, options: SharedIndexInformerOptions<T> = {}) {
    validateInformerOptions(options);
    this.#lw = lw;
    this.#options = options;
    this.#name = options.name ?? 'informer';
    this.#clock = options.clock ?? realClock;
    this.#onResourceMissing = options.onResourceMissing ?? 'retry';
    this.#indexer = newIndexer<T>(keyFunc, { ...(options.indexers ?? {}) });
    this.#view = readonlyIndexer(this.#indexer);
    writableIndexers.set(this as SharedIndexInformer<unknown>, this.#indexer as Indexer<unknown>);
    this.#processor = new SharedProcessor<T>(this.#clock);
    this.#log = new RateLimitedLog(withFields(resolveLogger(options.logger), { component: 'informer', name: this.#name }), this.#clock);
    this.#syncFailures = new SyncFailureTracker({
      name: this.#name,
      clock: this.#clock,
      threshold: options.syncFailureThreshold ?? 3,
      unreachableMs: options.syncUnreachableMs ?? 10_000,
      hasSynced: () => this.hasSynced(),
      onBlocked: (err) => this.#onSyncBlocked(err),
    });
    this.#source = new SourceHealth(this.#clock);
    this.#registrations = new Registrations<T>(this.#processor, options.resyncPeriodMs ?? 0);
    this.#writes = new CacheWrites<T>({
      name: this.#name,
      indexer: this.#indexer,
      processor: this.#processor,
      observed: this.#observed,
      catchUp: this.#catchUp,
      clock: this.#clock,
      share: options.shareUnchanged ?? true,
      reportIndexErrors: options.errorPolicy === 'report',
      onError: options.onError,
      keyed: options.transform === undefined,
    });
  }

  /** The informer's name. */
  get name(): string {
    return this.#name;
  }

  /** What a list answered 404 does: see {@link SharedIndexInformerOptions.onResourceMissing}. */
  get onResourceMissing(): 'retry' | 'absent' {
    return this.#onResourceMissing;
  }

  /**
   * Sets {@link SharedIndexInformerOptions.onResourceMissing} before `run()` (the `Manager`'s
   * `followCustomResources` does, for its factory's informers). Throws `ALREADY_STARTED` once the
   * informer runs, and `INVALID_OPTION` for another value than `'retry'` or `'absent'`.
   */
  setOnResourceMissing(policy: 'retry' | 'absent'): void {
    validateOptions(`${this.#name}.setOnResourceMissing`, { onResourceMissing: policy }, { onResourceMissing: ['retry', 'absent'] });
    if (this.#scope !== undefined) throw new AlreadyStartedError(`shared informer ${this.#name} (onResourceMissing is read when it starts)`);
    this.#onResourceMissing = policy;
  }

  /**
   * Registers a handler. Before `run()`, it waits for the initial list; on a running informer it
   * first receives every cached object as `onAdd(obj, true)`, and its registration's `hasSynced()`
   * turns true once it has handled them. Throws `INFORMER_STOPPED` on a stopped informer.
   */
  addEventHandler(handler: ResourceEventHandler<T>, options: AddEventHandlerOptions = {}): SharedInformerRegistration {
    validateOptions(`${this.#name}.addEventHandler`, options, ADD_EVENT_HANDLER_OPTION_SCHEMA);
    const name = options.name ?? this.#registrations.nextName();
    if (this.isStopped()) {
      throw new InformerStoppedError(
        `handler ${name} was not added to shared informer ${this.#name} because it has stopped already`,
        { cause: this.#scope?.failure },
      );
    }
    const started = this.#scope !== undefined;
    const registration = this.#registrations.add(handler, name, options.resyncPeriodMs, started, {
      clock: this.#clock,
      errorPolicy: this.#options.errorPolicy ?? 'stop',
      onError: this.#options.onError,
      onFatal: (err) => this.#fail(err),
      upstreamHasSynced: () => this.hasSynced(),
      keyOf,
    });
    if (started) {
      const at = this.#clock.now();
      for (const obj of this.#indexer.list()) registration.listener.add({ kind: 'add', obj, isInInitialList: true, at });
    }
    return registration;
  }

  /**
   * Listens the way client-node's informer does: `add`, `update`, `change`, `delete`, `error`,
   * `connect`, `synced` (see {@link InformerEventListeners} for each listener's arguments). Each
   * object listener gets its own buffer, like a handler; any listener that throws stops the informer
   * and `run()` rejects with `HANDLER_FAILED`. Returns the informer, so calls chain.
   *
   * @example
   * ```ts
   * pods.on('add', (pod) => queue.add(key(pod))).on('error', (err) => log.warn(err.message));
   * ```
   */
  on<E extends InformerEventName>(event: E, listener: InformerEventListeners<T>[E]): this {
    this.#events.on(event, listener);
    return this;
  }

  /**
   * The notifications as an async iterable, each loop a handler registration of its own: see
   * {@link InformerEventStream} (ends, failures, back-pressure). Throws `INFORMER_STOPPED` when stopped.
   */
  events(signal?: AbortSignal, options?: InformerEventStreamOptions): InformerEventStream<T> {
    return informerEventStream(this, this.#name, signal, options);
  }

  /** Removes a listener added with {@link SharedIndexInformer.on} (its most recent registration for `event`). */
  off<E extends InformerEventName>(event: E, listener: InformerEventListeners<T>[E]): this {
    this.#events.off(event, listener);
    return this;
  }

  /**
   * Stops delivery to a handler: buffered notifications are dropped; a callback already running
   * finishes on its own. Harmless for a removed or foreign registration, and on a stopped informer.
   */
  removeEventHandler(registration: SharedInformerRegistration): void {
    const reg = this.#registrations.remove(registration);
    if (reg === undefined) return;
    reg.listener.synced.fail(new InformerStoppedError(`handler ${reg.name} was removed from informer ${this.#name}`));
  }

  /**
   * Removes a handler and resolves once its delivery loop has exited (client-go's
   * `ShutDownEventHandler`). The handler is removed at once either way; `signal` bounds only the wait
   * for a callback still running — when it aborts first this rejects with an `AbortedError` (code
   * `ABORTED`). Warning: never await this from inside that handler — it would wait for itself.
   */
  async shutDownEventHandler(registration: SharedInformerRegistration, signal?: AbortSignal): Promise<void> {
    const reg = registration as Registration<T>;
    if (!this.#registrations.has(reg)) return;
    this.removeEventHandler(reg);
    await abortableWait(reg.listener.done(), signal, `stopped waiting for handler ${reg.name} to shut down: the signal was aborted`);
  }

  /** True when `registration` is currently registered with this informer. */
  isHandlerRegistered(registration: SharedInformerRegistration): boolean {
    return this.#registrations.has(registration);
  }

  /**
   * How often the informer checks whether a handler's resync is due, in ms: the constructor's
   * `resyncPeriodMs`, lowered by handlers added before `run()` that asked for less.
   */
  resyncCheckPeriodMs(): number {
    return this.#registrations.checkPeriodMs;
  }

  /** How many handlers are registered. */
  handlerCount(): number {
    return this.#registrations.size;
  }

  /**
   * The cache, read-only: the reads of {@link SharedIndexInformer.getIndexer} (client-go's `GetStore`).
   * Objects are the cache's own, typed `DeepReadonly`: copy one (`deepCopy`) to change it.
   */
  getStore(): ReadonlyStore<T> {
    return this.#view;
  }

  /**
   * The cache, read-only (client-go's `GetIndexer`): keys, objects and index queries, objects typed
   * `DeepReadonly` — they are the cache's own and shared with every handler. Only the informer writes
   * to its cache (add index functions with {@link SharedIndexInformer.addIndexers}).
   */
  getIndexer(): ReadonlyIndexer<T> {
    return this.#view;
  }

  /** A lister (by name, namespace, label selector) over the cache. */
  lister(): Lister<T> {
    return newLister(this.#view);
  }

  /**
   * Adds index functions, before or while running (existing objects are indexed at once). Throws
   * `INDEXER_CONFLICT` for an existing name and `INFORMER_STOPPED` on a stopped informer.
   */
  addIndexers(indexers: Indexers<T>): void {
    if (this.isStopped()) throw this.#stoppedError('indexers', 'can no longer be added');
    this.#indexer.addIndexers(indexers);
  }

  /**
   * True while the cache is filled by a full list and kept up to date: false before the first sync,
   * and false again once the informer stopped or failed (a dead informer never reports synced; its
   * lister still answers from the last state). Says nothing about handlers.
   */
  hasSynced(): boolean {
    return !this.isStopped() && (this.#controller?.hasSynced() ?? false);
  }

  /**
   * Resolves once the cache has synced. Rejects — so "never synced" always comes with a why — when
   * the informer fails first (with that error, e.g. `HANDLER_FAILED`), has stopped (`INFORMER_STOPPED`),
   * keeps getting answers retrying cannot fix (`API_STATUS` for 400/401/403/404/422, `KUBECONFIG`,
   * `NETWORK` for TLS/DNS; see `syncFailureThreshold`), cannot reach the server for
   * `syncUnreachableMs` (`NETWORK`), or `signal` aborts (`ABORTED`). In the two failure cases the
   * informer keeps retrying, and a later call resolves once it syncs.
   */
  whenSynced(signal?: AbortSignal): Promise<void> {
    const blocked = this.#syncFailures.blocked();
    if (blocked !== undefined && !this.hasSynced() && this.#scope?.failure === undefined) return Promise.reject(blocked);
    return this.#synced.wait(signal);
  }

  /**
   * Read-your-own-writes: resolves once this informer's cache holds `written` (what the API server
   * answered a create, update or patch with) at its resource version or newer — `'observed'` — or
   * once the cache has applied a change at least that new and the object is not in it, or a relist
   * found it gone — `'gone'` (deleted since). At once when that is already so. Versions are compared
   * exactly (`compareResourceVersion`). Waits through a not-yet-synced cache. The answer to a write
   * that removed the last finalizer of an object being deleted (`deletionTimestamp`, no finalizers, at
   * the version the write read — kube-apiserver's answer) is observed once the cache has seen the
   * object go, not while it still holds it with its finalizers.
   *
   * Rejects with `ABORTED` when `signal` aborts (nothing is left registered), with the informer's
   * failure or `INFORMER_STOPPED` when it stops, and throws `INVALID_OBJECT` for an object without a
   * name or a comparable resource version.
   *
   * Warning: an object the informer does not see (another namespace, filtered by a selector) is never
   * observed, and its wait ends only with the signal: pass one with a timeout.
   *
   * @example
   * ```ts
   * const created = await client.create(configMap, signal);
   * await configMaps.awaitObserved(created, AbortSignal.timeout(10_000)); // the lister now shows it
   * ```
   */
  awaitObserved(written: unknown, signal?: AbortSignal): Promise<Observed> {
    const checked = checkWritten(`informer ${this.#name}`, written);
    if (this.isStopped()) return Promise.reject(this.#stoppedError('awaitObserved'));
    return this.#hurry.track(this.#observed.wait(keyOf(written) ?? '', checked, this.#cached, signal));
  }

  /**
   * Read-your-own-deletes: resolves once this informer's cache saw the deletion of `deleted` (the
   * deleted object, or `{ metadata: { name, namespace, uid } }` when the server answered a `Status`):
   * `'gone'` when the cache does not hold it — or holds another object of that name (another uid, when
   * `uid` is given) — and `'observed'` when it holds it with a `deletionTimestamp` (finalizers hold
   * it). At once when that is already so.
   *
   * Rejects with `ABORTED` when `signal` aborts (nothing is left registered), with the informer's
   * failure or `INFORMER_STOPPED` when it stops, and throws `INVALID_OBJECT` without a `metadata.name`.
   *
   * @example
   * ```ts
   * const result = await client.delete('cm', 'ns');
   * await configMaps.awaitDeleted({ metadata: { name: 'cm', namespace: 'ns', uid: result.status?.details?.uid } }, AbortSignal.timeout(10_000));
   * ```
   */
  awaitDeleted(deleted: unknown, signal?: AbortSignal): Promise<Observed> {
    const checked = checkDeleted(`informer ${this.#name}`, deleted);
    if (this.isStopped()) return Promise.reject(this.#stoppedError('awaitDeleted'));
    return this.#hurry.track(this.#observed.waitDeleted(keyOf(deleted) ?? '', checked, this.#cached, signal));
  }

  /**
   * Resolves once the cache has applied every change of the resource up to resource version `rv`: the
   * reflector has received an event, a bookmark or a list at least that new, and everything it
   * received is in the cache. With the `resourceVersion` of a list read from the server, the cache is
   * then at least as new as that list — what a comparison of the two needs (the drift audit's cut).
   * At once when that is already so.
   *
   * Rejects with `ABORTED` when `signal` aborts, with the informer's failure or `INFORMER_STOPPED`
   * when it stops; throws `INVALID_RESOURCE_VERSION` for a version that is not comparable.
   *
   * Warning: a quiet resource moves the reflector's version only with bookmarks, which kube-apiserver
   * sends about once a minute: pass a signal with a timeout of a minute or more.
   */
  awaitResourceVersion(rv: string, signal?: AbortSignal): Promise<void> {
    const given: unknown = rv;
    if (!isComparableResourceVersion(given)) throw new InvalidResourceVersionError(String(given), `informer ${this.#name}: awaitResourceVersion needs a comparable resource version, got ${JSON.stringify(given)}`);
    if (this.isStopped()) return Promise.reject(this.#stoppedError('awaitResourceVersion'));
    return this.#hurry.track(this.#catchUp.waitForVersion(rv, `informer ${this.#name} to reach resource version ${rv}`, signal));
  }

  /**
   * Drops the watch and lists the resource again with a consistent read (from etcd, not the watch
   * cache), replacing the cache's contents: handlers see what differed (`onAdd`, `onUpdate`, and
   * `onDelete` with a `DeletedFinalStateUnknown` for what is gone). Resolves once that list is in the
   * cache. A list already in flight finishes first; an informer in backoff relists after it.
   *
   * Recovery: this is the repair for a cache found to differ from the server (the drift audit's
   * `repair`); a healthy informer never needs it, since a watch delivers every change in order.
   *
   * Rejects with `ABORTED` when `signal` aborts (the relist still happens), with the informer's failure
   * or `INFORMER_STOPPED` when it stops or never ran.
   */
  relist(signal?: AbortSignal): Promise<void> {
    if (!this.isStarted() || this.isStopped() || this.#controller === undefined) return Promise.reject(this.#stoppedError('relist'));
    const done = this.#hurry.track(this.#catchUp.waitForRelist(`informer ${this.#name} to relist`, signal));
    this.#controller.requestRelist();
    return done;
  }

  #stoppedError(what: string, outcome = 'cannot be answered'): InformerStoppedError {
    const state = this.isStarted() ? 'has stopped' : 'is not running';
    return new InformerStoppedError(`informer ${this.#name} ${state}: ${what} ${outcome}`, { cause: this.#scope?.failure });
  }

  /**
   * Makes the end of this run hand the cache out as deletes: once `run`'s signal aborts, the watch and
   * the process loop stop, then every cached object is queued to every handler as `onDelete` (the last
   * state cached), after what each handler had buffered — order kept — and the run resolves once the
   * handlers delivered them all. For an informer whose objects leave its users' view while they still
   * exist (a namespace removed from a `NamespaceSetInformer`). `signal` bounds that delivery: when it
   * aborts, what is left is dropped as at any stop. Nothing is handed out when the informer failed.
   */
  deleteAllOnStop(signal: AbortSignal): void {
    this.#deletesOnStop = signal;
  }

  /** Queues every cached object as a delete to every handler and waits until they are delivered. */
  async #handOutDeletes(signal: AbortSignal): Promise<void> {
    if (this.#scope?.failure !== undefined || signal.aborted) return;
    const at = this.#clock.now();
    for (const obj of this.#indexer.list()) this.#processor.distribute({ kind: 'delete', obj, at }, false);
    await raceAbort(this.#processor.whenIdle(), signal);
  }

  /** The reflector's resource version (`""` before the first list). */
  lastSyncResourceVersion(): string {
    return this.#controller?.lastSyncResourceVersion() ?? '';
  }

  /** True once `run()` was called. */
  isStarted(): boolean {
    return this.#scope !== undefined;
  }

  /** True once the informer stopped or is stopping (aborted or failed); it never runs again. */
  isStopped(): boolean {
    return this.#scope !== undefined && this.#scope.state !== 'open';
  }

  /** The lifecycle as `health()` reports it: `running` (or `absent`, its resource not served) until the teardown is done. */
  #lifecycle(): InformerState {
    const scope = this.#scope;
    if (scope === undefined) return 'new';
    if (scope.state === 'open' && this.#source.isAbsent()) return 'absent';
    if (scope.state !== 'closed') return 'running';
    return scope.failure === undefined ? 'stopped' : 'failed';
  }

  /** A health snapshot: watch liveness, per-handler backlog and age, counters. See {@link InformerHealth}. */
  health(): InformerHealth {
    const stats = this.#controller?.reflectorStats();
    return computeHealth({
      name: this.#name,
      now: this.#clock.now(),
      wallNow: wallTime(this.#clock),
      state: this.#lifecycle(),
      synced: this.hasSynced(),
      lastSyncResourceVersion: this.lastSyncResourceVersion(),
      source: this.#source.snapshot(),
      counters: stats,
      listMode: stats?.listMode,
      handlers: [...this.#registrations].map((r) => ({ name: r.name, synced: r.hasSynced(), stats: r.listener.stats() })),
      thresholds: this.#options.health ?? {},
      failure: this.#scope?.failure,
    });
  }

  /**
   * Lists, watches and delivers until `signal` aborts, then resolves once the watch is closed, timers
   * are cleared and handler loops have exited (callbacks already running get `stopGraceMs`).
   * Rejects with the fatal error (`HANDLER_FAILED`, `CACHE_MUTATED`, ...) after the same teardown.
   * A second call rejects with `ALREADY_STARTED`.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#scope !== undefined) throw new AlreadyStartedError(`shared informer ${this.#name}`);
    const scope = new TaskScope({
      name: `shared informer ${this.#name}`,
      signal,
      clock: this.#clock,
      // A failure after run() settled (a callback that outlived the stop grace) is only published.
      onLateFailure: (error) => publish(channels.informerHandlerError, { name: this.#name, error, late: true }),
    });
    this.#scope = scope;
    const fifo = (this.#fifo = new DeltaFIFO<T>({
      knownObjects: this.#indexer,
      emitDeltaTypeReplaced: true,
      transform: this.#options.transform,
    }));
    // A fresh first list is gathered into a map while it is paged and made the indexer's contents at
    // once (perf/first-list.ts); only where the one-by-one hand-over would do exactly the same.
    const firstList = this.#writes.firstList(() => !scope.signal.aborted);
    if (firstList !== undefined) setFirstListSink(fifo, firstList);
    this.#controller = newController<T>({
      queue: fifo,
      listerWatcher: hurriedBy(this.#lw, this.#hurry),
      closeListerWatcher: false, // the informer closes it below, when it owns it
      name: this.#name,
      process: this.#writes.process,
      processChange: this.#writes.processChange,
      resyncPeriodMs: this.#registrations.checkPeriodMs,
      shouldResync: () => this.#processor.shouldResync(this.#clock.now()),
      clock: this.#clock,
      stopGraceMs: this.#options.stopGraceMs,
      onSynced: () => this.#onSynced(),
      reflector: { ...this.#options.reflector, knownObjects: this.#indexer, onResourceMissing: this.#onResourceMissing },
    });
    new ReflectorFollower<T>({
      name: this.#name,
      log: this.#log,
      source: this.#source,
      syncFailures: this.#syncFailures,
      catchUp: this.#catchUp,
      events: this.#events,
      onWatchError: this.#options.onWatchError,
      hasSynced: () => this.hasSynced(),
      clock: this.#clock,
    }).follow(this.#controller.events);
    // The detector outlives the process loop and the handlers, so its last comparison (at stop) also
    // sees what a handler changed during the stop grace.
    const detectorStop = new AbortController();
    const detectorDone = this.#startDetector(detectorStop.signal);
    const controller = this.#controller;
    this.#source.start();
    this.#processor.run();
    // One task: run until the scope aborts (the caller's signal, or the first failure anywhere), then
    // tear down in order. Every step is bounded: the controller and the processor by `stopGraceMs`.
    void scope.spawn('informer', async (stopping) => {
      try {
        await controller.run(stopping);
      } catch (err) {
        scope.fail(err);
      }
      this.#syncFailures.stop();
      if (this.#deletesOnStop !== undefined) await this.#handOutDeletes(this.#deletesOnStop);
      await this.#processor.stop(this.#options.stopGraceMs ?? 500).catch((err: unknown) => scope.fail(err));
      detectorStop.abort();
      await detectorDone;
      if (this.#options.closeListerWatcher !== false) closeListerWatcher(this.#lw);
    });
    await scope.closed().catch(() => undefined);
    const failure = scope.failure;
    if (failure !== undefined) this.#log.logger.error(`informer ${this.#name} stopped: ${failure.message}`, errorFields(failure));
    // A stop that says why (the factory's removeInformer aborts with an InformerStoppedError) is what the waiters get.
    const stopped = signal.reason instanceof InformerStoppedError && failure === undefined ? signal.reason : new InformerStoppedError(
      `informer ${this.#name} ${controller.hasSynced() ? 'has stopped' : 'stopped before its cache synced'}`,
      { cause: failure },
    );
    this.#synced.fail(failure ?? stopped);
    this.#observed.failAll(failure ?? stopped);
    this.#catchUp.failAll(failure ?? stopped);
    for (const reg of this.#registrations) reg.listener.synced.fail(failure ?? stopped);
    if (failure !== undefined) throw failure;
  }

  #startDetector(signal: AbortSignal): Promise<void> {
    const enabled = this.#options.detectMutations ?? mutationDetectionFromEnv();
    if (!enabled) return Promise.resolve();
    const detector = new CacheMutationDetector({
      ...this.#options.mutationDetection,
      name: this.#name,
      clock: this.#clock,
      onMutation: (err) => this.#fail(err),
    });
    this.#writes.detector = detector;
    return detector.run(signal).catch((err) => this.#fail(err));
  }

  /**
   * The one place a fatal error goes: the scope keeps the first, which stops everything; one after
   * `run()` settled (a callback that outlived the stop grace) is only published. Nothing can fail
   * before `run()` (handlers and the detector run only inside it).
   */
  #fail(error: unknown): void {
    this.#scope?.fail(error);
  }

  #onSynced(): void {
    this.#syncFailures.succeeded();
    const rv = this.lastSyncResourceVersion();
    this.#log.logger.debug(`informer ${this.#name} synced ${this.#indexer.list().length} objects${rv === '' ? '' : ` at resource version ${rv}`}`, { resourceVersion: rv === '' ? undefined : rv });
    this.#synced.check();
    for (const reg of this.#registrations) reg.listener.synced.check();
    this.#events.emit('synced');
  }

  #onSyncBlocked(err: Error): void {
    this.#log.log('error', 'sync-blocked', `${err.message} (sync waits reject; the informer keeps retrying while it runs)`, errorFields(err));
    this.#synced.rejectWaiters(err);
    for (const reg of this.#registrations) reg.listener.synced.rejectWaiters(err);
  }
}
