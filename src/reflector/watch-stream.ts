// One open watch: its own abort signal, an idle timer that catches half-open connections, and stop().

import type { Clock, ClockTimer } from '../core/clock.js';
import { READ_READY, type ListerWatcher, type ListOptions, type ReadyIterator, type WatchEvent } from '../listwatch/types.js';
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
  /** Ends the read in flight with ABORTED; set while a read waits (see #read). */
  #abortRead: (() => void) | undefined;
  /** The stream's one listener on its signal, for its whole life (not one per read). */
  readonly #onAbort = (): void => this.#abortRead?.();

  constructor(deps: WatchDeps<T>, iterable: AsyncIterable<WatchEvent<T>>, abort: ChildAbort, parent: AbortSignal, idleLimitMs: number) {
    this.#iterator = iterable[Symbol.asyncIterator]();
    const readReady = (this.#iterator as Partial<ReadyIterator<T>>)[READ_READY];
    this.#readReady = typeof readReady === 'function' ? readReady.bind(this.#iterator) : undefined;
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

  /** The next event or the end of the stream; throws what the iterator throws (the stream is then closed). */
  async next(): Promise<StreamStep<T>> {
    if (this.#endReason !== undefined) return { done: true, reason: this.#reason() };
    let step: IteratorResult<WatchEvent<T>> | typeof ABORTED;
    try {
      step = await this.#read();
    } catch (err) {
      if (this.#abort.signal.aborted) return this.#end(this.#reason());
      this.#end('error');
      throw err;
    }
    if (step === ABORTED || this.#abort.signal.aborted) return this.#end(this.#reason());
    if (step.done) return this.#end('closed');
    this.#lastActivity = this.#clock.now();
    this.#received++;
    return { done: false, event: step.value };
  }

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

  /**
   * The iterator's next result, or ABORTED as soon as the stream's signal aborts (an iterator that
   * ignores its signal cannot hang the reflector) — raceAbort's contract without adding and removing
   * a listener on the signal for every read, which costs more than the read when each event comes in
   * its own chunk (a watch of a few hundred events per second).
   */
  #read(): Promise<IteratorResult<WatchEvent<T>> | typeof ABORTED> {
    const pending = this.#iterator.next();
    if (this.#abort.signal.aborted) {
      pending.catch(() => undefined);
      return Promise.resolve(ABORTED);
    }
    return new Promise((resolve, reject) => {
      this.#abortRead = () => resolve(ABORTED);
      pending.then(
        (value) => {
          this.#abortRead = undefined;
          resolve(value);
        },
        (err: unknown) => {
          // After an abort this rejects a promise already resolved: observed, and dropped.
          this.#abortRead = undefined;
          reject(err);
        },
      );
    });
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
      this.#abortRead = undefined;
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
