// The task scope: tasks that share one AbortSignal, where the first failure stops them all and closing waits a grace period.

import { realClock, type Clock, type ClockTimer } from './clock.js';
import { AbortedError, toError } from './errors.js';
import { InvalidOptionError } from './options.js';

/**
 * Where a {@link TaskScope} is in its life: `open` (its signal has not aborted), `stopping` (it aborted —
 * by a linked signal, a failure or `close()` — and tasks are winding down), `closed` (every task ended,
 * or the grace period ran out; no task can be spawned any more).
 */
export type TaskScopeState = 'open' | 'stopping' | 'closed';

/** Options of a {@link TaskScope}. */
export interface TaskScopeOptions {
  /** The scope's name in errors. Default `'task scope'`. */
  name?: string;
  /** The scope also aborts when this signal does (more can be added with `link`). Default: none. */
  signal?: AbortSignal;
  /** The clock the grace period is timed on. Default `realClock`. */
  clock?: Clock;
  /**
   * How long the scope waits for its tasks once its signal has aborted, in ms; tasks still running then
   * are abandoned and the scope closes. `Infinity` waits for every task. Default `Infinity`.
   */
  graceMs?: number;
  /** Called once with the first failure, just after the scope's signal aborted with it. Default: none. */
  onFailure?: (error: Error, task: string) => void;
  /**
   * Called with every failure {@link TaskScope.closed} cannot reject with: one after the first, or one
   * that comes after the scope closed (from a task abandoned by the grace period). Default: none (they
   * are dropped, like a second error in Go's errgroup). A throw here is rethrown as an uncaught exception.
   */
  onLateFailure?: (error: Error, task: string) => void;
}

/** What {@link TaskScope.closed} resolves with once the scope closed without a failure. */
export interface TaskScopeResult {
  /** The names of the tasks still running when the grace period ran out (they were not waited for). */
  readonly abandoned: readonly string[];
}

/**
 * True when `err` is just `signal`'s abort coming back: `signal` aborted and `err` is its reason, or an
 * error (code `ABORTED`, or named `AbortError`) whose `cause` is that reason — what `fetch`, Node's
 * timers and this library's waits reject with when their signal aborts.
 */
export function isAbortOf(err: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  if (err === signal.reason) return true;
  if (err === null || typeof err !== 'object') return false;
  const e = err as { cause?: unknown; code?: unknown; name?: unknown };
  return e.cause === signal.reason && (e.code === 'ABORTED' || e.name === 'AbortError');
}

interface Waiter {
  resolve: (result: TaskScopeResult) => void;
  reject: (err: Error) => void;
}

/**
 * A group of tasks with one lifetime (structured concurrency, like Go's `errgroup.WithContext`). Every
 * task gets the scope's {@link TaskScope.signal}; the first task that fails (throws, rejects, or
 * {@link TaskScope.fail}) aborts that signal, so the others stop too, and is what
 * {@link TaskScope.closed} rejects with. The scope lives until its signal aborts; then it waits for its
 * tasks — at most `graceMs` — and closes, leaving no timer and no listener behind. A scope that aborts
 * with no task running closes at the end of the current turn (a microtask), so tasks spawned right
 * after creating a scope on an already-aborted signal still start (with that signal) and are waited for.
 *
 * A task that rejects with its signal's own abort reason (as `fetch` does) has stopped, not failed.
 *
 * Warning: a task that ignores its signal keeps an `Infinity`-grace scope open forever; with a finite
 * grace it is abandoned — still running, its later failure going to `onLateFailure`.
 *
 * @example
 * ```ts
 * const scope = new TaskScope({ signal, clock, graceMs: 500 });
 * scope.spawn('reflector', (s) => reflector.run(s));
 * scope.spawn('loop', (s) => processLoop(s));
 * await scope.closed(); // after `signal` aborts, or rejects with the first failure
 * ```
 */
export class TaskScope {
  readonly #name: string;
  readonly #controller = new AbortController();
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #onFailure: TaskScopeOptions['onFailure'];
  readonly #onLateFailure: TaskScopeOptions['onLateFailure'];
  readonly #running = new Map<number, string>();
  readonly #links: Array<{ signal: AbortSignal; onAbort: () => void }> = [];
  #nextId = 0;
  #state: TaskScopeState = 'open';
  #failure: Error | undefined;
  #abandoned: readonly string[] = [];
  #deadline = Infinity;
  #timer: ClockTimer | undefined;
  #waiters: Waiter[] = [];

  /** Throws `INVALID_OPTION` for a `graceMs` that is not a number ≥ 0. */
  constructor(options: TaskScopeOptions = {}) {
    this.#name = options.name ?? 'task scope';
    this.#graceMs = checkGrace(this.#name, options.graceMs ?? Infinity);
    this.#clock = options.clock ?? realClock;
    this.#onFailure = options.onFailure;
    this.#onLateFailure = options.onLateFailure;
    this.#controller.signal.addEventListener('abort', () => this.#onAbort(), { once: true });
    if (options.signal !== undefined) this.link(options.signal);
  }

  /** The scope's name. */
  get name(): string {
    return this.#name;
  }

  /** The signal every task gets: aborts on a linked signal, the first failure, `abort()` or `close()`. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Where the scope is in its life (see {@link TaskScopeState}). */
  get state(): TaskScopeState {
    return this.#state;
  }

  /** The first failure, once there is one. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /** The tasks the grace period gave up on (empty unless the scope closed with tasks still running). */
  get abandoned(): readonly string[] {
    return this.#abandoned;
  }

