// What the controller builder is given and checks: the options of a watched resource (`for`, `owns`,
// `watches`) and the resource itself, the reconciler and the controller's options (`build`), and the spec
// it hands to the controller; the builder (`ControllerBuilder`) lives beside `Controller` in controller.ts.

import type { Clock } from '../core/clock.js';
import type { LoggerOption } from '../core/log.js';
import { validateGroupVersionResource, InvalidOptionError, type OptionSchemaFor } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import type { SharedInformerFactory } from '../informer/factory.js';
import { checkCacheOptions, type ResourceCacheOptions } from '../informer/index.js';
import type { PartialObjectMetadata } from '../core/types.js';
import type { KubeConfigLike } from '../listwatch/index.js';
import type { ShardRing } from '../sharding/ring.js';
import type { RequestQueue } from './requests.js';
import type { ReconcileContext } from './context.js';
import type { ControllerMetricsProvider } from './metrics.js';
import type { Predicate } from './predicates.js';
import type { RateLimitOptions } from './rate-limit.js';
import type { Action, ReconcileErrorPolicy } from './scheduler.js';
import type { WatchSpec } from './sources.js';
import type { KeySchedulerFactory } from './lanes.js';
import type { DeclaredUse } from './permissions.js';
import type { ConcurrencyGroups, PriorityFunction } from './priority.js';
import type { TracerProviderLike } from '../observability/index.js';

/**
 * Options of one watched resource (`for`, `owns`, `watches`): its predicates, and how it is cached
 * ({@link ResourceCacheOptions}: namespaces, selectors, transform, `metadataOnly`, ...), passed to the
 * factory when the controller is built. The factory keeps one informer per resource: another caller's
 * informer of the same resource with other options is refused when the controller is built
 * (`INVALID_OPTION` naming both). A controller's informers strip `metadata.managedFields` by default
 * (`stripManagedFields: true`, a default that gives way to another caller's choice): pass
 * `stripManagedFields: false` to read managed fields from its cache.
 */
export interface WatchOptions<T> extends ResourceCacheOptions<T> {
  /**
   * Events of this resource request a reconcile only when every predicate passes (see
   * `predicates.generationChanged`, `labelsChanged`, ...). Default: none (every add, update and delete counts).
   */
  predicates?: ReadonlyArray<Predicate<T>>;
}

function checkResource(owner: string, resource: ResourceDescriptor<unknown>): void {
  validateGroupVersionResource(owner, resource);
  if (typeof resource.kind !== 'string' || resource.kind === '' || typeof resource.namespaced !== 'boolean') {
    throw new InvalidOptionError(`${owner}: the resource must be a ResourceDescriptor with kind and namespaced (see resources.pods), got ${JSON.stringify(resource)}`);
  }
}

/** {@link WatchOptions} of a metadata-only cache: its objects (and its predicates' and transform's) are {@link PartialObjectMetadata}. */
export interface MetadataOnlyWatchOptions extends WatchOptions<PartialObjectMetadata> {
  /** The cache holds `PartialObjectMetadata`: `ctx.children` of this resource is typed so. */
  metadataOnly: true;
}

/** The cache options among a resource's {@link WatchOptions} (what the factory is given). */
export function cacheOptionsOf<T>(options: WatchOptions<T>): ResourceCacheOptions<T> {
  const { predicates: _predicates, ...cache } = options;
  return cache;
}

function checkWatchOptions<T>(owner: string, resource: ResourceDescriptor<unknown>, options: WatchOptions<T>): void {
  checkCacheOptions(owner, resource, options, ['predicates']);
  if (options.predicates !== undefined && (!Array.isArray(options.predicates) || options.predicates.some((p: unknown) => typeof p !== 'function'))) {
    throw new InvalidOptionError(`${owner}: option predicates must be an array of functions`);
  }
}

/** The checks of `Controller.for`, `owns` and `watches` (ControllerBuilder, in controller.ts): the resource, then its options. */
export { checkResource, checkWatchOptions };

/**
 * Reconciles one primary: reads what it needs from the caches, makes the world match the primary's
 * spec, and says what comes next (an {@link Action}). Called with the key, never with an object
 * from an event. Its outcomes (docs/controllers.md, "Outcomes"): an action (success, requeue); a
 * throw or rejection goes to the error policy (retried with backoff); a `TerminalError` is logged and
 * counted, not retried; a rejection after the controller's stop (or the loss of the key's slot)
 * aborted `ctx.signal` is no failure (the key is reconciled at the next start, or by its new owner);
 * a programming error the runtime raises (`ctx.children` of a resource not owned, a result that is
 * not an `Action`) stops the controller, as a throwing predicate does. `M` is the union of the owned
 * resources cached metadata-only (`owns(resource, { metadataOnly: true })`, tracked by the builder):
 * their `ctx.children` are {@link PartialObjectMetadata}.
 */
