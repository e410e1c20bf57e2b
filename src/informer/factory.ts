// SharedInformerFactory: one informer per resource, shared by every caller, started and synced together.

import type http from 'node:http';
import type { ShardSelector } from '../core/shard-selector.js';
import { abortableWait } from '../core/abort.js';
import type { LoggerOption } from '../core/log.js';
import { closestOption, InvalidOptionError, omitRules, validateGroupVersionResource, validateOptions, type OptionSchemaFor } from '../core/options.js';
import type { GroupVersionResourceFor, ResourceDescriptor } from '../core/resources.js';
import type { GroupVersionResource } from '../core/types.js';
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
} as const satisfies OptionSchemaFor<SharedInformerFactoryOptions>;

/** The factory's key of a resource: `version/resource` for the core group, else `group/version/resource`. */
export function gvrKey(gvr: GroupVersionResource): string {
  return gvr.group === '' ? `${gvr.version}/${gvr.resource}` : `${gvr.group}/${gvr.version}/${gvr.resource}`;
}

/**
 * `forResource(gvr, options)`: there are no per-call options (the informer is shared by every caller);
 * the error names the factory option each key most likely meant.
 */
function refuseForResourceOptions(options: unknown): never {
  const keys = options !== null && typeof options === 'object' ? Object.keys(options) : [];
  const known = Object.keys(FACTORY_OPTION_SCHEMA);
  const hints = keys.map((key) => {
    const match = closestOption(key, known);
    return match === undefined ? key : `${key} (did you mean the factory's ${match}?)`;
  });
  throw new InvalidOptionError(
    `SharedInformerFactory.forResource: takes no options${hints.length > 0 ? `, got ${hints.join(', ')}` : ''}; ` +
      'list options (namespace, labelSelector, fieldSelector, resyncPeriodMs, ...) are options of the factory, whose informers every caller shares: new SharedInformerFactory(kubeConfig, { labelSelector })',
  );
}

interface Entry {
  informer: SharedIndexInformer<unknown>;
  lw: ListerWatcher<unknown>;
  started: boolean;
  /** The resource, as given (a descriptor says whether it is namespaced). */
  gvr: GroupVersionResource & { namespaced?: boolean };
}

