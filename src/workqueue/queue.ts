// The basic work queue: a deduplicating FIFO of keys that never hands one key to two workers at once.

import { realClock, type Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { describeValue, InvalidOptionError, validateOptions, type OptionSchemaFor } from '../core/options.js';
import { RingBuffer } from '../runtime/ring-buffer.js';
import { checkMethods } from './check-methods.js';
import { QueueMetrics, type WorkQueueMetricsProvider } from '../observability/index.js';


/** The rules of {@link WorkQueueOptions} (the rate-limiting queue adds its `rateLimiter`). */
export const WORK_QUEUE_OPTION_SCHEMA = {
  name: 'string',
  clock: 'clock',
  metricsProvider: 'object',
  metricsUpdatePeriodMs: 'positiveDuration',
  queue: 'object', // its methods are checked by checkMethods
} as const satisfies OptionSchemaFor<WorkQueueOptions<unknown>>;
/**
 * The ordering strategy under a {@link WorkQueue} (client-go's `Queue[T]`): where waiting items sit and
 * which one a worker gets next. The work queue does the deduplication; the strategy only orders.
 */
export interface QueueStrategy<T> {
  /** Appends an item that is not yet in the strategy. */
  push(item: T): void;
  /** Removes and returns the next item; only called when `len() > 0`. */
  pop(): T;
  /** How many items are waiting. */
  len(): number;
  /** Called when an item already waiting is added again (a priority queue may reorder it). */
  touch?(item: T): void;
}

/** The default {@link QueueStrategy}: first in, first out; popped slots are cleared so items can be collected. */
export class FifoQueueStrategy<T> implements QueueStrategy<T> {
  readonly #items = new RingBuffer<T>();

  /** Appends an item. */
  push(item: T): void {
    this.#items.push(item);
  }

  /** Removes and returns the oldest item. */
  pop(): T {
    return this.#items.shift() as T;
  }

  /** How many items are waiting. */
  len(): number {
    return this.#items.length;
  }
}

/** Options of a {@link WorkQueue} (and, by extension, of the delaying and rate-limiting queues). */
export interface WorkQueueOptions<T> {
  /**
   * The queue's name, used as the metrics label and in diagnostics messages. Required when
   * `metricsProvider` is set (as in client-go, only named queues have metrics). Default: `''`.
   */
  name?: string;
  /** The clock for metrics timestamps and (in a delaying queue) delays. Default: `realClock`. */
  clock?: Clock;
  /** Where the queue's metrics go. Default: none (no metrics, no per-item timing state, no timer). */
  metricsProvider?: WorkQueueMetricsProvider;
  /**
   * How often (ms) the unfinished-work and longest-running-processor gauges are refreshed while a
   * `metricsProvider` is set. Default: `500` (client-go's period).
   */
  metricsUpdatePeriodMs?: number;
  /** The ordering strategy. Default: a new {@link FifoQueueStrategy}. */
  queue?: QueueStrategy<T>;
}

/** Checks {@link WorkQueueOptions}, naming `owner` (the class being constructed) in the error. */
function validateWorkQueueOptions(owner: string, options: WorkQueueOptions<unknown>): void {
  validateOptions(owner, options, WORK_QUEUE_OPTION_SCHEMA);
  const o = options ?? {};
  if (o.metricsProvider !== undefined && (o.name ?? '') === '') {
    throw new InvalidOptionError(`${owner}: option metricsProvider needs a non-empty name option (only named queues have metrics)`);
  }
  checkMethods(owner, 'metricsProvider', o.metricsProvider, 'WorkQueueMetricsProvider', [
    'newDepthMetric',
    'newAddsMetric',
    'newLatencyMetric',
    'newWorkDurationMetric',
    'newUnfinishedWorkSecondsMetric',
    'newLongestRunningProcessorSecondsMetric',
    'newRetriesMetric',
  ]);
  checkMethods(owner, 'queue', o.queue, 'QueueStrategy', ['push', 'pop', 'len']);
  const touch = (o.queue as { touch?: unknown } | undefined)?.touch;
  if (touch !== undefined && typeof touch !== 'function') {
    throw new InvalidOptionError(`${owner}: option queue.touch must be a function, got ${describeValue(touch)}`);
  }
}

/** What {@link WorkQueue.get} resolves with: an item, or the news that the queue shut down and is empty. */
export type WorkQueueGetResult<T> =
  | {
      /** The item; pass it to `done` when finished. */
      item: T;
      /** The queue handed out an item. */
      shutdown: false;
    }
  | {
      /** No item. */
      item: undefined;
      /** The queue is shutting down and empty: the worker should exit. */
      shutdown: true;
    };

type Waiter<T> = (result: WorkQueueGetResult<T>) => void;

interface StateWaiter {
  idle: boolean;
  resolve: () => void;
}

/**
 * A wait on the list `waiters()` returns (read again on abort: the queue replaces its lists) that
 * `signal` can end: resolves through the pushed entry, or removes the entry and rejects with an
 * `AbortedError` when `signal` aborts first (at once when it has). The listener on `signal` is removed
 * either way.
 */
function abortableWaiter<W, V>(
  waiters: () => W[],
  signal: AbortSignal | undefined,
  what: string,
  make: (resolve: (value: V) => void) => W,
): Promise<V> {
  if (signal === undefined) return new Promise((resolve) => waiters().push(make(resolve)));
  if (signal.aborted) return Promise.reject(abortedWait(what, signal));
  return new Promise<V>((resolve, reject) => {
    const onAbort = (): void => {
      const list = waiters();
      const at = list.indexOf(entry);
      if (at >= 0) list.splice(at, 1);
      reject(abortedWait(what, signal));
    };
    const entry = make((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
    waiters().push(entry);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function abortedWait(what: string, signal: AbortSignal): AbortedError {
  return new AbortedError(`stopped waiting for ${what}: the signal was aborted`, { cause: signal.reason });
}

/**
 * client-go's work queue (`workqueue.Typed`). An item is either waiting (queued and "dirty"), being
 * processed (handed out by {@link WorkQueue.get}, not yet {@link WorkQueue.done}), or both — added again
 * while being processed, in which case it is queued again only once `done` is called. So an item is
 * never held twice and never handed to two workers at the same time, however many workers call `get`.
 *
 * **Item identity**: items are compared like `Set` members (SameValueZero): by value for strings and
 * numbers, by reference for objects. Use string keys (`metaNamespaceKeyFunc`) as client-go does; two
 * equal-looking objects are two different items.
 *
 * **Shutdown**: after {@link WorkQueue.shutDown}, `add` is ignored, items still queued are handed out,
 * and `get` resolves `{ shutdown: true }` once the queue is empty. A worker loop is:
 *
 * ```ts
 * for (;;) {
 *   const { item, shutdown } = await queue.get(signal); // rejects (code ABORTED) once `signal` aborts
 *   if (shutdown) return;
 *   try { await reconcile(item); } finally { queue.done(item); }
 * }
 * ```
 *
 * **Waiting with a signal**: `get`, `onEmpty`, `onIdle` and `shutDownWithDrain` take an optional
 * `AbortSignal`. When it aborts, only that wait ends — it rejects with an `AbortedError` (code
 * `ABORTED`, the signal's reason as `cause`), takes no item, and leaves no listener behind; the queue
 * itself is unchanged. A signal that has already aborted rejects at once, even if an item is waiting.
 *
 * Warning: forgetting `done` means the item is never handed out again and a drain never finishes.
 */
export class WorkQueue<T> {
  readonly #name: string;
  readonly #queue: QueueStrategy<T>;
  readonly #dirty = new Set<T>();
  readonly #processing = new Set<T>();
  readonly #metrics: QueueMetrics<T>;
  #getWaiters: Waiter<T>[] = [];
  #drainWaiters: (() => void)[] = [];
  #stateWaiters: StateWaiter[] = [];
  #shuttingDown = false;
  #drain = false;

  /**
   * Creates an empty queue; see {@link WorkQueueOptions} for the options and their defaults. Throws
   * {@link InvalidOptionError} (code `INVALID_OPTION`, naming the queue class and the option) for options
   * that are not an object, an option of the wrong type, or a `metricsProvider` without a `name`.
   */
  constructor(options: WorkQueueOptions<T> = {}) {
  validateWorkQueueOptions(new.target.name || 'WorkQueue', options);
    const name = options.name ?? '';
    const period = options.metricsUpdatePeriodMs ?? 500;
    this.#name = name;
    this.#queue = options.queue ?? new FifoQueueStrategy<T>();
    this.#metrics = new QueueMetrics<T>(name, options.clock ?? realClock, options.metricsProvider, period);
  }

  /** The queue's name (`''` when unnamed). */
  get name(): string {
    return this.#name;
  }

  /**
   * Marks `item` as needing processing. Ignored after shutdown; a no-op when the item is already waiting;
   * when the item is being processed, it is queued again only after its `done`.
   */
  add(item: T): void {
    if (this.#shuttingDown) return;
    if (this.#dirty.has(item)) {
      if (!this.#processing.has(item)) this.#queue.touch?.(item);
      return;
    }
    this.#metrics.add(item);
    this.#dirty.add(item);
    if (this.#processing.has(item)) return;
    this.#queue.push(item);
    this.#handOut();
  }

  /** How many items are waiting to be handed out (items being processed are not counted). */
  len(): number {
    return this.#queue.len();
  }

  /**
   * Takes the next item, waiting while the queue is empty. Resolves `{ item, shutdown: false }` — the
   * caller must call {@link WorkQueue.done} with it — or `{ item: undefined, shutdown: true }` once the
   * queue is shutting down and empty. Rejects only when `signal` aborts first: with an `AbortedError`
   * (code `ABORTED`), having taken no item — that worker stops, the queue and other workers go on.
   */
  get(signal?: AbortSignal): Promise<WorkQueueGetResult<T>> {
    if (signal?.aborted) return Promise.reject(abortedWait('an item', signal));
    if (this.#queue.len() > 0) {
      const item = this.#take();
      this.checkStateWaiters();
      return Promise.resolve({ item, shutdown: false });
    }
    if (this.#shuttingDown) return Promise.resolve({ item: undefined, shutdown: true });
    if (signal === undefined) return new Promise((resolve) => this.#getWaiters.push(resolve));
    return abortableWaiter<Waiter<T>, WorkQueueGetResult<T>>(() => this.#getWaiters, signal, 'an item', (resolve) => resolve);
  }

  /**
   * Marks `item` as processed. If it was added again meanwhile, it goes back in the queue now. Calling
   * `done` for an item that is not being processed is a no-op (client-go would queue it twice).
   */
  done(item: T): void {
    if (!this.#processing.has(item)) return;
    this.#metrics.done(item);
    this.#processing.delete(item);
    if (this.#dirty.has(item)) {
      this.#queue.push(item);
      this.#handOut();
    }
    if (this.#processing.size === 0 && this.#drainWaiters.length > 0) this.#releaseDrain();
    this.checkStateWaiters();
  }

  /**
   * Stops accepting items: later `add` calls are ignored, waiting `get` calls resolve `{ shutdown: true }`
   * (items still queued are handed out first), and a pending {@link WorkQueue.shutDownWithDrain} returns
   * at once. Does not wait for items being processed. Idempotent.
   */
  shutDown(): void {
    this.#drain = false;
    this.#beginShutdown();
    this.#releaseDrain();
  }

  /**
   * Like {@link WorkQueue.shutDown}, then resolves once no item is being processed (every handed-out item
   * got its `done`). Items still queued are handed out but not waited for, unless a worker takes them
   * before the last `done`. A later `shutDown()` makes it resolve at once.
   *
   * `signal` bounds only the wait: when it aborts first this rejects with an `AbortedError` (code
   * `ABORTED`) and the queue stays shut down.
   *
   * Warning: if a worker never calls `done`, this never resolves — pass a `signal` (e.g. one aborted
   * after a timeout on your clock) and call `shutDown` when it aborts.
   */
  shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    this.#drain = true;
    this.#beginShutdown();
    if (this.#processing.size === 0 || !this.#drain) return Promise.resolve();
    return abortableWaiter<() => void, void>(() => this.#drainWaiters, signal, 'the queue to drain', (resolve) => resolve);
  }

  /** Whether a shutdown was requested. */
  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Resolves once no item is waiting to be handed out (at once when the queue is empty). Rejects with an
   * `AbortedError` (code `ABORTED`) when `signal` aborts first.
   */
  onEmpty(signal?: AbortSignal): Promise<void> {
    return this.#waitState(false, signal);
  }

  /**
   * Resolves once the queue is idle: nothing waiting, nothing being processed and (for a delaying queue)
   * nothing waiting for its delay. At once when already idle. Rejects with an `AbortedError` (code
   * `ABORTED`) when `signal` aborts first.
   */
  onIdle(signal?: AbortSignal): Promise<void> {
    return this.#waitState(true, signal);
  }

  /** Counts a retry in metrics and diagnostics; called by delayed adds. */
  protected recordRetry(item: T): void {
    this.#metrics.retry(item);
  }

  /** How many items wait outside the queue for a delay; the delaying queue overrides this. */
  protected delayedCount(): number {
    return 0;
  }

  /** Settles `onEmpty` / `onIdle` waiters whose condition now holds; subclasses call it after changes. */
  protected checkStateWaiters(): void {
    if (this.#stateWaiters.length === 0 || this.#queue.len() > 0) return;
    const idle = this.#processing.size === 0 && this.delayedCount() === 0;
    const keep: StateWaiter[] = [];
    for (const w of this.#stateWaiters) {
      if (!w.idle || idle) w.resolve();
      else keep.push(w);
    }
    this.#stateWaiters = keep;
  }

  #waitState(idle: boolean, signal: AbortSignal | undefined): Promise<void> {
    const what = idle ? 'the queue to be idle' : 'the queue to be empty';
    const waiting = abortableWaiter<StateWaiter, void>(() => this.#stateWaiters, signal, what, (resolve) => ({ idle, resolve }));
    this.checkStateWaiters();
    return waiting;
  }

  #take(): T {
    const item = this.#queue.pop();
    this.#processing.add(item);
    this.#dirty.delete(item);
    this.#metrics.get(item);
    return item;
  }

  /** Gives queued items to waiting `get` calls, oldest waiter first. */
  #handOut(): void {
    while (this.#getWaiters.length > 0 && this.#queue.len() > 0) {
      const waiter = this.#getWaiters.shift() as Waiter<T>;
      waiter({ item: this.#take(), shutdown: false });
    }
    this.checkStateWaiters();
  }

  #beginShutdown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#metrics.shutdown();
    // Waiters exist only while the queue is empty, so every one of them learns about the shutdown.
    const waiters = this.#getWaiters;
    this.#getWaiters = [];
    for (const w of waiters) w({ item: undefined, shutdown: true });
  }

  #releaseDrain(): void {
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const w of waiters) w();
  }
}