export type Reconciler<T, M extends ResourceDescriptor<unknown> = never> = (key: string, ctx: ReconcileContext<T, M>) => Promise<Action>;

/** Options of a {@link Controller} (the second argument of `build`). Durations are in ms. */
export interface ControllerOptions {
  /** The name in logs and errors. Default: the primary's resource key (`example.com/v1/widgets`). */
  name?: string;
  /**
   * How many keys are reconciled at once (one key never twice at once). Default `1`, as
   * controller-runtime's `MaxConcurrentReconciles`: raising it is a conscious choice.
   */
  concurrency?: number;
  /** Hold a key's request until its changes stopped for this long (see `ReconcileSchedulerOptions.debounceMs`). Default `0`. */
  debounceMs?: number;
  /**
   * What follows a failed reconcile. Default {@link exponentialBackoff}`()`: 5 ms doubling to 1000 s per
   * key. Not asked for a `TerminalError` (never retried). A policy that throws or returns something
   * that is not an {@link Action} is logged and the default used.
   */
  onError?: ReconcileErrorPolicy;
  /**
   * The overall limit on retries after failures, beside the per-key `onError` backoff: a token bucket
   * of `qps` tokens a second and `burst` tokens (it starts full). Each retry after a failure takes a
   * token and waits the longest of the `onError` delay and the wait for its token; a failure carrying
   * `Retry-After` (an `ApiStatusError` with `retryAfterSeconds`, as `ctx.client` throws for a 429) is
   * retried no sooner than it asks (at most 5 minutes), and a 429 holds back every key's retries until
   * then. Successes, `requeueAfter` and new events are never limited. Default `{ qps: 10, burst: 100 }`
   * (client-go's default controller rate limiter, controller-runtime's before its priority queue);
   * `false`: per-key backoff alone (controller-runtime's default since v0.23), a failure's own
   * `Retry-After` still honoured. See docs/controllers.md, "Rate limits".
   *
   * Warning: with the default, 1 000 keys failing at once retry 100 at once, then 10 a second: the
   * last one 90 s later. Raise `qps` for a controller whose failures are cheap to retry.
   */
  rateLimit?: RateLimitOptions | false;
  /** Reconcile every primary in the cache this often, whatever changed. Default `0` (never). */
  resyncPeriodMs?: number;
  /**
   * The deadline of one reconcile. Past it, the reconcile's signal aborts with a
   * `ReconcileTimeoutError`, an error is logged, and the run counts as failed (the error policy
   * retries it) even if it completes later. `0` disables it. Default `60_000`: a stuck reconcile
   * with `concurrency: 1` stalls the whole controller, and that must show (incident 5: silence is a bug).
   */
  reconcileTimeoutMs?: number;
  /**
   * How long a reconcile waits for the writes the key's previous reconcile recorded (`ctx.wrote`) to
   * reach the caches before it runs anyway, with a warning. Default `10_000`.
   */
  observeTimeoutMs?: number;
  /** Where the controller logs (sync, failures, timeouts); `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
  /** The clock of every timer (backoff, debounce, deadlines, resync). Default `realClock`. */
  clock?: Clock;
  /**
   * Where the controller's metrics go — controller-runtime's `controller_runtime_*` and, through its
   * `workQueue`, the `workqueue_*` metrics of its scheduler, labelled with `name` (see
   * `prometheusControllerMetricsProvider` in `kube-informer/operations`). Default: none.
   */
  metricsProvider?: ControllerMetricsProvider;
  /**
   * Run as one replica of a sharded controller (docs/sharding.md). The primary is cached per slot this
   * replica owns in `ring` (a `ShardedInformer`: one list and watch per owned slot, with its
   * `shardSelector`), and so are the owned (`owns`) namespaced resources when the ring hashes
   * namespaces; other resources are watched whole by the factory. Only primaries of owned slots whose
   * caches synced are reconciled — once each when a slot's caches synced — each under `ring.track` (a
   * slot is handed over only after its reconciles finished), its signal aborted when the slot is lost.
   * Run the ring beside the controller (`ring.run(signal)`; once the caches synced, a warning says so if
   * it is not running). The factory must have neither a `shard` nor a `listWatchFor`. Default: none
   * (not sharded).
   */
  sharded?: ShardRing;
  /**
   * The namespaces the controller caches and reconciles, changeable while it runs with
   * `Controller.addNamespace` / `removeNamespace`: its namespaced primary and owned resources are each
   * one `NamespaceSetInformer` (one list and watch per namespace); `watches` resources are watched
   * whole by the factory. Keys of a namespace outside the set are never reconciled. A non-empty array of
   * namespace names, each once; not with `sharded`, nor on a factory with a `namespace` or a
   * `listWatchFor` (`INVALID_OPTION`). Default: none (the factory's namespace, or every namespace).
   */
  namespaces?: readonly string[];
  /** The cluster `ctx.client` talks to (needed only for a factory without one). Default `factory.kubeConfig`. */
  kubeConfig?: KubeConfigLike;
  /**
   * The field manager of `ctx.client`'s writes (a call's own wins); over 128 bytes is refused when the
   * controller is built (`INVALID_OPTION`). Default the controller's `name`.
   */
  fieldManager?: string;
  /**
   * The priority of each request (docs/controllers.md, "Priority"): among due keys the higher starts
   * first — with a fairness rule, so low work still drains: after 9 starts in a row that passed over a
   * key of a lower priority due earlier, the 10th goes to the key due the longest. A key's priority is
   * the highest of its merged requests, and its retries keep it. Default {@link defaultPriority}: the
   * initial list, resyncs, relists, gained shards and namespaces low; changes, requeues and
   * `schedule` high. `false`: every request `0` — first due, first started (the order before priorities).
   * A function that throws or returns a non-number is logged and counted (`stats().hookFailures`), and
   * the request kept at {@link defaultPriority}'s priority.
   */
  priority?: PriorityFunction | false;
  /**
   * Caps the reconciles of each group of keys at `concurrency` (default `1`) at once, within the
   * controller's `concurrency` — `{ keyOf: (key) => key.split('/')[0] }`: one reconcile per namespace at
   * a time. A key whose group is full waits, keeping its due time and priority. A `keyOf` that throws or
   * returns a non-string is logged and counted (`stats().hookFailures`), and the key runs in no group.
   * Default: none.
   */
  concurrencyGroups?: ConcurrencyGroups;
  /**
   * Trace with OpenTelemetry (docs/tracing.md): a `TracerProvider` of `@opentelemetry/api` 1.x (an
   * optional peer dependency, loaded only when this is given) — a span per reconcile linked to the watch
   * events that caused it, a child span per `ctx.client` write, the read-your-writes wait as an event,
   * `traceId`/`spanId` on the reconcile's log lines. A provider whose `getTracer` throws is refused when
   * the controller is built (`INVALID_OPTION`); a tracer that throws later is logged once per kind and
   * the reconcile goes on untraced. Default: none (nothing tracing-related runs), or the Manager's
   * `tracerProvider` when a Manager runs the controller.
   */
  tracerProvider?: TracerProviderLike;
}

