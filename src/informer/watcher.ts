// `watch()` and `reflect()`: kube-rs's `watcher()` / `reflector()` as async iterables, on the one
// Reflector (its list, watch, relist and backoff) — a store of our own turns its writes into events.

import { realClock } from '../core/clock.js';
import { validateOptions, type OptionSchemaFor } from '../core/options.js';
import type { GroupVersionResource } from '../core/types.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { newListWatch, type KubeConfigLike, type ListerWatcher, type NewListWatchOptions } from '../listwatch/index.js';
import { Reflector, type ReflectorOptions, type ReflectorStore } from '../reflector/index.js';
import { RingBuffer } from '../runtime/ring-buffer.js';
import type { Store } from '../store/types.js';
import { SyncFailureTracker } from '../health/index.js';
import { closeListerWatcher } from './controller.js';

/**
 * What {@link watch} yields — kube-rs's `watcher::Event`:
 *
 * - `init`: a list begins — the first one, and every relist (after a 410 Gone, a rejected regression, a
 *   relist asked for); what follows until `initDone` is the whole collection;
 * - `initApply`: one object of that list;
 * - `initDone`: the list is complete, at `resourceVersion`. Objects cached before `init` and not in the
 *   list are gone: a consumer keeping state swaps it here (as {@link reflect} does); no `delete` is sent
 *   for them;
 * - `apply`: an object was added or changed (a watch event);
 * - `delete`: an object was deleted, with its final state (a watch event).
 */
export type WatcherEvent<T> =
  | {
      /** A list begins. */
      readonly type: 'init';
    }
  | {
      /** One object of the list. */
      readonly type: 'initApply';
      /** The object. */
      readonly object: T;
    }
  | {
      /** The list is complete. */
      readonly type: 'initDone';
      /** The list's resource version. */
      readonly resourceVersion: string;
    }
  | {
      /** An object was added or changed. */
      readonly type: 'apply';
      /** Its new state. */
      readonly object: T;
    }
  | {
      /** An object was deleted. */
      readonly type: 'delete';
      /** Its final state. */
      readonly object: T;
    };

/** What {@link watch} lists and watches when it is given no `ListerWatcher`: `newListWatch`'s arguments. */
export interface WatcherSource<T = unknown> extends NewListWatchOptions {
  /** The KubeConfig (or `loadKubeConfig()`'s answer). */
  kubeConfig: KubeConfigLike;
  /** The resource: a `resources.pods` descriptor (which types the objects) or any group, version and plural. */
  resource: ResourceDescriptor<T> | GroupVersionResource;
}

/** Options of {@link watch}. */
export interface WatcherOptions<T> {
  /** Ends the iteration (quietly) when aborted. Default: none — `break` ends it. */
  signal?: AbortSignal;
  /**
   * Before the first `initDone`, how many list/watch failures in a row that retrying will not fix
   * (HTTP 400 such as an invalid selector, 401, 403, 404, 422; a TLS or DNS failure) end the stream
   * with the last one thrown into the loop — the informer's `syncFailureThreshold`. Once a list
   * completed, every failure is retried (watch the reflector's `onError` for them). Default `3`.
   */
  syncFailureThreshold?: number;
  /** The reflector's options: backoff (800 ms doubling to 30 s, jittered), `useWatchList`, `pageSize`, `clock`, `onError`, .... Default: its defaults. */
  reflector?: ReflectorOptions<T>;
}

const WATCHER_OPTIONS: OptionSchemaFor<WatcherOptions<unknown>> = { signal: 'object', syncFailureThreshold: 'positiveCount', reflector: 'object' };
/** The longest timer Node keeps (about 24.8 days): "never" for the unreachable-server limit. */
const NEVER_MS = 2 ** 31 - 1;
const SOURCE_OPTIONS = { kubeConfig: 'object', resource: 'object' } as const;

/**
 * kube-rs's `watcher()`: lists then watches `source`, for ever, as an async iterable of
 * {@link WatcherEvent}s — one `Reflector` underneath, so relists, resource-version rules, streaming lists
 * and the backoff are the informer's. Nothing starts before the first `next()`; the iteration ends
 * (the watch closed, timers cleared, a `ListerWatcher` it made closed) on `break`, on `signal`, or when
 * it throws.
 *
 * Recovery: failures are retried by the reflector and not yielded (its `onError` option is told of
 * each). Before the first `initDone`, {@link WatcherOptions.syncFailureThreshold} failures that retrying
 * will not fix end the loop with the error (`API_STATUS` with the status code, `NETWORK`, `KUBECONFIG`).
 * Invalid options throw `INVALID_OPTION` / `INVALID_SELECTOR` into the loop at its first step.
 *
 * Warning: what the loop has not taken yet is buffered without bound (a list is handed over whole): a
 * consumer much slower than the watch grows memory. An informer's `events()` holds its delivery
 * instead. The `ListerWatcher` given is not closed (whoever made it owns it).
 *
 * @example
 * ```ts
 * for await (const e of watch({ kubeConfig, resource: resources.configmaps, namespace: 'default' }, { signal })) {
 *   if (e.type === 'apply') console.log('changed', e.object.metadata?.name); // a ConfigMap
 * }
 * ```
 */
export function watch<T>(source: ListerWatcher<T> | WatcherSource<T>, options: WatcherOptions<T> = {}): AsyncIterableIterator<WatcherEvent<T>> {
  return new WatcherStream<T>(source, options);
}

