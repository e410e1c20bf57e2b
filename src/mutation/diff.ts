// Field-level differences between a cached object and its snapshot, and the error that reports them.

import { ErrorCodes, KubeInformerError } from '../core/errors.js';
import { deepEqual, isObject } from '../core/json.js';
import { preview } from '../core/preview.js';

/** One changed field: its path (`metadata.labels.team`, `spec.containers[0].image`) and both values. */
export interface MutationChange {
  /** Where the change is; `""` when the values differ at the top level. */
  readonly path: string;
  /** `changed`: present on both sides with different values; `added`/`removed`: present on one side. */
  readonly kind: 'changed' | 'added' | 'removed';
  /** The value in the snapshot taken when the cache handed the object out (absent for `added`). */
  readonly before?: unknown;
  /** The value in the live object now (absent for `removed`). */
  readonly after?: unknown;
}

/** How many changes {@link diffObjects} lists at most unless told otherwise. */
export const DEFAULT_MAX_CHANGES = 20;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function child(path: string, key: string): string {
  if (IDENTIFIER.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/**
 * Lists the fields that differ between `before` (a snapshot) and `after` (the live object), walking
 * plain objects key by key and arrays index by index; any other value (Date, Map, ...) is compared
 * as a whole. Stops after `maxChanges` changes (default {@link DEFAULT_MAX_CHANGES}).
 */
export function diffObjects(before: unknown, after: unknown, maxChanges = DEFAULT_MAX_CHANGES): MutationChange[] {
  const out: MutationChange[] = [];
  walk(before, after, '', out, Math.max(1, maxChanges));
  return out;
}

function walk(a: unknown, b: unknown, path: string, out: MutationChange[], max: number): void {
  if (out.length >= max || a === b) return;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n && out.length < max; i++) {
      const p = `${path}[${i}]`;
      if (i >= a.length) out.push({ path: p, kind: 'added', after: b[i] });
      else if (i >= b.length) out.push({ path: p, kind: 'removed', before: a[i] });
      else walk(a[i], b[i], p, out, max);
    }
    return;
  }
  if (isObject(a) && isObject(b)) {
    for (const key of Object.keys(a)) {
      if (out.length >= max) return;
      const p = child(path, key);
      if (!Object.prototype.hasOwnProperty.call(b, key)) out.push({ path: p, kind: 'removed', before: a[key] });
      else walk(a[key], b[key], p, out, max);
    }
    for (const key of Object.keys(b)) {
      if (out.length >= max) return;
      if (!Object.prototype.hasOwnProperty.call(a, key)) out.push({ path: child(path, key), kind: 'added', after: b[key] });
    }
    return;
  }
  if (!deepEqual(a, b)) out.push({ path, kind: 'changed', before: a, after: b });
}

/** Renders one change as `path: before → after`, with `(absent)` for a missing side; values are cut short. */
export function formatChange(change: MutationChange, maxValueChars = 60): string {
  const side = (present: boolean, v: unknown): string => (present ? preview(v, maxValueChars) : '(absent)');
  const path = change.path === '' ? '(whole object)' : change.path;
  return `${path}: ${side(change.kind !== 'added', change.before)} → ${side(change.kind !== 'removed', change.after)}`;
}

/** The longest message a {@link CacheMutationError} carries, in characters. */
const MAX_MESSAGE_CHARS = 1000;

/**
 * Somebody changed an object after the cache handed it out (code `CACHE_MUTATED`). `key` names the
 * object and `paths` the changed fields; `diff` is one `path: before → after` line per change.
 *
 * Recovery: find the code that writes to an object it got from a lister, an index or an event
 * handler, and make it copy first (`deepCopy(obj)`): cached objects are shared by every reader.
 */
export class CacheMutationError extends KubeInformerError {
  /** The cache key of the mutated object. */
  readonly key: string;
  /** The changed field paths, e.g. `metadata.labels.team`. */
  readonly paths: readonly string[];
  /** The changes found (at most the detector's `maxChanges`). */
  readonly changes: readonly MutationChange[];
  /** The changes as text, one `path: before → after` line each. */
  readonly diff: string;

  constructor(cacheName: string, key: string, changes: readonly MutationChange[], truncated = false) {
    const lines = changes.map((c) => formatChange(c));
    const more = truncated ? ' (and more)' : '';
    let message = `cache ${cacheName}: object ${JSON.stringify(key)} was mutated after the cache handed it out: ${lines.join('; ')}${more}`;
    if (message.length > MAX_MESSAGE_CHARS) message = `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
    super(ErrorCodes.CACHE_MUTATED, message);
    this.key = key;
    this.changes = changes;
    this.paths = changes.map((c) => c.path);
    this.diff = lines.join('\n') + (truncated ? '\n…' : '');
  }
}