/** What a {@link ControllerBuilder} describes and hands to what it builds: a controller but where it runs. */
export interface ControllerDescription<T> {
  readonly primary: ResourceDescriptor<T>;
  readonly sources: readonly WatchSpec[];
  readonly owned: ReadonlyArray<ResourceDescriptor<unknown>>;
  /** What `uses` declared, in order. */
  readonly uses: readonly DeclaredUse[];
  readonly reconcile: Reconciler<T>;
  /** The loops' queue of a controller built without a reconcile function (`reconcile` is its bridge). */
  readonly requests?: RequestQueue<T>;
  readonly options: ControllerOptions;
}

/** What a `Controller` is made of: its description, the factory whose informers it uses, and — engaged on one cluster of many — its lane and cluster. */
export interface ControllerSpec<T> extends ControllerDescription<T> {
  readonly factory: SharedInformerFactory;
  /** Its scheduler: a lane of a fleet's shared one. Default: a `ReconcileScheduler` of its own for each run. */
  readonly scheduler?: KeySchedulerFactory;
  /** The cluster it runs on, of many (`ctx.cluster`, the `cluster` log field). Default: none. */
  readonly cluster?: string;
}

/** The rule of each {@link ControllerOptions} field (`validateOptions`), checked when the controller is built. */
export const CONTROLLER_OPTION_SCHEMA: OptionSchemaFor<ControllerOptions> = {
  name: 'string',
  concurrency: 'positiveCount',
  debounceMs: 'duration',
  onError: 'function',
  rateLimit: 'any',
  resyncPeriodMs: 'duration',
  reconcileTimeoutMs: 'duration',
  observeTimeoutMs: 'duration',
  logger: 'logger',
  clock: 'clock',
  metricsProvider: 'object',
  sharded: 'object',
  namespaces: 'any',
  kubeConfig: 'object',
  fieldManager: 'string',
  priority: 'any',
  concurrencyGroups: 'any',
  tracerProvider: 'object',
};

