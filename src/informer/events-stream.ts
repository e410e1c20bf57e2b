// `informer.events()`: an informer's notifications as an async iterable — one handler registration per
// loop, the one function behind SharedIndexInformer, NamespaceSetInformer and ShardedInformer.

import type { DeletedFinalStateUnknown } from '../core/keys.js';
import { validateOptions, type OptionSchemaFor } from '../core/options.js';
import type { DeepReadonly } from '../core/types.js';
import { RingBuffer } from '../runtime/ring-buffer.js';
import { InformerStoppedError } from './errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from './handler.js';
import type { AddEventHandlerOptions } from './options.js';

/**
 * One notification of an informer, as `informer.events()` yields it — the handler API's three callbacks
 * as one discriminated union, in the order a handler gets them:
 *
 * - `add`: an object appeared; `isInInitialList` for the objects of the first list (and, on a running
 *   informer, for the cached objects replayed to a new loop);
 * - `update`: an object changed, or was re-delivered by a resync or relist (both at the same
 *   `resourceVersion` then); `oldObject` is the last cached state;
 * - `delete`: an object was deleted; a {@link DeletedFinalStateUnknown} when only a relist noticed.
 *
 * Objects are the cache's own, typed `DeepReadonly`: copy one (`deepCopy`) to change it.
 */
export type InformerEvent<T> =
  | {
      /** An object appeared (`onAdd`). */
      readonly type: 'add';
      /** The object. */
      readonly object: DeepReadonly<T>;
      /** Part of the first list, or of the cached objects replayed to a loop joining a running informer. */
      readonly isInInitialList: boolean;
    }
  | {
      /** An object changed, or was re-delivered by a resync or relist (`onUpdate`). */
      readonly type: 'update';
      /** The last cached state. */
      readonly oldObject: DeepReadonly<T>;
      /** The new state. */
      readonly object: DeepReadonly<T>;
    }
  | {
      /** An object was deleted (`onDelete`). */
      readonly type: 'delete';
      /** Its final state, or a tombstone when only a relist noticed the deletion. */
      readonly object: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>;
    };

/** Options of `informer.events(signal, options)`. */
export interface InformerEventStreamOptions {
  /**
   * How many notifications the stream holds for its loop before it holds the delivery: the handler's
   * callback then waits (as an async handler's does) until the loop takes one, and what comes meanwhile
   * waits in the registration's own buffer, counted in `health()` (`handlers[].backlog`). A partitioned
   * informer delivers each part on its own loop, so its stream may hold one more per part. Default `16`.
   */
  highWaterMark?: number;
  /** The registration's name, as `health()` shows it. Default `events-<n>`. */
  name?: string;
  /** The registration's resync period; see `AddEventHandlerOptions.resyncPeriodMs`. Default: the informer's. */
  resyncPeriodMs?: number;
}

/**
 * What `informer.events()` returns: an async iterator of {@link InformerEvent}s over one handler
 * registration (made at the call, so nothing between the call and the loop is missed), for one
 * `for await` loop.
 *
 * - **Ends** (the loop exits) when `signal` aborts, when the loop `break`s, returns or throws (its
 *   `return()`), and when the informer stops: the notifications the stream holds are yielded first.
 *   Each removes the registration (`handlerCount()` drops) and lets go of a held delivery.
 * - **Throws** the informer's failure (a `HandlerError`, `CACHE_MUTATED`, a partitioned informer's
 *   part failure) into the loop at its next step; the notifications held are dropped.
 * - **Back-pressure**: see {@link InformerEventStreamOptions.highWaterMark}.
 * - `next()` called again before the last one settled is queued, as an async generator's is.
 */
export interface InformerEventStream<T> extends AsyncIterableIterator<InformerEvent<T>> {
  /** The handler registration behind the stream: `hasSynced()`, `whenSynced()`, its name. */
  readonly registration: SharedInformerRegistration;
  /** Ends the stream as `break` does: the registration removed, a held delivery let go, waiting `next()` calls done. */
  return(): Promise<IteratorResult<InformerEvent<T>>>;
}

/** What a registration tells of its end, for a stream (both informer kinds' registrations have it). @hidden */
export interface StreamEnd {
  /** Resolves once nothing more is delivered to the handler: it was removed, or its informer is stopping. */
  stopping(): Promise<void>;
  /**
   * Resolves with why delivery ended: an `InformerStoppedError` (code `INFORMER_STOPPED`) for a removal
   * or a clean stop, the informer's failure otherwise. Never rejects.
   */
  ended(): Promise<Error>;
}

/** What {@link informerEventStream} needs of an informer. @hidden */
export interface EventStreamHost<T> {
  /** Registers a handler (throws `INFORMER_STOPPED` on a stopped informer). */
  addEventHandler(handler: ResourceEventHandler<T>, options: AddEventHandlerOptions): SharedInformerRegistration;
  /** Removes a registration; harmless when it is gone. */
  removeEventHandler(registration: SharedInformerRegistration): void;
  /** True once the informer stopped or is stopping. */
  isStopped(): boolean;
}

const DEFAULT_HIGH_WATER_MARK = 16;
let streamCount = 0;

