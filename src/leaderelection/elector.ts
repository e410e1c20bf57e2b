// The leader elector: acquire a lock, renew it while leading, give it up on cancel (client-go semantics).

import { realClock, sleep, type Clock } from '../core/clock.js';
import { InvalidOptionError, validateOptions, type OptionSchemaFor } from '../core/options.js';
import { AlreadyStartedError } from '../core/errors.js';
import { channels, publish } from '../observability/channels.js';
import { defaultRandom, jittered } from '../runtime/backoff.js';
import { LeaderElectionError, LockNotFoundError, recordFingerprint, type LeaderElectionRecord, type ResourceLock } from './lock.js';
import { abortableWait } from '../core/abort.js';
import { LockWatchWaker } from './follow.js';
import { TaskScope } from '../core/task-scope.js';
import { RateLimitedLog, resolveLogger, withFields, type LoggerOption } from '../core/log.js';

/** The message of a lock call abandoned because its signal aborted (the transport may not cancel it). */
const ABORTED_LOCK_CALL = 'the lock call was abandoned: its signal aborted';

/** Retry periods are stretched by up to this factor of themselves at random (client-go's `JitterFactor`). */
export const LEADER_ELECTION_JITTER_FACTOR = 1.2;

/** Options of a {@link LeaderElector}. Durations are milliseconds. */
export interface LeaderElectorOptions {
  /** The lock candidates compete for; its `identity()` names this candidate. Required. */
  lock: ResourceLock;
  /**
   * How long other candidates wait, after last seeing the record change, before taking the lock over.
   * Written to the lock in whole seconds (rounded up). Default: `15000`.
   */
  leaseDurationMs?: number;
  /**
   * How long the leader keeps retrying a failed renewal before it stops leading; also bounds each
   * acquire attempt and the release. Default: `10000`.
   */
  renewDeadlineMs?: number;
  /**
   * The pause between attempts (acquire retries are jittered by up to 1.2×). A follower whose lock has
   * a `watch` tries at once when the record is released or changes holder; this stays the floor.
   * Default: `2000`.
   */
  retryPeriodMs?: number;
  /**
   * Give the lock up when `run`'s signal aborts (writes an empty holder with a 1 s lease), so another
   * candidate takes over at once instead of after `leaseDurationMs`. Default: `false`.
   */
  releaseOnCancel?: boolean;
  /** A name for diagnostics messages. Default: the lock's `describe()`. */
  name?: string;
  /** The clock for retries, deadlines and observed times. Default: `realClock`. */
  clock?: Clock;
  /** The random source for jitter, returning [0, 1). Default: `Math.random`. */
  random?: () => number;
  /**
   * Called once the lock is acquired; `signal` aborts when leadership ends (lost, cancelled or failed).
   * Its promise is awaited before the lock is released and before `run` settles. Required.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called when `run` ends, whether or not this candidate ever led. Default: none. */
  onStoppedLeading?: () => void | Promise<void>;
  /** Called with the identity of each new holder observed (including this candidate). Default: none. */
  onNewLeader?: (identity: string) => void | Promise<void>;
  /**
   * Where a failing lock call is logged as a warning, with the error's message (a 403 names the verb
   * and resource RBAC refused): at once, then once per 30 s with a count while it repeats, and at once
   * again after a success; `false` for none. Default `console`.
   */
  logger?: LoggerOption;
}

/** The rules of {@link LeaderElectorOptions} (`runWhileLeading` and the Manager check theirs with it). */
export const LEADER_ELECTOR_OPTION_SCHEMA = {
  lock: 'any', // required; checked by the constructor
  leaseDurationMs: 'positiveDuration',
  renewDeadlineMs: 'positiveDuration',
  retryPeriodMs: 'positiveDuration',
  releaseOnCancel: 'boolean',
  name: 'string',
  clock: 'clock',
  random: 'function',
  onStartedLeading: 'function',
  onStoppedLeading: 'function',
  onNewLeader: 'function',
  logger: 'logger',
} as const satisfies OptionSchemaFor<LeaderElectorOptions>;

/** The events published on `channelNames.leaderElection`. */
export type LeaderElectionEventType = 'acquired' | 'renewed' | 'lost' | 'stopped' | 'released' | 'new-leader' | 'error';

/** A message on `channelNames.leaderElection`. */
export interface LeaderElectionEvent {
  /** The elector's `name`. */
  name: string;
  /** What happened. */
  event: LeaderElectionEventType;
  /** This candidate's identity. */
  identity: string;
  /** The holder last observed (`''` when none). */
  leader: string;
  /** The failure, for `error` events (a lock operation failed; the elector retries). */
  error?: unknown;
}


