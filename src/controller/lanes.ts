// One reconcile scheduler shared by many controllers (a multi-cluster fleet's, one per engaged cluster): each
// controller's lane prefixes its keys, the shared run loop hands each key back to its lane with the prefix stripped.

import { realClock, type Clock } from '../core/clock.js';
import { AlreadyStartedError } from '../core/errors.js';
import { misuseIn } from './outcomes.js';
import { Action, exponentialBackoff, ReconcileScheduler, resolveRequest, type Reconcile, type ReconcileErrorPolicy, type ReconcileSchedulerOptions, type ReconcileSchedulerStats, type ScheduleRequest } from './scheduler.js';
import type { ConcurrencyGroups } from './priority.js';

/** What a `Controller` uses of its scheduler: a `ReconcileScheduler` of its own, or a {@link Lane} of a shared one. */
export interface KeyScheduler {
  /** Requests a reconcile of `key` (see `ReconcileScheduler.schedule`). */
  schedule(key: string, request?: ScheduleRequest): void;
  /** Requests a reconcile of `key` due now at `priority`. */
  scheduleNow(key: string, priority: number): void;
  /** How many failures in a row `key` has had. */
  attempts(key: string): number;
  /** Counts of its queued, running and failing keys. */
  stats(): ReconcileSchedulerStats;
  /** Runs `reconcile` for each of its keys when due until `signal` aborts. */
  run(signal: AbortSignal, reconcile: Reconcile): Promise<void>;
}

/**
 * Makes a controller's scheduler from the options it would give a `ReconcileScheduler` of its own (a
 * lane takes its `onError` and `concurrencyGroups.keyOf` from them; the rest are the shared scheduler's).
 */
export type KeySchedulerFactory = (options: ReconcileSchedulerOptions) => KeyScheduler;

const DONE = Action.done();
const SEP = '|';

/**
 * A `ReconcileScheduler` shared by lanes: one concurrency, one rate limit, one queue (its metrics under
 * one name) for all of them. A lane's keys are `id|label|key`; `id` (no `|` in it) finds the lane.
 */
export class SharedScheduler {
  readonly #scheduler: ReconcileScheduler;
  readonly #lanes = new Map<string, Lane>();
  readonly #clock: Clock;
  #dropped = 0;

  /** `options` as a `ReconcileScheduler`'s, but `onError` (each lane has its own); `concurrencyGroups.keyOf` is each lane's. */
  constructor(options: Omit<ReconcileSchedulerOptions, 'onError'>) {
    const groups = options.concurrencyGroups;
    this.#clock = options.clock ?? realClock;
    this.#scheduler = new ReconcileScheduler({
      ...options,
      onError: (key, error, attempt) => {
        const lane = this.#laneOf(key);
        return lane === undefined ? DONE : lane.onError(key.slice(lane.prefix.length), error, attempt);
      },
      concurrencyGroups: groups === undefined ? undefined : { concurrency: groups.concurrency, keyOf: (key) => this.#laneOf(key)?.groupOf(key) ?? key },
    });
  }

  /** Keys that came due for a lane that was closed (a race with the close: normally forgotten before). */
  get dropped(): number {
    return this.#dropped;
  }

  /** The shared scheduler's counts (every lane). */
  stats(): ReconcileSchedulerStats {
    return this.#scheduler.stats();
  }

  /** A lane of keys `id|label|…`, scheduled through the shared scheduler; `id` must be unique among the open lanes and hold no `|`. */
  lane(id: string, label: string, options: ReconcileSchedulerOptions): Lane {
    if (id.includes(SEP) || this.#lanes.has(id)) throw new Error(`SharedScheduler: lane id ${id} is taken or holds ${SEP}`);
    const lane = new Lane(this.#scheduler, this.#clock, `${id}${SEP}${label}${SEP}`, options.onError ?? exponentialBackoff(), options.concurrencyGroups, () => this.#lanes.delete(id));
    this.#lanes.set(id, lane);
    return lane;
  }

  /** Runs the shared scheduler until `signal` aborts, handing each key to its lane (see `ReconcileScheduler.run`). */
  run(signal: AbortSignal): Promise<void> {
    let watched: AbortSignal | undefined;
    return this.#scheduler.run(signal, (key, stop, priority) => {
      if (watched !== stop) {
        // The shared scheduler stops (its signal, or a programming error): every lane's reconciles see it.
        watched = stop;
        stop.addEventListener('abort', () => [...this.#lanes.values()].forEach((l) => l.close(stop.reason)), { once: true });
      }
      const lane = this.#laneOf(key);
      if (lane === undefined || !lane.open) {
        this.#dropped++;
        return Promise.resolve(DONE);
      }
      return lane.dispatch(key.slice(lane.prefix.length), priority);
    });
  }

  #laneOf(key: string): Lane | undefined {
    return this.#lanes.get(key.slice(0, key.indexOf(SEP)));
  }
}

