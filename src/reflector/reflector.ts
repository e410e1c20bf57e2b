// Reflector: keeps a store equal to one API collection forever; the driver loop around the state machine.

import { EventEmitter } from 'eventemitter3';
import { realClock } from '../core/clock.js';
import type { Clock } from '../core/clock.js';
import { AlreadyStartedError } from '../core/errors.js';
import { metaNamespaceKeyFunc } from '../core/keys.js';
import { InvalidOptionError, validateOptions, type OptionSchemaFor } from '../core/options.js';
import { getResourceVersion } from '../core/types.js';
import type { ListerWatcher, ListOptions, WatchEvent } from '../listwatch/types.js';
import { watchListSupportOf, type WatchListSupport } from '../listwatch/index.js';
import { Backoff, BACKOFF_OPTION_SCHEMA, defaultRandom, resolveBackoffOptions } from '../runtime/index.js';
import { Driver } from './driver.js';
import type { DriverDeps } from './driver.js';
import { publishOnChannels, reportHookFailure, subscribeHooks } from './events.js';
import type { ReflectorEventMap, ReflectorEvents } from './events.js';
import { INITIAL_MEMORY, planOf, readsStream, resyncArmed, start, step, streamsLists, type State, type Transition } from './machine.js';
import type { MachineEnv, Report, Result } from './machine-types.js';
import type { Memory } from './requests.js';
import { ReflectorStatsRecorder } from './stats.js';
import type { ReflectorOptions, ReflectorStats, ReflectorStore } from './types.js';
import { watchedChange } from './watched-change.js';

/** The rules of {@link ReflectorOptions} (the informers check their `reflector` option with them). */
export const REFLECTOR_OPTION_SCHEMA = {
  name: 'string',
  resyncPeriodMs: 'duration',
  shouldResync: 'function',
  pageSize: 'count',
  minWatchTimeoutMs: 'duration',
  watchIdleMarginMs: 'duration',
  listTimeoutMs: 'positiveDuration',
  clock: 'clock',
  random: 'function',
  backoff: BACKOFF_OPTION_SCHEMA,
  // true, false or 'auto' (the array rule compares values, booleans included).
  useWatchList: [true, false, 'auto'] as unknown as readonly string[],
  onResourceMissing: ['retry', 'absent'],
  knownObjects: 'object',
  keyFunc: 'function',
  expectedKind: 'string',
  expectedApiVersion: 'string',
  onError: 'function',
  onRegression: 'function',
} as const satisfies OptionSchemaFor<ReflectorOptions<unknown>>;

function validateReflectorOptions(options: ReflectorOptions<unknown>): void {
  validateOptions('Reflector', options, REFLECTOR_OPTION_SCHEMA);
  if (options.minWatchTimeoutMs !== undefined && options.minWatchTimeoutMs < 1000) {
    throw new InvalidOptionError(`Reflector: option minWatchTimeoutMs must be at least 1000, got ${options.minWatchTimeoutMs}`);
  }
}