/**
 * client-go's `SharedInformerFactory` (keyed by resource, like the dynamic factory): every
 * `forResource` call for the same resource returns the same informer, with the `namespace` index.
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
    validateOptions('SharedInformerFactory', options, FACTORY_OPTION_SCHEMA);
    for (const [key, ms] of Object.entries(options.customResync ?? {})) {
      validateOptions('SharedInformerFactory', { [`customResync['${key}']`]: ms }, { [`customResync['${key}']`]: 'duration' });
    }
    validateCoalesceMs('SharedInformerFactory', 'watchCoalesceMs', options.watchCoalesceMs);
    if (options.watchCoalesceMs !== undefined && options.listWatchFor !== undefined) {
      throw new InvalidOptionError('SharedInformerFactory: option watchCoalesceMs is passed to newListWatch, which listWatchFor replaces: give it to your own newListWatch instead');
    }
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
   * in the factory's `namespace` (every namespace without one, and always for a resource whose
   * descriptor says `namespaced: false`). With `listWatchFor` the requests are that function's: the
   * permissions say what the factory's own `newListWatch` would send.
   */
  permissions(): Permission[] {
    return [...this.#entries].map(([key, e]) => {
      const p: Permission = { group: e.gvr.group, resource: e.gvr.resource, verbs: ['list', 'watch'], reason: `informer of ${key}` };
      const namespace = e.gvr.namespaced === false ? undefined : this.namespace;
      if (namespace !== undefined) p.namespace = namespace;
      return p;
    });
  }

  /**
   * The shared informer of a built-in (or your own) described resource, typed by the descriptor:
   * `forResource(resources.pods)` is a `SharedIndexInformer<Pod>`. Created on first use; on a running
   * factory a new informer starts at once; on a stopped one this throws `INFORMER_STOPPED`.
   */
  forResource<T>(resource: ResourceDescriptor<T>): SharedIndexInformer<T>;
  /**
   * The shared informer of `gvr`, typed `T` — for custom resources:
   * `forResource<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets' })`. When `T` names
   * a built-in kind (a `kubernetes-types` type), `gvr` must be that kind's resource, and a client-node
   * model class (`V1Pod`) is refused: see {@link GroupVersionResourceFor}. Created on first use; on a
   * running factory a new informer starts at once; on a stopped one this throws `INFORMER_STOPPED`.
   * Throws `INVALID_OPTION` for a malformed resource (no version, no resource, `'Pod'` instead of
   * `'pods'`), and for a second argument: it takes no options — selectors, namespace and resync are the
   * factory's options (one informer per resource is shared by every caller).
   */
  forResource<T>(gvr: GroupVersionResourceFor<T>): SharedIndexInformer<T>;
  forResource(gvr: GroupVersionResource): SharedIndexInformer<unknown> {
    validateGroupVersionResource('SharedInformerFactory.forResource', gvr);
    // eslint-disable-next-line prefer-rest-params -- a JavaScript caller's options argument, which the signature does not declare
    if (arguments.length > 1 && arguments[1] !== undefined) refuseForResourceOptions(arguments[1]);
    const key = gvrKey(gvr);
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      if (this.#isStopped()) throw this.#stoppedError(`informer ${key} was not created`);
      const lw = this.#listWatch(gvr, this.#options.shard);
      const informer = this.#informer(key, lw, false); // the factory created the ListerWatcher: it closes it, once (#closeLw)
      entry = { informer, lw, started: false, gvr };
      this.#entries.set(key, entry);
      if (this.#scope?.state === 'open') this.#startEntry(key, entry);
    }
    return entry.informer;
  }

  /**
   * A new informer of `resource` with this factory's options — not shared, not started, not in
   * `informers()`, `health()` or `waitForCacheSync`: run it yourself (its `run` closes its ListerWatcher).
   * With `shard`, its lists and watches carry that shard selector (a `ShardedInformer`'s slots, which
   * the controller's `sharded` option creates this way); `name` names it in logs and health (default:
   * the resource key). With `namespace`, it lists and watches that namespace alone (a
   * `NamespaceSetInformer`'s namespaces, which the controller's `namespaces` option creates this way).
   * Throws `INVALID_OPTION` for a `shard` on a factory that has a `shard` of its own or a
   * `listWatchFor`, and for a `namespace` on a factory with a `namespace` or a `listWatchFor`.
   */
  newInformer<T>(resource: ResourceDescriptor<T>, options: { shard?: ShardSelector; name?: string; namespace?: string } = {}): SharedIndexInformer<T> {
    validateGroupVersionResource('SharedInformerFactory.newInformer', resource);
    validateOptions('SharedInformerFactory.newInformer', options, { shard: 'shardSelector', name: 'string', namespace: 'string' });
    if (options.namespace !== undefined && (this.namespace !== undefined || this.#options.listWatchFor !== undefined)) {
      throw new InvalidOptionError(
        `SharedInformerFactory.newInformer: option namespace (${options.namespace}) needs a factory without ${this.namespace !== undefined ? `a namespace of its own (${this.namespace})` : 'listWatchFor'} (it builds the ListerWatcher with the namespace)`,
      );
    }
    if (options.shard !== undefined && (this.#options.shard !== undefined || this.#options.listWatchFor !== undefined)) {
      throw new InvalidOptionError(
        `SharedInformerFactory.newInformer: option shard needs a factory without ${this.#options.shard !== undefined ? 'a shard of its own' : 'listWatchFor'} (it builds the ListerWatcher with the shard)`,
      );
    }
    const key = gvrKey(resource);
    return this.#informer(key, this.#listWatch(resource, options.shard ?? this.#options.shard, options.namespace), true, options.name) as SharedIndexInformer<T>;
  }

  #informer(key: string, lw: ListerWatcher<unknown>, closeListerWatcher: boolean, name = key): SharedIndexInformer<unknown> {
    const o = this.#options;
    return new SharedIndexInformer<unknown>(lw, {
      logger: o.logger,
      ...o.informerOptions,
      name,
      resyncPeriodMs: o.customResync?.[key] ?? o.resyncPeriodMs ?? 0,
      indexers: { [NamespaceIndex]: metaNamespaceIndexFunc },
      transform: o.transform,
      closeListerWatcher,
    });
  }

  /** The informers created so far, by resource key. */
  informers(): Record<string, SharedIndexInformer<unknown>> {
    return Object.fromEntries([...this.#entries].map(([k, e]) => [k, e.informer]));
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

  /** `health()` of every informer, by resource key. */
  health(): Record<string, InformerHealth> {
    return Object.fromEntries([...this.#entries].map(([k, e]) => [k, e.informer.health()]));
  }

  #startEntry(key: string, entry: Entry): void {
    entry.started = true;
    void (this.#scope as TaskScope).spawn(key, async (signal) => {
      try {
        await entry.informer.run(signal);
      } finally {
        this.#closeLw(entry);
      }
    });
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
    closeListerWatcher(entry.lw);
  }

  #listWatch(gvr: GroupVersionResource, shard: ShardSelector | undefined, namespace = this.#options.namespace): ListerWatcher<unknown> {
    if (this.#options.listWatchFor !== undefined) return this.#options.listWatchFor(gvr);
    const { labelSelector, fieldSelector, logger, agent, watchCoalesceMs } = this.#options;
    return newListWatch<unknown>(this.#kubeConfig as KubeConfigLike, gvr, { namespace, labelSelector, fieldSelector, shard, logger, agent, watchCoalesceMs });
  }
}
