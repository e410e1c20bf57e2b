// The injectable clock: every timer in the library goes through one, so tests control time.

/** An opaque handle for a timer set on a {@link Clock}. */
export interface ClockTimer {
  /** Lets the host process exit while only this timer is pending (real clock only). */
  unref?(): void;
}

/**
 * Time and timers. The library never calls `setTimeout` or `Date.now` directly: every component takes
 * a `clock` option (default {@link realClock}) so tests can use a {@link FakeClock} and never sleep.
 */
export interface Clock {
  /** Milliseconds since an arbitrary, fixed origin; never goes backwards. */
  now(): number;
  /** Calls `callback` once after `delayMs` (negative delays count as 0). */
  setTimeout(callback: () => void, delayMs: number): ClockTimer;
  /** Cancels a timer; harmless when it already fired or was cleared. */
  clearTimeout(timer: ClockTimer): void;
  /**
   * The wall-clock time now, in ms since the Unix epoch: what a log line or message prints as a date.
   * Optional; without it, `performance.timeOrigin + now()`.
   */
  wallNow?(): number;
}

/**
 * The wall-clock time (ms since the Unix epoch) of the reading `at` of `clock` (default: now), for
 * dates in messages: `now()` has an arbitrary origin and is never printed as a date.
 */
export function wallTime(clock: Clock, at?: number): number {
  const now = clock.now();
  const wallNow = clock.wallNow?.() ?? performance.timeOrigin + now;
  return wallNow + ((at ?? now) - now);
}

/** The host's clock: `performance.now()`, the host's timers, and `Date.now()` as the wall clock. */
export const realClock: Clock = {
  now: () => performance.now(),
  // eslint-disable-next-line no-restricted-properties -- the one place the host's wall clock is read: this is the Clock.
  wallNow: () => Date.now(),
  // eslint-disable-next-line no-restricted-globals -- the one place the host's timer is used: this is the Clock.
  setTimeout: (callback, delayMs) => setTimeout(callback, Math.max(0, delayMs)),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

/**
 * Waits `delayMs` on `clock`. Resolves `true` when the time elapsed and `false` as soon as `signal`
 * aborts (also when it is already aborted). Never rejects, and leaves no timer or listener behind.
 */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      resolve(false);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface FakeTimer extends ClockTimer {
  readonly id: number;
  readonly dueAt: number;
  readonly callback: () => void;
}

/** Lets every already-settled promise chain run: a macrotask turn drains the microtask queue. */
export function flushPromises(turns = 2): Promise<void> {
  let p = Promise.resolve();
  for (let i = 0; i < turns; i++) p = p.then(() => new Promise<void>((r) => setImmediate(r)));
  return p;
}

/**
 * A clock for tests: time moves only when the test calls {@link FakeClock.advance}. Timers fire in due
 * order (ties in the order they were set), and pending promise chains are flushed after each one, so
 * code that awaits between timers runs as it would in real time.
 */
export class FakeClock implements Clock {
  #now: number;
  readonly #wallAtZero: number;
  #nextId = 1;
  #timers = new Map<number, FakeTimer>();
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  /**
   * `startMs`: the first reading of `now()` (default 0). `wallStartMs`: the wall-clock time then, in ms
   * since the Unix epoch, which moves with the fake time (default `startMs`: dates print as 1970).
   */
  constructor(startMs = 0, wallStartMs = startMs) {
    this.#now = startMs;
    this.#wallAtZero = wallStartMs - startMs;
  }

  now(): number {
    return this.#now;
  }

  /** The fake wall-clock time: `wallStartMs` plus the fake time elapsed since. */
  wallNow(): number {
    return this.#wallAtZero + this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): ClockTimer {
    const timer: FakeTimer = { id: this.#nextId++, dueAt: this.#now + Math.max(0, delayMs), callback };
    this.#timers.set(timer.id, timer);
    this.#wakeWaiters();
    return timer;
  }

  clearTimeout(timer: ClockTimer): void {
    const id = (timer as Partial<FakeTimer> | undefined)?.id;
    if (id !== undefined) this.#timers.delete(id);
  }

  /** How many timers are set and have not fired or been cleared. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  /** Milliseconds until the next timer is due, or `undefined` when none is pending. */
  nextTimerDelay(): number | undefined {
    const next = this.#next();
    return next === undefined ? undefined : next.dueAt - this.#now;
  }

  /** The delays (from now) of every pending timer, soonest first. */
  pendingDelays(): number[] {
    return [...this.#timers.values()].map((t) => t.dueAt - this.#now).sort((a, b) => a - b);
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way (including timers set by
   * those callbacks), flushing promise chains after each. Resolves once time is `now + ms`.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + Math.max(0, ms);
    await flushPromises();
    for (;;) {
      const next = this.#next();
      if (next === undefined || next.dueAt > target) break;
      this.#timers.delete(next.id);
      this.#now = Math.max(this.#now, next.dueAt);
      next.callback();
      await flushPromises();
    }
    this.#now = target;
    await flushPromises();
  }

  /** Fires the next pending timer (advancing time to it). Resolves `false` when none was pending. */
  async runNext(): Promise<boolean> {
    const delay = this.nextTimerDelay();
    if (delay === undefined) return false;
    await this.advance(delay);
    return true;
  }

  /** Resolves once at least `count` timers are pending (at once, when they already are). */
  waitForTimers(count = 1): Promise<void> {
    if (this.#timers.size >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  #next(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers.values()) {
      if (best === undefined || t.dueAt < best.dueAt || (t.dueAt === best.dueAt && t.id < best.id)) best = t;
    }
    return best;
  }

  #wakeWaiters(): void {
    if (this.#waiters.length === 0) return;
    const size = this.#timers.size;
    this.#waiters = this.#waiters.filter((w) => {
      if (size >= w.count) {
        w.resolve();
        return false;
      }
      return true;
    });
  }
}
