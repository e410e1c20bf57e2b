// The controller: informer events → keys → the reconcile scheduler → reconcile(key, ctx), for as long as it runs; and its builder (one file: `Controller.for` and `build` name each other).

import { realClock, type Clock, type ClockTimer } from '../core/clock.js';
import { AbortedError, AlreadyStartedError, toError } from '../core/errors.js';
import { errorFields, resolveLogger, withFields, type Logger } from '../core/log.js';
import { InvalidOptionError, validateOptions } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import type { DeepReadonly, PartialObjectMetadata } from '../core/types.js';
import { InformerStoppedError } from '../informer/errors.js';
import type { ResourceCacheOptions } from '../informer/index.js';
import { checkFieldManager, newResourceClient, type ResourceClient } from '../listwatch/index.js';
import { forResourceAs, gvrKey, type SharedInformerFactory } from '../informer/factory.js';
import { keyOf } from '../core/keys.js';
import { cacheOptionsOf, checkResource, checkWatchOptions, CONTROLLER_OPTION_SCHEMA, type ControllerDescription, type ControllerOptions, type ControllerSpec, type MetadataOnlyWatchOptions, type Reconciler, type WatchOptions } from './builder.js';
import { controllerOwnerKey, refKey, type MapFunc } from './mapping.js';
import type { Predicate } from './predicates.js';
import type { SourceRole } from './sharded.js';
import { ControllerMetrics, rateLimitMetricsOf } from './metrics.js';
import { checkRateLimit } from './rate-limit.js';
import { ReconcileCtx, ReconcileRun, type ReconcileContext, type ReconcileReason } from './context.js';
import { ObservedWrites, type SourceInformer } from './writes.js';
import { ReconcileTimeoutError } from './errors.js';
import { codeOf, isTerminal, misuse, misuseIn, type ControllerStats } from './outcomes.js';
import { Priority, RequestPriorities } from './priority.js';
import { ADDED_NAMESPACE_REASON, ReconcileReasons, RESYNC_REASON, SCHEDULE_REASON, SHARD_REASON } from './reasons.js';
import { Action as Actions, checkAction, exponentialBackoff, ReconcileScheduler, type Action, type ReconcileErrorPolicy, type ReconcileSchedulerOptions, type ScheduleRequest } from './scheduler.js';
import { followsShard, ShardedSources, ShardGate } from './sharded.js';
import { NamespacedSources, sourceCaches } from './namespaced.js';
import { checkInformers, ownedChildren, sourceHandler, waitForSync, watchFactory, type WatchSource, type WatchSpec } from './sources.js';
import { ShardRing } from '../sharding/ring.js';
import type { KeyScheduler } from './lanes.js';
import { RunGroup } from '../runtime/run-group.js';
import type { HasPermissions, Permission, Verb } from '../core/permissions.js';
import { checkUses, ControllerPermissions, type DeclaredUse, type UsesOptions } from './permissions.js';
import { Deadlines } from '../runtime/deadlines.js';
import { ControllerTracing } from './tracing.js';
import { requestStream, RequestQueue, type ReconcileRequest } from './requests.js';
import { failureAction } from './failures.js';

const DONE_ACTION: Action = Actions.done();
const newScheduler = (options: ReconcileSchedulerOptions): KeyScheduler => new ReconcileScheduler(options);

/**
 * A reconcile runtime over one primary resource (controller-runtime's controller, kube-rs's
 * `Controller`): events of the primary, of the children it `owns` and of other `watches`ed resources
 * become keys; each key is reconciled by `reconcile(key, ctx)` under the scheduler's guarantees —
 * never two reconciles of one key at once, at most `concurrency` at a time, requests for a key merged
 * (the earliest due wins), failures retried with backoff. Build one with {@link Controller.for}.
 *
 * Lifecycle: `run(signal)` adds a handler to each informer (which replays every cached object, so
 * every primary is reconciled at the start), waits for the caches, reconciles until `signal` aborts,
 * then lets running reconciles see the aborted signal, waits for them, removes its handlers and
 * resolves. A controller can run again after that (a new leadership term), never twice at once.
 *
 * Errors: `run` rejects — after the same orderly stop — when a cache cannot sync (the reason, as
 * `factory.waitForCacheSync` gives it), when the factory stops or an informer fails while it runs
 * (`INFORMER_STOPPED`, the failure as `cause`), and at once with `NOT_STARTED` when the factory has
 * not been started. A failing reconcile never makes it reject (incident 1's lesson is the other way:
 * handler errors are loud — here they are logged and retried, and counted in `stats()`), except a
 * programming error the runtime raises (`ctx.children` of a resource not owned, a result that is not
 * an `Action`): that is logged and `run` rejects with it, after the same orderly stop.
 */
