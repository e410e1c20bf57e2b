// The reconcile scheduler: merges requests per key, runs one reconcile per key at a time under a concurrency cap.

import { realClock, type Clock } from '../core/clock.js';
import { AlreadyStartedError, toError } from '../core/errors.js';
import { InvalidOptionError, validateOptions } from '../core/options.js';
import { isAbortOf, TaskScope } from '../core/task-scope.js';
import { FailureCounts, ItemBackoff } from '../runtime/backoff.js';
import { DelayQueue } from '../runtime/delay-queue.js';
import { QueueMetrics, type WorkQueueMetricsProvider } from '../observability/index.js';
import { misuse, misuseIn } from './outcomes.js';
import { RetryRateLimiter, type RateLimitMetrics, type RateLimitOptions } from './rate-limit.js';
import { checkConcurrencyGroups, Priority, type ConcurrencyGroups } from './priority.js';
import { Groups } from './groups.js';

/**
 * What a reconcile asks for next: `done` (nothing until the key is scheduled again), `requeueAfter`
 * (reconcile again `ms` from now, merged with any other request for the key), or `await` (wait for the
 * next change; for the scheduler the same as `done`, named apart so a controller can tell them apart).
 */
export type Action =
  | {
      /** Nothing more until the key is requested again. */
      readonly kind: 'done';
    }
  | {
      /** Reconcile again after a delay. */
      readonly kind: 'requeueAfter';
      /** The delay, in ms (≥ 0). */
      readonly ms: number;
      /** The priority of the requeue (a finite number). Default {@link Priority}`.high`: work the reconcile itself asked for. */
      readonly priority?: number;
    }
  | {
      /** Wait for the next change. */
      readonly kind: 'await';
    };

const DONE: Action = Object.freeze({ kind: 'done' });
const AWAIT: Action = Object.freeze({ kind: 'await' });

/** Builds the {@link Action}s: `return Action.requeueAfter(30_000)`. */
export const Action = Object.freeze({
  /** Nothing more until the key is requested again. */
  done: (): Action => DONE,
  /** Reconcile again `ms` from now (merged with other requests: the earliest wins), at `priority` (default {@link Priority}`.high`). */
  requeueAfter: (ms: number, priority?: number): Action => (priority === undefined ? { kind: 'requeueAfter', ms } : { kind: 'requeueAfter', ms, priority }),
  /** Wait for the next change of something the controller watches. */
  awaitChange: (): Action => AWAIT,
});

/**
 * Decides what follows a failed reconcile of `key`; `attempt` counts the key's failures in a row, from 1.
 * It must return an {@link Action} and not throw: in a `Controller` a throw or a bad action is logged and
 * the default backoff used; in a bare `ReconcileScheduler` it stops the scheduler (`run` rejects with it).
 */
export type ReconcileErrorPolicy = (key: string, error: Error, attempt: number) => Action;

/** Options of {@link exponentialBackoff}. */
export interface ExponentialBackoffOptions {
  /** The delay after the first failure, in ms. Default `5` (client-go's default controller rate limiter). */
  baseMs?: number;
  /** The cap, in ms. Default `1_000_000` (1000 s, as client-go). */
  maxMs?: number;
}