/**
 * One controller's part of a {@link SharedScheduler}: a {@link KeyScheduler} whose keys carry its prefix
 * in the shared queue. Requests made before its `run` wait in the lane (a controller requests its keys
 * while its caches sync) and enter the queue when it runs. Its reconciles see the lane's signal, aborted
 * when its run's signal aborts or at {@link Lane.close}; the end of its run closes it: its keys leave
 * the shared queue at once. One run per lane.
 */
export class Lane implements KeyScheduler {
  readonly prefix: string;
  readonly #scheduler: ReconcileScheduler;
  readonly #clock: Clock;
  readonly #onError: ReconcileErrorPolicy;
  readonly #keyOf: ConcurrencyGroups['keyOf'] | undefined;
  readonly #closed: () => void;
  readonly #abort = new AbortController();
  /** Requests made before the run: the earliest due time and the highest priority of each key. */
  readonly #early = new Map<string, { runAt: number; priority: number }>();
  #reconcile: Reconcile | undefined;
  #started = false;
  #open = true;
  #running = 0;
  #onIdle: (() => void) | undefined;

  /** Use {@link SharedScheduler.lane}. */
  constructor(scheduler: ReconcileScheduler, clock: Clock, prefix: string, onError: ReconcileErrorPolicy, groups: ConcurrencyGroups | undefined, closed: () => void) {
    this.#scheduler = scheduler;
    this.#clock = clock;
    this.prefix = prefix;
    this.#onError = onError;
    this.#keyOf = groups?.keyOf;
    this.#closed = closed;
  }

  /** Not closed yet. */
  get open(): boolean {
    return this.#open;
  }

  schedule(key: string, request?: ScheduleRequest): void {
    if (!this.#open) return;
    if (this.#reconcile !== undefined) {
      this.#scheduler.schedule(this.prefix + key, request);
      return;
    }
    const { dueAt, priority } = resolveRequest('Lane.schedule', request, this.#clock.now());
    const old = this.#early.get(key);
    this.#early.set(key, old === undefined ? { runAt: dueAt, priority } : { runAt: Math.min(old.runAt, dueAt), priority: Math.max(old.priority, priority) });
  }

  scheduleNow(key: string, priority: number): void {
    if (this.#reconcile !== undefined && this.#open) this.#scheduler.scheduleNow(this.prefix + key, priority);
    else this.schedule(key, { priority });
  }

  attempts(key: string): number {
    return this.#scheduler.attempts(this.prefix + key);
  }

  /** The lane's keys only: queued (waiting before the run too), running, failing. */
  stats(): ReconcileSchedulerStats {
    const shared = this.#scheduler.stats((key) => key.startsWith(this.prefix));
    return { queued: shared.queued + this.#early.size, running: this.#running, failing: shared.failing };
  }

  /**
   * Hands the lane's keys to `reconcile` until `signal` aborts or the lane closes; then waits for its
   * running reconciles and closes it. Rejects with `ALREADY_STARTED` on a second call.
   */
  async run(signal: AbortSignal, reconcile: Reconcile): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('Lane');
    this.#started = true;
    const stop = (): void => this.close(signal.reason);
    if (signal.aborted || !this.#open) stop();
    else {
      this.#reconcile = reconcile;
      signal.addEventListener('abort', stop, { once: true });
      for (const [key, { runAt, priority }] of this.#early) this.#scheduler.schedule(this.prefix + key, { runAt, priority });
      this.#early.clear();
      await new Promise<void>((resolve) => (this.#abort.signal.aborted ? resolve() : this.#abort.signal.addEventListener('abort', () => resolve(), { once: true })));
      signal.removeEventListener('abort', stop);
    }
    while (this.#running > 0) await new Promise<void>((resolve) => (this.#onIdle = resolve));
  }

  /** Closes the lane at once: its keys leave the shared queue (failure counts too), its running reconciles' signal aborts, no request is taken any more. */
  close(reason?: unknown): void {
    if (!this.#open) return;
    this.#open = false;
    this.#early.clear();
    this.#scheduler.forget((key) => key.startsWith(this.prefix));
    this.#closed();
    this.#abort.abort(reason);
  }

  /** The shared run loop's call for one of the lane's keys (prefix stripped). */
  async dispatch(key: string, priority: number): Promise<Action> {
    const reconcile = this.#reconcile!;
    const signal = this.#abort.signal;
    this.#running++;
    try {
      return await reconcile(key, signal, priority);
    } catch (err) {
      // Ended by the lane's close or stop: the key is forgotten (or the fleet stops) — not a failure to retry.
      if (signal.aborted && misuseIn(err) === undefined) return DONE;
      throw err;
    } finally {
      if (--this.#running === 0) this.#onIdle?.();
    }
  }

  /** The shared scheduler's `onError` for one of the lane's keys. */
  onError(key: string, error: Error, attempt: number): Action {
    return this.#onError(key, error, attempt);
  }

  /** The shared scheduler's group of one of the lane's keys (given with its prefix): the lane's groups are its own. */
  groupOf(key: string): string {
    return this.#keyOf === undefined ? key : this.prefix + this.#keyOf(key.slice(this.prefix.length));
  }
}
