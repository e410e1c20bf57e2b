// SharedInformerFactory: one informer per resource, shared by every caller, started and synced together.

import { realClock } from '../core/clock.js';
import { ErrorCodes, toError } from '../core/errors.js';
import type { GroupVersionResource } from '../core/types.js';
import { newListWatch, type KubeConfigLike } from '../listwatch/index.js';
import type { ListerWatcher } from '../listwatch/types.js';
import { metaNamespaceIndexFunc, NamespaceIndex, type Indexers } from '../store/types.js';
import { ChildAbort } from '../core/abort.js';
import type { InformerHealth } from './health.js';
import type { SharedIndexInformerOptions } from './options.js';
import { SharedIndexInformer } from './shared-index-informer.js';
import { waitForCacheSyncWithOptions } from './wait-for-cache-sync.js';

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
  /** Applied to every object of every informer (e.g. `stripManagedFields`). Default: none. */
  transform?: (obj: unknown) => unknown;
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
  /** Builds the ListerWatcher of a resource. Default: `newListWatch(kubeConfig, gvr, { namespace, ... })`. */
  listWatchFor?: (gvr: GroupVersionResource) => ListerWatcher<unknown>;
}

/** The factory's key of a resource: `version/resource` for the core group, else `group/version/resource`. */
export function gvrKey(gvr: GroupVersionResource): string {
  return gvr.group === '' ? `${gvr.version}/${gvr.resource}` : `${gvr.group}/${gvr.version}/${gvr.resource}`;
}

interface Entry {
  informer: SharedIndexInformer<unknown>;
  lw: ListerWatcher<unknown>;
  done: Promise<void> | undefined;
}

/**
 * client-go's `SharedInformerFactory` (keyed by resource, like the dynamic factory): every
 * `forResource` call for the same resource returns the same informer, with the `namespace` index.
 *
 * @example
 * ```ts
 * const factory = new SharedInformerFactory(kubeConfig, { resyncPeriodMs: 0 });
 * const pods = factory.forResource<Pod>({ group: '', version: 'v1', resource: 'pods' });
 * pods.addEventHandler({ onAdd: (p) => queue.add(key(p)) });
 * const running = factory.run(signal);             // rejects if any informer fails
 * await factory.waitForCacheSync(signal);
 * ```
 */
export class SharedInformerFactory {
  readonly #kubeConfig: KubeConfigLike | undefined;
  readonly #options: SharedInformerFactoryOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #batches = new Set<AbortController>();
  #failure: Error | undefined;
  #runCalls = 0;

  /** `kubeConfig` may be `undefined` only when `listWatchFor` is given. */
  constructor(kubeConfig: KubeConfigLike | undefined, options: SharedInformerFactoryOptions = {}) {
    this.#kubeConfig = kubeConfig;
    this.#options = options;
  }

