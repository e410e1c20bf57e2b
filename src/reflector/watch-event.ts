// The one check of a watch event, shared by the watch and the streaming list: what the event is.

import type { ApiStatusError } from '../core/errors.js';
import { ErrorCodes } from '../core/errors.js';
import { preview } from '../core/preview.js';
import { getResourceVersion } from '../core/types.js';
import { UnexpectedKindError, WatchEventError, statusToError } from './errors.js';

/** The annotation on the bookmark that ends a streamed initial list. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** What {@link inspectWatchEvent} needs to know about the reflector (its options). */
export interface EventRules<T> {
  /** The reflector's name, for messages. */
  readonly name: string;
  /** The key of an object; a throw means the object has no key. */
  readonly keyFunc: (obj: T) => string;
  /** Objects whose `kind` is set and differs are skipped. */
  readonly expectedKind: string | undefined;
  /** Objects whose `apiVersion` is set and differs are skipped. */
  readonly expectedApiVersion: string | undefined;
}

/**
 * What a watch event is, before any resource-version rule:
 * - `status`: an `ERROR` event; its Status as an `ApiStatusError` (code `EXPIRED` for 410);
 * - `invalid`: an unknown type, no object, or an object without a key (`WatchEventError`);
 * - `foreign`: an object of another kind or apiVersion, or a server-side Table (`UnexpectedKindError`);
 * - `bookmark`: a BOOKMARK, with its version (`""` when it has none) and whether it ends a streamed list;
 * - `change`: an ADDED, MODIFIED or DELETED with its key and version.
 */
export type EventVerdict<T> =
  | { readonly kind: 'status'; readonly type: 'ERROR'; readonly error: ApiStatusError }
  | { readonly kind: 'invalid'; readonly type: string; readonly error: WatchEventError }
  | { readonly kind: 'foreign'; readonly type: string; readonly error: UnexpectedKindError; readonly resourceVersion: string }
  | { readonly kind: 'bookmark'; readonly type: 'BOOKMARK'; readonly resourceVersion: string; readonly initialEventsEnd: boolean }
  | {
      readonly kind: 'change';
      readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
      readonly object: T;
      readonly key: string;
      readonly resourceVersion: string;
    };

/** Why `obj` is not of the expected kind, or `undefined` when it is (or when that cannot be told). */
export function kindMismatch<T>(rules: EventRules<T>, obj: object): string | undefined {
  const { kind, apiVersion } = obj as { kind?: unknown; apiVersion?: unknown };
  if (kind === 'Table' && (apiVersion === 'meta.k8s.io/v1' || apiVersion === 'meta.k8s.io/v1beta1')) {
    return 'an object, not a server-side Table';
  }
  if (rules.expectedKind !== undefined && typeof kind === 'string' && kind !== '' && kind !== rules.expectedKind) {
    return `kind ${rules.expectedKind}`;
  }
  if (rules.expectedApiVersion !== undefined && typeof apiVersion === 'string' && apiVersion !== '' && apiVersion !== rules.expectedApiVersion) {
    return `apiVersion ${rules.expectedApiVersion}`;
  }
  return undefined;
}

/** True when `obj` is the bookmark that ends a streamed initial list. */
export function isInitialEventsEnd(obj: unknown): boolean {
  const annotations = (obj as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata?.annotations;
  return annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true';
}

/**
 * Classifies one watch event, in this order: `ERROR`; an unknown type; no object; BOOKMARK; another
 * kind (or a Table); no key. Never throws (a throwing `keyFunc` becomes `invalid`), never looks at the
 * reflector's resource version: the state machine applies those rules to the verdict.
 */
export function inspectWatchEvent<T>(rules: EventRules<T>, event: unknown): EventVerdict<T> {
  const { type, object } = (event ?? {}) as { type?: unknown; object?: unknown };
  if (type === 'ERROR') return { kind: 'status', type, error: statusToError(rules.name, object) };
  if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED' && type !== 'BOOKMARK') {
    const error = new WatchEventError(ErrorCodes.WATCH_DECODE, `${rules.name}: unknown watch event type ${preview(type, 60)}`);
    return { kind: 'invalid', type: String(type), error };
  }
  if (object === null || typeof object !== 'object') {
    const error = new WatchEventError(ErrorCodes.WATCH_DECODE, `${rules.name}: ${type} event without an object: ${preview(event, 120)}`);
    return { kind: 'invalid', type, error };
  }
  const resourceVersion = getResourceVersion(object) ?? '';
  if (type === 'BOOKMARK') return { kind: 'bookmark', type, resourceVersion, initialEventsEnd: isInitialEventsEnd(object) };
  const mismatch = kindMismatch(rules, object);
  if (mismatch !== undefined) {
    return { kind: 'foreign', type, resourceVersion, error: new UnexpectedKindError(rules.name, mismatch, object) };
  }
  let key: string;
  try {
    key = rules.keyFunc(object as T);
  } catch (err) {
    const message = `${rules.name}: ${type} event carries an object with no key: ${preview(object, 120)}`;
    return { kind: 'invalid', type, error: new WatchEventError(ErrorCodes.INVALID_OBJECT, message, { cause: err }) };
  }
  return { kind: 'change', type, object: object as T, key, resourceVersion };
}
