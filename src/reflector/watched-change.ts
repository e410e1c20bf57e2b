// The common watch event, taken by a short path: what step() does for it, without what step() builds.
//
// Nearly every event of an open watch is an ADDED, MODIFIED or DELETED newer than the held version.
// step() handles it by building a verdict, an effects collector, two store operations, the version
// comparisons' answers (the same two versions compared twice), a report and a transition: about a dozen
// objects and eight scans of the version strings per event, which a real server's one event per chunk
// pays cold each time (bench/notes.md, issue 29). watchedChange() recognises that one case and computes
// the same outcome directly; for anything else it answers `undefined` and step() decides, so the table
// in machine.ts stays the one source of behaviour. test/reflector/watched-change.test.ts checks, over
// every combination of state, memory, options and event it can build, that whenever this path answers,
// step() gives exactly the same next state, store operations and reports.

import { compareComparable, isComparableResourceVersion } from '../core/index.js';
import { getResourceVersion } from '../core/types.js';
import type { WatchEvent } from '../listwatch/types.js';
import type { State } from './machine.js';
import type { MachineEnv } from './machine-types.js';
import type { Memory } from './requests.js';
import { kindMismatch } from './watch-event.js';

/**
 * What `step(state, { kind: 'event', event })` gives for the common event, in the form the reflector
 * applies it: the store operation `op` with `object`, then the `resourceVersion` operation with
 * `resourceVersion`; then one `event` report (`type`, `key`, `resourceVersion`, outcome `applied`);
 * and `state` as the next state.
 */
export interface WatchedChange<T> {
  /** The store operation for the event's object. */
  readonly op: 'add' | 'update' | 'delete';
  /** The event's type. */
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The event's object. */
  readonly object: T;
  /** The object's key. */
  readonly key: string;
  /** The event's version, newer than the one held: the version the store and the next state hold. */
  readonly resourceVersion: string;
  /** The next state: still watching. */
  readonly state: State<T>;
}

const OPS = { ADDED: 'add', MODIFIED: 'update', DELETED: 'delete' } as const;

/**
 * The common case of an event in the `watching` state, or `undefined` when `event` is anything else
 * (then `step()` decides). It is: an ADDED, MODIFIED or DELETED whose object has a key, is of the
 * expected kind and carries a version newer than the held one, on a watch whose guard applies (it
 * started at a concrete version, or has seen a non-ADDED event), with the guard on, and no cached copy
 * to consult. Never throws.
 */
export function watchedChange<T>(state: Extract<State<T>, { kind: 'watching' }>, event: WatchEvent<T>, env: MachineEnv<T>): WatchedChange<T> | undefined {
  const { mem, session } = state;
  // A watch from "" or "0" observes the versions of its first ADDED events instead of adopting them.
  if (!(session.fromStart || session.sawNonAdded)) return undefined;
  const { versions } = mem;
  const held = versions.held;
  if (!versions.enabled || !isComparableResourceVersion(held)) return undefined;
  const { type, object } = event as { type?: unknown; object?: unknown };
  if (type !== 'MODIFIED' && type !== 'ADDED' && type !== 'DELETED') return undefined;
  if (object === null || typeof object !== 'object') return undefined;
  const rv = getResourceVersion(object);
  if (!isComparableResourceVersion(rv) || compareComparable(rv, held) <= 0) return undefined;
  // An observed version newer than held makes step() read the cached copy's version (knownObjects).
  const { observed } = versions;
  if (observed !== undefined && env.storedVersion !== undefined && type !== 'DELETED' && compareComparable(observed, held) > 0) return undefined;
  if (kindMismatch(env, object) !== undefined) return undefined;
  let key: string;
  try {
    key = env.keyFunc(object as T);
  } catch {
    return undefined;
  }
  const sawNonAdded = session.sawNonAdded || type !== 'ADDED';
  const next: Memory = {
    versions: { held: rv, observed, enabled: true },
    consistent: mem.consistent,
    pagedCache: mem.pagedCache,
    repair: mem.repair,
    // An event a watch carried: the 410 relist it followed, if any, is served.
    expiredRelist: false,
    // An event a watch carried: the resource is served.
    absent: false,
  };
  const nextSession = sawNonAdded === session.sawNonAdded && session.delivered ? session : { ...session, sawNonAdded, delivered: true };
  return { op: OPS[type], type, object: object as T, key, resourceVersion: rv, state: { kind: 'watching', mem: next, session: nextSession } };
}
