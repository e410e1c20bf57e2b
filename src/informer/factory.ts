// SharedInformerFactory: one informer per resource, shared by every caller, started and synced together.

import type http from 'node:http';
import type { ShardSelector } from '../core/shard-selector.js';
import { abortableWait, ChildAbort } from '../core/abort.js';
import { toError } from '../core/errors.js';
import type { LoggerOption } from '../core/log.js';
import { InvalidOptionError, omitRules, validateGroupVersionResource, validateOptions, type OptionSchemaFor } from '../core/options.js';
import type { GroupVersionResourceFor, ResourceDescriptor } from '../core/resources.js';
import type { GroupVersionResource, PartialObjectMetadata } from '../core/types.js';
import type { HasPermissions, Permission } from '../core/permissions.js';
import { validateCoalesceMs } from '../listwatch/index.js';
import { newListWatch, type KubeConfigLike } from '../listwatch/index.js';
import type { ListerWatcher } from '../listwatch/types.js';
import { metaNamespaceIndexFunc, NamespaceIndex } from '../store/types.js';
import { TaskScope } from '../core/task-scope.js';
import { InformerStoppedError } from './errors.js';
import type { InformerHealth } from '../health/index.js';
import { INFORMER_OPTION_SCHEMA, type SharedIndexInformerOptions } from './options.js';
import { SharedIndexInformer } from './shared-index-informer.js';
import { closeListerWatcher } from './controller.js';
import { checkCacheOptions, refuseResourceOptions, type MetadataOnlyCacheOptions, type NamespaceSetCacheOptions, type ResourceCacheOptions } from './cache-options.js';
import { CacheSettings, type CacheDefaults } from './cache-settings.js';
import { NamespaceSetInformer } from './namespace-set.js';

/** Options of {@link SharedInformerFactory}. */
export interface SharedInformerFactoryOptions {
  /** Default resync period of every informer, in ms. Default 0 (never). */
  resyncPeriodMs?: number;
  /** Only this namespace. Default: all namespaces. */
  namespace?: string;
  /** Per-resource resync periods, keyed by {@link gvrKey} (`'v1/pods'`). Default: none. */
  customResync?: Record<string, number>;
  /** A label selector for every list and watch. Default: none. */
  labelSelector?: string;
  /** A field selector for every list and watch. Default: none. */
  fieldSelector?: string;
  /**
   * Only this shard of every collection (`shardSelector` on every list and watch; Kubernetes 1.36+ with
   * the `ShardedListAndWatch` gate, filtered on the client otherwise — see docs/sharding.md). Default: none.
   */
  shard?: ShardSelector;
  /** Applied to every object of every informer (e.g. `stripManagedFields`). Default: none. */
  transform?: (obj: unknown) => unknown;
  /**
   * Where every informer logs failures (see `SharedIndexInformerOptions.logger`); `false` prints
   * nothing. `informerOptions.logger` wins when both are set. Default: `console`.
   */
  logger?: LoggerOption;
  /**
   * Further options for every informer (clock, errorPolicy/onError, health thresholds, reflector
   * tuning, ...). `name`, `resyncPeriodMs`, `indexers` and `transform` are set by the factory.
   * Default: none.
   */
  informerOptions?: Omit<SharedIndexInformerOptions<unknown>, 'name' | 'resyncPeriodMs' | 'indexers' | 'transform'>;
  /**
   * Called when an informer started with {@link SharedInformerFactory.start} fails (its `run()`
   * rejected). Default: none — see the warning on `start`.
   */
  onError?: (resource: string, err: Error) => void;
  /**
   * Every list and watch goes through this agent (a shared pool, a proxy agent, one that counts
   * bytes) instead of one built from the KubeConfig's TLS settings — see `NewListWatchOptions.agent`.
   * Default: none.
   */
  agent?: http.Agent;
  /**
   * Every watch gathers its reads while events keep coming, for up to this many milliseconds: less CPU
   * per event for up to this much latency per event — see `NewListWatchOptions.watchCoalesceMs` and
   * docs/operations.md ("Tuning CPU"). Its holds run on the real clock, not `informerOptions.clock`. At
   * most 1 000. Default `0`: every read as it comes.
   */
  watchCoalesceMs?: number;
  /** Builds the ListerWatcher of a resource. Default: `newListWatch(kubeConfig, gvr, { namespace, ... })`. */
  listWatchFor?: (gvr: GroupVersionResource) => ListerWatcher<unknown>;
  /**
   * The cluster's name, put before every informer's name (`east/v1/pods`: logs, errors, health, channels,
   * metrics tell clusters apart); the factory's keys stay resource keys. Not empty. Default: none.
   */
  cluster?: string;
}

