// The resource-lock contract of leader election: the election record, the lock interface, its errors.

import { ErrorCodes, KubeInformerError, type KubeInformerErrorOptions } from '../core/errors.js';

/**
 * What a lock stores (client-go's `LeaderElectionRecord`, kept in a Lease's `spec`). Times are wall-clock
 * `Date`s and are informational only: electors judge expiry by when *they* observed a change, never by
 * these timestamps, so clock skew between candidates does not matter.
 */
export interface LeaderElectionRecord {
  /** The current holder; `''` when nobody holds the lock (after a release). */
  holderIdentity: string;
  /** How long the holder claims the lock after each renewal, in whole seconds. */
  leaseDurationSeconds: number;
  /** When the current holder acquired the lock. */
  acquireTime?: Date;
  /** When the holder last renewed. */
  renewTime?: Date;
  /** How many times the lock changed hands. */
  leaderTransitions: number;
}

/**
 * A lock leader election runs on (client-go's `resourcelock.Interface`). Implementations keep the last
 * object they read or wrote, so `update` is a compare-and-swap against it (optimistic concurrency).
 *
 * - `get` rejects with {@link LockNotFoundError} when the lock object does not exist.
 * - `create` rejects with {@link LockConflictError} when it already exists.
 * - `update` rejects with {@link LockConflictError} when the object changed since this lock last saw it.
 * - Any other failure is a {@link LeaderElectionError} (or an abort); the elector retries it.
 *
 * `signal` aborts an operation that takes too long (the elector bounds each attempt); implementations
 * should honour it where their transport allows. Ready-made: {@link LeaseLock}, {@link InMemoryLock}.
 */
export interface ResourceLock {
  /** Reads the current record. */
  get(signal?: AbortSignal): Promise<LeaderElectionRecord>;
  /** Creates the lock object holding `record`. */
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  /** Replaces the record, failing with a conflict if the object changed since it was last read or written. */
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  /** This candidate's identity (non-empty, unique among candidates). */
  identity(): string;
  /** A human-readable description of the lock, e.g. `kube-system/my-controller`. */
  describe(): string;
  /**
   * Optional: reports the record each time the lock object changes, so a following elector learns of
   * a release at once instead of at its next poll. Calls `onChange` with the current record first (a
   * deleted lock object is reported as a record with no holder), then with each change. Resolves when
   * the watch ends (e.g. the server closed it) or `signal` aborts, rejects when it fails; the elector
   * re-opens it with backoff and keeps polling every `retryPeriodMs` whatever happens, so a lock
   * without `watch` (or a watch that keeps failing) only makes the follower slower. Must stop (and
   * call `onChange` no more) once `signal` aborts. Ready-made: {@link LeaseLock} (with its `watch`
   * option), {@link InMemoryLock}.
   */
  watch?(onChange: (record: LeaderElectionRecord) => void, signal: AbortSignal): Promise<void>;
}

/** Why a {@link LeaderElectionError} happened. */
export type LeaderElectionFailure = 'conflict' | 'not-found' | 'lock-failed' | 'callback-failed' | 'not-initialized';

/** A leader-election failure: code `LEADER_ELECTION`, with a `reason` and the original in `cause`. */
export class LeaderElectionError extends KubeInformerError {
  /** What kind of failure this is. */
  readonly reason: LeaderElectionFailure;

  constructor(reason: LeaderElectionFailure, message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.LEADER_ELECTION, message, options);
    this.reason = reason;
  }
}

/** Someone else changed (or created) the lock first: HTTP 409. Another candidate won this round. */
export class LockConflictError extends LeaderElectionError {
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super('conflict', message, options);
  }
}

/** The lock object does not exist yet: HTTP 404. The elector creates it. */
export class LockNotFoundError extends LeaderElectionError {
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super('not-found', message, options);
  }
}

/** A stable text form of a record, used to notice that the record changed between two reads. */
export function recordFingerprint(record: LeaderElectionRecord): string {
  return JSON.stringify([
    record.holderIdentity,
    record.leaseDurationSeconds,
    record.acquireTime?.getTime() ?? null,
    record.renewTime?.getTime() ?? null,
    record.leaderTransitions,
  ]);
}
