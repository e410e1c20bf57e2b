// Reflector: keeps a store equal to one API collection forever, by list then watch, with backoff.

import { realClock, sleep } from '../core/clock.js';
import { ErrorCodes, KubeInformerError, toError } from '../core/errors.js';
import { metaNamespaceKeyFunc } from '../core/keys.js';
import { InvalidOptionError, validateOptions } from '../core/options.js';
import type { ListerWatcher } from '../listwatch/types.js';
import { Backoff, resolveBackoffOptions } from './backoff.js';
import type { ReflectorContext } from './context.js';
import { delayAfter, phaseOf } from './context.js';
import { listIntoStore } from './list.js';
import { ResourceVersionGuard } from './resource-version-guard.js';
import { ABORTED } from '../core/abort.js';
import { ReflectorRecorder } from './stats.js';
import type { ReflectorOptions, ReflectorStats, ReflectorStore } from './types.js';
import { ResyncTimer, watchLoop } from './watch-loop.js';
import type { WatchLoopControl } from './watch-loop.js';
import { watchList } from './watch-list.js';
import type { WatchStream } from './watch-stream.js';

function validateReflectorOptions(options: ReflectorOptions<unknown>): void {
  validateOptions('Reflector', options, {
    name: 'string',
    resyncPeriodMs: 'duration',
    shouldResync: 'function',
    pageSize: 'count',
    minWatchTimeoutMs: 'duration',
    watchIdleMarginMs: 'duration',
    listTimeoutMs: 'positiveDuration',
    clock: 'clock',
    random: 'function',
    backoff: { initialMs: 'duration', maxMs: 'duration', factor: 'duration', jitter: 'duration', resetAfterMs: 'duration' },
    useWatchList: 'boolean',
    keyFunc: 'function',
    expectedKind: 'string',
    expectedApiVersion: 'string',
    onError: 'function',
    onRegression: 'function',
  });
  if (options.minWatchTimeoutMs !== undefined && options.minWatchTimeoutMs < 1000) {
    throw new InvalidOptionError(`Reflector: option minWatchTimeoutMs must be at least 1000, got ${options.minWatchTimeoutMs}`);
  }
}

/**
 * Keeps a store equal to one API collection, forever: list, then watch from the list's resource
 * version, and start over with backoff whenever that breaks. client-go's `Reflector`, with its
 * resource version guarded so it only ever moves forward.
 *
 * Requests (client-go's choices unless noted):
 * - **first list**: `resourceVersion: "0"` (any version, from the watch cache), `limit: 500`;
 * - **relists**: the held version ("not older than"), unpaginated unless `pageSize` is set or the
 *   server paginated a `"0"` list; after a rejected regression also `resourceVersionMatch: NotOlderThan`;
 * - **after a LIST answered 410 or "too large resource version"**: at once again with `""` (a consistent
 *   read); a 410 on a continue page falls back to one unpaginated list at the same version;
 * - **watches**: from the held version, `allowWatchBookmarks: true`, `timeoutSeconds` random in
 *   `[minWatchTimeout, 2*minWatchTimeout)`;
 * - **streaming list** (`useWatchList`): a watch with `sendInitialEvents: true`,
 *   `resourceVersionMatch: NotOlderThan`, from the held version (or `""`).
 *
 * No list or watch is ever sent with a resource version older than one already seen, except `""` after
 * a 410. A watch change (ADDED/MODIFIED/DELETED) not newer than the held version, a bookmark or list
 * older than it, or an ADDED/MODIFIED older than the `knownObjects` copy of the same object, is
 * **rejected**: not applied; reported through `onRegression`,
 * the `regressions` counter and the `reflectorRegression` channel; and repaired by ending the watch and
 * listing at the held version with `NotOlderThan`, so a real deletion inside the rejected event still
 * reaches the store through `replace` (kubernetes #58545, client-go #338). Client-go would accept it.
 *
 * Recovery: `run` never gives up. Every failure is reported (`onError`, the `errors` counter, channel
 * `reflectorError`) and retried after a shared jittered backoff (800 ms doubling to 30 s, jitter 1.0,
 * reset after 2 minutes without a failure), never sooner than a 429's Retry-After. A watch closed by the
 * server, refused (ECONNREFUSED), throttled, broken mid-stream, stalled or fed a bad event resumes from
 * the last good version without a relist; a 410, a regression, a store error or anything else relists.
 *
 * Warning: a resource version that is not a decimal integer (some aggregated APIs) turns the guard off
 * for this reflector, with one warning. A consistent (`""`) list answering older than the held version
 * (etcd restored from a backup) is adopted, reported as a regression with `accepted: true`: this is the
 * one case where `lastSyncResourceVersion()` goes back.
 */
export class Reflector<T> {
  readonly #ctx: ReflectorContext<T>;
  readonly #resyncPeriodMs: number;
  readonly #shouldResync: (() => boolean) | undefined;
  readonly #useWatchList: boolean;
  #running = false;