/**
 * Keeps a store equal to one API collection, forever: list, then watch from the list's resource
 * version, and start over with backoff whenever that breaks. client-go's `Reflector`, with its
 * resource version guarded so it only ever moves forward. Its states and transitions are one table,
 * in `machine.ts` (drawn in docs/architecture.md); this class only does the I/O.
 *
 * Requests (client-go's choices unless noted):
 * - **first list**: `resourceVersion: "0"` (any version, from the watch cache), `limit: 500`;
 * - **relists**: the held version ("not older than"), unpaginated unless `pageSize` is set or the
 *   server paginated a `"0"` list; after a rejected regression also `resourceVersionMatch: NotOlderThan`;
 * - **after a LIST answered 410 or "too large resource version"**: at once again with `""` (a consistent
 *   read); a 410 on a continue page falls back to one unpaginated list at the same version;
 * - **watches**: from the held version, `allowWatchBookmarks: true`, `timeoutSeconds` random in
 *   `[minWatchTimeout, 2*minWatchTimeout)`;
 * - **streaming list** (`useWatchList`, by default where the server supports it): a watch with
 *   `sendInitialEvents: true`, `resourceVersionMatch: NotOlderThan`, from the held version (or `""`).
 *
 * No list or watch is ever sent with a resource version older than one already seen, except `""` after
 * a 410. A watch change (ADDED/MODIFIED/DELETED) not newer than the held version, a bookmark or list
 * older than it, or an ADDED/MODIFIED older than the `knownObjects` copy of the same object, is
 * **rejected**: not applied; reported (`regression` event, `onRegression`, the `regressions` counter,
 * the `reflectorRegression` channel); and repaired by ending the watch and listing at the held version
 * with `NotOlderThan`, so a real deletion inside the rejected event still reaches the store through
 * `replace` (kubernetes #58545, client-go #338). Client-go would accept it.
 *
 * Everything that happens is published once, as a typed event on {@link Reflector.events}; the
 * counters (`stats()`), the `onError`/`onRegression` hooks and the diagnostics channels listen there.
 *
 * Recovery: `run` never gives up. Every failure is reported (`error` event with phase and action) and
 * retried after a shared jittered backoff (800 ms doubling to 30 s, jitter 1.0, reset after 2 minutes
 * without a failure), never sooner than a 429's Retry-After. A watch closed by the server, refused
 * (ECONNREFUSED), throttled, broken mid-stream, stalled or fed a bad event resumes from the last good
 * version without a relist; a 410, a regression, a store error or anything else relists. A watch's 410
 * (too old resource version) relists at once — the server answered, and the backoff grown by the
 * failures before it (an outage) is not for answers — except a second 410 before any watch carried an
 * event, which backs off (no hot loop). Each backoff wait is published as a `backoff` event (what it
 * defers, until when); a watch whose first event is an ERROR ends as `refused` (it never opened).
 *
 * Warning: a resource version that is not a decimal integer (some aggregated APIs) turns the guard off
 * for this reflector, with one warning. A consistent (`""`) list answering older than the held version
 * (etcd restored from a backup) is adopted, reported as a regression with `accepted: true`: this is the
 * one case where `lastSyncResourceVersion()` goes back.
 */
export class Reflector<T> {
  readonly #name: string;
  readonly #env: MachineEnv<T>;
  readonly #deps: DriverDeps<T>;
  readonly #events: ReflectorEvents = new EventEmitter<ReflectorEventMap>();
  readonly #stats: ReflectorStatsRecorder;
  #mem: Memory = INITIAL_MEMORY;
  /** Under `useWatchList: 'auto'`, what the process knows of this server's streaming lists. */
  readonly #support: WatchListSupport | undefined;
  /** This reflector's streaming list is the one deciding {@link Reflector.#support}'s verdict. */
  #deciding = false;
  /** The I/O of the run in progress (for `requestRelist`). */
  #io: Driver<T> | undefined;
  #running = false;
  #failuresInARow = 0;
  /** The run of failures the last `watchOpened` ended (restored when that watch is refused). */
  #failuresAtOpen = 0;
  /** The stream ending now was refused (its first event an ERROR): set while the machine's report is applied. */
  #refused = false;
  /** The machine's state in the run in progress (the loop and the pushed read's sink both move it). */
  #state: State<T> | undefined;
  /** What the sink met and left to the loop: a store that failed the event's write, or its own throw. */
  #pushed: { failed: Result<T> } | { thrown: unknown } | undefined;