const FACTORY_OPTION_SCHEMA = {
  resyncPeriodMs: 'duration',
  namespace: 'string',
  customResync: 'object',
  labelSelector: 'labelSelector',
  fieldSelector: 'fieldSelector',
  shard: 'shardSelector',
  transform: 'function',
  logger: 'logger',
  informerOptions: omitRules(INFORMER_OPTION_SCHEMA, 'name', 'resyncPeriodMs', 'indexers', 'transform'),
  onError: 'function',
  agent: 'object',
  watchCoalesceMs: 'duration',
  listWatchFor: 'function',
  cluster: 'string',
} as const satisfies OptionSchemaFor<SharedInformerFactoryOptions>;

/** The factory's key of a resource: `version/resource` for the core group, else `group/version/resource`. */
export function gvrKey(gvr: GroupVersionResource): string {
  return gvr.group === '' ? `${gvr.version}/${gvr.resource}` : `${gvr.group}/${gvr.version}/${gvr.resource}`;
}

interface Entry {
  /** A namespace set (option `namespaces`) runs one informer per namespace, each with its own ListerWatcher. */
  informer: SharedIndexInformer<unknown> | NamespaceSetInformer<unknown>;
  /** Undefined for a namespace set. */
  lw: ListerWatcher<unknown> | undefined;
  started: boolean;
  /** Started: stops this informer alone, with the reason its waiters get (see `removeInformer`). */
  stop?: (reason: InformerStoppedError) => void;
  /** Started: the end of its task in the factory's scope (never rejects). */
  done?: Promise<void>;
  /** Set by `removeInformer`: a failure of the informer while it stops is its caller's, not the factory's. */
  removal?: { failure: Error | undefined };
  /** The resource, as given (a descriptor says whether it is namespaced). */
  gvr: GroupVersionResource & { namespaced?: boolean };
  /** What the informer was made with, and who asked for what (the one-informer rule). */
  settings: CacheSettings;
}

/** A resource as the factory is given it: a descriptor says whether it is namespaced. */
type Resource = GroupVersionResource & { namespaced?: boolean };

/** `a,b`: two selectors that must both match (label and field selectors AND their comma-separated terms). */
function both(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || a === '') return b === '' ? undefined : b;
  if (b === undefined || b === '') return a;
  return `${a},${b}`;
}

/**
 * The shared informer of `resource` for a caller named `caller` (`controller web owns()`) — the
 * Controller's door to the factory: its errors name the controller, and `defaults` (its
 * `stripManagedFields: true`) never conflict with another caller. Not in an entry point.
 */
export let forResourceAs: (
  factory: SharedInformerFactory,
  caller: string,
  resource: Resource,
  options: ResourceCacheOptions<unknown> | undefined,
  defaults: CacheDefaults,
) => SharedIndexInformer<unknown> | NamespaceSetInformer<unknown>;

