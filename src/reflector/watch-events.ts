// Applies one watch event to the store, after the kind, key and resource-version checks.

import { ErrorCodes } from '../core/errors.js';
import { getResourceVersion } from '../core/types.js';
import type { WatchEvent } from '../listwatch/types.js';
import type { ReflectorContext } from './context.js';
import { tagPhase } from './context.js';
import { ResourceVersionRegressionError, UnexpectedKindError, WatchEventError, statusToError } from './errors.js';
import type { RegressionInfo } from './errors.js';
import { preview } from '../core/preview.js';

/** The annotation on the bookmark that ends a streamed initial list. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/**
 * Per-watch state of the resource-version rule (client-go v0.36): a watch opened at `""` or `"0"` first
 * sends synthetic ADDED events for existing objects in no particular version order, so their versions
 * are neither checked against nor adopted as the held version until the first non-ADDED event.
 */
export interface WatchSession {
  /** The watch started at a concrete version (or after a streamed initial list): every event counts. */
  readonly propagateFromStart: boolean;
  /** A MODIFIED, DELETED or BOOKMARK has been seen on this watch. */
  sawNonAdded: boolean;
}

/** Why `obj` is not of the reflector's kind, or `undefined` when it is (or cannot tell). */
export function kindMismatch<T>(ctx: ReflectorContext<T>, obj: unknown): string | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  const { kind, apiVersion } = obj as { kind?: unknown; apiVersion?: unknown };
  if (kind === 'Table' && (apiVersion === 'meta.k8s.io/v1' || apiVersion === 'meta.k8s.io/v1beta1')) {
    return 'an object, not a server-side Table';
  }
  if (ctx.expectedKind !== undefined && typeof kind === 'string' && kind !== '' && kind !== ctx.expectedKind) {
    return `kind ${ctx.expectedKind}`;
  }
  if (ctx.expectedApiVersion !== undefined && typeof apiVersion === 'string' && apiVersion !== '' && apiVersion !== ctx.expectedApiVersion) {
    return `apiVersion ${ctx.expectedApiVersion}`;
  }
  return undefined;
}

function reject<T>(ctx: ReflectorContext<T>, info: RegressionInfo): never {
  ctx.recorder.regression(info);
  ctx.state.repairPending = true;
  throw tagPhase(new ResourceVersionRegressionError(info), 'guard');
}

/** The key of a watch object, or a {@link WatchEventError} (code `INVALID_OBJECT`) that ends the watch. */
export function keyOf<T>(ctx: ReflectorContext<T>, type: string, obj: T): string {
  try {
    return ctx.keyFunc(obj);
  } catch (err) {
    throw tagPhase(new WatchEventError(ErrorCodes.INVALID_OBJECT, `${ctx.name}: ${type} event carries an object with no key: ${preview(obj, 120)}`, { cause: err }), 'event');
  }
}

/**
 * Applies one event of a classic watch:
 * - `ERROR` → throws its Status as an `ApiStatusError` (never reaches the store);
 * - `BOOKMARK` → advances the held version (never reaches the store; `updateResourceVersion` is told);
 * - ADDED/MODIFIED/DELETED → kind check (another kind is skipped and reported), key (none → throws,
 *   ending the watch), resource-version guard (not newer than held, or older than the `knownObjects` copy
 *   → reported, throws `RESOURCE_VERSION_REGRESSION`),
 *   then the store, then the held version advances;
 * - anything else → throws code `WATCH_DECODE`.
 */
export function applyWatchEvent<T>(ctx: ReflectorContext<T>, session: WatchSession, event: WatchEvent<T>): void {
  const { type, object } = (event ?? {}) as Partial<WatchEvent<T>>;
  if (type === 'ERROR') throw tagPhase(statusToError(ctx.name, object), 'watch');
  if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED' && type !== 'BOOKMARK') {
    throw tagPhase(new WatchEventError(ErrorCodes.WATCH_DECODE, `${ctx.name}: unknown watch event type ${preview(type, 60)}`), 'event');
  }
  if (object === null || typeof object !== 'object') {
    throw tagPhase(new WatchEventError(ErrorCodes.WATCH_DECODE, `${ctx.name}: ${type} event without an object: ${preview(event, 120)}`), 'event');
  }
  const rv = getResourceVersion(object);
  const guardActive = session.propagateFromStart || session.sawNonAdded;

  if (type === 'BOOKMARK') {
    ctx.recorder.bookmarkSeen();
    if (ctx.guard.check(rv) === 'older') {
      reject(ctx, { name: ctx.name, key: '', eventType: type, heldResourceVersion: ctx.guard.held(), eventResourceVersion: rv ?? '', reason: 'held' });
    }
    session.sawNonAdded = true;
    accept(ctx, rv);
    return;
  }

  const mismatch = kindMismatch(ctx, object);
  if (mismatch !== undefined) {
    ctx.recorder.error(new UnexpectedKindError(ctx.name, mismatch, object), 'event', 'skip');
    return;
  }
  const key = keyOf(ctx, type, object);
  // A change on a watch that started at (or passed) the held version must be strictly newer: one at the
  // held version itself is a stale version (the 2017 DELETE bug), and resuming from it would replay it.
  const verdict = guardActive ? ctx.guard.check(rv) : 'unchecked';
  if (verdict === 'older' || verdict === 'same') {
    reject(ctx, { name: ctx.name, key, eventType: type, heldResourceVersion: ctx.guard.held(), eventResourceVersion: rv ?? '', reason: 'held' });
  }
  if (ctx.knownObjects !== undefined && type !== 'DELETED') {
    const storedRv = getResourceVersion(ctx.knownObjects.getByKey(key));
    if (ctx.guard.compare(rv, storedRv) === 'older') {
      reject(ctx, {
        name: ctx.name, key, eventType: type, heldResourceVersion: ctx.guard.held(), eventResourceVersion: rv ?? '',
        reason: 'stored', storedResourceVersion: storedRv,
      });
    }
  }
  try {
    if (type === 'ADDED') ctx.store.add(object);
    else if (type === 'MODIFIED') ctx.store.update(object);
    else ctx.store.delete(object);
  } catch (err) {
    throw tagPhase(err, 'store');
  }
  ctx.recorder.eventApplied();
  if (type !== 'ADDED') session.sawNonAdded = true;
  if (guardActive || session.sawNonAdded) accept(ctx, rv);
  else ctx.guard.observe(rv);
}

/** Adopts an accepted event's version and tells the store (`updateResourceVersion`). */
function accept<T>(ctx: ReflectorContext<T>, rv: string | undefined): void {
  if (rv === undefined || rv === '') return;
  ctx.guard.advance(rv);
  try {
    ctx.store.updateResourceVersion?.(rv);
  } catch (err) {
    throw tagPhase(err, 'store');
  }
}

/** True when `obj` is the bookmark that ends a streamed initial list. */
export function isInitialEventsEnd(obj: unknown): boolean {
  const annotations = (obj as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata?.annotations;
  return annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true';
}
