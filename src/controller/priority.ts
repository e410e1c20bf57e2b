// What runs first and how many at once: the priorities of a controller's requests, the default rule that
// makes them from the request's reason, and the guard that keeps a user's priority or group function from
// dropping a request.

import type { Clock } from '../core/clock.js';
import { errorFields, RateLimitedLog, type Logger } from '../core/log.js';
import { describeValue, InvalidOptionError, validateOptions } from '../core/options.js';
import type { ReconcileReason } from './context.js';

/**
 * The two priorities the runtime uses (controller-runtime's numbers: higher runs first). `high` (`0`):
 * a change someone made — a watch event of an object that changed, a requeue a reconcile asked for,
 * `controller.schedule`. `low` (`-100`): work that re-checks what did not change — the initial list and
 * the replay of the cache when a controller starts, resyncs, relists, a gained shard or namespace.
 * Any finite number is a priority; these are the ones {@link defaultPriority} returns.
 */
export const Priority = Object.freeze({
  /** A change: `0`. */
  high: 0,
  /** A re-check of what did not change: `-100`. */
  low: -100,
});

/**
 * Decides the priority of a request for `key` made for `reason` (higher runs first among due keys).
 * Must return a finite number and not throw: in a `Controller` a throw or another value is logged,
 * counted (`stats().hookFailures`) and the request kept at {@link defaultPriority}'s priority — never dropped.
 */
export type PriorityFunction = (key: string, reason: ReconcileReason) => number;

/**
 * The built-in {@link PriorityFunction}: {@link Priority}`.low` for an add of the initial list (or of the
 * cache replayed when the controller started), an update whose old and new objects have the same
 * `resourceVersion` (an informer resync, a relist that found the object unchanged), a `resync`, a gained
 * `shard` and an added `namespace`; {@link Priority}`.high` for every other watch event (a changed
 * object, a deletion), a `requeue` and a `schedule`. A retry keeps the priority its failed run started
 * with (the scheduler's rule, whatever this function says for `retry`).
 */
export function defaultPriority(_key: string, reason: ReconcileReason): number {
  switch (reason.kind) {
    case 'watch':
      return reason.initial || reason.unchanged === true ? Priority.low : Priority.high;
    case 'resync':
    case 'shard':
    case 'namespace':
      return Priority.low;
    default:
      return Priority.high;
  }
}

/**
 * Groups of keys that share a concurrency cap of their own (Pepr's reconcile strategies): at most
 * `concurrency` reconciles of one group run at once, within the controller's `concurrency`.
 */
export interface ConcurrencyGroups {
  /** The group of a key: `(key) => key.split('/')[0]` groups by namespace. Must return a string and not throw. */
  keyOf: (key: string) => string;
  /** Reconciles of one group at once. Default `1`. */
  concurrency?: number;
}

/** Checks a `concurrencyGroups` option (of `owner`): `INVALID_OPTION` for a bad shape. */
export function checkConcurrencyGroups(owner: string, groups: unknown): ConcurrencyGroups | undefined {
  if (groups === undefined) return undefined;
  if (typeof groups !== 'object' || groups === null || Array.isArray(groups)) {
    throw new InvalidOptionError(`${owner}: option concurrencyGroups must be an object { keyOf, concurrency? }, got ${describeValue(groups)}`);
  }
  validateOptions(`${owner}.concurrencyGroups`, groups, { keyOf: 'function', concurrency: 'positiveCount' });
  if ((groups as ConcurrencyGroups).keyOf === undefined) throw new InvalidOptionError(`${owner}: option concurrencyGroups.keyOf is required (a function from a key to its group)`);
  return groups as ConcurrencyGroups;
}

/** The group of a key whose `keyOf` failed: a group of its own (no cap beyond the controller's). */
const ungrouped = (key: string): string => `\u0000${key}`;

/**
 * A controller's priorities (its `priority` and `concurrencyGroups` options): the priority of each
 * request, and the group of each key, so that a bad function never drops a request — a throw or a value
 * of the wrong type is logged (rate-limited: one line per function and kind of failure per 30 s, with a count), counted
 * (`failures`), and replaced: the priority by {@link defaultPriority}'s, the group by a group of the
 * key's own ({@link ungrouped}).
 */
export class RequestPriorities {
  readonly #name: string;
  readonly #fn: PriorityFunction | false;
  readonly #log: RateLimitedLog;
  /** Calls that threw or returned a bad value. */
  failures = 0;

  /** `fn`: the `priority` option (`false`: every request `0`, first due first started); `groups` the `concurrencyGroups` option (checked here). */
  constructor(name: string, fn: PriorityFunction | false | undefined, groups: unknown, logger: Logger, clock: Clock) {
    checkConcurrencyGroups(`Controller ${name}`, groups);
    if (fn !== undefined && fn !== false && typeof fn !== 'function') {
      throw new InvalidOptionError(`Controller ${name}: option priority must be a function (key, reason) => number, or false, got ${typeof fn}`);
    }
    this.#name = name;
    this.#fn = fn ?? defaultPriority;
    this.#log = new RateLimitedLog(logger, clock);
  }

  /** The priority of a request for `key` made for `reason`. */
  of(key: string, reason: ReconcileReason): number {
    const fn = this.#fn;
    if (fn === defaultPriority) return defaultPriority(key, reason);
    return fn === false ? 0 : this.#call(fn, key, reason);
  }

  /** `fn(key, reason)`, or the default priority when it throws or returns something that is not a finite number. */
  #call(fn: PriorityFunction, key: string, reason: ReconcileReason): number {
    let value: unknown;
    try {
      value = fn(key, reason);
    } catch (err) {
      return this.#priorityFailed('priority threw', key, reason, `threw: ${err instanceof Error ? err.message : String(err)}`, errorFields(err));
    }
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    return this.#priorityFailed('priority value', key, reason, `returned ${describeValue(value)}, not a finite number`, {});
  }

  /** The `concurrencyGroups` option with a `keyOf` that never throws: the key's own group when it throws or returns a non-string. */
  groups(option: ConcurrencyGroups | undefined): ConcurrencyGroups | undefined {
    if (option === undefined) return undefined;
    const keyOf = option.keyOf;
    const groupOf = (key: string): string => {
      let value: unknown;
      try {
        value = keyOf(key);
      } catch (err) {
        return this.#groupFailed('group threw', key, `threw: ${err instanceof Error ? err.message : String(err)}`, errorFields(err));
      }
      return typeof value === 'string' ? value : this.#groupFailed('group value', key, `returned ${describeValue(value)}, not a string`, {});
    };
    return { keyOf: groupOf, concurrency: option.concurrency };
  }

  #priorityFailed(kind: string, key: string, reason: ReconcileReason, what: string, fields: object): number {
    this.failures++;
    const priority = defaultPriority(key, reason);
    this.#log.log('error', kind, `controller ${this.#name}: option priority ${what} for ${key}; the request keeps the default priority ${priority}`, { key, ...fields });
    return priority;
  }

  #groupFailed(kind: string, key: string, what: string, fields: object): string {
    this.failures++;
    this.#log.log('error', kind, `controller ${this.#name}: option concurrencyGroups.keyOf ${what} for ${key}; the key runs in no group`, { key, ...fields });
    return ungrouped(key);
  }
}