/**
 * client-go's `SharedInformerFactory` (keyed by resource, like the dynamic factory): every
 * `forResource` call for the same resource returns the same informer, with the `namespace` index. Its
 * per-resource cache options ({@link ResourceCacheOptions}) are those of its first caller; a later
 * caller that asks another value is refused with `INVALID_OPTION` naming both (one informer per
 * resource per factory).
 *
 * Lifecycle: the factory runs from the first {@link SharedInformerFactory.start} (or `run`) until
 * the first signal given to it aborts or an informer fails; then every informer stops together
 * (shared fate). An informer requested while running starts at once. A stopped factory cannot run
 * again (its informers cannot): `start` throws and `run` rejects with `INFORMER_STOPPED` — create a
 * new factory.
 *
 * @example
 * ```ts
 * const factory = new SharedInformerFactory(kubeConfig, { resyncPeriodMs: 0 });
 * const pods = factory.forResource(resources.pods);  // SharedIndexInformer<Pod>
 * pods.addEventHandler({ onAdd: (p) => queue.add(key(p)) });
 * const running = factory.run(signal);             // rejects if any informer fails
 * await factory.waitForCacheSync(signal);          // rejects with the reason if a cache cannot sync
 * ```
 */
export class SharedInformerFactory implements HasPermissions {
  readonly #kubeConfig: KubeConfigLike | undefined;
  readonly #options: SharedInformerFactoryOptions;
  readonly #entries = new Map<string, Entry>();
  /**
   * The factory's lifetime, one task per started informer: created by the first `start`, open (running)
   * until a signal given to `start`/`run` aborts or an informer fails, closed once every informer exited.
   */
  #scope: TaskScope | undefined;
  /** A `run()` was called: it rejects with the first failure, so that failure need not crash the process. */
  #runCalled = false;

  /**
   * `kubeConfig` may be `undefined` only when `listWatchFor` is given. Throws `INVALID_OPTION` for an
   * option out of range and `INVALID_SELECTOR` for a selector that does not parse.
   */
  constructor(kubeConfig: KubeConfigLike | undefined, options: SharedInformerFactoryOptions = {}) {
    refuseResourceOptions('SharedInformerFactory', options);
    validateOptions('SharedInformerFactory', options, FACTORY_OPTION_SCHEMA);
    for (const [key, ms] of Object.entries(options.customResync ?? {})) {
      validateOptions('SharedInformerFactory', { [`customResync['${key}']`]: ms }, { [`customResync['${key}']`]: 'duration' });
    }
    validateCoalesceMs('SharedInformerFactory', 'watchCoalesceMs', options.watchCoalesceMs);
    if (options.watchCoalesceMs !== undefined && options.listWatchFor !== undefined) {
      throw new InvalidOptionError('SharedInformerFactory: option watchCoalesceMs is passed to newListWatch, which listWatchFor replaces: give it to your own newListWatch instead');
    }
    if (options.cluster === '') throw new InvalidOptionError('SharedInformerFactory: option cluster must not be empty (it names the cluster in every informer\'s name)');
    if (kubeConfig === undefined && options.listWatchFor === undefined) {
      throw new TypeError('SharedInformerFactory needs a kubeConfig unless listWatchFor is given');
    }
    this.#kubeConfig = kubeConfig;
    this.#options = options;
  }

  /**
   * The KubeConfig the factory was made with (`undefined` for one made with `listWatchFor` only): what a
   * controller's `ctx.client` talks to unless `ControllerOptions.kubeConfig` says otherwise, and what
   * the `Manager` installs its `crds` with.
   */
  get kubeConfig(): KubeConfigLike | undefined {
    return this.#kubeConfig;
  }

  /** The namespace every informer lists and watches (option `namespace`); `undefined` = every namespace. */
  get namespace(): string | undefined {
    return this.#options.namespace === '' ? undefined : this.#options.namespace;
  }

