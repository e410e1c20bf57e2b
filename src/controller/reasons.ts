// Why each requested key is due (`ctx.reason`): the reasons of a controller's requests, merged as the scheduler merges them.

import type { ReconcileReason } from './context.js';

/** `controller.schedule(key)`. */
export const SCHEDULE_REASON: ReconcileReason = Object.freeze({ kind: 'schedule' });
/** `resyncPeriodMs` or `reconcileAll()`. */
export const RESYNC_REASON: ReconcileReason = Object.freeze({ kind: 'resync' });
/** A sharded controller gained the key's slot. */
export const SHARD_REASON: ReconcileReason = Object.freeze({ kind: 'shard' });
/** The key's namespace was added to the controller's namespace set. */
export const ADDED_NAMESPACE_REASON: ReconcileReason = Object.freeze({ kind: 'namespace' });

/**
 * The reason of each key's pending request. The scheduler keeps one request per key (the earliest due
 * wins); this keeps the reason of that request beside it by the same rule, so the reconcile that
 * starts knows which request it serves — and the highest priority of the key's requests, as the
 * scheduler merges it (for a request held outside the scheduler while the key's writes settle). One
 * entry per requested key, dropped when its reconcile starts.
 */
export class ReconcileReasons {
  readonly #debounceMs: number;
  readonly #pending = new Map<string, { reason: ReconcileReason; dueAt: number; priority: number }>();

  /** `debounceMs`: the scheduler's (requests made with `schedule` are due that much later). */
  constructor(debounceMs: number) {
    this.#debounceMs = debounceMs;
  }

  /**
   * Keeps `reason` for `key` when its request, due at `dueAt`, wins over the one pending — the
   * scheduler's rule: the earlier due time wins (a tie keeps the first); with `debounceMs`, a request
   * made by `schedule` (`debounced`) replaces one due at or after it and is due `debounceMs` later.
   * Requeues and retries (`debounced` false) are not debounced. The key's priority becomes the
   * higher of its own and `priority`.
   */
  note(key: string, reason: ReconcileReason, dueAt: number, debounced: boolean, priority: number): void {
    const old = this.#pending.get(key);
    const debounceMs = debounced ? this.#debounceMs : 0;
    if (old !== undefined && priority > old.priority) old.priority = priority;
    if (old !== undefined && (debounceMs > 0 ? old.dueAt < dueAt : old.dueAt <= dueAt)) return;
    if (old === undefined) this.#pending.set(key, { reason, dueAt: dueAt + debounceMs, priority });
    else {
      old.reason = reason;
      old.dueAt = dueAt + debounceMs;
    }
  }

  /** The highest priority of the key's pending requests, or `undefined` when it has none. */
  priorityOf(key: string): number | undefined {
    return this.#pending.get(key)?.priority;
  }

  /** The reason of the request of `key` that is starting now (and forgets it). */
  take(key: string): ReconcileReason {
    const entry = this.#pending.get(key);
    if (entry === undefined) return SCHEDULE_REASON;
    this.#pending.delete(key);
    return entry.reason;
  }

  /** Forgets every reason (the run ended; its scheduler's requests go with it). */
  clear(): void {
    this.#pending.clear();
  }
}