/**
 * Leader election on a {@link ResourceLock} (client-go's `tools/leaderelection`). {@link LeaderElector.run}
 * tries to acquire the lock every `retryPeriodMs` (jittered) — and at once when the lock's optional
 * {@link ResourceLock.watch} reports a record with no holder (a release) or a new holder; the watch is
 * open only while following, re-opened with backoff when it ends or fails, and never needed. Once it
 * holds the lock, it calls `onStartedLeading` and renews every `retryPeriodMs`. If renewing keeps
 * failing for `renewDeadlineMs`, or another holder shows up, leadership ends.
 *
 * Another candidate's lock counts as expired only when `leaseDuration` has passed on *this* clock since
 * this candidate last saw the record change — never by comparing the record's timestamps — so clock
 * skew between machines does not matter. Updates are compare-and-swap: a conflict means another
 * candidate won the round.
 *
 * Differences from client-go: `onStoppedLeading` is optional (`run`'s promise says the same); a throwing
 * callback ends the run and makes `run` reject; `run` waits for `onStartedLeading`'s promise to settle
 * before releasing, so the guarded work has stopped before someone else may start.
 *
 * Warning: `onStartedLeading` must stop its work when its signal aborts; `run` waits for it.
 */
export class LeaderElector {
  readonly #lock: ResourceLock;
  readonly #identity: string;
  readonly #name: string;
  readonly #leaseMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryMs: number;
  readonly #release: boolean;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #options: LeaderElectorOptions;
  readonly #log: RateLimitedLog;
  #observed: LeaderElectionRecord | undefined;
  #observedFingerprint = '';
  #observedAt = 0;
  #reportedLeader = '';
  #leading = false;
  #started = false;
  /** The run's lifetime: its signal stops the loops; the callbacks run in it, and the first that throws ends the run. */
  #scope: TaskScope | undefined;

