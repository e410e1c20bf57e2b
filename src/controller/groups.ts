// The concurrency groups of the reconcile scheduler (option `concurrencyGroups`): how many reconciles of each group run, and the keys that wait for a slot of their group.

import type { Clock } from '../core/clock.js';
import { DelayQueue } from '../runtime/delay-queue.js';
import { misuse } from './outcomes.js';

/**
 * The concurrency groups of a scheduler: how many reconciles of each group run, and per group the keys
 * that wait for a slot (held in the scheduler's queue), best first — one is released per run that ends.
 */
export class Groups {
  readonly #keyOf: (key: string) => string;
  readonly #cap: number;
  readonly #clock: Clock;
  /** The group of each running key. */
  readonly #of = new Map<string, string>();
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, DelayQueue<string>>();

  constructor(keyOf: (key: string) => string, cap: number, clock: Clock) {
    this.#keyOf = keyOf;
    this.#cap = cap;
    this.#clock = clock;
  }

  /** The key's group; throws a `TypeError` for a `keyOf` that returns a non-string (and what it throws). */
  groupOf(key: string): string {
    const group: unknown = this.#keyOf(key);
    if (typeof group !== 'string') throw misuse(new TypeError(`ReconcileScheduler: option concurrencyGroups.keyOf must return a string, got ${typeof group} for ${key}`));
    return group;
  }

  /** Whether `group` is at its cap. */
  full(group: string): boolean {
    return (this.#running.get(group) ?? 0) >= this.#cap;
  }

  /** `top` waits for a slot of its `group`. */
  park(group: string, top: { key: string; dueAt: number; priority: number }): void {
    let waiting = this.#waiting.get(group);
    if (waiting === undefined) this.#waiting.set(group, (waiting = new DelayQueue<string>(this.#clock, () => undefined)));
    waiting.set(top.key, top.dueAt, top.priority);
  }

  /** `key` no longer waits for a slot of its group (a scheduler's `forget`). */
  forget(key: string): void {
    for (const [group, waiting] of this.#waiting) {
      if (waiting.delete(key) && waiting.size === 0) this.#waiting.delete(group);
    }
  }

  /** `key` of `group` starts. */
  started(key: string, group: string): void {
    this.#of.set(key, group);
    this.#running.set(group, (this.#running.get(group) ?? 0) + 1);
  }

  /** A run of `key` ended; returns the key of its group to release (the best waiting), if any. */
  ended(key: string): string | undefined {
    const group = this.#of.get(key);
    if (group === undefined) return undefined;
    this.#of.delete(key);
    const n = (this.#running.get(group) ?? 1) - 1;
    if (n === 0) this.#running.delete(group);
    else this.#running.set(group, n);
    const waiting = this.#waiting.get(group);
    const next = waiting?.popDue(Infinity);
    if (waiting !== undefined && waiting.size === 0) this.#waiting.delete(group);
    return next?.key;
  }
}