/**
 * The default {@link ReconcileErrorPolicy}: requeue after `baseMs × 2^(attempt − 1)`, capped at `maxMs` —
 * 5 ms, 10 ms, 20 ms … up to 1000 s by default, client-go's per-item exponential failure limiter.
 * Stateless: the scheduler counts the attempts and resets them when the key succeeds.
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): ReconcileErrorPolicy {
  validateOptions('exponentialBackoff', options, { baseMs: 'duration', maxMs: 'duration' });
  const backoff = new ItemBackoff<string>({ baseMs: options.baseMs, maxMs: options.maxMs }, 'exponentialBackoff');
  return (_key, _error, attempt) => ({ kind: 'requeueAfter', ms: backoff.delayOf(attempt) });
}

/** Options of a {@link ReconcileScheduler}. */
export interface ReconcileSchedulerOptions {
  /**
   * How many reconciles may run at once (over different keys; one key never runs twice at once).
   * Default `1`, as controller-runtime's `MaxConcurrentReconciles`: a reconciler written without
   * thought for parallel runs over shared state stays correct, and raising it is a conscious choice.
   */
  concurrency?: number;
  /**
   * Holds a request made with {@link ReconcileScheduler.schedule} until no newer request for the key
   * came for this many ms (kube-rs's `debounce`): a request due at `t` replaces a pending one due at or
   * after `t` and is due at `t + debounceMs`; a pending one due before `t` stays. Requeues that a
   * reconcile or the error policy asks for are not debounced. Default `0` (no debounce).
   *
   * Warning: a key requested more often than every `debounceMs` is held for as long as that lasts.
   */
  debounceMs?: number;
  /**
   * What follows a reconcile that threw or rejected. Default {@link exponentialBackoff}`()` (5 ms doubling
   * to 1000 s). A policy that throws or returns something that is not an {@link Action} stops the
   * scheduler: `run` rejects with the error.
   */
  onError?: ReconcileErrorPolicy;
  /** The clock the due times and timers use. Default `realClock`. */
  clock?: Clock;
  /** The name its queue metrics and work-queue diagnostics events carry. Default `''`. */
  name?: string;
  /**
   * Caps the reconciles of each group of keys (`keyOf`) at `concurrency` (default `1`) at once, within
   * `concurrency`. A key whose group is full waits, keeping its due time and priority, and a free slot
   * of its group starts it — the keys of other groups start meanwhile. A `keyOf` that throws or returns
   * a non-string stops the scheduler (`run` rejects with it; a `Controller` logs it instead and runs
   * the key in no group). Default: none (only `concurrency`).
   */
  concurrencyGroups?: ConcurrencyGroups;
  /**
   * Work-queue metrics of the scheduler, as a work queue of keys: depth (keys due and waiting), adds,
   * queue latency (from a due-now request, or from the due time of a delayed one, to the start), work
   * duration, unfinished work, longest running reconcile, and retries (each delayed request: a
   * `requeueAfter`, a backoff, a debounce). Default: none (nothing kept per key).
   */
  metricsProvider?: WorkQueueMetricsProvider;
  /**
   * The overall limit on retries after failures (see `ControllerOptions.rateLimit`): each waits the
   * longest of the `onError` delay, a token of the bucket and the failure's `Retry-After`. Default
   * `{ qps: 10, burst: 100 }`; `false`: no bucket.
   */
  rateLimit?: RateLimitOptions | false;
  /** Where the rate limit's state goes. Default: none. */
  rateLimitMetrics?: RateLimitMetrics;
}

/** When a request is due: at clock time `runAt`, or `delayMs` from now. Neither means now. And its priority. */
export interface ScheduleRequest {
  /** Clock time (ms, on the scheduler's clock) at which the reconcile is due. */
  runAt?: number;
  /** Delay from now, in ms (≥ 0). */
  delayMs?: number;
  /**
   * The request's priority, a finite number: among due keys the higher goes first, with a fairness
   * rule (docs/controllers.md, "Priority"). A key's priority is the highest of its merged requests,
   * and its retries keep it. Default {@link Priority}`.high` (`0`).
   */
  priority?: number;
}

/** A snapshot of a {@link ReconcileScheduler}. */
export interface ReconcileSchedulerStats {
  /** Keys with a request not yet started (including keys waiting for their own run to end). */
  readonly queued: number;
  /** Reconciles running now. */
  readonly running: number;
  /** Keys whose last reconcile failed (their backoff has not been reset by a success yet). */
  readonly failing: number;
}

/** The function a scheduler runs for each due key; its signal aborts when the scheduler stops; `priority` is the key's when it started. */
export type Reconcile = (key: string, signal: AbortSignal, priority: number) => Promise<Action>;

const OWNER = 'ReconcileScheduler';

/** The promise the pump's microtask is chained on. */
const RESOLVED = Promise.resolve();

