// The watch loop: watch from the held version, apply events, and decide how to resume when a watch ends.

import type { ClockTimer } from '../core/clock.js';
import { sleep } from '../core/clock.js';
import { ErrorCodes } from '../core/errors.js';
import type { ListOptions } from '../listwatch/types.js';
import type { ReflectorContext } from './context.js';
import { delayAfter, phaseOf, tagPhase, watchTimeoutSeconds } from './context.js';
import { UnresumableWatchError, VeryShortWatchError, WatchStalledError, isConnectionRefused, isExpired, isNetworkError, isTooManyRequests } from './errors.js';
import { ABORTED } from '../core/abort.js';
import { applyWatchEvent } from './watch-events.js';
import type { WatchSession } from './watch-events.js';
import { openWatch } from './watch-stream.js';
import type { StreamEndReason, WatchStream } from './watch-stream.js';

/** A watch that closes sooner than this with no event is a {@link VeryShortWatchError}. */
export const VERY_SHORT_WATCH_MS = 1000;

/** Lets the resync timer end the loop: it records its failure and stops the current watch. */
export interface WatchLoopControl<T> {
  /** Set when something outside the stream (the resync timer) failed; the loop throws it. */
  failure: unknown;
  /** The watch being read, so it can be stopped. */
  current: WatchStream<T> | undefined;
}

/** The options of a classic watch from the held version. */
export function planWatch<T>(ctx: ReflectorContext<T>): ListOptions {
  return { resourceVersion: ctx.guard.held(), timeoutSeconds: watchTimeoutSeconds(ctx), allowWatchBookmarks: true };
}

/** True for an error after which the watch can be re-opened from the held version without a relist. */
function resumable(err: unknown): boolean {
  const phase = phaseOf(err, 'watch');
  if (phase === 'store' || phase === 'guard' || isExpired(err)) return false;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === ErrorCodes.WATCH_DECODE || (phase === 'event' && code === ErrorCodes.INVALID_OBJECT)) return true;
  return isTooManyRequests(err) || isNetworkError(err);
}

async function consume<T>(ctx: ReflectorContext<T>, stream: WatchStream<T>, session: WatchSession): Promise<StreamEndReason> {
  for (;;) {
    const step = await stream.next();
    if (step.done) return step.reason;
    applyWatchEvent(ctx, session, step.event);
  }
}

/**
 * Watches forever from the held version, starting with `initial` when a streamed list left one open.
 * Resolves when `signal` aborts; throws the error that needs a relist. How each ending is handled:
 *
 * - closed by the server → re-watch at once from the held version (no relist); closed in under a second
 *   with no event → {@link VeryShortWatchError} (relist after backoff, as client-go);
 * - silent past `timeoutSeconds` + `watchIdleMarginMs` → reported `WATCH_STALLED`, re-watch at once;
 * - the watch request refused (ECONNREFUSED), 429, or not connected within the idle limit → reported,
 *   re-watch after backoff (≥ Retry-After);
 * - 429, a network error, a malformed line (`WATCH_DECODE`), an unknown event type or an object with no
 *   name inside the stream → reported, re-watch from the last good version after backoff;
 * - 410 (thrown or an ERROR event), a rejected regression, a store failure, any other error → thrown.
 */
export async function watchLoop<T>(
  ctx: ReflectorContext<T>,
  signal: AbortSignal,
  initial: WatchStream<T> | undefined,
  control: WatchLoopControl<T>,
): Promise<void> {
  let stream = initial;
  let session: WatchSession = { propagateFromStart: true, sawNonAdded: false };
  try {
    await loop();
  } finally {
    stream?.stop();
  }

  async function loop(): Promise<void> {
  for (;;) {
    if (signal.aborted) return;
    if (control.failure !== undefined) throw control.failure;
    if (stream === undefined) {
      const options = planWatch(ctx);
      const from = options.resourceVersion ?? '';
      if ((from === '' || from === '0') && ctx.guard.observed() !== undefined) {
        throw tagPhase(new UnresumableWatchError(ctx.name), 'watch');
      }
      let opened: WatchStream<T> | typeof ABORTED;
      try {
        opened = await openWatch(ctx, options, signal);
      } catch (err) {
        if (signal.aborted) return;
        const stalled = (err as { code?: unknown } | null)?.code === ErrorCodes.WATCH_STALLED;
        if (!stalled && !isConnectionRefused(err) && !isTooManyRequests(err)) throw tagPhase(err, 'watch');
        ctx.recorder.error(err, 'watch', 'rewatch');
        if (!(await sleep(ctx.clock, delayAfter(ctx, err), signal))) return;
        continue;
      }
      if (opened === ABORTED) return;
      stream = opened;
      const rv = options.resourceVersion ?? '';
      session = { propagateFromStart: rv !== '' && rv !== '0', sawNonAdded: false };
    }
    const current = stream;
    stream = undefined;
    control.current = current;
    let outcome: StreamEndReason;
    try {
      outcome = await consume(ctx, current, session);
    } catch (err) {
      current.stop();
      if (signal.aborted) return;
      if (control.failure !== undefined) throw control.failure;
      if (!resumable(err)) throw tagPhase(err, 'watch');
      ctx.recorder.error(err, phaseOf(err, 'watch'), 'rewatch');
      if (!(await sleep(ctx.clock, delayAfter(ctx, err), signal))) return;
      continue;
    } finally {
      control.current = undefined;
    }
    if (outcome === 'aborted' || signal.aborted) return;
    if (control.failure !== undefined) throw control.failure;
    if (outcome === 'stalled') {
      ctx.recorder.error(new WatchStalledError(ctx.name, current.idleMs), 'watch', 'rewatch');
      continue;
    }
    const lasted = ctx.clock.now() - current.startedAt;
    // A quiet watch the server ends at its own requested timeout is normal, however short that was.
    const requestedMs = current.requestedTimeoutMs;
    const endedEarly = requestedMs === 0 || lasted < requestedMs / 2;
    if (outcome === 'closed' && current.received === 0 && lasted < VERY_SHORT_WATCH_MS && endedEarly) {
      throw tagPhase(new VeryShortWatchError(ctx.name, lasted), 'watch');
    }
  }
  }
}

/**
 * Calls `store.resync()` every `periodMs` on the clock while a watch loop runs, when `shouldResync()`
 * allows. A failing resync (or `shouldResync`) is handed to `onFailure` and the timer stops; the
 * reflector then ends the cycle and relists, as client-go does.
 */
export class ResyncTimer<T> {
  readonly #ctx: ReflectorContext<T>;
  readonly #periodMs: number;
  readonly #shouldResync: (() => boolean) | undefined;
  readonly #onFailure: (err: unknown) => void;
  #timer: ClockTimer | undefined;
  #stopped = false;

  constructor(ctx: ReflectorContext<T>, periodMs: number, shouldResync: (() => boolean) | undefined, onFailure: (err: unknown) => void) {
    this.#ctx = ctx;
    this.#periodMs = periodMs;
    this.#shouldResync = shouldResync;
    this.#onFailure = onFailure;
  }

  /** Arms the timer (no-op when the period is 0). */
  start(): void {
    if (this.#periodMs > 0 && !this.#stopped) {
      this.#timer = this.#ctx.clock.setTimeout(() => this.#fire(), this.#periodMs);
    }
  }

  /** Clears the timer for good. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#ctx.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    try {
      if (this.#shouldResync?.() ?? true) this.#ctx.store.resync();
    } catch (err) {
      this.#stopped = true;
      this.#onFailure(tagPhase(err, 'resync'));
      return;
    }
    this.start();
  }
}