export class Controller<T> implements HasPermissions {
  readonly #spec: ControllerSpec<T>;
  readonly #permissions: ControllerPermissions;
  readonly #name: string;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #observeTimeoutMs: number;
  readonly #resyncMs: number;
  readonly #policy: ReconcileErrorPolicy;
  readonly #defaultPolicy = exponentialBackoff();
  /** The factory's informer of each source; undefined for the sources a sharded controller caches per slot. */
  readonly #shared: Array<SourceInformer | undefined>;
  /** The namespace sets of its sources (option `namespaces`, or a source's own). */
  readonly #namespaced: NamespacedSources;
  /** The sources of the current (or last) run, with their informers; the primary first. */
  #sources: readonly WatchSource[];
  #writes: ObservedWrites;
  #scheduler: KeyScheduler | undefined;
  #resyncTimer: ClockTimer | undefined;
  #counts = { succeeded: 0, failed: 0, timedOut: 0, terminal: 0, stopped: 0 };
  /** Why each requested key is due (`ctx.reason`). */
  readonly #reasons: ReconcileReasons;
  /** The priority of each request (option `priority`) and the key groups (option `concurrencyGroups`). */
  readonly #priorities: RequestPriorities;
  /** Each key's running (or just failed) reconcile, for the id in the lines `#onError` logs. */
  readonly #runs = new Map<string, ReconcileRun>();
  readonly #fieldManager: string;
  /** The clients of `ctx.client`, one per resource, made on first use and closed when `run` ends. */
  readonly #clients = new Map<ResourceDescriptor<unknown>, ResourceClient<unknown>>();
  /** Its spans (option `tracerProvider`, or the Manager's): undefined when it does not trace — the one check of the hot path. */
  #tracing: ControllerTracing | undefined;

  /**
   * Starts describing a controller of `primary` on `factory`'s informers: chain `owns` and `watches`,
   * then `build(reconcile, options)`. With `metadataOnly: true` the primary's cache (and `ctx.object`)
   * holds `PartialObjectMetadata`.
   */
  static for(factory: SharedInformerFactory, primary: ResourceDescriptor<unknown>, options: MetadataOnlyWatchOptions): ControllerBuilder<PartialObjectMetadata>;
  /** As above, the primary cached whole (typed by its descriptor). */
  static for<T>(factory: SharedInformerFactory, primary: ResourceDescriptor<T>, options?: WatchOptions<NoInfer<T>>): ControllerBuilder<T>;
  static for<T>(factory: SharedInformerFactory, primary: ResourceDescriptor<T>, options: object = {}): ControllerBuilder<T> {
    return new ControllerBuilder<T>(primary, options, (described) => new Controller<T>({ ...described, factory }));
  }

  /**
   * Use {@link Controller.for}. Throws `INVALID_OPTION` for an option out of range.
   * @hidden
   */
  constructor(spec: ControllerSpec<T>) {
    const o = spec.options;
    validateOptions('Controller', o, CONTROLLER_OPTION_SCHEMA);
    checkRateLimit('Controller', o.rateLimit);
    this.#spec = spec;
    this.#name = o.name ?? gvrKey(spec.primary);
    this.#fieldManager = o.fieldManager ?? this.#name;
    checkFieldManager(`Controller ${this.#name}: ${o.fieldManager === undefined ? 'option name (the default fieldManager of ctx.client)' : 'option fieldManager'}`, this.#fieldManager);
    this.#log = withFields(resolveLogger(o.logger), spec.cluster === undefined ? { component: 'controller', controller: this.#name } : { component: 'controller', controller: this.#name, cluster: spec.cluster });
    this.#clock = o.clock ?? realClock;
    this.#timeoutMs = o.reconcileTimeoutMs ?? 60_000;
    this.#observeTimeoutMs = o.observeTimeoutMs ?? 10_000;
    this.#resyncMs = o.resyncPeriodMs ?? 0;
    this.#policy = o.onError ?? this.#defaultPolicy;
    this.#reasons = new ReconcileReasons(o.debounceMs ?? 0);
    this.#priorities = new RequestPriorities(this.#name, o.priority, o.concurrencyGroups, this.#log, this.#clock);
    this.#tracing = ControllerTracing.of(`Controller ${this.#name}`, this.#name, o.tracerProvider, this, this.#log, spec.cluster);
    const ring = o.sharded;
    if (ring !== undefined && !(ring instanceof ShardRing)) throw new InvalidOptionError(`Controller: option sharded must be a ShardRing, got ${String(ring)}`);
    const cacheOf = sourceCaches(this.#name, o.namespaces, ring, spec.factory.namespace);
    this.#shared = spec.sources.map((s) => {
      if (!followsShard(ring, spec.primary, s.role, s.resource)) return forResourceAs(spec.factory, `controller ${this.#name} ${s.role}()`, s.resource, cacheOf(s), { stripManagedFields: true });
      if (s.cache.namespaces !== undefined) throw new InvalidOptionError(`Controller ${this.#name}: option namespaces of ${s.role}(${gvrKey(s.resource)}) cannot be combined with sharded (its cache is one informer per owned slot)`);
      return undefined;
    });
    this.#namespaced = new NamespacedSources(this.#name, o.namespaces, this.#shared);
    this.#sources = this.#sourcesOf(undefined);
    this.#writes = new ObservedWrites(`controller ${this.#name}`, this.#sources);
    // The reads of a source cached over a namespace set follow the set as it changes.
    const setReads = (): Permission[] => this.#namespaced.permissions(spec.sources, this.#name);
    this.#permissions = new ControllerPermissions({ name: this.#name, sources: spec.sources.filter((_, i) => !this.#namespaced.caches(i)), uses: spec.uses, namespace: spec.factory.namespace, ring, log: this.#log, setReads });
  }

