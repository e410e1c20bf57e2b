// Predicates: which informer events of a watch reach the controller at all.

import type { DeepReadonly } from '../core/types.js';

/**
 * One informer event as a predicate sees it. `add` and `delete` carry the object; `update` carries
 * both states. A delete noticed only by a relist carries the last known state (the tombstone's `obj`).
 */
export type ChangeEvent<T> =
  | {
      /** An object appeared (or was listed). */
      readonly type: 'add';
      /** The object. */
      readonly object: DeepReadonly<T>;
    }
  | {
      /** An object changed (or was re-delivered by a resync). */
      readonly type: 'update';
      /** The new state. */
      readonly object: DeepReadonly<T>;
      /** The state the cache held before. */
      readonly oldObject: DeepReadonly<T>;
    }
  | {
      /** An object was deleted. */
      readonly type: 'delete';
      /** Its last known state. */
      readonly object: DeepReadonly<T>;
    };

/**
 * Decides whether an event of a watch requests a reconcile (true) or is dropped (false). Every
 * predicate given to one watch must pass (controller-runtime's rule) — except for an update of the
 * primary (`for`) that changes its `metadata.finalizers` or `metadata.deletionTimestamp`, which the
 * controller always passes: the finalizer protocol's steps are never filtered out. A predicate must be cheap and
 * must not throw: it runs on the informer's delivery path, and a throw stops the controller (the
 * `run()` contract: a handler error is never swallowed).
 */
export type Predicate<T = unknown> = (event: ChangeEvent<T>) => boolean;

interface Meta {
  generation?: number;
  resourceVersion?: string;
  labels?: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
}

function meta(obj: unknown): Meta {
  return (obj as { metadata?: Meta } | null)?.metadata ?? {};
}

function sameRecord(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  if (a === b) return true;
  const ak = a === undefined ? [] : Object.keys(a);
  const bk = b === undefined ? [] : Object.keys(b);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (a![k] !== b?.[k]) return false;
  return true;
}

/** Builds a predicate that passes adds and deletes, and updates for which `changed(old, new)` is true. */
function onUpdate(changed: (oldMeta: Meta, newMeta: Meta) => boolean): <T>(event: ChangeEvent<T>) => boolean {
  return (event) => event.type !== 'update' || changed(meta(event.oldObject), meta(event.object));
}

const generationChanged = onUpdate((o, n) => o.generation === undefined || n.generation === undefined || o.generation !== n.generation);

const labelsChanged = onUpdate((o, n) => !sameRecord(o.labels, n.labels));

const annotationsChanged = onUpdate((o, n) => !sameRecord(o.annotations, n.annotations));

const resourceVersionChanged = onUpdate((o, n) => o.resourceVersion !== n.resourceVersion);

function allOf<T>(...predicates: Array<Predicate<T>>): Predicate<T> {
  return (event) => predicates.every((p) => p(event));
}

function anyOf<T>(...predicates: Array<Predicate<T>>): Predicate<T> {
  return (event) => predicates.some((p) => p(event));
}

function not<T>(predicate: Predicate<T>): Predicate<T> {
  return (event) => !predicate(event);
}

/**
 * The built-in {@link Predicate}s and their combinators, for the `predicates` option of `for`, `owns`
 * and `watches`: `{ predicates: [predicates.generationChanged] }`.
 */
export const predicates = Object.freeze({
  /**
   * Passes an update only when `metadata.generation` changed — the spec changed, not the status or the
   * metadata — so a controller that writes its own status does not reconcile itself in a loop. Unlike
   * controller-runtime's `GenerationChangedPredicate`, an update where either state has no generation
   * passes: resources that keep no generation (ConfigMaps, Secrets) would otherwise never be seen to
   * change. Adds and deletes always pass.
   *
   * The start of a deletion passes: the API server bumps the generation when it sets
   * `deletionTimestamp` on an object that has one.
   *
   * Warning: it drops informer resyncs (same generation) too, and changes to labels, annotations and
   * finalizers; a controller that needs those combines it with another predicate through
   * `predicates.anyOf`. The primary's own finalizer and `deletionTimestamp` changes are the exception:
   * the controller passes them whatever its predicates (so `finalizer()` works behind this one).
   */
  generationChanged,
  /** Passes an update only when `metadata.labels` changed (added, removed or a value changed). Adds and deletes pass. */
  labelsChanged,
  /** Passes an update only when `metadata.annotations` changed. Adds and deletes pass. */
  annotationsChanged,
  /**
   * Passes an update only when `metadata.resourceVersion` changed: drops the re-deliveries of an
   * informer resync or relist, where both states are the same version. Adds and deletes pass.
   */
  resourceVersionChanged,
  /** Passes when every one of `predicates` passes (also what a list of predicates on one watch means). */
  allOf,
  /** Passes when at least one of `predicates` passes: `anyOf(generationChanged, labelsChanged)`. */
  anyOf,
  /** Passes what `predicate` drops and drops what it passes. */
  not,
});
