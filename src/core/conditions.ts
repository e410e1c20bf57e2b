// Status conditions with apimachinery's meta.SetStatusCondition semantics: the transition time moves only when the status does.

import { InvalidOptionError, validateOptions } from './options.js';

/** A status condition (meta/v1 `Condition`), as a resource's `status.conditions` holds it. */
export interface Condition {
  /** The condition's type, in CamelCase (`Ready`, `Available`); one condition per type. */
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: 'True' | 'False' | 'Unknown';
  /** Why the condition is as it is, in CamelCase (`AllChildrenReady`). */
  reason: string;
  /** For people: the details. */
  message: string;
  /** When `status` last changed (RFC 3339, whole seconds). */
  lastTransitionTime: string;
  /** The `metadata.generation` the condition was computed from. */
  observedGeneration?: number;
}

/** The condition {@link setCondition} takes: `lastTransitionTime` is filled in when absent. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'message'> & {
  /** For people: the details. Default `''`. */
  message?: string;
  /** When `status` changed. Default: now, when the status changes (kept from the old condition otherwise). */
  lastTransitionTime?: string;
};

/** Options of {@link setCondition}. */
export interface SetConditionOptions {
  /** The wall clock the transition time is read from. Default `() => new Date()`. */
  now?: () => Date;
}

/** What {@link setCondition} returns. */
export interface SetConditionResult {
  /** The new list (a copy; the list given is never changed). */
  conditions: Condition[];
  /** Whether anything differs from the list given: write the status only when it does. */
  changed: boolean;
}

const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const STATUSES = ['True', 'False', 'Unknown'];

/** A metadata timestamp: RFC 3339 in UTC, whole seconds (`2026-11-24T10:00:00Z`), as the API server writes them. */
export function metaTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

function check(condition: ConditionInput): void {
  if (typeof condition.type !== 'string' || condition.type === '') throw new InvalidOptionError(`setCondition: the condition needs a type, got ${JSON.stringify(condition.type)}`);
  if (!STATUSES.includes(condition.status)) {
    throw new InvalidOptionError(`setCondition: condition ${condition.type}: status must be 'True', 'False' or 'Unknown', got ${JSON.stringify(condition.status)}`);
  }
  if (typeof condition.reason !== 'string' || !REASON.test(condition.reason) || condition.reason.length > 1024) {
    throw new InvalidOptionError(`setCondition: condition ${condition.type}: reason must be CamelCase letters, digits, '_', ',' or ':' (the server refuses others), got ${JSON.stringify(condition.reason)}`);
  }
}

/**
 * Sets `condition` in `conditions`, as apimachinery's `meta.SetStatusCondition`: a new type is
 * appended (its `lastTransitionTime` the one given, or now); an existing one takes the new `status`
 * — and a new `lastTransitionTime` (the one given, or now) only when the status changed — and the
 * new `reason`, `message` and `observedGeneration`. Returns a new list and whether anything changed;
 * `conditions` (which may be a cached, read-only list or `undefined`) is not touched. A condition
 * without a type, with a status other than True/False/Unknown, or a reason the server would refuse
 * throws `INVALID_OPTION`.
 */
export function setCondition(conditions: readonly Readonly<Condition>[] | undefined, condition: ConditionInput, options: SetConditionOptions = {}): SetConditionResult {
  validateOptions('setCondition', options, { now: 'function' });
  check(condition);
  const now = options.now ?? (() => new Date());
  const list = (conditions ?? []).map((c) => ({ ...c }));
  const i = list.findIndex((c) => c.type === condition.type);
  const message = condition.message ?? '';
  if (i === -1) {
    const added: Condition = { ...condition, message, lastTransitionTime: condition.lastTransitionTime ?? metaTimestamp(now()) };
    if (added.observedGeneration === undefined) delete added.observedGeneration;
    list.push(added);
    return { conditions: list, changed: true };
  }
  const old = list[i];
  let changed = false;
  if (old.status !== condition.status) {
    old.status = condition.status;
    old.lastTransitionTime = condition.lastTransitionTime ?? metaTimestamp(now());
    changed = true;
  }
  if (old.reason !== condition.reason) {
    old.reason = condition.reason;
    changed = true;
  }
  if (old.message !== message) {
    old.message = message;
    changed = true;
  }
  if (old.observedGeneration !== condition.observedGeneration) {
    if (condition.observedGeneration === undefined) delete old.observedGeneration;
    else old.observedGeneration = condition.observedGeneration;
    changed = true;
  }
  return { conditions: list, changed };
}

/** The condition of `type`, or `undefined` (apimachinery's `FindStatusCondition`). */
export function findCondition<C extends Pick<Condition, 'type'>>(conditions: readonly C[] | undefined, type: string): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` is present with status `True` (`IsStatusConditionTrue`). */
export function isConditionTrue(conditions: readonly { type: string; status: string }[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** True when the condition of `type` is present with status `False` (`IsStatusConditionFalse`). */
export function isConditionFalse(conditions: readonly { type: string; status: string }[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'False';
}

/** What {@link removeCondition} returns. */
export interface RemoveConditionResult<C> {
  /** The new list (a copy). */
  conditions: C[];
  /** Whether a condition of that type was there. */
  removed: boolean;
}

/** The list without the condition of `type`, and whether it was there (`RemoveStatusCondition`). `conditions` is not touched. */
export function removeCondition<C extends Pick<Condition, 'type'>>(conditions: readonly C[] | undefined, type: string): RemoveConditionResult<C> {
  const list = (conditions ?? []).filter((c) => c.type !== type);
  return { conditions: list, removed: list.length !== (conditions?.length ?? 0) };
}
