// Field ownership on the fake API server: the leaf fields of an object, and the managedFields every write updates.

import type { KubeObject } from '../../core/types.js';
import { fieldPaths, toFieldsV1, type ManagedFieldsEntry } from '../../core/managed-fields.js';
import { deepEqual, getMember, isObject } from '../../core/index.js';
import { metaTime } from './finalizers.js';

/** A field path: `f:` steps only (the fake treats lists as atomic values). */
export type Path = readonly string[];

/** The fields the API server never records as owned (identity and server-kept metadata). */
const IGNORED = new Set([
  'f:apiVersion',
  'f:kind',
  'f:metadata/f:name',
  'f:metadata/f:namespace',
  'f:metadata/f:uid',
  'f:metadata/f:resourceVersion',
  'f:metadata/f:generation',
  'f:metadata/f:creationTimestamp',
  'f:metadata/f:managedFields',
  'f:metadata/f:selfLink',
  'f:metadata/f:deletionTimestamp',
  'f:metadata/f:deletionGracePeriodSeconds',
]);

/** The key a path is compared by. */
export function pathKey(path: Path): string {
  return path.join('/');
}

/**
 * The leaf paths of `obj` (objects recurse; scalars, lists and empty objects are leaves), without
 * the ignored fields; `only` keeps the paths under one top-level field (`status`).
 */
export function leafPaths(obj: unknown, only?: string, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (!isObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (prefix.length === 0 && only !== undefined && k !== only) continue;
    const path = [...prefix, `f:${k}`];
    const key = pathKey(path);
    if (IGNORED.has(key)) continue;
    if (isObject(v) && Object.keys(v).length > 0) out.push(...leafPaths(v, undefined, path));
    else out.push(path); // a scalar, a list, or an empty map (recorded as a leaf, as kube-apiserver does)
  }
  return out;
}

/** The value at a path of `f:` steps (a trailing `.` names the node itself), or `undefined`. */
export function valueAt(obj: unknown, path: Path): unknown {
  let cur: unknown = obj;
  for (const step of path) {
    if (step === '.') break;
    if (!isObject(cur)) return undefined;
    cur = getMember(cur, step.slice(2));
  }
  return cur;
}

/** True when one path is the other or lies below it. */
export function overlaps(a: Path, b: Path): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Who a managedFields entry is: manager, operation and subresource (as the server keys them). */
export function identityOf(e: ManagedFieldsEntry): string {
  return `${e.manager ?? ''}\u0000${e.operation ?? ''}\u0000${e.subresource ?? ''}`;
}

/** An entry's owned paths: leaves, and `.` for a map whose existence alone is owned. */
export function ownedPaths(e: ManagedFieldsEntry): Path[] {
  return fieldPaths(e.fieldsV1 ?? {});
}

/** An entry with `paths` as its fields. */
export function entryWith(e: ManagedFieldsEntry, paths: readonly Path[]): ManagedFieldsEntry {
  return { ...e, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(paths) };
}

/**
 * The managedFields after a create, update or patch (operation `Update`) by `manager`: the fields
 * whose value the write changed (or added) move to the manager's Update entry; fields the write
 * removed leave every entry; empty entries are dropped.
 */
export function recordUpdate(prev: KubeObject | undefined, next: KubeObject, manager: string, subresource: string | undefined, apiVersion: string, now: () => Date): ManagedFieldsEntry[] {
  const entries = (prev?.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
  const before = new Map((prev === undefined ? [] : leafPaths(prev)).map((p) => [pathKey(p), p]));
  const after = leafPaths(next);
  const afterKeys = new Set(after.map(pathKey));
  const changed = after.filter((p) => !before.has(pathKey(p)) || !deepEqual(valueAt(prev, p), valueAt(next, p)));
  const changedKeys = new Set(changed.map(pathKey));
  const me: ManagedFieldsEntry = { manager, operation: 'Update', apiVersion, time: metaTime(now), ...(subresource ? { subresource } : {}) };
  const myId = identityOf(me);
  const out: ManagedFieldsEntry[] = [];
  let mine: Path[] = [];
  for (const e of entries) {
    const kept = ownedPaths(e).filter((p) => afterKeys.has(pathKey(p)) && (identityOf(e) === myId || !changedKeys.has(pathKey(p))));
    if (identityOf(e) === myId) mine = kept;
    else if (kept.length > 0) out.push(entryWith(e, kept));
  }
  const union = new Map([...mine, ...changed].map((p) => [pathKey(p), p]));
  if (union.size > 0) out.push(entryWith(me, [...union.values()]));
  return out;
}

/** The entries of a stored object, or — when it has none — every field owned by `before-first-apply`. */
export function startingEntries(prev: KubeObject | undefined, apiVersion: string, now: () => Date): ManagedFieldsEntry[] {
  if (prev === undefined) return [];
  const entries = (prev.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
  if (entries.length > 0) return entries;
  const all = leafPaths(prev);
  return all.length === 0 ? [] : [entryWith({ manager: 'before-first-apply', operation: 'Update', apiVersion, time: metaTime(now) }, all)];
}