  /** The names of the tasks running now (after a close by the grace period: the abandoned ones still going). */
  running(): string[] {
    return [...this.#running.values()];
  }

  /**
   * Makes the scope abort when `signal` does (at once when it has). The listener is removed when the
   * scope closes. Harmless on a closed scope.
   */
  link(signal: AbortSignal): void {
    if (this.#state === 'closed') return;
    if (signal.aborted) {
      this.abort(signal.reason);
      return;
    }
    const onAbort = (): void => this.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.#links.push({ signal, onAbort });
  }

  /**
   * Runs `task(signal)` in the scope and returns a promise of its end that never rejects (a failure
   * goes to the scope). A task spawned while the scope is stopping starts with an aborted signal and is
   * waited for like the others (within the grace period already running). Throws `ABORTED` on a closed
   * scope: the task is not started.
   */
  spawn(name: string, task: (signal: AbortSignal) => unknown): Promise<void> {
    if (this.#state === 'closed') throw new AbortedError(`${this.#name} has closed: task ${name} was not started`);
    const id = this.#nextId++;
    this.#running.set(id, name);
    const failed = (err: unknown): void => {
      this.fail(err, name);
      this.#ended(id);
    };
    let result: unknown;
    try {
      result = task(this.signal);
    } catch (err) {
      // A synchronous throw counts like a rejection, a turn later (kept as thrown for isAbortOf).
      return Promise.resolve().then(() => failed(err));
    }
    return Promise.resolve(result).then(() => this.#ended(id), failed);
  }

  /**
   * A scope inside this one: its signal aborts with this scope's, its first failure fails this scope at
   * once, and this scope waits for it to close (as a task named `name`). It takes this scope's clock and
   * `onLateFailure` unless `options` says otherwise. Throws `ABORTED` on a closed scope.
   */
  child(name: string, options: Omit<TaskScopeOptions, 'name' | 'signal'> = {}): TaskScope {
    const onFailure = options.onFailure;
    const child = new TaskScope({
      clock: this.#clock,
      onLateFailure: this.#onLateFailure,
      ...options,
      name,
      onFailure: (err, task) => {
        onFailure?.(err, task);
        this.fail(err, name);
      },
    });
    void this.spawn(name, () => child.closed().catch(() => undefined));
    child.link(this.signal);
    return child;
  }

  /**
   * Records a failure as if a task named `task` failed: the first one aborts the scope (and is what
   * `closed()` rejects with); later ones, and any after the scope closed, go to `onLateFailure`. The
   * signal's own abort reason coming back is ignored.
   */
  fail(error: unknown, task = this.#name): void {
    if (isAbortOf(error, this.signal)) return;
    const err = toError(error);
    if (err === this.#failure) return;
    if (this.#failure !== undefined || this.#state === 'closed') {
      this.#report(this.#onLateFailure, err, task);
      return;
    }
    this.#failure = err;
    this.#controller.abort(err);
    this.#report(this.#onFailure, err, task);
  }

  /** Aborts the scope's signal without a failure (harmless once aborted). */
  abort(reason?: unknown): void {
    this.#controller.abort(reason ?? new AbortedError(`${this.#name} was aborted`));
  }

  /**
   * Aborts the scope and waits for it to close, at most `graceMs` (which can shorten, never lengthen,
   * a grace period already running). Settles like {@link TaskScope.closed}.
   */
  close(graceMs = this.#graceMs): Promise<TaskScopeResult> {
    checkGrace(this.#name, graceMs);
    if (this.#state !== 'closed') {
      this.abort(new AbortedError(`${this.#name} was closed`));
      if (this.#state === 'stopping' && this.#running.size > 0) this.#armGrace(graceMs);
    }
    return this.closed();
  }

  /**
   * Waits until the scope has closed: its signal aborted and every task ended, or the grace period ran
   * out. Resolves with the abandoned tasks; rejects with the first failure. Does not end the scope.
   */
  closed(): Promise<TaskScopeResult> {
    if (this.#state === 'closed') {
      return this.#failure === undefined ? Promise.resolve({ abandoned: this.#abandoned }) : Promise.reject(this.#failure);
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  #onAbort(): void {
    if (this.#state !== 'open') return;
    this.#state = 'stopping';
    if (this.#running.size > 0) this.#armGrace(this.#graceMs);
    // With nothing running, close at the end of this turn: code that creates a scope on an aborted
    // signal and spawns its tasks right away still has them started (aborted) and waited for.
    else queueMicrotask(() => this.#closeIfIdle());
  }

  #closeIfIdle(): void {
    if (this.#running.size === 0 && this.#state === 'stopping') this.#close();
  }

  #armGrace(graceMs: number): void {
    if (graceMs === Infinity) return;
    const deadline = this.#clock.now() + graceMs;
    if (deadline >= this.#deadline) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#deadline = deadline;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#close();
    }, graceMs);
  }

  #ended(id: number): void {
    this.#running.delete(id);
    this.#closeIfIdle();
  }

  #close(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const { signal, onAbort } of this.#links.splice(0)) signal.removeEventListener('abort', onAbort);
    this.#abandoned = Object.freeze([...this.#running.values()]);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      if (this.#failure === undefined) w.resolve({ abandoned: this.#abandoned });
      else w.reject(this.#failure);
    }
  }

  #report(hook: TaskScopeOptions['onFailure'], err: Error, task: string): void {
    if (hook === undefined) return;
    try {
      hook(err, task);
    } catch (hookError) {
      queueMicrotask(() => {
        throw hookError;
      });
    }
  }
}

function checkGrace(name: string, graceMs: unknown): number {
  if (typeof graceMs !== 'number' || !(graceMs >= 0)) {
    throw new InvalidOptionError(`${name}: graceMs must be a number ≥ 0 (Infinity waits for every task), got ${String(graceMs)}`);
  }
  return graceMs;
}
