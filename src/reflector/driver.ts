// The reflector's I/O for one run: sends what the machine plans, reads the stream, sleeps, ticks resyncs.

import { ABORTED, ChildAbort, TIMED_OUT, callWithTimeout } from '../core/abort.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import { sleep } from '../core/clock.js';
import type { ListerWatcher, ListOptions, WatchEvent } from '../listwatch/types.js';
import type { Backoff } from '../runtime/backoff.js';
import type { WatchEndReason } from './events.js';
import type { Plan, Result, StoreOp } from './machine-types.js';
import { watchTimeoutSeconds } from './requests.js';
import { STAGE_LIST_PAGE, type ReflectorStore, type StagingStore } from './types.js';
import { openWatch } from './watch-stream.js';
import type { StreamStep, WatchStream } from './watch-stream.js';

/** What a {@link Driver} works with (the reflector's options and parts). */
export interface DriverDeps<T> {
  /** Lists and watches. */
  readonly lw: ListerWatcher<T>;
  /** Receives the store operations. */
  readonly store: ReflectorStore<T>;
  /** Time and timers. */
  readonly clock: Clock;
  /** Uniform random numbers in `[0, 1)` (watch timeouts). */
  readonly random: () => number;
  /** The shared backoff. */
  readonly backoff: Backoff;
  /** See `ReflectorOptions`. */
  readonly minWatchTimeoutMs: number;
  /** See `ReflectorOptions`. */
  readonly listTimeoutMs: number;
  /** See `ReflectorOptions`. */
  readonly watchIdleMarginMs: number;
  /** See `ReflectorOptions`; 0 = no resync timer. */
  readonly resyncPeriodMs: number;
  /** Asked before each resync. */
  readonly shouldResync: (() => boolean) | undefined;
  /** A watch opened (for the `watchOpened` event). */
  readonly onWatchOpened: (options: ListOptions, streaming: boolean) => void;
  /** A watch ended (for the `watchEnded` event). */
  readonly onWatchEnded: (reason: WatchEndReason) => void;
  /** A backoff wait starts (for the `backoff` event): how long, and what it defers. */
  readonly onBackoff: (delayMs: number, then: 'relist' | 'rewatch' | 'recheck') => void;
}

const RESYNC_DUE: Result<never> = { kind: 'resyncDue' };
const RELIST_DUE: Result<never> = { kind: 'relistDue' };
const ABORTED_RESULT: Result<never> = { kind: 'aborted' };

/**
 * Performs plans for one run of a reflector, under its signal. One request is in flight at a time; it
 * survives a resync tick (the tick is a result of its own), and is cancelled only on request. Every
 * method is safe after {@link Driver.close}, which leaves no timer, stream or listener behind.
 */
export class Driver<T> {
  readonly #deps: DriverDeps<T>;
  readonly #signal: AbortSignal;
  /** Bumped for each request started or abandoned: a result of an abandoned request is dropped. */
  #ticket = 0;
  /** A paged list's latest page, to be staged while the next page is on its way (see {@link Driver.stagePage}). */
  #toStage: { readonly items: readonly T[]; readonly first: boolean } | undefined;
  /** The staging waiting for the next page's request to be sent, and whether the store holds any. */
  #stageImmediate: ReturnType<typeof setImmediate> | undefined;
  #staged = false;
  #inFlight = false;
  /** The result of the request in flight, once it settled and until `next()` takes it. */
  #result: Result<T> | undefined;
  #cancel: (() => void) | undefined;
  #stream: WatchStream<T> | undefined;
  /** The stream being read (kept for its end: the driver may drop the stream before the read settles). */
  #reading: WatchStream<T> | undefined;
  #resyncTimer: ClockTimer | undefined;
  #resyncDue = false;
  /** A relist was asked for and not yet handed to the machine. */
  #relistDue = false;
  /** The kind of the plan whose request is in flight (what `requestRelist` may drop). */
  #current: Plan['kind'] | undefined;
  /** The sleep in flight is the re-check wait of a resource not served (which `requestRelist` ends). */
  #rechecking = false;
  #wake: (() => void) | undefined;
  /** Takes watch events as they arrive, while a read waits (see {@link Driver} `constructor`). */
  readonly #sink: ((event: WatchEvent<T>) => boolean) | undefined;

