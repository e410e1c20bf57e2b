// The reflector's error classes, and the predicates that describe a failure (the state machine decides).

import { ApiStatusError, ErrorCodes, KubeInformerError, isExpiredError } from '../core/errors.js';
import type { KubeInformerErrorOptions } from '../core/errors.js';
import { preview } from '../core/preview.js';
import { formatDuration } from '../core/log.js';

/** What a rejected watch event (or list) looked like: reported through `onRegression` and the channel. */
export interface RegressionInfo {
  /** The reflector's name. */
  readonly name: string;
  /** The object's key (`namespace/name`), or `''` for a bookmark or a list. */
  readonly key: string;
  /** The watch event type (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`), or `LIST` for a list answer. */
  readonly eventType: string;
  /** The resource version the reflector held when the event arrived. */
  readonly heldResourceVersion: string;
  /** The resource version the event (or list) carried. */
  readonly eventResourceVersion: string;
  /**
   * `held`: a change not newer than (a bookmark or list older than) the reflector's resource version;
   * `stored`: an ADDED/MODIFIED older than the copy
   * of the same object already in `knownObjects` (then `storedResourceVersion` is set).
   */
  readonly reason: 'held' | 'stored';
  /** The resource version of the stored copy, when `reason` is `stored`. */
  readonly storedResourceVersion?: string;
  /**
   * True only for a consistent list (`resourceVersion: ""`) that answered older than held: the server's
   * history went back (etcd restored), so the reflector adopted it rather than refuse the truth forever.
   */
  readonly accepted?: boolean;
}

/**
 * A watch event (or list answer) older than what the reflector already holds. It was not applied; the
 * reflector ends the watch and lists again at a resource version not older than the one it holds.
 */
export class ResourceVersionRegressionError extends KubeInformerError {
  /** The details of the rejected event. */
  readonly info: RegressionInfo;
  constructor(info: RegressionInfo) {
    const what = info.key === '' ? info.eventType : `${info.eventType} ${info.key}`;
    const than = info.reason === 'stored' ? `older than the stored copy (${info.storedResourceVersion})` : `not newer than the held ${info.heldResourceVersion}`;
    super(
      ErrorCodes.RESOURCE_VERSION_REGRESSION,
      `${info.name}: rejected ${what} at resourceVersion ${info.eventResourceVersion}, ${than}; relisting`,
    );
    this.info = info;
  }
}

/** No watch event (not even a bookmark) arrived for longer than the watch's idle limit. */
export class WatchStalledError extends KubeInformerError {
  /** How long the watch was silent, in ms. */
  readonly idleMs: number;
  constructor(name: string, idleMs: number) {
    super(ErrorCodes.WATCH_STALLED, `${name}: no watch event for ${formatDuration(idleMs)}; closing the watch and resuming from the last resource version`);
    this.idleMs = idleMs;
  }
}

/** A watch closed by the server in under a second without a single event (client-go's VeryShortWatchError). */
export class VeryShortWatchError extends KubeInformerError {
  constructor(name: string, durationMs: number) {
    super(ErrorCodes.WATCH_TOO_SHORT, `${name}: the watch closed after ${formatDuration(durationMs)} with no event; backing off and relisting`);
  }
}

/**
 * A watch opened at `""` or `"0"` (the list carried no usable version) ended before the reflector could
 * adopt a version: its synthetic ADDED events come in no order, so no watch can resume from them without
 * missing deletions. Code `WATCH_UNRESUMABLE`: a relist (not older than the newest event applied) follows.
 */
export class UnresumableWatchError extends KubeInformerError {
  constructor(name: string) {
    super(ErrorCodes.WATCH_UNRESUMABLE, `${name}: the watch from resource version "0" ended before a version could be adopted; relisting`);
  }
}

/** A list request that took longer than `listTimeoutMs` (code `LIST_TIMEOUT`): abandoned, its signal aborted, and retried. */
export class ListTimeoutError extends KubeInformerError {
  constructor(name: string, timeoutMs: number) {
    super(ErrorCodes.LIST_TIMEOUT, `${name}: a list request got no complete answer within ${formatDuration(timeoutMs)}; abandoned`);
  }
}

/**
 * A streaming list (`useWatchList`) that ended before its initial-events-end bookmark (code
 * `WATCH_LIST_INCOMPLETE`): closed by the server, or silent past its idle limit. A normal list follows.
 */
export class WatchListIncompleteError extends KubeInformerError {
  /** How the stream ended: `closed` by the server, or `stalled` (silent past the idle limit). */
  readonly reason: 'closed' | 'stalled';
  constructor(name: string, reason: 'closed' | 'stalled') {
    super(ErrorCodes.WATCH_LIST_INCOMPLETE, `${name}: the streaming list ended (${reason}) before the initial-events-end bookmark; falling back to a list`);
    this.reason = reason;
  }
}

/** A watch event the reflector cannot use: unknown type, no object, or an object with no name. */
export class WatchEventError extends KubeInformerError {
  constructor(code: typeof ErrorCodes.WATCH_DECODE | typeof ErrorCodes.INVALID_OBJECT, message: string, options?: KubeInformerErrorOptions) {
    super(code, message, options);
  }
}

