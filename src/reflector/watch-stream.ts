// One open watch: its own abort signal, an idle timer that catches half-open connections, and stop().

import type { Clock, ClockTimer } from '../core/clock.js';
import { READ_PUSHED, READ_READY, SETTLED_BY, type ListerWatcher, type ListOptions, type ReadyIterator, type WatchEvent } from '../listwatch/types.js';
import { ABORTED, ChildAbort, TIMED_OUT, raceAbort } from '../core/abort.js';
import type { WatchEndReason } from './events.js';

/** How a stream read ends without an event: closed by the server, silent too long, or ended by us. */
export type StreamEnd = 'closed' | 'stalled' | 'aborted' | 'stopped';

/** One read of a {@link WatchStream}: an event, or the end of the stream. */
export type StreamStep<T> = { done: false; event: WatchEvent<T> } | { done: true; reason: StreamEnd };

/** What opening a watch needs. */
export interface WatchDeps<T> {
  /** Where the watch comes from. */
  readonly lw: ListerWatcher<T>;
  /** Timers. */
  readonly clock: Clock;
  /** Silence tolerated beyond the watch's `timeoutSeconds` (also bounds how long connecting may take). */
  readonly idleMarginMs: number;
  /** Told once when a stream ends, with why. */
  readonly onEnd: (reason: WatchEndReason) => void;
}

/**
 * An open watch. `next()` yields events until the server closes the stream (`closed`), the parent
 * signal aborts (`aborted`), {@link WatchStream.stop} is called (`stopped`), or no event arrives for
 * longer than the idle limit (`stalled`: the connection is presumed half-open). Errors of the iterator
 * are thrown. However it ends, its own signal is aborted, its iterator returned and its timer cleared.
 */
export class WatchStream<T> {
  /** Clock time the stream opened. */
  readonly startedAt: number;
  /** The server-side timeout the watch asked for, in ms (its idle limit less the margin); 0 = none. */
  readonly requestedTimeoutMs: number;
  readonly #iterator: AsyncIterator<WatchEvent<T>>;
  /** The iterator's synchronous read of events already decoded, when it has one (`newListWatch`'s does). */
  readonly #readReady: (() => WatchEvent<T> | undefined) | undefined;
  /** The iterator settles a pending read itself when the stream's signal aborts (see SETTLED_BY). */
  readonly #settledByAbort: boolean;
  /** The iterator's pushed read (see READ_PUSHED), when it has one and settles on our abort. */
  readonly #readPushed: ((sink: (event: WatchEvent<T>) => boolean) => Promise<IteratorResult<WatchEvent<T>>>) | undefined;
  /** The sink of the pushed read in flight (see {@link WatchStream.nextPushed}). */
  #sink: ((event: WatchEvent<T>) => boolean) | undefined;
  readonly #abort: ChildAbort;
  readonly #parent: AbortSignal;
  readonly #clock: Clock;
  readonly #onEnd: (reason: WatchEndReason) => void;
  readonly #idleLimitMs: number;
  #idleTimer: ClockTimer | undefined;
  #lastActivity: number;
  #stalled = false;
  #stopped = false;
  #endReason: WatchEndReason | undefined;
  #received = 0;
  /** The read in flight, while one waits (see next()). */
  #reading: { resolve: (step: StreamStep<T>) => void; reject: (err: unknown) => void } | undefined;
  /**
   * The stream's one listener on its signal, for its whole life (not one per read): an abort ends the
   * read in flight at once.
   */
  readonly #onAbort = (): void => {
    const reading = this.#reading;
    if (reading === undefined) return;
    this.#reading = undefined;
    reading.resolve(this.#end(this.#reason()));
  };