type Pull<T> = { resolve: (r: IteratorResult<InformerEvent<T>>) => void; reject: (e: unknown) => void };

const STREAM_OPTIONS: OptionSchemaFor<InformerEventStreamOptions> = { highWaterMark: 'positiveCount', name: 'string', resyncPeriodMs: 'duration' };

/**
 * The one implementation of `events()`: registers a handler on `host` that feeds a bounded queue, and
 * returns the iterator over it. Throws `INVALID_OPTION`, and `INFORMER_STOPPED` on a stopped informer. @hidden
 */
export function informerEventStream<T>(host: EventStreamHost<T>, owner: string, signal?: AbortSignal, options: InformerEventStreamOptions = {}): InformerEventStream<T> {
  validateOptions(`${owner}.events`, options, STREAM_OPTIONS);
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`${owner}.events(signal): the signal must be an AbortSignal`);
  if (host.isStopped()) throw new InformerStoppedError(`${owner}.events(): the informer has stopped; create a new one to stream its notifications`);
  return new EventStream<T>(host, signal, options);
}

class EventStream<T> implements InformerEventStream<T> {
  readonly registration: SharedInformerRegistration;
  readonly #host: EventStreamHost<T>;
  readonly #highWaterMark: number;
  readonly #queue = new RingBuffer<InformerEvent<T>>();
  readonly #pulls = new RingBuffer<Pull<T>>();
  /** Callbacks waiting for room (one per delivery loop that feeds this stream). */
  #holds: Array<() => void> = [];
  /** Set once the stream ends: `done` after the queue drains, or the failure to throw once. */
  #end: { failure?: Error } | undefined;
  /** The stream removed its registration itself (`return()`, the signal): its end is not news. */
  #closed = false;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => void this.return();

  constructor(host: EventStreamHost<T>, signal: AbortSignal | undefined, options: InformerEventStreamOptions) {
    this.#host = host;
    this.#highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
    this.#signal = signal;
    const push = (event: InformerEvent<T>): void | Promise<void> => this.#push(event);
    this.registration = host.addEventHandler(
      {
        onAdd: (object, isInInitialList) => push({ type: 'add', object, isInInitialList }),
        onUpdate: (oldObject, object) => push({ type: 'update', oldObject, object }),
        onDelete: (object) => push({ type: 'delete', object }),
      },
      { name: options.name ?? `events-${++streamCount}`, ...(options.resyncPeriodMs === undefined ? {} : { resyncPeriodMs: options.resyncPeriodMs }) },
    );
    const end = this.registration as Partial<StreamEnd>;
    if (typeof end.stopping === 'function' && typeof end.ended === 'function') {
      void end.stopping().then(() => this.#release());
      void end.ended().then((reason) => this.#ended(reason));
    }
    if (signal?.aborted === true) this.#onAbort();
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<InformerEvent<T>>> {
    if (this.#pulls.length === 0) {
      const event = this.#queue.shift();
      if (event !== undefined) {
        if (this.#queue.length < this.#highWaterMark) this.#release();
        return Promise.resolve({ value: event, done: false });
      }
      if (this.#end !== undefined) return this.#settle();
    }
    return new Promise((resolve, reject) => this.#pulls.push({ resolve, reject }));
  }

  /** Ends the stream: the registration is removed, a held delivery let go, waiting `next()` calls get `done`. */
  return(): Promise<IteratorResult<InformerEvent<T>>> {
    if (!this.#closed) {
      this.#closed = true;
      this.#signal?.removeEventListener('abort', this.#onAbort);
      this.#host.removeEventHandler(this.registration);
      this.#queue.clear();
      this.#end = {};
      this.#release();
      this.#flushPulls();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  #push(event: InformerEvent<T>): void | Promise<void> {
    if (this.#end !== undefined) return;
    const pull = this.#pulls.shift();
    if (pull !== undefined) {
      pull.resolve({ value: event, done: false });
      return;
    }
    this.#queue.push(event);
    if (this.#queue.length < this.#highWaterMark) return;
    return new Promise<void>((resolve) => this.#holds.push(resolve));
  }

  #release(): void {
    const holds = this.#holds;
    this.#holds = [];
    for (const resolve of holds) resolve();
  }

  /** The registration's delivery ended for `reason` (see {@link StreamEnd.ended}). */
  #ended(reason: Error): void {
    if (this.#closed || this.#end !== undefined) return;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#host.removeEventHandler(this.registration);
    if (reason instanceof InformerStoppedError) this.#end = {};
    else {
      this.#queue.clear();
      this.#end = { failure: reason };
    }
    this.#release();
    this.#flushPulls();
  }

  /** The answer of a `next()` once the queue is empty and the stream ended: the failure once, then `done`. */
  #settle(): Promise<IteratorResult<InformerEvent<T>>> {
    const failure = this.#end?.failure;
    if (failure === undefined) return Promise.resolve({ value: undefined, done: true });
    this.#end = {};
    return Promise.reject(failure);
  }

  #flushPulls(): void {
    for (let pull = this.#pulls.shift(); pull !== undefined; pull = this.#pulls.shift()) {
      this.#settle().then(pull.resolve, pull.reject);
    }
  }
}