/** An object of another kind than the reflector was built for (or a server-side Table): skipped. */
export class UnexpectedKindError extends KubeInformerError {
  constructor(name: string, expected: string, obj: unknown) {
    super(ErrorCodes.INVALID_OBJECT, `${name}: skipped a watch event carrying an object of another kind (expected ${expected}): ${preview(obj, 120)}`);
  }
}

/** A resource version that is not a decimal integer: the reflector's guard turns itself off (warned once). */
export class ResourceVersionGuardDisabledError extends KubeInformerError {
  constructor(name: string, resourceVersion: string) {
    super(
      ErrorCodes.INVALID_RESOURCE_VERSION,
      `${name}: resource version ${preview(resourceVersion, 60)} is not a decimal integer; the resource-version guard is off for this reflector (versions are taken as the server sends them)`,
    );
  }
}

/** Walks `err`, its `cause` chain and any `errors` (AggregateError), at most `depth` levels deep. */
function* errorChain(err: unknown, depth = 8): Generator<Record<string, unknown>> {
  if (depth <= 0 || err === null || typeof err !== 'object') return;
  const e = err as Record<string, unknown>;
  yield e;
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* errorChain(inner, depth - 1);
  if (e.cause !== undefined) yield* errorChain(e.cause, depth - 1);
}

/**
 * True for "connection refused": a `NetworkError` from listwatch with `syscall: 'ECONNREFUSED'`, or any
 * error whose `code` is `ECONNREFUSED` somewhere in its cause chain. The reflector re-opens the watch
 * after backoff without relisting (the server is restarting; its state did not change under us).
 */
export function isConnectionRefused(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e.code === 'ECONNREFUSED' || e.syscall === 'ECONNREFUSED' || e.syscallCode === 'ECONNREFUSED') return true;
  }
  return false;
}

const NETWORK_CODES = new Set([
  ErrorCodes.NETWORK, 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH',
  'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ERR_STREAM_PREMATURE_CLOSE',
]);

/** True when a network-level failure (reset, refused, premature close...) is in the cause chain. */
export function isNetworkError(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
    if (typeof e.syscall === 'string' && NETWORK_CODES.has(e.syscall)) return true;
    if (typeof e.syscallCode === 'string' && NETWORK_CODES.has(e.syscallCode)) return true;
  }
  return false;
}

/** The HTTP status in `err` or its cause chain (a `statusCode`, or a numeric Status `code`), if any. */
export function statusCodeOf(err: unknown): number | undefined {
  for (const e of errorChain(err, 4)) {
    if (typeof e.statusCode === 'number') return e.statusCode;
    if (typeof e.code === 'number') return e.code;
  }
  return undefined;
}

/**
 * True when a streaming list request was refused because the server does not serve streaming lists: a
 * 400 or 422 whose message names `sendInitialEvents` (kube-apiserver with the `WatchList` feature gate
 * off: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled") or
 * `resourceVersionMatch` (a server that predates the parameter refuses it on a watch).
 */
export function isWatchListRefused(err: unknown): boolean {
  const code = statusCodeOf(err);
  if (code !== 400 && code !== 422) return false;
  for (const e of errorChain(err, 3)) {
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && /sendInitialEvents|resourceVersionMatch/.test(message)) return true;
  }
  return false;
}

/** True for HTTP 429 Too Many Requests (thrown or as a watch ERROR event). */
export function isTooManyRequests(err: unknown): boolean {
  return statusCodeOf(err) === 429;
}

/** True for 410 Gone / Expired, as a thrown error or a watch ERROR event, anywhere in the cause chain. */
export function isExpired(err: unknown): boolean {
  for (const e of errorChain(err, 3)) if (isExpiredError(e)) return true;
  return false;
}

interface StatusShape {
  code?: unknown;
  message?: unknown;
  reason?: unknown;
  details?: { causes?: Array<{ reason?: unknown; message?: unknown }>; retryAfterSeconds?: unknown };
}

/**
 * True for "too large resource version" (the server has not caught up with the requested version):
 * a Status cause `ResourceVersionTooLarge`, or, from older servers, a message containing
 * "Too large resource version" in a cause or in the Status itself.
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  for (const e of errorChain(err, 3)) {
    const statuses = [e.status, e.body, e] as unknown[];
    for (const s of statuses) {
      if (s === null || typeof s !== 'object') continue;
      const st = s as StatusShape;
      if (typeof st.message === 'string' && st.message.includes('Too large resource version')) return true;
      for (const c of st.details?.causes ?? []) {
        if (c.reason === 'ResourceVersionTooLarge') return true;
        if (typeof c.message === 'string' && c.message.includes('Too large resource version')) return true;
      }
    }
  }
  return false;
}

/** Turns the `Status` of a watch `ERROR` event into an {@link ApiStatusError} (code `EXPIRED` for 410). */
export function statusToError(name: string, object: unknown): ApiStatusError {
  const st = (object !== null && typeof object === 'object' ? object : {}) as StatusShape;
  const code = typeof st.code === 'number' ? st.code : 500;
  const message = typeof st.message === 'string' ? st.message : `watch ERROR event: ${preview(object, 120)}`;
  const retry = st.details?.retryAfterSeconds;
  return new ApiStatusError(code, `${name}: ${message}`, {
    reason: typeof st.reason === 'string' ? st.reason : undefined,
    status: object,
    retryAfterSeconds: typeof retry === 'number' ? retry : undefined,
  });
}
