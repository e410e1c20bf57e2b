// The controller's sources: the resources it watches as the builder describes them, the handler that
// turns their events into primary keys, and the check that their informers run.

import type { ResourceDescriptor } from '../core/resources.js';
import type { ResourceCacheOptions } from '../informer/index.js';
import { InformerStoppedError } from '../informer/errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from '../informer/handler.js';
import { gvrKey, type SharedInformerFactory } from '../informer/factory.js';
import { toError } from '../core/errors.js';
import type { ReconcileReason } from './context.js';
import type { Source, SourceInformer } from './writes.js';
import { NotStartedError } from './errors.js';
import { unwrapTombstone } from './mapping.js';
import type { ChangeEvent, Predicate } from './predicates.js';
import type { SourceRole } from './sharded.js';

/** A watched resource as the {@link ControllerBuilder} describes it. */
export interface WatchSpec {
  /** `for` (the primary), `owns` or `watches`. */
  readonly role: SourceRole;
  readonly resource: ResourceDescriptor<unknown>;
  /** The primary keys an object concerns. */
  readonly keys: (obj: unknown) => string[];
  /** All must pass for an event to count. */
  readonly predicates: ReadonlyArray<Predicate<unknown>>;
  /** How the resource is cached (the factory's `forResource` options). */
  readonly cache: ResourceCacheOptions<unknown>;
}

/** A watched resource with the informer of the current run. */
export interface WatchSource extends WatchSpec, Source {}

/** The {@link ReconcileReason}s of one source's events, made once (an event allocates none). */
function watchReasons(source: WatchSpec): Record<'listed' | 'add' | 'update' | 'unchanged' | 'delete', ReconcileReason> {
  const resource = gvrKey(source.resource);
  const reason = (event: 'add' | 'update' | 'delete', initial = false): ReconcileReason => Object.freeze({ kind: 'watch', role: source.role, resource, event, initial });
  const unchanged: ReconcileReason = Object.freeze({ kind: 'watch', role: source.role, resource, event: 'update', initial: false, unchanged: true });
  return { listed: reason('add', true), add: reason('add'), update: reason('update'), unchanged, delete: reason('delete') };
}

/** The `resourceVersion` of an object from a cache (undefined when it has none). */
const versionOf = (obj: unknown): unknown => (obj as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;

/** True when an update changed nothing: both states have one `resourceVersion` (a resync, a relist that found it so). */
function unchangedUpdate(oldObject: unknown, object: unknown): boolean {
  const version = versionOf(object);
  return version !== undefined && version === versionOf(oldObject);
}

interface LifecycleMeta {
  metadata?: { finalizers?: readonly string[]; deletionTimestamp?: string };
}

/**
 * True when an update of an object changed its finalizers or its `deletionTimestamp`: the steps of
 * the finalizer protocol, which a primary's predicates never drop (`generationChanged` would drop the
 * update that added a finalizer — adding one bumps no generation — and the reconcile that follows it
 * would never come).
 */
function lifecycleChanged(oldObject: unknown, object: unknown): boolean {
  const o = (oldObject as LifecycleMeta | null)?.metadata;
  const n = (object as LifecycleMeta | null)?.metadata;
  if ((o?.deletionTimestamp ?? undefined) !== (n?.deletionTimestamp ?? undefined)) return true;
  const a = o?.finalizers ?? [];
  const b = n?.finalizers ?? [];
  if (a.length !== b.length) return true;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return true;
  return false;
}

/**
 * The handler the controller adds to a source's informer: each event that passes the source's
 * predicates becomes the primary keys it concerns (both states of an update), handed to `schedule`
 * with the event as the reason. An update of the primary (`for`) that changes its finalizers or its
 * `deletionTimestamp` passes whatever the predicates say (see {@link lifecycleChanged}).
 */
export function sourceHandler(source: WatchSource, schedule: (key: string, reason: ReconcileReason) => void): ResourceEventHandler<unknown> {
  const reasons = watchReasons(source);
  const primary = source.role === 'for';
  const enqueue = (event: ChangeEvent<unknown>, reason: ReconcileReason): void => {
    const always = primary && event.type === 'update' && lifecycleChanged(event.oldObject, event.object);
    if (!always) for (const predicate of source.predicates) if (!predicate(event)) return;
    for (const key of source.keys(event.object)) if (key !== '') schedule(key, reason);
    if (event.type === 'update') for (const key of source.keys(event.oldObject)) if (key !== '') schedule(key, reason);
  };
  if (source.predicates.length === 0) {
    // No predicate to show the event to: only keys (the hot path of most primaries).
    const scheduleKeys = (obj: unknown, reason: ReconcileReason): void => {
      for (const key of source.keys(obj)) if (key !== '') schedule(key, reason);
    };
    return {
      onAdd: (obj, initial) => scheduleKeys(obj, initial ? reasons.listed : reasons.add),
      onUpdate: (oldObject, object) => {
        const reason = oldObject === object || unchangedUpdate(oldObject, object) ? reasons.unchanged : reasons.update;
        scheduleKeys(object, reason);
        scheduleKeys(oldObject, reason);
      },
      onDelete: (obj) => scheduleKeys(unwrapTombstone(obj), reasons.delete),
    };
  }
  return {
    onAdd: (object, initial) => enqueue({ type: 'add', object }, initial ? reasons.listed : reasons.add),
    onUpdate: (oldObject, object) => enqueue({ type: 'update', object, oldObject }, oldObject === object || unchangedUpdate(oldObject, object) ? reasons.unchanged : reasons.update),
    onDelete: (obj) => enqueue({ type: 'delete', object: unwrapTombstone(obj) }, reasons.delete),
  };
}

/**
 * Throws `INFORMER_STOPPED` when one of the factory's informers of a controller has stopped, and
 * `NOT_STARTED` when one was never started (the factory was not started before `controller.run`).
 */
export function checkInformers(name: string, shared: ReadonlyArray<SourceInformer | undefined>): void {
  const informers = shared.filter((i) => i !== undefined);
  const stopped = informers.find((i) => i.isStopped());
  if (stopped !== undefined) {
    throw new InformerStoppedError(`controller ${name}: informer ${stopped.name} has stopped; create a new factory and controller`);
  }
  const idle = informers.filter((i) => !i.isStarted()).map((i) => i.name);
  if (idle.length > 0) {
    throw new NotStartedError(
      `controller ${name}: informer${idle.length > 1 ? 's' : ''} ${[...new Set(idle)].join(', ')} not started; call factory.start(signal) before controller.run(signal)`,
    );
  }
}

/** Ends a controller's run with `INFORMER_STOPPED` when its factory stops (fails, or its own signal aborts) while the controller runs. */
export async function watchFactory(factory: SharedInformerFactory, name: string, signal: AbortSignal, running: AbortSignal): Promise<void> {
  try {
    await factory.shutdown(signal);
  } catch (err) {
    if (running.aborted) return; // stopping anyway: what ended the factory is its own run's to report
    throw new InformerStoppedError(`controller ${name}: an informer failed`, { cause: err });
  }
  if (!running.aborted) throw new InformerStoppedError(`controller ${name}: its informer factory stopped while the controller was running`);
}

/** Waits for the controller's handlers to sync; a failure (not a stop) goes to `fail`. */
export async function waitForSync(registrations: SharedInformerRegistration[], runSignal: AbortSignal, fail: (err: Error) => void): Promise<void> {
  try {
    await Promise.all(registrations.map((r) => r.whenSynced(runSignal)));
  } catch (err) {
    if (!runSignal.aborted) fail(toError(err));
  }
}