  /**
   * @param sink - when given, a `read` offers it each event as it arrives (the stream's pushed read):
   *   what it takes (`true`) it has handled itself, and the read waits on; the first event it refuses
   *   is the read's result. It is never called from inside a driver method.
   */
  constructor(deps: DriverDeps<T>, signal: AbortSignal, sink?: (event: WatchEvent<T>) => boolean) {
    this.#deps = deps;
    this.#signal = signal;
    this.#sink = sink;
  }

  /** Waits for the result of `plan`'s request (started unless one is already in flight) or a resync tick. */
  next(plan: Plan): Promise<Result<T>> {
    if (this.#signal.aborted) return Promise.resolve(ABORTED_RESULT);
    if (this.#relistDue && !this.#inFlight && this.#result === undefined) {
      // A list from "" is the relist asked for; a watch to open (or a stream to read) gives way to one.
      if (plan.kind === 'list' && plan.options.resourceVersion === '' && plan.options.continue === undefined) this.#relistDue = false;
      else if (plan.kind === 'sleep' && plan.then === 'recheck') return Promise.resolve(this.#wakeFromRecheck());
      else if (plan.kind === 'watch' || plan.kind === 'read') return Promise.resolve(this.#takeRelist());
    }
    // Without a resync timer (armed only between two calls) nothing else can happen meanwhile: the
    // request's own result is the next result.
    if (!this.#inFlight && this.#result === undefined && !this.#resyncDue && this.#resyncTimer === undefined) return this.#begin(plan);
    return this.#race(plan);
  }

  /**
   * The result of a `read` plan when it is at hand without waiting — an event the open stream already
   * decoded — while nothing else is due (no request in flight, no resync tick, no relist asked for, no
   * abort); `undefined` otherwise, and then {@link Driver.next} is the way. Same order, no promise.
   */
  nextReady(plan: Plan): Result<T> | undefined {
    if (plan.kind !== 'read' || this.#stream === undefined || this.#inFlight || this.#result !== undefined) return undefined;
    if (this.#resyncDue || this.#relistDue || this.#signal.aborted) return undefined;
    const stream = this.#stream;
    const event = stream.nextReady();
    if (event === undefined) return undefined;
    if (this.#current !== 'read' || this.#cancel === undefined) {
      this.#current = 'read';
      this.#reading = stream;
      this.#cancel = this.#stopReading;
    }
    return { kind: 'event', event };
  }

  /** The request's result or a resync tick, whichever comes first; the request survives a tick. */
  async #race(plan: Plan): Promise<Result<T>> {
    if (!this.#inFlight && this.#result === undefined && !this.#resyncDue) this.#start(plan);
    while (this.#result === undefined && !this.#resyncDue) {
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
    const result = this.#result;
    if (result === undefined) {
      this.#resyncDue = false;
      return RESYNC_DUE;
    }
    this.#result = undefined;
    this.#cancel = undefined;
    return result;
  }

  /**
   * Asks for a relist: the watch being opened or read, or the re-check wait of a resource not served
   * (`absent`), is dropped and the machine is fed `relistDue` (it lists from `""`). A list or a backoff
   * in flight is left alone; the relist follows it, unless it was already a list from `""`. Idempotent
   * until handed over.
   */
  requestRelist(): void {
    if (this.#signal.aborted || this.#relistDue) return;
    this.#relistDue = true;
    if (this.#current === 'watch' || this.#current === 'read' || this.#rechecking) this.#cancel?.();
  }

  /**
   * A relist asked for while a resource not served waits for its re-check: whoever asked knows it is
   * served again (its CRD is Established), so the re-checks before were no failures — the backoff
   * starts over, and a list refused while the server initializes its storage (429) retries soon.
   */
  #wakeFromRecheck(): Result<T> {
    this.#deps.backoff.reset();
    return this.#takeRelist();
  }

  #takeRelist(): Result<T> {
    this.#relistDue = false;
    return RELIST_DUE;
  }

  /** What a watch or read that ended by being dropped means: a relist asked for, or the run's abort. */
  #dropped(): Result<T> {
    return this.#relistDue && !this.#signal.aborted ? this.#takeRelist() : ABORTED_RESULT;
  }

  /** Abandons the request in flight (the machine moved on without it); its result will be dropped. */
  cancelPending(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#ticket++;
    this.#inFlight = false;
    this.#result = undefined;
  }

  #start(plan: Plan): void {
    const ticket = ++this.#ticket;
    this.#inFlight = true;
    void this.#begin(plan).then((result) => {
      if (ticket !== this.#ticket) return;
      this.#inFlight = false;
      this.#result = result;
      this.#wake?.();
    });
  }

  /**
   * Applies store operations in order. Returns the `storeFailed` result of the first that throws (the
   * rest are not applied), or undefined.
   */
  apply(ops: readonly StoreOp<T>[]): Result<T> | undefined {
    const { store } = this.#deps;
    for (const op of ops) {
      try {
        switch (op.kind) {
          case 'replace': store.replace(op.items, op.resourceVersion); break;
          case 'add': case 'update': case 'delete': store[op.kind](op.object); break;
          case 'resourceVersion': store.updateResourceVersion?.(op.resourceVersion); break;
          case 'resync': if (this.#deps.shouldResync?.() ?? true) store.resync(); break;
        }
      } catch (error) {
        return { kind: 'storeFailed', error, op: op.kind };
      }
    }
    return undefined;
  }

  /**
   * `apply([{ kind: op, object }, { kind: 'resourceVersion', resourceVersion }])` without the list: the
   * two operations of a watched change (watched-change.ts), with the same answer.
   */
  applyChange(op: 'add' | 'update' | 'delete', object: T, resourceVersion: string): Result<T> | undefined {
    const { store } = this.#deps;
    try {
      store[op](object);
    } catch (error) {
      return { kind: 'storeFailed', error, op };
    }
    try {
      store.updateResourceVersion?.(resourceVersion);
    } catch (error) {
      return { kind: 'storeFailed', error, op: 'resourceVersion' };
    }
    return undefined;
  }

  /**
   * Brings the I/O in line with the machine's new state: closes the stream when the state no longer
   * reads it, and runs the resync timer only in the watch phase (restarted on entering it).
   */
  settle(readsStream: boolean, resyncArmed: boolean): void {
    if (!readsStream && this.#stream !== undefined) {
      const stream = this.#stream;
      this.#stream = undefined;
      stream.stop();
    }
    if (!resyncArmed || this.#deps.resyncPeriodMs <= 0) {
      this.#clearResync();
      this.#resyncDue = false;
    } else if (this.#resyncTimer === undefined && !this.#resyncDue) {
      this.#resyncTimer = this.#deps.clock.setTimeout(() => {
        this.#resyncTimer = undefined;
        this.#resyncDue = true;
        this.#wake?.();
      }, this.#deps.resyncPeriodMs);
    }
  }

  /** Ends everything: the request in flight, the stream, the resync timer. */
  close(): void {
    this.unstage();
    this.cancelPending();
    this.settle(false, false);
  }

  #begin(plan: Plan): Promise<Result<T>> {
    this.#current = plan.kind;
    switch (plan.kind) {
      case 'list': return this.#list(plan.options);
      case 'watch': return this.#watch(plan.options, plan.streaming);
      case 'read': return this.#read();
      case 'sleep': return this.#sleep(plan.atLeastMs, plan.then);
      case 'stop': return Promise.resolve(ABORTED_RESULT);
    }
  }

  async #list(options: ListOptions): Promise<Result<T>> {
    const op = new ChildAbort(this.#signal);
    this.#cancel = () => op.controller.abort();
    const { clock, listTimeoutMs, lw } = this.#deps;
    try {
      const answer = callWithTimeout(clock, listTimeoutMs, op.signal, (s) => lw.list({ ...options }, s));
      this.#scheduleStage();
      const page = await answer;
      if (page === ABORTED) return ABORTED_RESULT;
      if (page === TIMED_OUT) return { kind: 'timedOut', afterMs: listTimeoutMs };
      return { kind: 'page', page };
    } catch (error) {
      return op.signal.aborted ? ABORTED_RESULT : { kind: 'failed', error };
    } finally {
      op.dispose();
      this.#cancelStage();
    }
  }

  /**
   * The machine goes on paging after `items` (the page just taken; `first` when it was the list's first):
   * the store is offered it ({@link STAGE_LIST_PAGE}) once the next page's request is sent, while the
   * server prepares that page, so what its `replace` needs of it is not all computed after the last
   * page. A no-op for a store without that method. Any other result drops what the store staged
   * ({@link Driver.unstage}).
   */
  stagePage(items: readonly T[], first: boolean): void {
    if (typeof (this.#deps.store as StagingStore<T>)[STAGE_LIST_PAGE] === 'function') this.#toStage = { items, first };
  }

  /** The list in progress ended (replaced, failed or abandoned): the store lets go of what it staged. */
  unstage(): void {
    this.#toStage = undefined;
    this.#cancelStage();
    if (!this.#staged) return;
    this.#staged = false;
    (this.#deps.store as StagingStore<T>)[STAGE_LIST_PAGE]?.(undefined, false);
  }

  /** After the request's own ticks (its socket write), not in its way: an immediate, not a timer. */
  #scheduleStage(): void {
    const stage = this.#toStage;
    this.#toStage = undefined;
    if (stage === undefined) return;
    this.#stageImmediate = setImmediate(() => {
      this.#stageImmediate = undefined;
      this.#staged = true;
      (this.#deps.store as StagingStore<T>)[STAGE_LIST_PAGE]?.(stage.items, stage.first);
    });
  }

  /** An answer that came before the page was staged: the page is left to `replace` (it checks what it got). */
  #cancelStage(): void {
    if (this.#stageImmediate === undefined) return;
    clearImmediate(this.#stageImmediate);
    this.#stageImmediate = undefined;
  }

  async #watch(plan: ListOptions, streaming: boolean): Promise<Result<T>> {
    const { minWatchTimeoutMs, random } = this.#deps;
    const options: ListOptions = { ...plan, timeoutSeconds: watchTimeoutSeconds(minWatchTimeoutMs, random()) };
    // The stream's lifeline: aborted by the run's signal, or by cancelPending() while connecting.
    const life = new ChildAbort(this.#signal);
    this.#cancel = () => life.controller.abort();
    const deps = {
      lw: this.#deps.lw,
      clock: this.#deps.clock,
      idleMarginMs: this.#deps.watchIdleMarginMs,
      onEnd: (reason: WatchEndReason) => {
        life.detach();
        this.#deps.onWatchEnded(reason);
      },
    };
    let opened: WatchStream<T> | typeof ABORTED | typeof TIMED_OUT;
    try {
      opened = await openWatch(deps, options, life.signal);
    } catch (error) {
      life.dispose();
      if (life.signal.aborted && this.#signal.aborted) return ABORTED_RESULT;
      return life.signal.aborted && this.#relistDue ? this.#takeRelist() : { kind: 'failed', error };
    }
    if (opened === ABORTED || opened === TIMED_OUT) {
      life.dispose();
      return opened === ABORTED ? this.#dropped() : { kind: 'timedOut', afterMs: (options.timeoutSeconds ?? 0) * 1000 + this.#deps.watchIdleMarginMs };
    }
    if (life.signal.aborted) {
      opened.stop();
      return this.#dropped();
    }
    this.#stream = opened;
    this.#deps.onWatchOpened(options, streaming);
    return { kind: 'opened' };
  }

  #read(): Promise<Result<T>> {
    const stream = this.#stream;
    if (stream === undefined) return Promise.resolve(ABORTED_RESULT);
    this.#reading = stream;
    this.#cancel = this.#stopReading;
    return (this.#sink === undefined ? stream.next() : stream.nextPushed(this.#sink)).then(this.#readStep, this.#readFailed);
  }

  readonly #stopReading = (): void => this.#reading?.stop();
  readonly #readFailed = (error: unknown): Result<T> => ({ kind: 'failed', error });
  readonly #readStep = (step: StreamStep<T>): Result<T> => {
    if (!step.done) return { kind: 'event', event: step.event };
    const stream = this.#reading as WatchStream<T>;
    switch (step.reason) {
      case 'closed':
        return { kind: 'closed', lastedMs: this.#deps.clock.now() - stream.startedAt, received: stream.received, requestedTimeoutMs: stream.requestedTimeoutMs };
      case 'stalled':
        return { kind: 'timedOut', afterMs: stream.idleMs };
      case 'aborted':
      case 'stopped':
        return this.#dropped();
    }
  };

  async #sleep(atLeastMs: number, then: 'relist' | 'rewatch' | 'recheck'): Promise<Result<T>> {
    const op = new ChildAbort(this.#signal);
    this.#cancel = () => op.controller.abort();
    this.#rechecking = then === 'recheck';
    try {
      const delay = Math.max(this.#deps.backoff.next(), atLeastMs);
      this.#deps.onBackoff(delay, then);
      // Cut short: by the run's abort, by the machine moving on (the result is dropped), or — a re-check
      // only — by a relist asked for.
      if (await sleep(this.#deps.clock, delay, op.signal)) return { kind: 'slept' };
      if (then !== 'recheck' || !this.#relistDue || this.#signal.aborted) return ABORTED_RESULT;
      return this.#wakeFromRecheck();
    } finally {
      this.#rechecking = false;
      op.dispose();
    }
  }

  #clearResync(): void {
    if (this.#resyncTimer !== undefined) this.#deps.clock.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = undefined;
  }
}