  /**
   * What the informers created so far need (see `HasPermissions`): `list` and `watch` of each resource,
   * in each namespace of its `namespaces` option, else in the factory's `namespace` (every namespace
   * without one, and always for a resource whose descriptor says `namespaced: false`). With
   * `listWatchFor` the requests are that function's: the permissions say what the factory's own
   * `newListWatch` would send.
   */
  permissions(): Permission[] {
    return [...this.#entries].flatMap(([key, e]) => {
      const p: Permission = { group: e.gvr.group, resource: e.gvr.resource, verbs: ['list', 'watch'], reason: `informer of ${key}` };
      if (e.gvr.namespaced === false) return [p];
      const namespaces = e.settings.namespaces ?? (this.namespace === undefined ? [] : [this.namespace]);
      if (namespaces.length === 0) return [p];
      return namespaces.map((namespace) => ({ ...p, namespace }));
    });
  }

  /**
   * The shared metadata-only informer of a resource (`metadataOnly: true`): its cache holds
   * `PartialObjectMetadata` objects — metadata alone, as the server sends them.
   */
  forResource<M extends PartialObjectMetadata = PartialObjectMetadata>(resource: GroupVersionResource, options: MetadataOnlyCacheOptions & { namespaces: readonly string[] }): NamespaceSetInformer<M>;
  /** As below, metadata only: the cache holds `PartialObjectMetadata`. */
  forResource<M extends PartialObjectMetadata = PartialObjectMetadata>(resource: GroupVersionResource, options: MetadataOnlyCacheOptions): SharedIndexInformer<M>;
  /**
   * The shared informer of a resource over a set of namespaces (option `namespaces`): a
   * `NamespaceSetInformer`, one list and watch per namespace, whose set can change while it runs
   * (`addNamespace` / `removeNamespace`). Every caller of the resource must pass the same set (as a set:
   * order does not matter); a caller without `namespaces` is refused (it would be handed a namespace set
   * typed as one informer).
   */
  forResource<T>(resource: ResourceDescriptor<T> | GroupVersionResourceFor<T>, options: NamespaceSetCacheOptions<T>): NamespaceSetInformer<T>;
  /**
   * The shared informer of a built-in (or your own) described resource, typed by the descriptor:
   * `forResource(resources.pods)` is a `SharedIndexInformer<Pod>`. `options` say how this resource is
   * cached (namespaces, selectors, transform, metadataOnly, ... — see {@link ResourceCacheOptions}).
   * Created on first use; a later call with options checks them against the informer's: ONE informer per
   * resource per factory, so an option passed with another value than the informer's is refused with
   * `INVALID_OPTION` naming both callers and both values (leave an option out to take the informer as it
   * is; use a second factory or {@link SharedInformerFactory.newInformer} for a second cache). On a
   * running factory a new informer starts at once; on a stopped one this throws `INFORMER_STOPPED`.
   */
  forResource<T>(resource: ResourceDescriptor<T>, options?: ResourceCacheOptions<T>): SharedIndexInformer<T>;
  /**
   * The shared informer of `gvr`, typed `T` — for custom resources:
   * `forResource<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets' })`. When `T` names
   * a built-in kind (a `kubernetes-types` type), `gvr` must be that kind's resource, and a client-node
   * model class (`V1Pod`) is refused: see {@link GroupVersionResourceFor}. Options and the one-informer
   * rule as for a descriptor. Throws `INVALID_OPTION` for a malformed resource (no version, no resource,
   * `'Pod'` instead of `'pods'`), for a factory option passed here (`agent`, `logger`, ... name where
   * they belong) and for options another caller asked otherwise.
   */
  forResource<T>(gvr: GroupVersionResourceFor<T>, options?: ResourceCacheOptions<T>): SharedIndexInformer<T>;
  forResource(gvr: GroupVersionResource, options?: object): SharedIndexInformer<unknown> | NamespaceSetInformer<unknown> {
    const o = options as ResourceCacheOptions<unknown> | undefined;
    const informer = this.#forResource('forResource', gvr, o, {});
    if (informer instanceof NamespaceSetInformer && o?.namespaces === undefined) {
      const key = gvrKey(gvr);
      throw new InvalidOptionError(
        `SharedInformerFactory.forResource(${key}): the factory's shared informer of ${key} is a namespace set (${informer.namespaces().join(', ')}): pass the same namespaces to get it (typed NamespaceSetInformer)`,
      );
    }
    return informer;
  }

  static {
    forResourceAs = (factory, caller, resource, options, defaults) => factory.#forResource(caller, resource, options, defaults);
  }

  #forResource(caller: string, gvr: Resource, options: ResourceCacheOptions<unknown> | undefined, defaults: CacheDefaults): SharedIndexInformer<unknown> | NamespaceSetInformer<unknown> {
    validateGroupVersionResource('SharedInformerFactory.forResource', gvr);
    const key = gvrKey(gvr);
    const owner = `SharedInformerFactory.forResource(${key})${caller === 'forResource' ? '' : ` for ${caller}`}`;
    checkCacheOptions(owner, gvr, options);
    const o = options ?? {};
    const custom = this.#options.customResync?.[key];
    if (o.resyncPeriodMs !== undefined && custom !== undefined && custom !== o.resyncPeriodMs) {
      throw new InvalidOptionError(`${owner}: option resyncPeriodMs is ${o.resyncPeriodMs}, but the factory's customResync['${key}'] is ${custom}: give one of them`);
    }
    let entry = this.#entries.get(key);
    if (entry !== undefined) {
      const added = entry.settings.join(owner, caller, o, entry.started);
      if (Object.keys(added).length === 0) return entry.informer;
      if (entry.informer instanceof NamespaceSetInformer) {
        throw new InvalidOptionError(`${owner}: option indexers: the indexers of a namespace set (${key}) are those of its first caller; give them all there`);
      }
      entry.informer.addIndexers(added);
      return entry.informer;
    }
    if (this.#isStopped()) throw this.#stoppedError(`informer ${key} was not created`);
    const settings = this.#settings(key, caller, o, defaults);
    if (settings.namespaces !== undefined) {
      const informer = new NamespaceSetInformer<unknown>({
        name: this.#named(key),
        namespaces: settings.namespaces,
        resource: gvr,
        logger: this.#options.logger,
        // each namespace's informer owns (and closes) its ListerWatcher
        informerFor: (ns) => this.#informer(key, this.#listWatch(gvr, settings, this.#options.shard, ns), settings, true, `${key} in ${ns}`),
      });
      entry = { informer, lw: undefined, started: false, gvr, settings };
    } else {
      const lw = this.#listWatch(gvr, settings, this.#options.shard);
      const informer = this.#informer(key, lw, settings, false); // the factory created the ListerWatcher: it closes it, once (#closeLw)
      entry = { informer, lw, started: false, gvr, settings };
    }
    this.#entries.set(key, entry);
    if (this.#scope?.state === 'open') this.#startEntry(key, entry);
    return entry.informer;
  }

  #settings(key: string, caller: string, options: ResourceCacheOptions<unknown>, defaults: CacheDefaults): CacheSettings {
    const resyncPeriodMs = this.#options.customResync?.[key] ?? this.#options.resyncPeriodMs ?? 0;
    return new CacheSettings(key, caller, options, defaults, { resyncPeriodMs, indexers: { [NamespaceIndex]: metaNamespaceIndexFunc } });
  }

  /**
   * A new informer of `resource` with this factory's options and `options` — not shared, not started, not
   * in `informers()`, `health()` or `waitForCacheSync`: run it yourself (its `run` closes its
   * ListerWatcher). With `shard`, its lists and watches carry that shard selector (a `ShardedInformer`'s
   * slots, which the controller's `sharded` option creates this way); `name` names it in logs and health
   * (default: the resource key); the cache options are those of {@link ResourceCacheOptions}, but not
   * `namespaces` (one informer lists one namespace: use `forResource` for a set). Throws
   * `INVALID_OPTION` for a `shard` on a factory that has a `shard` of its own or a `listWatchFor`.
   */
  newInformer<M extends PartialObjectMetadata = PartialObjectMetadata>(resource: GroupVersionResource, options: MetadataOnlyCacheOptions & { shard?: ShardSelector; name?: string }): SharedIndexInformer<M>;
  /** As above, typed by the descriptor. */
  newInformer<T>(resource: ResourceDescriptor<T>, options?: ResourceCacheOptions<T> & { shard?: ShardSelector; name?: string }): SharedIndexInformer<T>;
  newInformer(resource: Resource, options: object = {}): SharedIndexInformer<unknown> {
    validateGroupVersionResource('SharedInformerFactory.newInformer', resource);
    const { shard, name, ...cache } = options as ResourceCacheOptions<unknown> & { shard?: ShardSelector; name?: string };
    checkCacheOptions('SharedInformerFactory.newInformer', resource, options, ['shard', 'name']);
    validateOptions('SharedInformerFactory.newInformer', { shard, name }, { shard: 'shardSelector', name: 'string' });
    if (cache.namespaces !== undefined) {
      throw new InvalidOptionError('SharedInformerFactory.newInformer: option namespaces is not for one informer (it lists and watches one namespace, the factory\'s): use forResource(resource, { namespaces })');
    }
    if (shard !== undefined && (this.#options.shard !== undefined || this.#options.listWatchFor !== undefined)) {
      throw new InvalidOptionError(
        `SharedInformerFactory.newInformer: option shard needs a factory without ${this.#options.shard !== undefined ? 'a shard of its own' : 'listWatchFor'} (it builds the ListerWatcher with the shard)`,
      );
    }
    const key = gvrKey(resource);
    const settings = this.#settings(key, 'newInformer', cache, {});
    return this.#informer(key, this.#listWatch(resource, settings, shard ?? this.#options.shard), settings, true, name);
  }

  /** An informer's name: `name`, after the cluster's when the factory has one (option `cluster`). */
  #named(name: string): string {
    return this.#options.cluster === undefined ? name : `${this.#options.cluster}/${name}`;
  }

  #informer(key: string, lw: ListerWatcher<unknown>, settings: CacheSettings, closeListerWatcher: boolean, name = key): SharedIndexInformer<unknown> {
    const o = this.#options;
    return new SharedIndexInformer<unknown>(lw, {
      logger: o.logger,
      ...o.informerOptions,
      name: this.#named(name),
      resyncPeriodMs: settings.resyncPeriodMs,
      indexers: settings.indexers,
      transform: settings.informerTransform(o.transform),
      closeListerWatcher,
    });
  }

  /** The informers created so far, by resource key (not the namespace sets: see {@link SharedInformerFactory.namespaceSets}). */
  informers(): Record<string, SharedIndexInformer<unknown>> {
    return Object.fromEntries([...this.#entries].flatMap(([k, e]) => (e.informer instanceof NamespaceSetInformer ? [] : [[k, e.informer]])));
  }

  /** The namespace sets created so far (`forResource` with `namespaces`), by resource key. */
  namespaceSets(): Record<string, NamespaceSetInformer<unknown>> {
    return Object.fromEntries([...this.#entries].flatMap(([k, e]) => (e.informer instanceof NamespaceSetInformer ? [[k, e.informer]] : [])));
  }

  /**
   * Starts every informer not started yet; safe to call again. The factory (every informer) stops
   * when `signal`, or any signal given to an earlier `start`, aborts, or when an informer fails
   * (shared fate). Throws `INFORMER_STOPPED` on a factory that has stopped.
   *
   * Warning: a failure must go somewhere. It is passed to `onError` when set, and makes a pending
   * {@link SharedInformerFactory.run} reject. With neither, it is rethrown as an uncaught exception
   * (as client-go crashes on a handler panic), so a process never keeps running on a dead informer.
   */
  start(signal: AbortSignal): void {
    if (this.#isStopped()) throw this.#stoppedError('start() was called');
    const scope = (this.#scope ??= new TaskScope({
      name: 'SharedInformerFactory',
      onFailure: (err, key) => this.#informerFailed(key, err, true),
      onLateFailure: (err, key) => this.#informerFailed(key, err, false),
    }));
    scope.link(signal);
    if (scope.state !== 'open') return;
    for (const [key, entry] of this.#entries) if (!entry.started) this.#startEntry(key, entry);
  }

  /**
   * Starts every informer (and those requested later) and resolves once all of them have stopped after
   * `signal` aborted. Rejects with the first informer failure, after stopping and tearing down all of
   * them, and with `INFORMER_STOPPED` on a factory that has stopped already.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.start(signal);
    this.#runCalled = true;
    await (this.#scope as TaskScope).closed();
  }

  /**
   * Waits until the factory has stopped — a signal given to `start`/`run` aborted, or an informer
   * failed — and every informer it started has exited (at once when it never started). Rejects with
   * the first failure, if one failed, and with `ABORTED` when `signal` aborts first (only the wait ends).
   */
  async shutdown(signal?: AbortSignal): Promise<void> {
    if (this.#scope === undefined) return;
    await abortableWait(this.#scope.closed(), signal, 'stopped waiting for SharedInformerFactory to shut down: the signal was aborted');
  }

  /**
   * Waits for every started informer to sync and resolves with `{ resource: true }` for each. Rejects
   * with the reason as soon as one cannot sync: the error of its `whenSynced()` — a failure
   * (`HANDLER_FAILED`, ...), a stop (`INFORMER_STOPPED`: a dead informer never counts as synced),
   * answers retrying cannot fix (`API_STATUS` 400/401/403/404/405/406/415/422, `KUBECONFIG`, TLS/DNS `NETWORK`)
   * or an unreachable server (`NETWORK`, after `syncUnreachableMs`). When `signal` aborts first it
   * resolves with `false` for the informers not synced yet (client-go's answer).
   */
  async waitForCacheSync(signal: AbortSignal): Promise<Record<string, boolean>> {
    const started = [...this.#entries].filter(([, e]) => e.started);
    await Promise.all(
      started.map(async ([, { informer }]) => {
        try {
          await informer.whenSynced(signal);
        } catch (err) {
          if (!signal.aborted) throw err;
        }
      }),
    );
    return Object.fromEntries(started.map(([key, { informer }]) => [key, informer.hasSynced()]));
  }

  /** `health()` of every informer, by resource key (a namespace set: one entry per namespace, `v1/secrets in ns-a`). */
  health(): Record<string, InformerHealth> {
    return Object.fromEntries(
      [...this.#entries].flatMap(([k, e]) => (e.informer instanceof NamespaceSetInformer ? Object.entries(e.informer.health()).map(([ns, h]) => [`${k} in ${ns}`, h]) : [[k, e.informer.health()]])),
    );
  }

  #startEntry(key: string, entry: Entry): void {
    entry.started = true;
    entry.done = (this.#scope as TaskScope).spawn(key, async (signal) => {
      // The factory's signal, or this informer's own removal: a removal stops it alone, and is no failure.
      const life = new ChildAbort(signal);
      entry.stop = (reason) => life.controller.abort(reason);
      try {
        await entry.informer.run(life.signal);
      } catch (err) {
        if (entry.removal === undefined) throw err;
        entry.removal.failure = toError(err);
      } finally {
        life.dispose();
        this.#closeLw(entry);
      }
    });
  }

  /**
   * Stops the informer of `resource` and forgets it (controller-runtime's `RemoveInformer`): its watch is
   * closed and its ListerWatcher released; the `whenSynced` waiters of the informer and of its handlers'
   * registrations, and its `awaitObserved` / `awaitDeleted` / `relist` waiters, reject with
   * `INFORMER_STOPPED` saying it was removed; it leaves `informers()`, `health()`, `permissions()` and
   * `waitForCacheSync`. The factory's other informers keep running: a removal is no failure (shared
   * fate is for failures). A later `forResource` of the same resource makes a new informer (started at
   * once on a running factory). Resolves once the informer has stopped; rejects with its failure if it
   * failed while stopping (a handler that threw), which then does not stop the factory.
   *
   * Throws `INVALID_OPTION` (as a rejection) for a resource the factory has no informer of, naming it
   * and the resources it has, and for the source of a running `Controller` (its handler is registered,
   * named `controller <name>`): stop that controller first — a controller never keeps running on a
   * removed informer. Removing from a stopped factory only forgets the informer.
   *
   * Warning: code that kept the informer (a lister, a handler of your own) holds a stopped informer:
   * its lister answers from the last state, and nothing updates it again. Ask `forResource` again.
   */
  async removeInformer(resource: GroupVersionResource): Promise<void> {
    validateGroupVersionResource('SharedInformerFactory.removeInformer', resource);
    const key = gvrKey(resource);
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      const known = [...this.#entries.keys()];
      throw new InvalidOptionError(
        `SharedInformerFactory.removeInformer: the factory has no informer of ${key} (nobody asked for it with forResource, or it was removed); its informers: ${known.length === 0 ? 'none' : known.join(', ')}`,
      );
    }
    // A namespace set's handlers are registered on every namespace's informer: the union of their names.
    const healths = entry.informer instanceof NamespaceSetInformer ? Object.values(entry.informer.health()) : [entry.informer.health()];
    const controllers = [...new Set(healths.flatMap((h) => h.handlers.map((handler) => handler.name)))].filter((name) => name.startsWith('controller '));
    if (controllers.length > 0 && !entry.informer.isStopped()) {
      throw new InvalidOptionError(
        `SharedInformerFactory.removeInformer: informer ${key} is a source of running ${controllers.join(', ')}: stop ${controllers.length === 1 ? 'it' : 'them'} first (its reconciles would no longer see changes)`,
      );
    }
    this.#entries.delete(key);
    const reason = new InformerStoppedError(`informer ${key} was removed from its SharedInformerFactory (removeInformer(${key}))`);
    entry.removal = { failure: undefined };
    if (entry.started) {
      entry.stop?.(reason);
      await entry.done;
    } else {
      // Never started: run it stopped, so its waiters hear why; then release its ListerWatcher.
      const stopped = new AbortController();
      stopped.abort(reason);
      try {
        await entry.informer.run(stopped.signal);
      } finally {
        this.#closeLw(entry);
      }
    }
    if (entry.removal.failure !== undefined) throw entry.removal.failure;
  }

  /** Stopping (a signal aborted or an informer failed) or stopped: it cannot run again. */
  #isStopped(): boolean {
    return this.#scope !== undefined && this.#scope.state !== 'open';
  }

  #stoppedError(what: string): InformerStoppedError {
    return new InformerStoppedError(
      `SharedInformerFactory has stopped (its informers cannot run again): ${what}; create a new factory`,
      { cause: this.#scope?.failure },
    );
  }

  /**
   * Every informer failure ends here; the scope has already stopped the others for the first one. A
   * throwing `onError` is rethrown as an uncaught exception by the scope.
   */
  #informerFailed(key: string, err: Error, first: boolean): void {
    if (this.#options.onError !== undefined) {
      this.#options.onError(key, err);
      return;
    }
    if (first && !this.#runCalled) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }

  #closeLw(entry: Entry): void {
    if (entry.lw !== undefined) closeListerWatcher(entry.lw);
  }

  /**
   * The ListerWatcher of `gvr` (in `namespace`, default the factory's): the factory's selectors ANDed
   * with the resource's, metadata only when asked. `listWatchFor` builds its own: it is given the
   * resource alone, so per-resource list options cannot reach it and are refused.
   */
  #listWatch(gvr: GroupVersionResource, settings: CacheSettings, shard: ShardSelector | undefined, namespace = this.#options.namespace): ListerWatcher<unknown> {
    if (this.#options.listWatchFor !== undefined) {
      const listed = (['labelSelector', 'fieldSelector', 'metadataOnly'] as const).filter((k) => settings[k] !== undefined && settings[k] !== false);
      if (listed.length > 0) {
        throw new InvalidOptionError(`SharedInformerFactory: option ${listed.join(', ')} of ${settings.resource} shapes the lists and watches, which this factory's listWatchFor builds: apply it in listWatchFor`);
      }
      return this.#options.listWatchFor(gvr);
    }
    const { labelSelector, fieldSelector, logger, agent, watchCoalesceMs } = this.#options;
    return newListWatch<unknown>(this.#kubeConfig as KubeConfigLike, gvr, {
      namespace,
      labelSelector: both(labelSelector, settings.labelSelector),
      fieldSelector: both(fieldSelector, settings.fieldSelector),
      metadataOnly: settings.metadataOnly,
      shard,
      logger,
      agent,
      watchCoalesceMs,
    });
  }
}
