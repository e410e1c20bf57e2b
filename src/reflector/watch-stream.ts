// One open watch: its own abort signal, an idle timer that catches half-open connections, and close().

import type { Clock, ClockTimer } from '../core/clock.js';
import type { ListOptions, WatchEvent } from '../listwatch/types.js';
import type { ReflectorContext } from './context.js';
import type { ReflectorRecorder } from './stats.js';
import { ABORTED, ChildAbort, raceAbort } from '../core/abort.js';
import { tagPhase } from './context.js';
import { WatchStalledError } from './errors.js';

/** Why a watch stream ended without an error. */
export type StreamEndReason = 'closed' | 'stalled' | 'aborted' | 'stopped';

/** One step of a {@link WatchStream}: an event, or the end of the stream. */
export type StreamStep<T> = { done: false; event: WatchEvent<T> } | { done: true; reason: StreamEndReason };

/**
 * An open watch. `next()` yields events until the server closes the stream (`closed`), the parent signal
 * aborts (`aborted`), {@link WatchStream.stop} is called (`stopped`), or no event arrives for longer than
 * the idle limit (`stalled`: the connection is presumed half-open). Errors of the iterator are thrown.
 * However it ends, the watch's own signal is aborted, its iterator returned, its timer cleared.
 */
export class WatchStream<T> {
  /** Clock time the stream opened. */
  readonly startedAt: number;
  /** The resource version the watch was opened from. */
  readonly startResourceVersion: string;
  /** The server-side timeout the watch asked for, in ms (its idle limit less the margin); 0 = none. */
  readonly requestedTimeoutMs: number;
  readonly #iterator: AsyncIterator<WatchEvent<T>>;
  readonly #abort: ChildAbort;
  readonly #parent: AbortSignal;
  readonly #clock: Clock;
  readonly #recorder: ReflectorRecorder;
  readonly #idleLimitMs: number;
  #idleTimer: ClockTimer | undefined;
  #lastActivity: number;
  #stalled = false;
  #stopped = false;
  #endReason: StreamEndReason | 'error' | undefined;
  #received = 0;

  constructor(
    ctx: ReflectorContext<T>,
    iterable: AsyncIterable<WatchEvent<T>>,
    abort: ChildAbort,
    parent: AbortSignal,
    startResourceVersion: string,
    idleLimitMs: number,
  ) {
    this.#iterator = iterable[Symbol.asyncIterator]();
    this.#abort = abort;
    this.#parent = parent;
    this.#clock = ctx.clock;
    this.#recorder = ctx.recorder;
    this.#idleLimitMs = idleLimitMs;
    this.requestedTimeoutMs = Math.max(0, idleLimitMs - ctx.watchIdleMarginMs);
    this.startedAt = ctx.clock.now();
    this.#lastActivity = this.startedAt;
    this.startResourceVersion = startResourceVersion;
    this.#armIdleTimer(idleLimitMs);
  }

  /** Events received so far (of any type). */
  get received(): number {
    return this.#received;
  }

  /** How long the stream had been silent when it was declared stalled, in ms. */
  get idleMs(): number {
    return this.#clock.now() - this.#lastActivity;
  }

  /** The next event or the end of the stream; throws what the iterator throws (the stream is closed). */
  async next(): Promise<StreamStep<T>> {
    if (this.#endReason !== undefined) return { done: true, reason: this.#abortReason() };
    let step: IteratorResult<WatchEvent<T>> | typeof ABORTED;
    try {
      step = await raceAbort(this.#iterator.next(), this.#abort.signal);
    } catch (err) {
      if (this.#abort.signal.aborted) return this.#end(this.#abortReason());
      this.#end('error');
      throw err;
    }
    if (step === ABORTED || this.#abort.signal.aborted) return this.#end(this.#abortReason());
    if (step.done) return this.#end('closed');
    this.#lastActivity = this.#clock.now();
    this.#received++;
    this.#recorder.eventSeen();
    return { done: false, event: step.value };
  }

  /** Ends the stream from our side (resync failure, regression, shutdown); idempotent. */
  stop(): void {
    this.#stopped = true;
    this.#end(this.#abortReason());
  }

  #abortReason(): StreamEndReason {
    if (this.#stalled) return 'stalled';
    if (this.#parent.aborted) return 'aborted';
    if (this.#stopped) return 'stopped';
    return 'closed';
  }

  #end(reason: StreamEndReason | 'error'): { done: true; reason: StreamEndReason } {
    if (this.#endReason === undefined) {
      this.#endReason = reason;
      if (this.#idleTimer !== undefined) this.#clock.clearTimeout(this.#idleTimer);
      this.#idleTimer = undefined;
      this.#abort.dispose();
      try {
        this.#iterator.return?.()?.catch(() => undefined);
      } catch {
        // A broken iterator's return() may throw synchronously; its stream is already aborted.
      }
      this.#recorder.watchEnded(reason);
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
 * Opens a watch with `options` under its own child signal of `parent`. Resolves the stream, or
 * {@link ABORTED} when `parent` aborted first (a stream that opens late is returned at once). Throws
 * what `lw.watch` throws, or a {@link WatchStalledError} when it did not connect within the idle limit.
 */
export async function openWatch<T>(
  ctx: ReflectorContext<T>,
  options: ListOptions,
  parent: AbortSignal,
): Promise<WatchStream<T> | typeof ABORTED> {
  const abort = new ChildAbort(parent);
  const idleLimitMs = (options.timeoutSeconds ?? 0) * 1000 + ctx.watchIdleMarginMs;
  let connectTimedOut = false;
  const connectTimer = ctx.clock.setTimeout(() => {
    connectTimedOut = true;
    abort.controller.abort();
  }, idleLimitMs);
  let pending: Promise<AsyncIterable<WatchEvent<T>>> | undefined;
  let iterable: AsyncIterable<WatchEvent<T>> | typeof ABORTED;
  try {
    pending = ctx.lw.watch({ ...options }, abort.signal);
    iterable = await raceAbort(pending, abort.signal);
  } catch (err) {
    abort.dispose();
    if (connectTimedOut && !parent.aborted) throw tagPhase(new WatchStalledError(ctx.name, idleLimitMs), 'watch');
    throw err;
  } finally {
    ctx.clock.clearTimeout(connectTimer);
  }
  if (iterable === ABORTED) {
    abort.dispose();
    pending.then(closeQuietly, () => undefined);
    if (connectTimedOut && !parent.aborted) throw tagPhase(new WatchStalledError(ctx.name, idleLimitMs), 'watch');
    return ABORTED;
  }
  ctx.recorder.watchStarted(options.resourceVersion ?? '');
  return new WatchStream(ctx, iterable, abort, parent, options.resourceVersion ?? '', idleLimitMs);
}

/** Ends an iterable nobody will read (a watch that opened after we gave up on it); never throws. */
function closeQuietly(iterable: AsyncIterable<unknown>): void {
  try {
    iterable[Symbol.asyncIterator]().return?.()?.catch(() => undefined);
  } catch {
    // Nothing more can be done for a broken iterable; its signal is already aborted.
  }
}
