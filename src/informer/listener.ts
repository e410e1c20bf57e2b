// One handler's delivery: an unbounded buffer and its own loop, so a slow handler delays only itself.

import type { Clock } from '../core/clock.js';
import type { DeletedFinalStateUnknown } from '../core/keys.js';
import { channels, publish } from '../observability/channels.js';
import { RingBuffer } from '../runtime/ring-buffer.js';
import { HandlerError } from './errors.js';
import type { ResourceEventHandler } from './handler.js';
import { SingleFileTracker, SyncCondition, type ListenerStats } from '../health/index.js';

/**
 * What a parked loop is scheduled on: a resolved promise's `then`, not `queueMicrotask`, which Node wraps
 * in an async resource per call (as the scheduler's pump does; runs once per event of a watch that brings
 * one at a time). Both run the loop as a microtask, in the order scheduled.
 */
const RESOLVED = Promise.resolve();

/** A notification waiting in a listener's buffer. */
export type Notification<T> = AddNotification<T> | UpdateNotification<T> | DeleteNotification<T>;

/** An `onAdd` to deliver. */
export interface AddNotification<T> {
  /** Discriminant. */
  readonly kind: 'add';
  /** The added object. */
  readonly obj: T;
  /** Part of an initial list (counts toward the registration's sync). */
  readonly isInInitialList: boolean;
  /** Clock time it was enqueued. */
  readonly at: number;
}

/** An `onUpdate` to deliver. */
export interface UpdateNotification<T> {
  /** Discriminant. */
  readonly kind: 'update';
  /** The previously cached object. */
  readonly oldObj: T;
  /** The new object. */
  readonly newObj: T;
  /** Clock time it was enqueued. */
  readonly at: number;
}

/** An `onDelete` to deliver. */
export interface DeleteNotification<T> {
  /** Discriminant. */
  readonly kind: 'delete';
  /** The deleted object, or a tombstone. */
  readonly obj: T | DeletedFinalStateUnknown<T>;
  /** Clock time it was enqueued. */
  readonly at: number;
}

/** What the informer does when a handler throws or rejects. */
export type ErrorPolicy = 'stop' | 'report';

/** How a {@link ProcessorListener} is set up (internal to the informer room). */
export interface ProcessorListenerOptions {
  /** The registration's name. */
  name: string;
  /** The period the handler asked for; 0 = never. */
  requestedResyncPeriodMs: number;
  /** The effective period (see `determineResyncPeriod`). */
  resyncPeriodMs: number;
  /** Time source for timestamps. */
  clock: Clock;
  /** What a handler failure does. */
  errorPolicy: ErrorPolicy;
  /** Called with every handler error under the `'report'` policy; if it throws, that is fatal. */
  onError?: (err: HandlerError) => void;
  /** Called once with the error that must stop the informer. */
  onFatal: (err: Error) => void;
  /** Whether the informer has synced (the registration's upstream). */
  upstreamHasSynced: () => boolean;
  /** The key of an object, for error messages; `undefined` when it has none. */
  keyOf: (obj: unknown) => string | undefined;
}

const YIELD_EVERY = 64;

/** A handler's buffer and delivery loop (client-go's `processorListener`). */
export class ProcessorListener<T> {
  /** The registration's name. */
  readonly name: string;
  /** The user's handler. */
  readonly handler: ResourceEventHandler<T>;
  #options: ProcessorListenerOptions;
  readonly #buffer = new RingBuffer<Notification<T>>();
  /** The loop waits for `add()` (or `stop()`) to schedule it again: the buffer was empty. */
  #parked = false;
  /** Settles {@link ProcessorListener.done}'s promise: the loop exited, or (never expected) threw. */
  #exited: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  #started = false;
  #stopped = false;
  #done: Promise<void> = Promise.resolve();
  #tracker: SingleFileTracker;
  #synced: SyncCondition;
  #requestedResyncPeriodMs: number;
  #resyncPeriodMs: number;
  #nextResync: number;
  #inFlightSince: number | undefined;
  #delivered = 0;
  #failures = 0;
  #maxBacklog = 0;
  /** Waiters of {@link ProcessorListener.whenIdle}. */
  #idleWaiters: Array<() => void> = [];
  /** Waiters of {@link ProcessorListener.whenStopped}. */
  #stopWaiters: Array<() => void> = [];

  /** Creates a listener that buffers until `run()` begins delivery. */
  constructor(handler: ResourceEventHandler<T>, options: ProcessorListenerOptions) {
    this.handler = handler;
    this.name = options.name;
    this.#options = options;
    this.#requestedResyncPeriodMs = options.requestedResyncPeriodMs;
    this.#resyncPeriodMs = options.resyncPeriodMs;
    this.#nextResync = options.clock.now() + options.resyncPeriodMs;
    this.#tracker = new SingleFileTracker(options.upstreamHasSynced);
    this.#synced = new SyncCondition(() => this.#tracker.hasSynced());
  }