/**
 * Runs reconciles of string keys when they are due (kube-rs's `Scheduler` and `Runner`, controller-runtime's
 * worker loop and priority queue). Requests for one key merge — the earliest due time and the highest
 * priority winning; a key never has two reconciles running at once — a request made during a run is
 * kept and runs after it ends, at its due time; at most `concurrency` reconciles run at once (and at
 * most `concurrencyGroups.concurrency` of one group). Among due keys the highest priority starts first,
 * the key due first within a priority (ties: the earlier request) — with one fairness rule, so neither
 * side starves: a start that passes over a key of a lower priority due earlier counts, and after 9 such
 * starts in a row the 10th goes to the key due the longest, whatever its priority. Without priorities
 * (every request `0`) the order is first due, first started. A reconcile's {@link Action} may requeue
 * its key (at {@link Priority}`.high` unless the action says otherwise); a failure goes to the
 * `onError` policy, whose retry keeps the priority the failed run started with, and never stops the
 * scheduler — except a programming error the runtime raised (a result that is not an `Action`, a
 * misuse of the reconcile context) and a policy that throws: those stop it, and `run` rejects with them.
 *
 * Recovery: a reconcile interrupted by the stop (it rejects with its signal's abort) is kept as a request
 * due now at its priority, with no failure counted; requests left when `run` resolves stay in `stats().queued`.
 *
 * Warning: `run` waits for every running reconcile to end; one that ignores its signal holds the stop.
 * A key of a low priority waits while higher ones are due, up to the fairness rule's 1 start in 10.
 *
 * @example
 * ```ts
 * const scheduler = new ReconcileScheduler({ concurrency: 4, clock });
 * informer.on('update', (obj) => scheduler.schedule(keyOf(obj)));
 * await scheduler.run(signal, async (key, s) => { await sync(key, s); return { kind: 'done' }; });
 * ```
 */
export class ReconcileScheduler {
  readonly #concurrency: number;
  readonly #debounceMs: number;
  readonly #onError: ReconcileErrorPolicy;
  readonly #clock: Clock;
  readonly #limiter: RetryRateLimiter;
  /** Requests not started yet; a running key (or one waiting for its group) is held there, so its request waits. */
  readonly #pending: DelayQueue<string>;
  /** The running keys and the priority each started with. */
  readonly #running = new Map<string, number>();
  readonly #attempts = new FailureCounts<string>();
  readonly #metrics: QueueMetrics<string>;
  /** Keys counted in the metrics' depth (due and waiting); kept only while metrics are on. */
  readonly #counted = new Set<string>();
  /** Running keys forgotten during their run: what the run asks for next is dropped. */
  readonly #forgotten = new Set<string>();
  readonly #groups: Groups | undefined;
  #pumpQueued = false;
  #scope: TaskScope | undefined;
  /** The run's scope is live (cheaper to read than its signal's `aborted`, on every request). */
  #alive = false;
  /** Wakes the run's drain task when the last running reconcile ended. */
  #onIdle: (() => void) | undefined;
  #reconcile: Reconcile | undefined;
  #started = false;

  /** Throws `INVALID_OPTION` for an option outside its documented range. */
  constructor(options: ReconcileSchedulerOptions = {}) {
    validateOptions(OWNER, options, {
      concurrency: 'positiveCount',
      debounceMs: 'duration',
      onError: 'function',
      clock: 'clock',
      name: 'string',
      concurrencyGroups: 'any',
      metricsProvider: 'object',
      rateLimit: 'any',
      rateLimitMetrics: 'object',
    });
    this.#concurrency = options.concurrency ?? 1;
    this.#debounceMs = options.debounceMs ?? 0;
    this.#onError = options.onError ?? exponentialBackoff();
    this.#clock = options.clock ?? realClock;
    this.#limiter = new RetryRateLimiter(OWNER, options.rateLimit, this.#clock, options.rateLimitMetrics);
    this.#pending = new DelayQueue<string>(this.#clock, () => this.#pump());
    this.#metrics = new QueueMetrics<string>(options.name ?? '', this.#clock, options.metricsProvider, 500);
    const groups = checkConcurrencyGroups(OWNER, options.concurrencyGroups);
    this.#groups = groups === undefined ? undefined : new Groups(groups.keyOf, groups.concurrency ?? 1, this.#clock);
  }