  /** Validates the options like client-go; throws `INVALID_OPTION` errors. */
  constructor(options: LeaderElectorOptions) {
    this.#leaseMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryMs = options.retryPeriodMs ?? 2_000;
    validateOptions('LeaderElector', options, LEADER_ELECTOR_OPTION_SCHEMA);
    const invalid = (message: string) => new InvalidOptionError(`LeaderElector: ${message}`);
    if (this.#leaseMs <= this.#renewDeadlineMs) throw invalid('leaseDurationMs must be greater than renewDeadlineMs');
    if (this.#renewDeadlineMs <= LEADER_ELECTION_JITTER_FACTOR * this.#retryMs) {
      throw invalid(`renewDeadlineMs must be greater than retryPeriodMs × ${LEADER_ELECTION_JITTER_FACTOR}`);
    }
    if (typeof options.onStartedLeading !== 'function') throw invalid('onStartedLeading is required');
    if (options.lock === undefined || options.lock === null) throw invalid('lock is required');
    this.#identity = options.lock.identity();
    if (typeof this.#identity !== 'string' || this.#identity === '') throw invalid("the lock's identity is empty");
    this.#lock = options.lock;
    this.#name = options.name ?? options.lock.describe();
    this.#release = options.releaseOnCancel ?? false;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? defaultRandom;
    this.#options = options;
    this.#log = new RateLimitedLog(withFields(resolveLogger(options.logger), { component: 'leader-election', lock: this.#name }), this.#clock);
  }

  /** Whether this candidate currently leads (between `onStartedLeading` and the end of its term). */
  isLeader(): boolean {
    return this.#leading;
  }

  /** The identity of the holder last observed in the lock (`''` when none, or nothing read yet). */
  getLeader(): string {
    return this.#observed?.holderIdentity ?? '';
  }

  /**
   * Competes for the lock until `signal` aborts or leadership ends. Resolves once the term (if any) is
   * over: renewals stopped, `onStartedLeading`'s promise settled, the lock released (with
   * `releaseOnCancel`), and `onStoppedLeading` called. Lock failures are retried, never thrown (they are
   * published on the `leaderElection` channel). Rejects only when a callback throws (a
   * `LeaderElectionError` with reason `callback-failed`, the callback's error as `cause`), or with
   * `ALREADY_STARTED` when called twice.
   *
   * Recovery: an elector runs once; to compete again after a lost term, create a new one.
   */
  async run(signal?: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('LeaderElector');
    this.#started = true;
    const scope = new TaskScope({ name: `LeaderElector ${this.#name}`, signal });
    this.#scope = scope;
    const stop = scope.signal;
    let failure: unknown;
    try {
      if (await this.#acquire(stop)) await this.#lead(stop);
    } finally {
      // Waits for the callbacks still running (onNewLeader), then onStoppedLeading; a throw of either is the run's failure.
      failure = await scope.close().then(() => undefined, (err: unknown) => err);
      try {
        await this.#options.onStoppedLeading?.();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) {
      throw new LeaderElectionError('callback-failed', `a leader-election callback of ${this.#name} failed`, { cause: failure });
    }
  }

  async #acquire(stop: AbortSignal): Promise<boolean> {
    // While following, the lock's watch (if it has one) cuts a wait short when the record is released
    // or changes hands; polling every retryPeriodMs stays the floor.
    const waker = new LockWatchWaker({
      lock: this.#lock,
      clock: this.#clock,
      random: this.#random,
      wakesOn: (record) => record.holderIdentity === '' || record.holderIdentity !== this.getLeader(),
      onWatchError: (err) => this.#log.log('warn', 'watch', `leader election ${this.#name}: the lock's watch failed, re-opening it with backoff (polling every ${this.#retryMs / 1000} s meanwhile): ${err instanceof Error ? err.message : String(err)}`),
    });
    try {
      return await this.#acquireLoop(stop, waker);
    } finally {
      await waker.close();
    }
  }

  async #acquireLoop(stop: AbortSignal, waker: LockWatchWaker): Promise<boolean> {
    for (;;) {
      if (stop.aborted) return false;
      const ok = await this.#withDeadline(stop, (signal) => this.#tryAcquireOrRenew(signal));
      this.#reportTransition();
      if (ok && !stop.aborted) {
        this.#publish('acquired');
        return true;
      }
      if (ok) {
        // Acquired just as the run was cancelled: never lead, but do not sit on the lock either.
        if (this.#release) await this.#releaseLock();
        return false;
      }
      const wait = jittered(this.#retryMs, LEADER_ELECTION_JITTER_FACTOR, this.#random);
      if (!(await waker.wait(wait, stop))) return false;
    }
  }

  async #lead(stop: AbortSignal): Promise<void> {
    this.#leading = true;
    const term = new AbortController();
    const endTerm = () => term.abort();
    stop.addEventListener('abort', endTerm, { once: true });
    const work = this.#spawn('onStartedLeading', () => this.#options.onStartedLeading(term.signal));
    try {
      const lost = await this.#renewLoop(stop);
      this.#publish(lost ? 'lost' : 'stopped');
    } finally {
      this.#leading = false;
      stop.removeEventListener('abort', endTerm);
      term.abort();
      await work;
      if (this.#release) await this.#releaseLock();
    }
  }

  /** Renews until a renewal fails for `renewDeadlineMs` (true: lost) or `stop` aborts (false). */
  async #renewLoop(stop: AbortSignal): Promise<boolean> {
    for (;;) {
      const ok = await this.#withDeadline(stop, async (signal) => {
        for (;;) {
          if (await this.#tryAcquireOrRenew(signal)) return true;
          // Someone else holds the lock now: our term is over, no point retrying until the deadline.
          if (signal.aborted || this.getLeader() !== this.#identity) return false;
          if (!(await sleep(this.#clock, this.#retryMs, signal))) return false;
        }
      });
      this.#reportTransition();
      if (stop.aborted) return false;
      if (!ok) return true;
      this.#publish('renewed');
      if (!(await sleep(this.#clock, this.#retryMs, stop))) return false;
    }
  }

  /** Runs `fn` with a signal that aborts when `stop` does or `renewDeadlineMs` passes. */
  async #withDeadline<T>(stop: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = new AbortController();
    const onStop = () => deadline.abort();
    const timer = this.#clock.setTimeout(onStop, this.#renewDeadlineMs);
    stop.addEventListener('abort', onStop, { once: true });
    if (stop.aborted) deadline.abort();
    try {
      return await fn(deadline.signal);
    } finally {
      this.#clock.clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    }
  }

  /** One attempt to acquire or renew; true when this candidate holds the lock afterwards. Never throws. */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const lock = this.#lock;
    const now = this.#wallNow();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.#identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.#leaseMs / 1000)),
      acquireTime: now,
      renewTime: now,
      leaderTransitions: 0,
    };
    // 1. Fast path: we hold a lease that is still valid, so update against the version we last saw.
    const observed = this.#observed;
    if (observed !== undefined && this.#observedLeader() && this.#leaseValid()) {
      desired.acquireTime = observed.acquireTime;
      desired.leaderTransitions = observed.leaderTransitions;
      try {
        await abortableWait(lock.update(desired, signal), signal, ABORTED_LOCK_CALL);
        this.#setObserved(desired);
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        this.#publish('error', err);
      }
    }
    // 2. Read the record, creating it when it does not exist.
    let current: LeaderElectionRecord;
    try {
      current = await abortableWait(lock.get(signal), signal, ABORTED_LOCK_CALL);
    } catch (err) {
      if (signal.aborted) return false;
      if (!(err instanceof LockNotFoundError)) return this.#failed(err);
      try {
        await abortableWait(lock.create(desired, signal), signal, ABORTED_LOCK_CALL);
      } catch (createErr) {
        return signal.aborted ? false : this.#failed(createErr);
      }
      this.#setObserved(desired);
      return true;
    }
    // 3. Note when the record last changed; a live lease of another holder wins.
    if (recordFingerprint(current) !== this.#observedFingerprint) this.#setObserved(current);
    if (current.holderIdentity !== '' && this.#leaseValid() && !this.#observedLeader()) return false;
    // 4. Take (or keep) the lock.
    if (this.#observedLeader()) {
      desired.acquireTime = current.acquireTime;
      desired.leaderTransitions = current.leaderTransitions;
    } else {
      desired.leaderTransitions = current.leaderTransitions + 1;
    }
    try {
      await abortableWait(lock.update(desired, signal), signal, ABORTED_LOCK_CALL);
    } catch (err) {
      return signal.aborted ? false : this.#failed(err);
    }
    this.#setObserved(desired);
    return true;
  }

  async #releaseLock(): Promise<void> {
    const deadline = new AbortController();
    const timer = this.#clock.setTimeout(() => deadline.abort(), this.#renewDeadlineMs);
    const signal = deadline.signal;
    try {
      const current = await abortableWait(this.#lock.get(signal), signal, ABORTED_LOCK_CALL);
      if (recordFingerprint(current) !== this.#observedFingerprint) this.#setObserved(current);
      if (!this.#observedLeader()) return;
      const now = this.#wallNow();
      const released: LeaderElectionRecord = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaderTransitions: current.leaderTransitions,
      };
      await abortableWait(this.#lock.update(released, signal), signal, ABORTED_LOCK_CALL);
      this.#setObserved(released);
      this.#publish('released');
    } catch (err) {
      this.#publish('error', err);
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  #failed(err: unknown): false {
    this.#publish('error', err);
    return false;
  }

  #setObserved(record: LeaderElectionRecord): void {
    this.#observed = record;
    this.#observedFingerprint = recordFingerprint(record);
    this.#observedAt = this.#clock.now();
  }

  #observedLeader(): boolean {
    return this.#observed !== undefined && this.#observed.holderIdentity === this.#identity;
  }

  /** Whether the observed lease is still live, judged by when *we* saw it change. */
  #leaseValid(): boolean {
    const seconds = this.#observed?.leaseDurationSeconds ?? 0;
    return this.#observedAt + seconds * 1000 > this.#clock.now();
  }

  #reportTransition(): void {
    const holder = this.getLeader();
    if (holder === this.#reportedLeader) return;
    this.#reportedLeader = holder;
    this.#publish('new-leader');
    const onNewLeader = this.#options.onNewLeader;
    if (onNewLeader !== undefined && holder !== '') void this.#spawn('onNewLeader', () => onNewLeader(holder)); // a failure ends the run
  }

  /** Wall time for the record's informational timestamps, derived from the injected clock. */
  #wallNow(): Date {
    return new Date(performance.timeOrigin + this.#clock.now());
  }

  /** Runs a callback in the run's scope: its failure ends the run, and `run` waits for it before settling. */
  #spawn(name: string, fn: () => void | Promise<void>): Promise<void> {
    return (this.#scope as TaskScope).spawn(name, () => fn());
  }

  #publish(event: LeaderElectionEventType, error?: unknown): void {
    if (event === 'error') {
      const why = error instanceof Error ? error.message : String(error);
      this.#log.log('warn', 'lock', `leader election ${this.#name}: the lock failed, retrying every ${this.#retryMs / 1000} s: ${why}`);
    } else if (event === 'acquired' || event === 'renewed') this.#log.reset();
    if (!channels.leaderElection.hasSubscribers) return;
    const message: LeaderElectionEvent = { name: this.#name, event, identity: this.#identity, leader: this.getLeader() };
    if (error !== undefined) message.error = error;
    publish(channels.leaderElection, message);
  }
}