  /**
   * Whether the handler has the callback a notification of `kind` calls (looked up on the handler as it
   * is now: a callback assigned later is called for later notifications).
   */
  wants(kind: Notification<T>['kind']): boolean {
    // Three named reads, not a keyed one: it runs once per object of a first list, cold.
    const h = this.handler;
    return (kind === 'add' ? h.onAdd : kind === 'update' ? h.onUpdate : h.onDelete) !== undefined;
  }

  /**
   * Queues a notification (never blocks); ignored once stopped, and when the handler has no callback for
   * it: nothing would be called, so it takes no place in the buffer, no delivery and no part in the
   * registration's sync (an initial list is handled at once by a handler without `onAdd`).
   */
  add(n: Notification<T>): void {
    if (this.#stopped || !this.wants(n.kind)) return;
    if (n.kind === 'add' && n.isInInitialList) this.#tracker.start();
    this.#buffer.push(n);
    const backlog = this.#buffer.length;
    if (backlog > this.#maxBacklog) this.#maxBacklog = backlog;
    this.#unpark();
  }

  /**
   * Runs the delivery loop until `signal` aborts or {@link ProcessorListener.stop} is called, and
   * resolves once it has exited (a callback already running is waited for). Idempotent: a second call,
   * or a call on a stopped listener, returns the same end. The listener on `signal` is removed on exit.
   */
  run(signal?: AbortSignal): Promise<void> {
    if (this.#started || this.#stopped) return this.#done;
    this.#started = true;
    const exited = new Promise<void>((resolve, reject) => {
      this.#exited = { resolve, reject };
    });
    if (signal === undefined) this.#done = exited;
    else {
      const onAbort = (): void => this.stop();
      if (signal.aborted) this.stop();
      else signal.addEventListener('abort', onAbort, { once: true });
      this.#done = exited.finally(() => signal.removeEventListener('abort', onAbort));
    }
    // Like an async function's body, the first run is synchronous: what was buffered before is delivered now.
    this.#drain();
    return this.#done;
  }

  /**
   * Resolves once the buffer is empty and no callback is running (at once when that is so, when the
   * loop never started, or once it stopped or exited): everything queued before has been delivered.
   */
  whenIdle(): Promise<void> {
    if (!this.#started || this.#stopped || this.#exited === undefined || (this.#buffer.length === 0 && this.#inFlightSince === undefined)) return RESOLVED;
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters;
    if (waiters.length === 0) return;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Stops delivery: drops the buffer; a callback already running finishes on its own. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#buffer.clear();
    this.#unpark();
    const waiters = this.#stopWaiters;
    this.#stopWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * Resolves once {@link ProcessorListener.stop} is called (at once when it was): nothing more is
   * delivered, though a callback running then may still be awaited. What a stream that holds its
   * handler's delivery (`informer.events()`) lets go on.
   */
  whenStopped(): Promise<void> {
    if (this.#stopped) return RESOLVED;
    return new Promise((resolve) => this.#stopWaiters.push(resolve));
  }

  /** Schedules a parked loop (as the resolved promise it awaited used to): it runs in a microtask. */
  #unpark(): void {
    if (!this.#parked) return;
    this.#parked = false;
    void RESOLVED.then(this.#drain);
  }

  /**
   * Resolves when the delivery loop has exited (at once if it never started). A handler's failure does
   * not reject it (that goes to the error policy); it rejects only when the loop's own bookkeeping
   * throws, such as an injected clock whose `now()` throws.
   */
  done(): Promise<void> {
    return this.#done;
  }

  /** The registration's sync state: the informer synced and every initial item handled. */
  hasSynced(): boolean {
    return this.#tracker.hasSynced();
  }

  /** The awaitable form of {@link ProcessorListener.hasSynced}. */
  get synced(): SyncCondition {
    return this.#synced;
  }

  /** The resync period the handler asked for. */
  get requestedResyncPeriodMs(): number {
    return this.#requestedResyncPeriodMs;
  }

  /** The effective resync period. */
  get resyncPeriodMs(): number {
    return this.#resyncPeriodMs;
  }

  /** Sets the effective resync period (when the informer's check period changes before start). */
  setResyncPeriod(periodMs: number): void {
    this.#resyncPeriodMs = periodMs;
  }

  /** True when this listener's resync is due at `now`. */
  shouldResync(now: number): boolean {
    return this.#resyncPeriodMs !== 0 && now >= this.#nextResync;
  }

  /** Schedules the next resync one period after `now`. */
  determineNextResync(now: number): void {
    this.#nextResync = now + this.#resyncPeriodMs;
  }

  /** Delivery statistics for `health()`. */
  stats(): ListenerStats {
    const oldest = this.#buffer.peek();
    return {
      backlog: this.#buffer.length,
      oldestPendingAt: oldest?.at,
      inFlightSince: this.#inFlightSince,
      delivered: this.#delivered,
      failures: this.#failures,
      maxBacklog: this.#maxBacklog,
    };
  }

  /**
   * The delivery loop, as a function a microtask runs: it calls the handler for each buffered
   * notification in order, parks when the buffer is empty (`add()` schedules it again), waits for a
   * callback's promise before the next, and gives others a turn after {@link YIELD_EVERY} synchronous
   * callbacks. It was an async function awaiting a fresh promise per wake-up; on a watch that brings one
   * event at a time that promise and the function's resume were paid per event (bench/notes.md, issue
   * 29, tenth session). The clock is read once per synchronous run of callbacks, not once per callback:
   * a callback's in-flight time can only grow past a run's start while it awaits, and each await starts
   * a new run.
   */
  readonly #drain = (): void => {
    try {
      this.#deliver();
    } catch (error) {
      this.#exit(error);
    }
  };

  /** One synchronous run of the loop (see {@link ProcessorListener.#drain}). */
  #deliver(): void {
    let runStartedAt: number | undefined;
    for (let calls = 0; calls < YIELD_EVERY; calls++) {
      if (this.#stopped) {
        this.#exit();
        return;
      }
      const n = this.#buffer.shift();
      if (n === undefined) {
        this.#parked = true;
        this.#wakeIdle();
        return;
      }
      runStartedAt ??= this.#options.clock.now();
      this.#inFlightSince = runStartedAt;
      let result: void | Promise<void>;
      try {
        result = this.#call(n);
      } catch (error) {
        if (!this.#settled(n, true, error)) return;
        continue;
      }
      if (result !== undefined) {
        // Awaited as `await` would: the next notification waits for it, in a run of its own.
        Promise.resolve(result).then(
          () => this.#resume(n, false, undefined),
          (error: unknown) => this.#resume(n, true, error),
        );
        return;
      }
      if (!this.#settled(n, false, undefined)) return;
    }
    void RESOLVED.then(this.#drain);
  }

  /** A callback's promise settled: its notification is done, then delivery goes on. */
  #resume(n: Notification<T>, failed: boolean, error: unknown): void {
    try {
      if (this.#settled(n, failed, error)) this.#deliver();
    } catch (thrown) {
      this.#exit(thrown);
    }
  }

  /** Books a delivered notification; false when delivery must end (a fatal failure: the loop exited). */
  #settled(n: Notification<T>, failed: boolean, error: unknown): boolean {
    this.#inFlightSince = undefined;
    this.#delivered++;
    if (failed && !this.#handleFailure(n, error)) {
      this.#exit();
      return false;
    }
    if (n.kind === 'add' && n.isInInitialList) {
      this.#tracker.finished();
      this.#synced.check();
    }
    return true;
  }

  /**
   * The loop has exited: {@link ProcessorListener.done} resolves. With `thrown`, the loop's own
   * bookkeeping threw (an injected clock, a sync waiter): it rejects with it, as the async loop did.
   */
  #exit(thrown?: unknown): void {
    this.#parked = false;
    this.#wakeIdle();
    const exited = this.#exited;
    this.#exited = undefined;
    if (exited === undefined) return;
    if (thrown === undefined) exited.resolve();
    else exited.reject(thrown);
  }

  /** Returns true when delivery may continue. */
  #handleFailure(n: Notification<T>, error: unknown): boolean {
    this.#failures++;
    const obj = n.kind === 'update' ? n.newObj : n.obj;
    const err = new HandlerError(this.name, n.kind, this.#options.keyOf(obj), error);
    publish(channels.informerHandlerError, { name: this.name, error: err });
    if (this.#options.errorPolicy === 'report' && this.#options.onError !== undefined) {
      try {
        this.#options.onError(err);
        return true;
      } catch (hookError) {
        err.message += ` (and the onError hook threw: ${String(hookError)})`;
      }
    }
    this.#stopped = true;
    this.#buffer.clear();
    this.#synced.fail(err);
    this.#options.onFatal(err);
    return false;
  }

  #call(n: Notification<T>): void | Promise<void> {
    // Handlers get the cache's objects as they are, typed read-only (see ResourceEventHandler).
    const h = this.handler as ResourceEventHandler<unknown>;
    switch (n.kind) {
      case 'add':
        return h.onAdd?.(n.obj, n.isInInitialList);
      case 'update':
        return h.onUpdate?.(n.oldObj, n.newObj);
      case 'delete':
        return h.onDelete?.(n.obj);
    }
  }
}