  /**
   * @param lw - lists and watches the collection.
   * @param store - receives `replace`, `add`, `update`, `delete`, `resync` (a `Store` or a `DeltaFIFO`).
   * @param options - see {@link ReflectorOptions}; every field has a default. Throws code
   *   `INVALID_OPTION` on an out-of-range value.
   */
  constructor(lw: ListerWatcher<T>, store: ReflectorStore<T>, options: ReflectorOptions<T> = {}) {
    validateReflectorOptions(options as ReflectorOptions<unknown>);
    const name = options.name ?? (options.expectedKind !== undefined ? `reflector ${options.expectedKind}` : 'reflector');
    const clock: Clock = options.clock ?? realClock;
    const random = options.random ?? defaultRandom;
    const known = options.knownObjects;
    const mode = options.useWatchList ?? 'auto';
    const identity = mode === 'auto' ? lw.serverIdentity : undefined;
    const support = identity === undefined ? undefined : watchListSupportOf(identity);
    this.#support = support;
    this.#name = name;
    this.#env = {
      name,
      keyFunc: options.keyFunc ?? metaNamespaceKeyFunc,
      expectedKind: options.expectedKind,
      expectedApiVersion: options.expectedApiVersion,
      pageSize: options.pageSize,
      // 'auto' without a server identity: paged lists (nothing says the ListerWatcher can stream).
      useWatchList: mode === 'auto' && support === undefined ? false : mode,
      watchListVerdict: support === undefined ? undefined : () => support.verdict,
      onResourceMissing: options.onResourceMissing ?? 'retry',
      oneCycle: false,
      storedVersion: known === undefined ? undefined : (key) => getResourceVersion(known.getByKey(key)),
      unchanged: known === undefined ? undefined : (key, rv) => {
        const cached = known.getByKey(key);
        return cached !== undefined && rv !== '' && getResourceVersion(cached) === rv ? cached : undefined;
      },
    };
    this.#deps = {
      lw,
      store,
      clock,
      random,
      backoff: new Backoff(resolveBackoffOptions(options.backoff), clock, random),
      minWatchTimeoutMs: options.minWatchTimeoutMs ?? 300_000,
      listTimeoutMs: options.listTimeoutMs ?? 300_000,
      watchIdleMarginMs: options.watchIdleMarginMs ?? 30_000,
      resyncPeriodMs: options.resyncPeriodMs ?? 0,
      shouldResync: options.shouldResync,
      onWatchOpened: (o, streaming) => this.#watchOpened(o, streaming),
      onWatchEnded: (reason) => this.#emit('watchEnded', { reason, refused: this.#refused }),
      onBackoff: (delayMs, then) => this.#emit('backoff', { then, delayMs, until: clock.now() + delayMs }),
    };
    this.#stats = new ReflectorStatsRecorder(clock);
    this.#stats.subscribe(this.#events);
    subscribeHooks(this.#events, name, { onError: options.onError, onRegression: options.onRegression });
    publishOnChannels(this.#events, name);
  }

  /** The reflector's name, as used in errors and diagnostics. */
  get name(): string {
    return this.#name;
  }

  /**
   * Everything the reflector does, as typed events (see {@link ReflectorEventMap}): `listed`,
   * `watchOpened`, `watchEnded`, `event`, `bookmark`, `error`, `regression`. Listeners run
   * synchronously and must not throw.
   */
  get events(): ReflectorEvents {
    return this.#events;
  }

  /**
   * Lists then watches, forever, until `signal` aborts; then resolves, leaving no timer and no open
   * watch. Nothing but the signal stops it. Rejects only when the reflector is already running
   * (code `ALREADY_STARTED`). A later `run` resumes from the version held.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.#claim();
    try {
      await this.#drive(signal, this.#env);
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
    let error: Error | undefined;
    try {
      error = await this.#drive(signal, { ...this.#env, oneCycle: true });
    } finally {
      this.#running = false;
    }
    if (error !== undefined) throw error;
  }

  /**
   * Asks for a relist now: the open watch is dropped and a consistent list (from `""`) replaces the
   * store's contents — what repairs a cache found to differ from the server. A list in flight finishes
   * first; a reflector in backoff relists after it. Does nothing when the reflector is not running.
   */
  requestRelist(): void {
    this.#io?.requestRelist();
  }

  /** The resource version of the last list, bookmark or accepted event; `""` before the first list. */
  lastSyncResourceVersion(): string {
    return this.#mem.versions.held;
  }

  /** Counters and state for health checks (a fresh snapshot each call). */
  stats(): ReflectorStats {
    return this.#stats.snapshot(this.#mem.versions.held, this.#mem.versions.enabled, streamsLists(this.#env) ? 'streaming' : 'paged');
  }

  #claim(): void {
    if (this.#running) throw new AlreadyStartedError(`reflector ${this.#name}`);
    this.#running = true;
  }

  /** The loop: plan, perform, step, apply, settle the I/O, report. Resolves the error that stopped it. */
  async #drive(signal: AbortSignal, env: MachineEnv<T>): Promise<Error | undefined> {
    await this.#awaitWatchListVerdict(signal);
    const io: Driver<T> = new Driver<T>(this.#deps, signal, (event) => this.#take(io, event, env));
    this.#io = io;
    this.#state = start<T>(this.#mem, env);
    this.#pushed = undefined;
    try {
      for (;;) {
        const plan = planOf(this.#state);
        if (plan.kind === 'stop') return plan.error;
        // An event the stream already decoded is taken at once; anything else is waited for, while the
        // sink (#take) takes the common events as they arrive. The result is handled by #advance, not
        // kept in this frame: a list's page (the objects as parsed, before a transform) would otherwise
        // stay reachable from the suspended loop until the next result came — measured: right after a
        // sync with stripManagedFields, the cache still held the parsed objects too.
        this.#state = this.#advance(io, io.nextReady(plan) ?? (await io.next(plan)), env);
      }
    } finally {
      io.close();
      this.#io = undefined;
      this.#state = undefined;
      this.#settleWatchList('unknown');
    }
  }

  /**
   * Under `'auto'`, before the first list of a run: when nothing is known of the server yet, either
   * this reflector's streaming list decides (it claims the attempt), or another reflector's is under
   * way and this one waits for what it learns — informers starting together send one request the
   * server may refuse, not one each.
   */
  async #awaitWatchListVerdict(signal: AbortSignal): Promise<void> {
    const support = this.#support;
    if (support === undefined || support.verdict !== 'unknown') return;
    if (support.claim()) this.#deciding = true;
    else await support.settled(signal);
  }

  /** Ends this reflector's attempt at deciding the server's verdict (a no-op when it holds none). */
  #settleWatchList(verdict: 'supported' | 'unsupported' | 'unknown', reason?: string): void {
    if (this.#support === undefined) return;
    if (verdict !== 'unknown') this.#support.settle(verdict, reason);
    else if (this.#deciding) this.#support.settle('unknown');
    this.#deciding = false;
  }

  /**
   * The short path for the common watch event (watched-change.ts: step()'s effects, computed directly):
   * true when it took the event. The pushed read's sink, inside the callback of the chunk that brought
   * the event while the loop waits on the read, and the loop's own first try for an event it holds.
   * Any other event is left to `step()`. A store failing the event's write, or a throw, is left in
   * `#pushed` for {@link Reflector.#advance} to conclude. Never called from inside the loop's step.
   */
  #take(io: Driver<T>, event: WatchEvent<T>, env: MachineEnv<T>): boolean {
    const state = this.#state;
    if (state === undefined || state.kind !== 'watching' || this.#pushed !== undefined) return false;
    try {
      const change = watchedChange(state, event, env);
      if (change === undefined) return false;
      const failed = io.applyChange(change.op, change.object, change.resourceVersion);
      if (failed !== undefined) {
        this.#pushed = { failed };
        return false;
      }
      const next = change.state;
      this.#mem = next.mem;
      this.#emit('event', { type: change.type, key: change.key, resourceVersion: change.resourceVersion, outcome: 'applied' });
      io.settle(true, true);
      this.#state = next;
      return true;
    } catch (thrown) {
      this.#pushed = { thrown };
      return false;
    }
  }

  /** Steps the machine on one result, applies its store operations, settles the I/O and reports. */
  #advance(io: Driver<T>, result: Result<T>, env: MachineEnv<T>): State<T> {
    if (result.kind === 'event' && this.#take(io, result.event, env)) return this.#state as State<T>;
    if (result.kind === 'page' && this.#mem.versions.held !== '') this.#keepUnchanged(result.page.items, env);
    const state = this.#state as State<T>;
    const pushed = this.#pushed;
    if (pushed !== undefined) {
      // The short path met a store failure or a throw (here, or in the sink: then the read's result is
      // that event, or the stream's end that came first, and it belongs to the watch this concludes).
      this.#pushed = undefined;
      if ('thrown' in pushed) throw pushed.thrown;
      return this.#conclude(io, state, result, step(state, pushed.failed, env));
    }
    let t = step(state, result, env);
    const failed = io.apply(t.ops);
    if (failed !== undefined) t = step(state, failed, env);
    return this.#conclude(io, state, result, t);
  }

  /**
   * A relist's page: each item the cache holds at the same resource version is swapped, in place, for the
   * cached copy, so the decoded one is garbage at once and the list does not hold a second copy of every
   * unchanged object until it is complete (the store's `replace` sees the cached objects themselves).
   * Not for the first list (nothing is cached). An item without a key is left for `replace` to refuse.
   */
  #keepUnchanged(items: T[] | undefined, env: MachineEnv<T>): void {
    const unchanged = env.unchanged;
    if (items === undefined || unchanged === undefined) return;
    for (let i = 0; i < items.length; i++) {
      const rv = getResourceVersion(items[i]);
      if (rv === undefined || rv === '') continue;
      let key: string;
      try {
        key = env.keyFunc(items[i]);
      } catch {
        continue;
      }
      const cached = unchanged(key, rv);
      if (cached !== undefined) items[i] = cached;
    }
  }

  /** Takes a transition whose store operations were applied (or failed, and were stepped on): settles and reports. */
  #conclude(io: Driver<T>, state: State<T>, result: Result<T>, t: Transition<T>): State<T> {
    // A timer's result leaves the request in flight alone, unless the machine moved on without it.
    if (result.kind === 'resyncDue' && t.state !== state) io.cancelPending();
    const next = t.state;
    this.#mem = next.mem;
    // A paged list that goes on has its latest page staged in the store while the next one is on its
    // way (Driver.stagePage); one that ended, or was abandoned, lets go of what was staged.
    if (next.kind === 'paging') {
      if (result.kind === 'page') io.stagePage(result.page.items ?? [], state.kind !== 'paging');
    } else if (state.kind === 'paging') {
      io.unstage();
    }
    // What arrived is told first; then the stream closes (if the state left it); then the rest: a
    // bad event, the end of its watch, the error that ended it, in that order.
    let refused = false;
    for (const report of t.reports) {
      if (report.kind === 'event' || report.kind === 'bookmark') this.#report(report);
      else if (report.kind === 'watchRefused') refused = true;
    }
    // A refused watch (its first event an ERROR) never opened: its end says so, and the run of failures
    // its opening ended goes on.
    this.#refused = refused;
    if (this.#refused) this.#failuresInARow += this.#failuresAtOpen;
    io.settle(readsStream(next), resyncArmed(next));
    this.#refused = false;
    for (const report of t.reports) if (report.kind !== 'event' && report.kind !== 'bookmark') this.#report(report);
    return next;
  }

  #report(report: Report): void {
    switch (report.kind) {
      case 'listed':
        this.#emit('listed', { ...report.payload, failuresBefore: this.#recovered() });
        return;
      case 'error':
        // A streaming list that failed otherwise than by a refusal decides nothing: the next one tries.
        if (report.payload.phase === 'watch-list') this.#settleWatchList('unknown');
        if (report.payload.requestFailed) this.#failuresInARow++;
        this.#emit('error', report.payload);
        return;
      case 'event':
        this.#emit('event', report.payload);
        return;
      case 'bookmark':
        this.#emit('bookmark', report.payload);
        return;
      case 'regression':
        this.#emit('regression', report.payload);
        return;
      case 'absent':
        this.#emit('absent', report.payload);
        return;
      case 'watchRefused':
        return;
      case 'watchListUnsupported':
        this.#settleWatchList('unsupported', report.error.message);
        this.#emit('watchListUnsupported', { server: this.#support?.identity ?? '', error: report.error });
        return;
    }
  }

  #watchOpened(options: ListOptions, streaming: boolean): void {
    if (streaming) this.#settleWatchList('supported');
    const failuresBefore = this.#recovered();
    this.#failuresAtOpen = failuresBefore;
    this.#emit('watchOpened', { resourceVersion: options.resourceVersion ?? '', streaming, failuresBefore });
  }

  /** The run of request failures a success just ended (and the end of it). */
  #recovered(): number {
    const before = this.#failuresInARow;
    this.#failuresInARow = 0;
    return before;
  }

  #emit<K extends keyof ReflectorEventMap>(name: K, payload: Parameters<ReflectorEventMap[K]>[0]): void {
    try {
      (this.#events.emit as (event: K, payload: unknown) => boolean)(name, payload);
    } catch (err) {
      reportHookFailure(this.#name, err);
    }
  }
}