class WatcherStream<T> implements AsyncIterableIterator<WatcherEvent<T>> {
  readonly #source: ListerWatcher<T> | WatcherSource<T>;
  readonly #options: WatcherOptions<T>;
  readonly #queue = new RingBuffer<WatcherEvent<T>>();
  readonly #pulls = new RingBuffer<{ resolve: (r: IteratorResult<WatcherEvent<T>>) => void; reject: (e: unknown) => void }>();
  #state: 'new' | 'running' | 'done' = 'new';
  #failure: Error | undefined;
  readonly #stop = new AbortController();
  #running: Promise<void> = Promise.resolve();
  readonly #onAbort = (): void => void this.return();

  constructor(source: ListerWatcher<T> | WatcherSource<T>, options: WatcherOptions<T>) {
    this.#source = source;
    this.#options = options;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<WatcherEvent<T>>> {
    if (this.#state === 'new') {
      try {
        this.#start();
      } catch (err) {
        this.#state = 'done';
        return Promise.reject(err);
      }
    }
    if (this.#pulls.length === 0) {
      const event = this.#queue.shift();
      if (event !== undefined) return Promise.resolve({ value: event, done: false });
      if (this.#state === 'done') return this.#settle();
    }
    return new Promise((resolve, reject) => this.#pulls.push({ resolve, reject }));
  }

  /** Stops the reflector and resolves once it stopped (its watch closed, its timers cleared). */
  async return(): Promise<IteratorResult<WatcherEvent<T>>> {
    this.#end(undefined);
    await this.#running;
    return { value: undefined, done: true };
  }

  #start(): void {
    const options = this.#options;
    validateOptions('watch', options, WATCHER_OPTIONS);
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new TypeError('watch: option signal must be an AbortSignal');
    const owned = !isListerWatcher(this.#source);
    let lw: ListerWatcher<T>;
    if (isListerWatcher(this.#source)) lw = this.#source;
    else {
      const { kubeConfig, resource, ...rest } = this.#source;
      validateOptions('watch', { kubeConfig, resource }, SOURCE_OPTIONS);
      lw = newListWatch<T>(kubeConfig, resource, rest);
    }
    this.#state = 'running';
    let synced = false;
    const store: ReflectorStore<T> = {
      add: (object) => this.#push({ type: 'apply', object }),
      update: (object) => this.#push({ type: 'apply', object }),
      delete: (object) => this.#push({ type: 'delete', object }),
      replace: (items, resourceVersion) => {
        this.#push({ type: 'init' });
        for (const object of items) this.#push({ type: 'initApply', object });
        this.#push({ type: 'initDone', resourceVersion });
        synced = true;
      },
      resync: () => {},
    };
    const reflector = new Reflector<T>(lw, store, { name: 'watch', ...options.reflector, resyncPeriodMs: 0 });
    const failures = new SyncFailureTracker({
      name: reflector.name,
      clock: options.reflector?.clock ?? realClock,
      threshold: options.syncFailureThreshold ?? 3,
      unreachableMs: NEVER_MS, // kube-rs's watcher retries an unreachable server for ever; so does this
      hasSynced: () => synced,
      onBlocked: (err) => this.#end(err),
    });
    failures.subscribe(reflector.events);
    const signal = options.signal;
    if (signal?.aborted === true) this.#end(undefined);
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#running = reflector.run(this.#stop.signal).finally(() => {
      failures.stop();
      signal?.removeEventListener('abort', this.#onAbort);
      if (owned) closeListerWatcher(lw);
    });
  }

  #push(event: WatcherEvent<T>): void {
    if (this.#state !== 'running') return;
    const pull = this.#pulls.shift();
    if (pull !== undefined) pull.resolve({ value: event, done: false });
    else this.#queue.push(event);
  }

  /** Ends the stream: with `failure`, what is queued is dropped and the failure thrown once. */
  #end(failure: Error | undefined): void {
    if (this.#state === 'done') return;
    this.#state = 'done';
    this.#failure = failure;
    this.#queue.clear();
    this.#stop.abort();
    for (let pull = this.#pulls.shift(); pull !== undefined; pull = this.#pulls.shift()) this.#settle().then(pull.resolve, pull.reject);
  }

  #settle(): Promise<IteratorResult<WatcherEvent<T>>> {
    const failure = this.#failure;
    if (failure === undefined) return Promise.resolve({ value: undefined, done: true });
    this.#failure = undefined;
    return Promise.reject(failure);
  }
}

function isListerWatcher<T>(source: ListerWatcher<T> | WatcherSource<T>): source is ListerWatcher<T> {
  return typeof (source as { list?: unknown }).list === 'function' && typeof (source as { watch?: unknown }).watch === 'function';
}

/**
 * kube-rs's `reflector(writer, stream)`: passes `events` through unchanged while keeping `store` equal
 * to what they describe — `initApply` objects are gathered and made the store's whole content at
 * `initDone` (`store.replace`: objects gone during a relist leave then), `apply` upserts, `delete`
 * removes. The store changes before the event is yielded, so the loop reads a store that includes it.
 * Ending the loop ends `events` (its `return()`).
 *
 * @example
 * ```ts
 * const store = newStore<KubeObject>(metaNamespaceKeyFunc);
 * for await (const e of reflect(store, watch<KubeObject>(listerWatcher, { signal }))) {
 *   if (e.type === 'initDone') console.log(`${store.list().length} objects`);
 * }
 * ```
 */
export async function* reflect<T>(store: Store<T>, events: AsyncIterable<WatcherEvent<T>>): AsyncGenerator<WatcherEvent<T>, void, undefined> {
  let listing: T[] | undefined;
  for await (const event of events) {
    switch (event.type) {
      case 'init':
        listing = [];
        break;
      case 'initApply':
        (listing ??= []).push(event.object);
        break;
      case 'initDone':
        store.replace(listing ?? [], event.resourceVersion);
        listing = undefined;
        break;
      case 'apply':
        store.update(event.object);
        break;
      case 'delete':
        store.delete(event.object);
        break;
    }
    yield event;
  }
}