  /** The shared informer of `gvr`, created on first use. Informers requested after `start` need another `start`. */
  forResource<T>(gvr: GroupVersionResource): SharedIndexInformer<T> {
    const key = gvrKey(gvr);
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      const lw = this.#listWatch(gvr);
      const o = this.#options;
      const informer = new SharedIndexInformer<unknown>(lw, {
        ...o.informerOptions,
        name: key,
        resyncPeriodMs: o.customResync?.[key] ?? o.resyncPeriodMs ?? 0,
        indexers: { [NamespaceIndex]: metaNamespaceIndexFunc } as Indexers<unknown>,
        transform: o.transform,
      });
      entry = { informer, lw, done: undefined };
      this.#entries.set(key, entry);
    }
    return entry.informer as SharedIndexInformer<T>;
  }

  /** The informers created so far, by resource key. */
  informers(): Record<string, SharedIndexInformer<unknown>> {
    return Object.fromEntries([...this.#entries].map(([k, e]) => [k, e.informer]));
  }

  /**
   * Starts every informer not started yet; safe to call again (for informers requested later).
   * If any informer fails, every informer of the factory is stopped (shared fate).
   *
   * Warning: a failure must go somewhere. It is passed to `onError` when set, and makes a pending
   * {@link SharedInformerFactory.run} reject. With neither, it is rethrown as an uncaught exception
   * (as client-go crashes on a handler panic), so a process never keeps running on a dead informer.
   */
  start(signal: AbortSignal): void {
    const link = new ChildAbort(signal);
    const batch = link.controller;
    this.#batches.add(batch);
    if (this.#failure !== undefined) batch.abort(this.#failure);
    const started: Promise<void>[] = [];
    for (const [key, entry] of this.#entries) {
      if (entry.done !== undefined) continue;
      entry.done = entry.informer.run(batch.signal).then(
        () => this.#closeLw(entry),
        (err) => {
          this.#closeLw(entry);
          this.#informerFailed(key, toError(err));
        },
      );
      started.push(entry.done);
    }
    void Promise.all(started).then(() => {
      link.detach();
      this.#batches.delete(batch);
    });
  }

  /**
   * Starts every informer and resolves once all of them have stopped after `signal` aborted. Rejects
   * with the first informer failure, after stopping and tearing down all of them.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.#runCalls++;
    try {
      this.start(signal);
      await this.shutdown();
    } finally {
      this.#runCalls--;
    }
  }

  /**
   * Waits until every started informer has stopped (the caller must have aborted their signal).
   * Rejects with the first failure, if one failed.
   */
  async shutdown(): Promise<void> {
    for (;;) {
      const pending = [...this.#entries.values()].map((e) => e.done).filter((d): d is Promise<void> => d !== undefined);
      await Promise.all(pending);
      const now = [...this.#entries.values()].filter((e) => e.done !== undefined).length;
      if (now === pending.length) break;
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  /**
   * Waits for the started informers to sync, until `signal` aborts; resolves with `{ resource: synced }`.
   * An informer that stopped or failed counts as `false` at once (its `whenSynced()` says why).
   */
  async waitForCacheSync(signal: AbortSignal): Promise<Record<string, boolean>> {
    const started = [...this.#entries].filter(([, e]) => e.done !== undefined);
    const clock = this.#options.informerOptions?.clock ?? realClock;
    const results = await Promise.all(
      started.map(async ([key, { informer }]) => {
        try {
          await informer.whenSynced(signal);
          return [key, true] as const;
        } catch (err) {
          if (informer.isStopped() || (err as { code?: unknown }).code === ErrorCodes.ABORTED) return [key, informer.hasSynced()] as const;
          // A persistent 401/403/404: the informer keeps retrying, so keep waiting (polling).
          await waitForCacheSyncWithOptions({ signal, clock }, () => informer.hasSynced() || informer.isStopped());
          return [key, informer.hasSynced()] as const;
        }
      }),
    );
    return Object.fromEntries(results);
  }

  /** `health()` of every informer, by resource key. */
  health(): Record<string, InformerHealth> {
    return Object.fromEntries([...this.#entries].map(([k, e]) => [k, e.informer.health()]));
  }

  #informerFailed(key: string, err: Error): void {
    const first = this.#failure === undefined;
    if (first) this.#failure = err;
    for (const batch of this.#batches) batch.abort(err);
    if (this.#options.onError !== undefined) {
      try {
        this.#options.onError(key, err);
      } catch (hookError) {
        queueMicrotask(() => {
          throw hookError;
        });
      }
      return;
    }
    if (first && this.#runCalls === 0) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }

  #closeLw(entry: Entry): void {
    (entry.lw as { close?: () => void }).close?.();
  }

  #listWatch(gvr: GroupVersionResource): ListerWatcher<unknown> {
    if (this.#options.listWatchFor !== undefined) return this.#options.listWatchFor(gvr);
    if (this.#kubeConfig === undefined) {
      throw new TypeError('SharedInformerFactory needs a kubeConfig unless listWatchFor is given');
    }
    const { namespace, labelSelector, fieldSelector } = this.#options;
    return newListWatch<unknown>(this.#kubeConfig, gvr, { namespace, labelSelector, fieldSelector });
  }
}