  constructor(deps: WatchDeps<T>, iterable: AsyncIterable<WatchEvent<T>>, abort: ChildAbort, parent: AbortSignal, idleLimitMs: number) {
    this.#iterator = iterable[Symbol.asyncIterator]();
    const readReady = (this.#iterator as Partial<ReadyIterator<T>>)[READ_READY];
    this.#readReady = typeof readReady === 'function' ? readReady.bind(this.#iterator) : undefined;
    this.#settledByAbort = (this.#iterator as { [SETTLED_BY]?: unknown })[SETTLED_BY] === abort.signal;
    const readPushed = (this.#iterator as Partial<ReadyIterator<T>>)[READ_PUSHED];
    this.#readPushed = this.#settledByAbort && typeof readPushed === 'function' ? readPushed.bind(this.#iterator) : undefined;
    this.#abort = abort;
    this.#parent = parent;
    this.#clock = deps.clock;
    this.#onEnd = deps.onEnd;
    this.#idleLimitMs = idleLimitMs;
    this.requestedTimeoutMs = Math.max(0, idleLimitMs - deps.idleMarginMs);
    this.startedAt = deps.clock.now();
    this.#lastActivity = this.startedAt;
    abort.signal.addEventListener('abort', this.#onAbort, { once: true });
    this.#armIdleTimer(idleLimitMs);
  }

  /** Events received so far (of any type). */
  get received(): number {
    return this.#received;
  }

  /** How long the stream has been silent, in ms. */
  get idleMs(): number {
    return this.#clock.now() - this.#lastActivity;
  }

  /**
   * The next event or the end of the stream; rejects with what the iterator throws (the stream is then
   * closed). One promise per read and no closure: a watch that delivers one event per chunk reads once
   * per event.
   */
  next(): Promise<StreamStep<T>> {
    if (this.#endReason !== undefined) return Promise.resolve({ done: true, reason: this.#reason() });
    let pending: Promise<IteratorResult<WatchEvent<T>>>;
    try {
      pending = this.#iterator.next();
    } catch (err) {
      return this.#failed(err);
    }
    if (this.#abort.signal.aborted) {
      // The read is abandoned: an iterator that ignores its signal cannot hang the reflector.
      pending.catch(() => undefined);
      return Promise.resolve(this.#end(this.#reason()));
    }
    // An iterator that settles on our abort needs no race; any other is raced against the signal.
    if (this.#settledByAbort) return pending.then(this.#step, this.#failed);
    return new Promise<StreamStep<T>>((resolve, reject) => {
      this.#reading = { resolve, reject };
      pending.then(this.#onRead, this.#onReadFailed);
    });
  }

  /**
   * {@link WatchStream.next}, with `sink` offered each event as it arrives, inside the chunk's callback
   * (see READ_PUSHED): an event it takes (`true`) counts as received and the read waits on; the first it
   * refuses is the read's result. The sink is never called from inside this call, nor once the stream
   * has ended. Without an iterator that pushes, this is `next()` and the sink is never called.
   */
  nextPushed(sink: (event: WatchEvent<T>) => boolean): Promise<StreamStep<T>> {
    const readPushed = this.#readPushed;
    if (readPushed === undefined || this.#endReason !== undefined || this.#abort.signal.aborted) return this.next();
    this.#sink = sink;
    let pending: Promise<IteratorResult<WatchEvent<T>>>;
    try {
      pending = readPushed(this.#take);
    } catch (err) {
      return this.#failed(err);
    }
    return pending.then(this.#step, this.#failed);
  }

  /** The pushed read's sink: the reader's, while the stream is open; what it takes was received now. */
  readonly #take = (event: WatchEvent<T>): boolean => {
    const sink = this.#sink;
    if (sink === undefined || this.#endReason !== undefined || this.#abort.signal.aborted || !sink(event)) return false;
    this.#lastActivity = this.#clock.now();
    this.#received++;
    return true;
  };

  /** What an iterator result means for the stream. */
  readonly #step = (step: IteratorResult<WatchEvent<T>>): StreamStep<T> => {
    if (this.#abort.signal.aborted) return this.#end(this.#reason());
    if (step.done === true) return this.#end('closed');
    this.#lastActivity = this.#clock.now();
    this.#received++;
    return { done: false, event: step.value };
  };

  /** The raced read in flight answered (unless an abort ended it first: then it is dropped). */
  readonly #onRead = (step: IteratorResult<WatchEvent<T>>): void => {
    const reading = this.#reading;
    if (reading === undefined) return;
    this.#reading = undefined;
    reading.resolve(this.#step(step));
  };

  /** The raced read in flight failed; after an abort that is its end, not an error (observed, and dropped). */
  readonly #onReadFailed = (err: unknown): void => {
    const reading = this.#reading;
    if (reading === undefined) return;
    this.#reading = undefined;
    this.#failed(err).then(reading.resolve, reading.reject);
  };

  /** An iterator error: the stream's end after an abort (observed, and dropped); else it ends the stream and is rethrown. */
  readonly #failed = (err: unknown): Promise<StreamStep<T>> => {
    if (this.#abort.signal.aborted) return Promise.resolve(this.#end(this.#reason()));
    this.#end('error');
    return Promise.reject(err);
  };

  /**
   * The next event when the iterator already holds it decoded: no promise, no wait. `undefined` when
   * none is at hand, or the stream ended or was aborted — then {@link WatchStream.next} says what comes.
   */
  nextReady(): WatchEvent<T> | undefined {
    if (this.#readReady === undefined || this.#endReason !== undefined || this.#abort.signal.aborted) return undefined;
    const event = this.#readReady();
    if (event === undefined) return undefined;
    // No clock read: the event came in the chunk whose arrival next() already recorded.
    this.#received++;
    return event;
  }

  /** Ends the stream from our side; idempotent. */
  stop(): void {
    this.#stopped = true;
    this.#end(this.#reason());
  }

  #reason(): StreamEnd {
    if (this.#stalled) return 'stalled';
    if (this.#parent.aborted) return 'aborted';
    if (this.#stopped) return 'stopped';
    return 'closed';
  }

  #end(reason: WatchEndReason): { done: true; reason: StreamEnd } {
    if (this.#endReason === undefined) {
      this.#endReason = reason;
      if (this.#idleTimer !== undefined) this.#clock.clearTimeout(this.#idleTimer);
      this.#idleTimer = undefined;
      // Aborting the stream's signal ends a read in flight (#onAbort), then its listener goes.
      this.#abort.dispose();
      this.#abort.signal.removeEventListener('abort', this.#onAbort);
      try {
        this.#iterator.return?.()?.catch(() => undefined);
      } catch {
        // A broken iterator's return() may throw synchronously; its stream is already aborted.
      }
      this.#onEnd(reason);
    }
    return { done: true, reason: reason === 'error' ? 'stopped' : reason };
  }

  #armIdleTimer(delayMs: number): void {
    this.#idleTimer = this.#clock.setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#endReason !== undefined) return;
      const idle = this.#clock.now() - this.#lastActivity;
      if (idle >= this.#idleLimitMs) {
        this.#stalled = true;
        this.#abort.controller.abort();
      } else {
        this.#armIdleTimer(this.#idleLimitMs - idle);
      }
    }, delayMs);
  }
}

/**
 * Opens a watch with `options` under its own child signal of `parent`. Resolves the stream,
 * {@link ABORTED} when `parent` aborted first (a stream that opens late is closed at once), or
 * {@link TIMED_OUT} when it did not connect within the idle limit (`timeoutSeconds` + margin). Throws
 * what `lw.watch` throws.
 */
export async function openWatch<T>(deps: WatchDeps<T>, options: ListOptions, parent: AbortSignal): Promise<WatchStream<T> | typeof ABORTED | typeof TIMED_OUT> {
  const abort = new ChildAbort(parent);
  const idleLimitMs = (options.timeoutSeconds ?? 0) * 1000 + deps.idleMarginMs;
  let connectTimedOut = false;
  const connectTimer = deps.clock.setTimeout(() => {
    connectTimedOut = true;
    abort.controller.abort();
  }, idleLimitMs);
  let pending: Promise<AsyncIterable<WatchEvent<T>>> | undefined;
  let iterable: AsyncIterable<WatchEvent<T>> | typeof ABORTED;
  try {
    pending = deps.lw.watch({ ...options }, abort.signal);
    iterable = await raceAbort(pending, abort.signal);
  } catch (err) {
    abort.dispose();
    if (connectTimedOut && !parent.aborted) return TIMED_OUT;
    throw err;
  } finally {
    deps.clock.clearTimeout(connectTimer);
  }
  if (iterable === ABORTED) {
    abort.dispose();
    pending.then(closeQuietly, () => undefined);
    return connectTimedOut && !parent.aborted ? TIMED_OUT : ABORTED;
  }
  return new WatchStream(deps, iterable, abort, parent, idleLimitMs);
}

/** Ends an iterable nobody will read (a watch that opened after we gave up on it); never throws. */
function closeQuietly(iterable: AsyncIterable<unknown>): void {
  try {
    iterable[Symbol.asyncIterator]().return?.()?.catch(() => undefined);
  } catch {
    // Nothing more can be done for a broken iterable; its signal is already aborted.
  }
}