  /**
   * @param lw - lists and watches the collection.
   * @param store - receives `replace`, `add`, `update`, `delete`, `resync` (a `Store` or a `DeltaFIFO`).
   * @param options - see {@link ReflectorOptions}; every field has a default. Throws code
   *   `INVALID_OPTION` on an out-of-range value.
   */
  constructor(lw: ListerWatcher<T>, store: ReflectorStore<T>, options: ReflectorOptions<T> = {}) {
    validateReflectorOptions(options as ReflectorOptions<unknown>);
    const name = options.name ?? (options.expectedKind !== undefined ? `reflector ${options.expectedKind}` : 'reflector');
    const clock = options.clock ?? realClock;
    const random = options.random ?? Math.random;
    const recorder = new ReflectorRecorder(name, clock, { onError: options.onError, onRegression: options.onRegression });
    this.#ctx = {
      name,
      lw,
      store,
      clock,
      random,
      keyFunc: options.keyFunc ?? metaNamespaceKeyFunc,
      knownObjects: options.knownObjects,
      expectedKind: options.expectedKind,
      expectedApiVersion: options.expectedApiVersion,
      pageSize: options.pageSize,
      minWatchTimeoutMs: options.minWatchTimeoutMs ?? 300_000,
      listTimeoutMs: options.listTimeoutMs ?? 300_000,
      watchIdleMarginMs: options.watchIdleMarginMs ?? 30_000,
      guard: new ResourceVersionGuard(name, (warning) => recorder.error(warning, 'guard', 'warn')),
      recorder,
      backoff: new Backoff(resolveBackoffOptions(options.backoff), clock, random),
      state: { rvUnavailable: false, paginatedResult: false, repairPending: false },
    };
    this.#resyncPeriodMs = options.resyncPeriodMs ?? 0;
    this.#shouldResync = options.shouldResync;
    this.#useWatchList = options.useWatchList ?? false;
  }

  /** The reflector's name, as used in errors and diagnostics. */
  get name(): string {
    return this.#ctx.name;
  }

  /**
   * Lists then watches, forever, until `signal` aborts; then resolves, leaving no timer and no open
   * watch. Nothing but the signal stops it. Rejects only when the reflector is already running
   * (code `ALREADY_STARTED`).
   */
  async run(signal: AbortSignal): Promise<void> {
    this.#claim();
    try {
      while (!signal.aborted) {
        let failure: unknown;
        try {
          await this.#cycle(signal);
        } catch (err) {
          failure = err;
        }
        if (signal.aborted) break;
        if (!(await sleep(this.#ctx.clock, delayAfter(this.#ctx, failure), signal))) break;
      }
    } finally {
      this.#running = false;
    }
  }

  /**
   * One list-and-watch cycle: resolves when `signal` aborts, rejects with the error that ended it (it
   * has also been reported). Re-watches that need no relist happen inside the cycle.
   */
  async listAndWatch(signal: AbortSignal): Promise<void> {
    this.#claim();
    try {
      await this.#cycle(signal);
    } finally {
      this.#running = false;
    }
  }

  /** The resource version of the last list, bookmark or accepted event; `""` before the first list. */
  lastSyncResourceVersion(): string {
    return this.#ctx.guard.held();
  }

  /** Counters and state for health checks (a fresh snapshot each call). */
  stats(): ReflectorStats {
    return this.#ctx.recorder.snapshot(this.#ctx.guard.held(), this.#ctx.guard.enabled());
  }

  #claim(): void {
    if (this.#running) {
      throw new KubeInformerError(ErrorCodes.ALREADY_STARTED, `${this.#ctx.name}: already running`);
    }
    this.#running = true;
  }

  async #cycle(signal: AbortSignal): Promise<void> {
    try {
      await this.#listAndWatchOnce(signal);
    } catch (err) {
      if (signal.aborted) return;
      const error = toError(err);
      this.#ctx.recorder.error(error, phaseOf(err, 'watch'), 'relist');
      throw error;
    }
  }

  async #listAndWatchOnce(signal: AbortSignal): Promise<void> {
    const ctx = this.#ctx;
    let initial: WatchStream<T> | undefined;
    if (this.#useWatchList) {
      try {
        const streamed = await watchList(ctx, signal);
        if (streamed === ABORTED) return;
        initial = streamed;
      } catch (err) {
        if (signal.aborted) return;
        ctx.recorder.error(err, phaseOf(err, 'watch-list'), 'fallback');
      }
    }
    if (initial === undefined && !(await listIntoStore(ctx, signal))) return;
    const control: WatchLoopControl<T> = { failure: undefined, current: undefined };
    const resync = new ResyncTimer(ctx, this.#resyncPeriodMs, this.#shouldResync, (err) => {
      control.failure = err;
      control.current?.stop();
    });
    resync.start();
    try {
      await watchLoop(ctx, signal, initial, control);
    } finally {
      resync.stop();
      control.current?.stop();
    }
  }
}