  /**
   * The reconcile requests of a controller built without a reconcile function (`build(options)`), for
   * your own `for await` loop: see {@link ReconcileRequest}. Throws `INVALID_OPTION` for one built with it.
   */
  requests(signal?: AbortSignal): AsyncIterableIterator<ReconcileRequest<T>> {
    return requestStream(this.#spec.requests, this.#name, signal);
  }

  /**
   * What the controller needs from the API server (docs/rbac.md): `list` and `watch` of each resource
   * it watches (`for`, `owns`, `watches`; in the factory's namespace, or every namespace), what its
   * builder declared with `uses`, and, sharded, its ring's Leases — merged, each with its reason.
   */
  permissions(): Permission[] {
    return this.#permissions.permissions();
  }

  /** The namespaces the controller caches and reconciles (option `namespaces`; else the union of its sources' own sets), sorted; `undefined` without any. */
  namespaces(): string[] | undefined {
    return this.#namespaced.namespaces();
  }

  /**
   * Adds `namespace` to the set (option `namespaces`): on a running controller its primary and owned
   * resources are listed and watched there at once (one list each; the other namespaces are not listed
   * again) and each of its primaries is reconciled once. Throws `INVALID_OPTION` without the option, for
   * a name that is not a namespace's, and for a namespace in the set already.
   */
  addNamespace(namespace: string): void {
    this.#namespaced.add(namespace, this.#scheduler !== undefined, (key) => {
      const scheduler = this.#scheduler;
      if (scheduler !== undefined) this.#request(scheduler, key, ADDED_NAMESPACE_REASON);
    });
  }

  /**
   * Removes `namespace` from the set: its objects leave the caches, and no key of it is reconciled any
   * more — requests pending for its keys are dropped, and the deletes its caches hand out reconcile
   * nothing (its primaries still exist: a reconcile must not clean up after them). Removing the last
   * namespace leaves a controller that reconciles nothing until one is added. Throws `INVALID_OPTION`
   * without the option and for a namespace not in the set.
   */
  removeNamespace(namespace: string): void {
    this.#namespaced.remove(namespace);
  }

  /** Whether the builder declared any `uses`: then `ctx.client` refuses a request none covers (see {@link ControllerBuilder.uses}). */
  get declaresUses(): boolean {
    return this.#permissions.declared;
  }

  /** The controller's name (see `ControllerOptions.name`). */
  get name(): string {
    return this.#name;
  }

  /**
   * Reconciles until `signal` aborts (see the class for the lifecycle and errors). Rejects with
   * `ALREADY_STARTED` while another `run` of this controller is in progress.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#scheduler !== undefined) throw new AlreadyStartedError(`Controller ${this.#name}`);
    checkInformers(this.#name, this.#shared);
    if (signal.aborted) return;
    const o = this.#spec.options;
    const ring = o.sharded;
    const shards = ring === undefined ? undefined : new ShardedSources(ring, this.#spec.factory, this.#name, this.#spec.sources.filter((_, i) => this.#shared[i] === undefined));
    this.#namespaced.forRun();
    this.#sources = this.#sourcesOf(shards);
    this.#writes = new ObservedWrites(`controller ${this.#name}`, this.#sources);
    const tracing = (this.#tracing ??= ControllerTracing.of(`Controller ${this.#name}`, this.#name, undefined, this, this.#log, this.#spec.cluster))?.follow(this.#writes);
    const scheduler = (this.#spec.scheduler ?? newScheduler)({
      concurrency: o.concurrency,
      debounceMs: o.debounceMs,
      clock: this.#clock,
      onError: (key, error, attempt) => this.#onError(key, error, attempt),
      name: this.#name,
      metricsProvider: o.metricsProvider?.workQueue,
      rateLimit: o.rateLimit,
      rateLimitMetrics: rateLimitMetricsOf(o.metricsProvider, this.#name),
      concurrencyGroups: this.#priorities.groups(o.concurrencyGroups),
    });
    const metrics = new ControllerMetrics(this.#name, o.concurrency ?? 1, this.#clock, o.metricsProvider);
    this.#scheduler = scheduler;
    // One lifetime: the sources (the factory watch, the sharded informers) start first and stop last,
    // after the reconciles drained; the first failure stops both and is what run rejects with.
    const group = new RunGroup({ name: `controller ${this.#name}`, signal, stages: ['sources', 'reconcile'], clock: this.#clock, logger: o.logger });
    const fail = (err: Error): void => group.fail(err);
    const registrations = this.#sources.map((source) => {
      const handler = sourceHandler(source, (key, reason) => this.#request(scheduler, key, reason));
      return [source, source.informer.addEventHandler(tracing?.handler(source.resource, handler) ?? handler, { name: `controller ${this.#name}` })] as const;
    });
    if (this.#shared.some((i) => i !== undefined)) group.start({ name: 'informer factory', run: (s) => watchFactory(this.#spec.factory, this.#name, s, group.signal) }, 'sources');
    if (shards !== undefined) {
      group.start({ name: 'sharded informers', run: (s) => shards.run(s).catch((err: unknown) => Promise.reject(new InformerStoppedError(`controller ${this.#name}: a sharded informer failed`, { cause: err }))) }, 'sources');
    }
    const gate = shards === undefined ? undefined : new ShardGate(ring as ShardRing, this.#sources[0].informer, shards);
    const unfollow = gate?.follow((key) => this.#request(scheduler, key, SHARD_REASON), fail, group.signal);
    try {
      await waitForSync(registrations.map(([, r]) => r), group.signal, fail);
      if (!group.signal.aborted) {
        this.#log.info(`controller ${this.#name}: caches synced; reconciling with up to ${o.concurrency ?? 1} at a time`);
        if (ring?.running === false) this.#log.warn(`controller ${this.#name}: its shard ring is not running: this replica owns no slot and reconciles nothing (run ring.run(signal) beside it)`);
        group.start({ name: 'reconcile', run: (s) => this.#reconcileUntil(s, scheduler, metrics, gate) }, 'reconcile');
      }
      await group.closed();
    } catch (failure) {
      this.#log.error(`controller ${this.#name} stopped: ${toError(failure).message}`, errorFields(failure));
      throw failure;
    } finally {
      unfollow?.();
      metrics.close();
      this.#disarmResync();
      for (const [source, registration] of registrations) source.informer.removeEventHandler(registration);
      this.#writes.clear();
      for (const client of this.#clients.values()) client.close();
      this.#clients.clear();
      this.#reasons.clear();
      this.#tracing?.clear();
      this.#runs.clear();
      this.#scheduler = undefined;
    }
  }

  /** Reconciles until `signal` aborts (the resync timer armed meanwhile). */
  async #reconcileUntil(signal: AbortSignal, scheduler: KeyScheduler, metrics: ControllerMetrics, gate: ShardGate | undefined): Promise<void> {
    // One timer for every reconcile's deadline (they all have the same length), not one each.
    const deadlines =
      this.#timeoutMs > 0
        ? new Deadlines<ReconcileRun>(this.#clock, this.#timeoutMs, (run) => {
            run.timedOut = this.#timeout(run);
            run.abort(run.timedOut);
          })
        : undefined;
    this.#armResync();
    try {
      await scheduler.run(signal, this.#reconciler(scheduler, metrics, deadlines, gate));
    } finally {
      deadlines?.clear();
      this.#disarmResync();
    }
  }

  /**
   * Requests a reconcile of `key` (kube-rs's `reconcile_on`), merged like any other request. While the
   * controller is not running this does nothing: every primary is reconciled when it starts.
   */
  schedule(key: string, request?: ScheduleRequest): void {
    const scheduler = this.#scheduler;
    if (scheduler === undefined) return;
    const priority = request?.priority ?? this.#priorities.of(key, SCHEDULE_REASON);
    scheduler.schedule(key, { ...request, priority });
    const now = this.#clock.now();
    this.#reasons.note(key, SCHEDULE_REASON, request?.runAt ?? now + (request?.delayMs ?? 0), true, priority);
  }

  /** Requests a reconcile of every primary in the cache (what `resyncPeriodMs` does on a timer). */
  reconcileAll(): void {
    const scheduler = this.#scheduler;
    if (scheduler === undefined) return;
    for (const key of this.#sources[0].informer.getIndexer().listKeys()) this.#request(scheduler, key, RESYNC_REASON);
  }

  /** Counts of queued, running and failing keys, and of reconcile outcomes. */
  stats(): ControllerStats {
    const s = this.#scheduler?.stats() ?? { queued: 0, running: 0, failing: 0 };
    return { active: this.#scheduler !== undefined, ...s, ...this.#counts, hookFailures: this.#priorities.failures, tracingFaults: this.#tracing?.faults ?? 0 };
  }

  /** Requests a reconcile of `key` now, for `reason`, at the priority the reason has (option `priority`). */
  #request(scheduler: KeyScheduler, key: string, reason: ReconcileReason): void {
    if (!this.#namespaced.covers(key) || this.#namespaced.hold(key)) return; // outside the set (the deletes of one removed), or held until an added namespace synced
    const priority = this.#priorities.of(key, reason);
    // A key whose last reconcile wrote waits for its writes outside the scheduler: no worker slot is held.
    if (this.#writes.size === 0 || !this.#writes.hold(key)) scheduler.scheduleNow(key, priority);
    this.#tracing?.requested(key);
    this.#reasons.note(key, reason, this.#clock.now(), true, priority);
  }

  /** The sources with the factory's informers, and `shards`' for the sources cached per slot. */
  #sourcesOf(shards: ShardedSources | undefined): WatchSource[] {
    return this.#spec.sources.map((s, i) => ({ ...s, informer: this.#shared[i] ?? (shards?.informerOf(s.resource) as SourceInformer) }));
  }

  /**
   * The reconcile the scheduler runs for each key. Its signal (`ctx.signal`) is made on first use and
   * aborted by the deadline, or — through one listener per run, not a per-reconcile `AbortSignal.any`
   * — when the scheduler's signal aborts. Measured with `bench/controller.bench.ts`: per-reconcile
   * signals were a third of the runtime's cost per key with a no-op reconcile.
   */
  #reconciler(scheduler: KeyScheduler, metrics: ControllerMetrics, deadlines: Deadlines<ReconcileRun> | undefined, gate?: ShardGate): (key: string, signal: AbortSignal, priority: number) => Promise<Action> {
    const live = new Set<ReconcileRun>();
    const tracing = this.#tracing;
    let watched: AbortSignal | undefined;
    return async (key, runSignal, priority) => {
      if (watched !== runSignal) {
        watched = runSignal;
        runSignal.addEventListener('abort', () => live.forEach((l) => l.abort(runSignal.reason)), { once: true });
      }
      const reason = this.#reasons.take(key);
      // A key of a namespace removed from the set (requested before): dropped, never reconciled.
      if (!this.#namespaced.covers(key)) return DONE_ACTION;
      // Sharded: a key of a slot this replica does not own is skipped (its owner reconciles it).
      const slot = gate?.ownedSlot(key);
      if (gate !== undefined && slot === undefined) return DONE_ACTION;
      const run = new ReconcileRun(key, priority);
      this.#runs.set(key, run);
      if (this.#writes.size > 0) await this.#writes.settle(key, runSignal, this.#observeTimeoutMs, this.#clock, this.#log);
      const trace = (run.trace = tracing?.start(key, reason, scheduler.attempts(key)));
      if (runSignal.aborted) run.abort(runSignal.reason);
      live.add(run);
      deadlines?.add(run);
      const startedAt = metrics.started();
      try {
        const call = (): Promise<Action> => this.#spec.reconcile(key, this.#context(run, scheduler.attempts(key), reason, priority));
        const reconcile = trace === undefined ? call : (): Promise<Action> => tracing!.run(trace, call);
        const action = checkAction(await (slot === undefined ? reconcile() : gate!.run(slot, run, reconcile)));
        if (run.timedOut !== undefined) throw run.timedOut;
        if (trace !== undefined) tracing!.end(trace, action);
        this.#counts.succeeded++;
        this.#runs.delete(key);
        metrics.ended(startedAt, action);
        if (action.kind !== 'requeueAfter') return action;
        // A requeue's priority: the action's, else the option's for a requeue (default high).
        const requeue: ReconcileReason = { kind: 'requeue', afterMs: action.ms };
        const requeuePriority = action.priority ?? this.#priorities.of(key, requeue);
        this.#reasons.note(key, requeue, this.#clock.now() + action.ms, false, requeuePriority);
        return (action.priority ?? Priority.high) === requeuePriority ? action : { ...action, priority: requeuePriority };
      } catch (err) {
        const slotLost = slot !== undefined && this.#spec.options.sharded?.owns(slot) === false;
        if (runSignal.aborted || slotLost) {
          // The stop (or the loss of the key's slot) aborted ctx.signal: whatever the reconcile rejects with
          // now is its doing, not a failure. On a stop the scheduler keeps the key (an abort of its signal)
          // for the next run; a lost slot's key is its new owner's.
          this.#counts.stopped++;
          metrics.ended(startedAt, 'stopped');
          if (trace !== undefined) tracing!.end(trace, 'aborted', err);
          const by = slotLost ? `the loss of slot ${slot}` : 'the stop';
          this.#log.debug(`controller ${this.#name}: the reconcile of ${key} was interrupted by ${by}: ${toError(err).message}`, { key, reconcileID: run.id, ...run.trace?.fields, ...errorFields(err) });
          if (!runSignal.aborted) return DONE_ACTION;
          throw new AbortedError(`controller ${this.#name}: the reconcile of ${key} was interrupted by the stop`, { cause: runSignal.reason });
        }
        const mistake = misuseIn(err);
        if (mistake !== undefined) {
          // The scheduler stops on it (it never reaches #onError): count and say it here.
          this.#counts.failed++;
          metrics.ended(startedAt, 'error');
          if (trace !== undefined) tracing!.end(trace, 'error', mistake);
          this.#log.error(`controller ${this.#name}: the reconcile of ${key} misused the runtime (${codeOf(mistake)}): ${mistake.message}; stopping the controller`, { key, reconcileID: run.id, ...run.trace?.fields, ...errorFields(mistake) });
          throw err;
        }
        const failure = run.timedOut ?? err;
        metrics.ended(startedAt, isTerminal(failure) ? 'terminal' : 'error');
        if (trace !== undefined) tracing!.end(trace, isTerminal(failure) ? 'terminal' : 'error', failure);
        throw failure;
      } finally {
        live.delete(run);
        deadlines?.delete(run);
        // Its writes are waited for after it, in the background; a request held meanwhile runs then.
        if (this.#writes.size > 0) this.#writes.settleLater(key, runSignal, this.#observeTimeoutMs, this.#clock, this.#log, (k) => scheduler.scheduleNow(k, this.#reasons.priorityOf(k) ?? 0));
      }
    };
  }

  #timeout(run: ReconcileRun): ReconcileTimeoutError {
    const error = new ReconcileTimeoutError(this.#name, run.key, this.#timeoutMs);
    this.#counts.timedOut++;
    this.#log.error(error.message, { key: run.key, reconcileID: run.id, ...run.trace?.fields, ...errorFields(error) });
    return error;
  }

  #context(run: ReconcileRun, attempt: number, reason: ReconcileReason, priority: number): ReconcileContext<T> {
    const object = this.#sources[0].informer.getIndexer().getByKey(run.key) as DeepReadonly<T> | undefined;
    const ctx = new ReconcileCtx<T>(run.key, object, run, attempt, reason, priority, this.#log, this.#childrenOf, this.#writes, this.#clientOf, this.#check, this.#spec.cluster);
    run.trace?.started(ctx);
    return ctx;
  }

  readonly #clientOf = <C>(resource: ResourceDescriptor<C>): ResourceClient<C> => {
    let client = this.#clients.get(resource) as ResourceClient<C> | undefined;
    if (client === undefined) {
      // After the stop nothing would close it: a reconcile still running past the grace gets no new client.
      if (this.#scheduler === undefined) throw new AbortedError(`controller ${this.#name} has stopped: ctx.client is closed`);
      const kubeConfig = this.#spec.options.kubeConfig ?? this.#spec.factory.kubeConfig;
      if (kubeConfig === undefined) {
        throw misuse(new InvalidOptionError(`controller ${this.#name}: ctx.client needs a KubeConfig; the factory has none (made with listWatchFor): set ControllerOptions.kubeConfig`));
      }
      client = newResourceClient(kubeConfig, resource, { fieldManager: this.#fieldManager });
      this.#clients.set(resource, client as ResourceClient<unknown>);
    }
    return client;
  };

  readonly #check = (resource: ResourceDescriptor<unknown>, verb: Verb, subresource: string | undefined, namespace: string | undefined, name: string | undefined): void =>
    this.#permissions.check(resource, verb, subresource, namespace, name);

  readonly #childrenOf = <C>(resource: ResourceDescriptor<C>, key: string, namespace: string): Array<DeepReadonly<C>> =>
    ownedChildren(this.#name, this.#sources, this.#spec.primary, resource, key, namespace);

  /** What follows a failed reconcile (the scheduler's `onError`; a stop and a programming error never reach it). */
  #onError(key: string, error: Error, attempt: number): Action {
    this.#counts.failed++;
    const failed = this.#runs.get(key);
    const fields = { key, reconcileID: failed?.id, ...failed?.trace?.fields, attempt, ...errorFields(error) };
    this.#runs.delete(key);
    const { action, terminal } = failureAction({ name: this.#name, log: this.#log, policy: this.#policy, fallback: this.#defaultPolicy }, key, error, attempt, fields);
    if (terminal) this.#counts.terminal++;
    // The scheduler's retry keeps the failed run's priority.
    if (action.kind === 'requeueAfter') this.#reasons.note(key, { kind: 'retry', error }, this.#clock.now() + action.ms, false, failed?.priority ?? 0);
    return action;
  }

  #armResync(): void {
    if (this.#resyncMs === 0) return;
    this.#resyncTimer = this.#clock.setTimeout(() => {
      this.reconcileAll();
      this.#armResync();
    }, this.#resyncMs);
  }

  #disarmResync(): void {
    if (this.#resyncTimer !== undefined) this.#clock.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = undefined;
  }
}

/**
 * Describes a controller over one primary resource, then builds it. Created by {@link Controller.for}.
 * Each resource's informer is the factory's shared one (created by `build`); the controller only adds a
 * handler to it. A sharded controller (`sharded` option) caches its primary per owned slot instead.
 *
 * @example
 * ```ts
 * const controller = Controller.for(factory, configMapSets, { predicates: [predicates.generationChanged] })
 *   .owns(resources.configMaps)
 *   .build(async (key, ctx) => { ...; return Action.done(); }, { concurrency: 4 });
 * factory.start(signal);
 * await controller.run(signal);
 * ```
 */
export class ControllerBuilder<T, M extends ResourceDescriptor<unknown> = never, C = Controller<T>> {
  readonly #primary: ResourceDescriptor<T>;
  readonly #sources: WatchSpec[] = [];
  readonly #owned: Array<ResourceDescriptor<unknown>> = [];
  readonly #uses: DeclaredUse[] = [];
  readonly #create: (described: ControllerDescription<T>) => C;
  #built = false;

  /**
   * Use {@link Controller.for} (or `MultiClusterController.for`); `create` builds what was described, `owner` names the call in errors.
   * @hidden
   */
  constructor(primary: ResourceDescriptor<T>, options: WatchOptions<T>, create: (described: ControllerDescription<T>) => C, owner = 'Controller.for') {
    checkResource(owner, primary);
    checkWatchOptions(owner, primary, options);
    this.#primary = primary;
    this.#create = create;
    this.#add('for', primary, (obj) => [keyOf(obj) ?? ''], options);
  }

  /**
   * Reconciles the controlling owner of each object of `resource` — the owner reference with
   * `controller: true` whose group and kind are the primary's — when the object is added, changed or
   * deleted (for a change of owner, both owners). Objects without such a reference are ignored. With
   * `metadataOnly: true` its cache holds `PartialObjectMetadata`, and so does `ctx.children(resource)`
   * (typed so: the builder remembers the resource).
   */
  owns<D extends ResourceDescriptor<unknown>>(resource: D, options: MetadataOnlyWatchOptions): ControllerBuilder<T, M | D, C>;
  /** As above, the children cached whole. */
  owns<C>(resource: ResourceDescriptor<C>, options?: WatchOptions<NoInfer<C>>): this;
  owns<C>(resource: ResourceDescriptor<C>, options: object = {}): this {
    checkResource('ControllerBuilder.owns', resource);
    checkWatchOptions('ControllerBuilder.owns', resource, options);
    const primary = this.#primary;
    this.#owned.push(resource);
    return this.#add('owns', resource, (obj) => {
      const key = controllerOwnerKey(obj, primary);
      return key === undefined ? [] : [key];
    }, options);
  }

  /**
   * Reconciles the primaries `map` names for each object of `resource` that is added, changed (both
   * states are mapped) or deleted — for relations other than ownership: a Secret referenced by name,
   * every primary of a namespace. With `metadataOnly: true`, `map` is given `PartialObjectMetadata`.
   */
  watches(resource: ResourceDescriptor<unknown>, map: MapFunc<PartialObjectMetadata>, options: MetadataOnlyWatchOptions): this;
  /** As above, the resource cached whole. */
  watches<W>(resource: ResourceDescriptor<W>, map: MapFunc<NoInfer<W>>, options?: WatchOptions<NoInfer<W>>): this;
  watches<W>(resource: ResourceDescriptor<W>, map: MapFunc<NoInfer<W>>, options: object = {}): this {
    checkResource('ControllerBuilder.watches', resource);
    checkWatchOptions('ControllerBuilder.watches', resource, options);
    if (typeof map !== 'function') throw new InvalidOptionError('ControllerBuilder.watches: map must be a function from an object to primary keys');
    return this.#add('watches', resource, (obj) => Array.from(map(obj as never), refKey), options);
  }

  /**
   * Declares what the reconcile's client (`ctx.client(resource)`) does beyond what the informers read
   * (`list` of the watched resources): `verbs` on `resource`, or on its `subresource` — in the factory's
   * namespace (every namespace when it has none) unless `namespace` says otherwise. The declarations
   * become the controller's {@link Controller.permissions} (and `kube-informer rbac`'s rules), and once
   * the builder declared anything, a request of `ctx.client` none covers is refused before it is sent
   * with `PERMISSION_NOT_DECLARED` naming the missing rule (a programming error: it stops the
   * controller). The verbs of `ctx.client`'s methods: `get`/`getStatus`/`getScale` get; `list` list;
   * `create` create; `update`/`replace` (and their status and scale forms) update; `patch` and `apply`
   * (status: `patchStatus`, `applyStatus`) patch — an `apply` that may create the object needs `create`
   * too, which the server checks only when the object is absent, so declare both; `delete` delete;
   * `createOrUpdate` get, create and update. Throws `INVALID_OPTION` for an unknown verb or option.
   *
   * @example
   * ```ts
   * Controller.for(factory, widgets)
   *   .owns(resources.configmaps)
   *   .uses(resources.configmaps, ['get', 'create', 'patch', 'delete'])
   *   .uses(widgets, ['patch'], { subresource: 'status' })
   *   .build(reconcile);
   * ```
   */
  uses<U>(resource: ResourceDescriptor<U>, verbs: readonly Verb[], options: UsesOptions = {}): this {
    checkResource('ControllerBuilder.uses', resource);
    validateOptions('ControllerBuilder.uses', options, { subresource: 'string', namespace: 'string' });
    this.#uses.push(checkUses(resource, verbs, options));
    return this;
  }

  /**
   * Builds the controller running `reconcile` for each key — or, given options alone, one whose
   * requests your own loop takes ({@link Controller.requests}). Throws `INVALID_OPTION` for an option
   * out of range, or when called twice.
   */
  build(reconcile: Reconciler<T, M>, options?: ControllerOptions): C;
  /** Builds a controller without a reconcile function: your loop takes its requests ({@link Controller.requests}). */
  build(options?: ControllerOptions): C;
  build(first?: Reconciler<T, M> | ControllerOptions, second: ControllerOptions = {}): C {
    const queue = typeof first === 'function' ? undefined : new RequestQueue<T>();
    const reconcile = queue?.reconcile ?? first;
    const options = queue === undefined ? second : (first as ControllerOptions | undefined) ?? {};
    if (typeof reconcile !== 'function') throw new InvalidOptionError('ControllerBuilder.build: reconcile must be a function');
    if (this.#built) throw new InvalidOptionError('ControllerBuilder.build: this builder has built its controller already');
    this.#built = true;
    return this.#create({ primary: this.#primary, sources: this.#sources, owned: this.#owned, uses: this.#uses, reconcile: reconcile as unknown as Reconciler<T>, requests: queue, options });
  }

  #add<W>(role: SourceRole, resource: ResourceDescriptor<W>, keys: (obj: unknown) => string[], options: WatchOptions<W>): this {
    this.#sources.push({ role, resource, keys, predicates: (options.predicates ?? []) as Array<Predicate<unknown>>, cache: cacheOptionsOf(options) as ResourceCacheOptions<unknown> });
    return this;
  }
}