  /**
   * Requests a reconcile of `key`, now or at the time `request` gives, at its priority; merges with a
   * request already pending for the key (the earlier due time and the higher priority win; with
   * `debounceMs`, see that option). Works before `run` and after it resolved too (the request is kept).
   * Throws `INVALID_OPTION` for a bad request.
   */
  schedule(key: string, request?: ScheduleRequest): void {
    if (request === undefined) {
      this.scheduleNow(key, Priority.high);
      return;
    }
    const { dueAt, priority } = resolveRequest(`${OWNER}.schedule`, request, this.#clock.now());
    this.#schedule(key, dueAt, priority);
  }

  /**
   * `schedule(key, { priority })` without the request object: a request due now at `priority` (a
   * finite number; `INVALID_OPTION` otherwise) — the hot path of a controller, one call per event.
   */
  scheduleNow(key: string, priority: number): void {
    if (!Number.isFinite(priority)) checkPriority(`${OWNER}.scheduleNow: priority`, priority);
    this.#schedule(key, this.#clock.now(), priority);
  }

  /**
   * Forgets `key` at once: its pending request leaves the queue (stats, depth metric) and is never
   * reconciled, its failure count is cleared, and — when it is running — what its run asks for next
   * (a requeue, a retry) is dropped; a request made after the forget stands. True when the key had a
   * request, a run or failures. Given a test instead, forgets every key it accepts and returns how many.
   */
  forget(key: string): boolean;
  /** Forgets every key `test` accepts (see above); returns how many had a request, a run or failures. */
  forget(test: (key: string) => boolean): number;
  forget(which: string | ((key: string) => boolean)): boolean | number {
    if (typeof which === 'string') return this.#forget(which);
    const keys = new Set<string>();
    for (const key of this.#pending.keys()) if (which(key)) keys.add(key);
    for (const key of this.#running.keys()) if (which(key)) keys.add(key);
    for (const key of this.#attempts.keys()) if (which(key)) keys.add(key);
    for (const key of keys) this.#forget(key);
    return keys.size;
  }

  #forget(key: string): boolean {
    const queued = this.#pending.delete(key);
    const running = this.#running.has(key);
    const failing = this.#attempts.get(key) > 0;
    this.#attempts.forget(key);
    if (running) this.#forgotten.add(key);
    else if (queued) {
      // Held while it waited for a slot of its group: the hold goes with the request.
      this.#groups?.forget(key);
      this.#pending.release(key);
    }
    if (this.#counted.delete(key)) this.#metrics.drop(key);
    return queued || running || failing;
  }

  /** How many failures in a row `key` has had (0 after a success or when it never failed). */
  attempts(key: string): number {
    return this.#attempts.get(key);
  }

  /** Counts of queued, running and failing keys — of every key, or of those `test` accepts (a walk over them all). */
  stats(test?: (key: string) => boolean): ReconcileSchedulerStats {
    if (test === undefined) return { queued: this.#pending.size, running: this.#running.size, failing: this.#attempts.size };
    const count = (keys: Iterable<string>): number => {
      let n = 0;
      for (const key of keys) if (test(key)) n++;
      return n;
    };
    return { queued: count(this.#pending.keys()), running: count(this.#running.keys()), failing: count(this.#attempts.keys()) };
  }

  /**
   * Runs `reconcile` for each key when it is due until `signal` aborts; then starts no more, lets the
   * running ones see the aborted signal, and resolves once they ended, leaving no timer behind. Never
   * rejects for a reconcile's failure (those go to `onError`), but — after the same orderly stop — for a
   * programming error (see the class) or a throwing `onError`; rejects with `ALREADY_STARTED` when called
   * a second time.
   */
  async run(signal: AbortSignal, reconcile: Reconcile): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(OWNER);
    this.#started = true;
    const scope = new TaskScope({ name: OWNER, signal, clock: this.#clock });
    this.#scope = scope;
    this.#reconcile = reconcile;
    const onStop = (): void => {
      this.#alive = false;
      this.#pending.disarm();
    };
    this.#alive = !scope.signal.aborted;
    scope.signal.addEventListener('abort', onStop, { once: true });
    // One task for every reconcile, not a task each (3 % more keys/s in bench/controller.bench.ts):
    // it ends when the scope stopped and the last running reconcile ended.
    void scope.spawn('reconciles', async (signal) => {
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      while (this.#running.size > 0) await new Promise<void>((resolve) => (this.#onIdle = resolve));
    });
    this.#pump();
    try {
      await scope.closed();
    } finally {
      scope.signal.removeEventListener('abort', onStop);
      this.#pending.disarm();
      this.#metrics.shutdown();
    }
  }

  /** A request of `schedule`: merged as a request (see {@link ReconcileSchedulerOptions.debounceMs} for the debounce). */
  #schedule(key: string, dueAt: number, priority: number): void {
    if (this.#debounceMs === 0) {
      this.#request(key, dueAt, priority);
      return;
    }
    const old = this.#pending.dueAt(key);
    const merged = Math.max(priority, this.#pending.priorityOf(key) ?? priority);
    if (old === undefined || old >= dueAt) this.#set(key, dueAt + this.#debounceMs, merged);
    else if (merged > (this.#pending.priorityOf(key) as number)) this.#set(key, old, merged);
  }

  /** Merges a request due at `dueAt` at `priority` (the earlier time and the higher priority win). */
  #request(key: string, dueAt: number, priority: number): void {
    if (!this.#pending.setEarlier(key, dueAt, priority)) return;
    if (this.#metrics.enabled) this.#count(key, this.#pending.dueAt(key) as number);
    this.#queuePump();
  }

  /** Makes `dueAt` and `priority` the key's pending request and wakes the loop. */
  #set(key: string, dueAt: number, priority: number): void {
    if (this.#metrics.enabled) this.#count(key, dueAt);
    this.#pending.set(key, dueAt, priority);
    this.#queuePump();
  }

  /** Queue metrics of a request: due now, an add (once while it waits); later, a retry (a delayed add). */
  #count(key: string, dueAt: number): void {
    if (dueAt > this.#clock.now()) this.#metrics.retry(key);
    else if (!this.#counted.has(key)) {
      this.#counted.add(key);
      this.#metrics.add(key);
    }
  }

  /**
   * Pumps once in a microtask, however many requests and run ends come before it. A resolved
   * promise's `then`, not `queueMicrotask`: Node wraps each of those in an async resource, and this
   * runs once per reconcile.
   */
  #queuePump(): void {
    if (this.#pumpQueued || !this.#alive) return;
    this.#pumpQueued = true;
    void RESOLVED.then(this.#pumpTask);
  }

  readonly #pumpTask = (): void => {
    this.#pumpQueued = false;
    this.#pump();
  };

  /** Starts every due key the caps allow, then arms one timer for the next due key. */
  #pump(): void {
    if (!this.#alive) {
      this.#pending.disarm();
      return;
    }
    const now = this.#clock.now();
    const groups = this.#groups;
    while (this.#running.size < this.#concurrency) {
      const top = this.#pending.popDue(now);
      if (top === undefined) {
        this.#pending.arm(); // one timer, for the next key due (none when nothing waits)
        return;
      }
      let group: string | undefined;
      if (groups !== undefined) {
        try {
          group = groups.groupOf(top.key);
        } catch (err) {
          this.#pending.set(top.key, top.dueAt, top.priority);
          this.#scope!.fail(err, `concurrencyGroups.keyOf(${top.key})`);
          return;
        }
        if (groups.full(group)) {
          // Its group is at its cap: the key waits (held, its request kept) for a slot of its group.
          this.#pending.hold(top.key);
          this.#pending.set(top.key, top.dueAt, top.priority);
          groups.park(group, top);
          continue;
        }
        groups.started(top.key, group);
      }
      if (this.#metrics.enabled) {
        // A delayed request is added when it starts: its latency counts from its due time.
        if (!this.#counted.delete(top.key)) this.#metrics.add(top.key, top.dueAt);
        this.#metrics.get(top.key);
      }
      this.#start(top.key, top.priority);
    }
    this.#pending.disarm(); // at the cap: the end of a run pumps again
  }

  #start(key: string, priority: number): void {
    this.#running.set(key, priority);
    this.#pending.hold(key);
    void this.#runOne(key, priority, this.#scope!, this.#reconcile!);
  }

  /** Runs one reconcile of `key` and what follows from it; never rejects (a bug here fails the scope). */
  async #runOne(key: string, priority: number, scope: TaskScope, reconcile: Reconcile): Promise<void> {
    const signal = scope.signal;
    let action: Action | undefined;
    let error: unknown;
    try {
      action = checkAction(await reconcile(key, signal, priority));
    } catch (err) {
      error = err;
    }
    this.#running.delete(key);
    this.#metrics.done(key);
    try {
      if (this.#forgotten.delete(key)) {
        // Forgotten while it ran: its outcome is dropped — but a programming error stays loud.
        const mistake = error === undefined ? undefined : misuseIn(error);
        if (mistake !== undefined) throw mistake;
      } else if (action !== undefined) {
        this.#attempts.forget(key);
        this.#apply(key, action);
      } else this.#failed(key, priority, signal, error);
    } catch (err) {
      scope.fail(err, `reconcile ${key}`);
    } finally {
      this.#pending.release(key);
      const waiting = this.#groups?.ended(key);
      if (waiting !== undefined) this.#pending.release(waiting);
      this.#queuePump();
      if (this.#running.size === 0) this.#onIdle?.();
    }
  }

  #failed(key: string, priority: number, signal: AbortSignal, thrown: unknown): void {
    if (isAbortOf(thrown, signal)) {
      // Interrupted by the stop: not a failure; the key is reconciled again by whoever runs next.
      this.#request(key, this.#clock.now(), priority);
      return;
    }
    const attempt = this.#attempts.add(key);
    // A programming error is not retried: it fails the run (the caller's catch), as a throwing policy does.
    const mistake = misuseIn(thrown);
    if (mistake !== undefined) throw mistake;
    const action = checkAction(this.#onError(key, toError(thrown), attempt));
    // The queue's limits (rate-limit.ts): the bucket and Retry-After may only lengthen the policy's delay.
    const ms = this.#limiter.retryDelay(action.kind === 'requeueAfter' ? action.ms : undefined, thrown);
    // A retry keeps the priority the failed run started with.
    if (ms !== undefined) this.#request(key, this.#clock.now() + ms, priority);
  }

  #apply(key: string, action: Action): void {
    if (action.kind === 'requeueAfter') this.#request(key, this.#clock.now() + action.ms, action.priority ?? Priority.high);
  }
}

/** The due time and priority of `request` made at `now` (`INVALID_OPTION` naming `owner` for a bad one). */
export function resolveRequest(owner: string, request: ScheduleRequest | undefined, now: number): { dueAt: number; priority: number } {
  if (request === undefined) return { dueAt: now, priority: Priority.high };
  validateOptions(owner, request, { runAt: 'any', delayMs: 'duration', priority: 'any' });
  const { runAt, delayMs, priority = Priority.high } = request;
  if (runAt !== undefined && (typeof runAt !== 'number' || Number.isNaN(runAt))) {
    throw new InvalidOptionError(`${owner}: option runAt must be a clock time in ms, got ${String(runAt)}`);
  }
  if (runAt !== undefined && delayMs !== undefined) throw new InvalidOptionError(`${owner}: give runAt or delayMs, not both`);
  checkPriority(`${owner}: option priority`, priority);
  return { dueAt: runAt ?? now + (delayMs ?? 0), priority };
}

/** Throws `INVALID_OPTION` unless `value` is a finite number. */
function checkPriority(what: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidOptionError(`${what} must be a finite number (Priority.high, Priority.low, …), got ${String(value)}`);
}

/** Returns `value` when it is an {@link Action}; throws a `TypeError` naming it otherwise (a programming error: see `misuse`). */
export function checkAction(value: unknown): Action {
  const a = value as Partial<{ kind: unknown; ms: unknown; priority: unknown }> | null | undefined;
  if (a?.kind === 'done' || a?.kind === 'await') return a as Action;
  if (a?.kind === 'requeueAfter' && typeof a.ms === 'number' && a.ms >= 0 && !Number.isNaN(a.ms) && (a.priority === undefined || (typeof a.priority === 'number' && Number.isFinite(a.priority)))) return a as Action;
  throw misuse(new TypeError(`${OWNER}: a reconcile must return { kind: 'done' | 'await' } or { kind: 'requeueAfter', ms ≥ 0, priority?: a finite number }, got ${JSON.stringify(value)}`));
}
