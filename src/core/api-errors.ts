// Tests of what the API server answered — isNotFound, isConflict … — on any error the library (or client-node) produces.

/** The HTTP code and Status reason an error carries, found by {@link apiStatusOf}. */
export interface ApiStatusInfo {
  /** The HTTP code (or the Status `code`). */
  readonly code: number;
  /** The Status `reason` (`NotFound`, `Conflict` …), when the server sent one. */
  readonly reason: string | undefined;
}

const MAX_DEPTH = 8;

function reasonOfBody(body: unknown): string | undefined {
  if (typeof body === 'object' && body !== null) {
    const r = (body as { reason?: unknown }).reason;
    return typeof r === 'string' && r !== '' ? r : undefined;
  }
  if (typeof body !== 'string' || !body.trimStart().startsWith('{')) return undefined;
  try {
    return reasonOfBody(JSON.parse(body) as unknown);
  } catch {
    return undefined;
  }
}

function infoOf(value: object): ApiStatusInfo | undefined {
  const v = value as { statusCode?: unknown; code?: unknown; reason?: unknown; status?: unknown; body?: unknown; kind?: unknown };
  // ApiStatusError (and ApplyConflictError): statusCode + reason + the Status body.
  if (typeof v.statusCode === 'number') {
    return { code: v.statusCode, reason: typeof v.reason === 'string' && v.reason !== '' ? v.reason : reasonOfBody(v.status) };
  }
  // @kubernetes/client-node's ApiException: a numeric `code` and the response `body`; a Status object: `code` and `reason`.
  if (typeof v.code === 'number') {
    return { code: v.code, reason: typeof v.reason === 'string' && v.reason !== '' ? v.reason : reasonOfBody(v.body) };
  }
  return undefined;
}

/**
 * The HTTP code and Status reason behind `err`: from an `ApiStatusError` (or a subclass such as
 * `ApplyConflictError`), a client-node `ApiException`, a `Status` object, or — for errors that wrap
 * one, such as a failed finalizer patch — the first of these on its `cause` chain. `undefined` when
 * the failure never reached the API server (a network error, an abort, a bad option).
 */
export function apiStatusOf(err: unknown): ApiStatusInfo | undefined {
  let cur: unknown = err;
  for (let depth = 0; depth < MAX_DEPTH && cur !== null && typeof cur === 'object'; depth++) {
    const info = infoOf(cur);
    if (info !== undefined) return info;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** apimachinery's rule: the reason decides; the code decides only when the server gave no reason. */
function matches(err: unknown, reason: string, code: number | undefined): boolean {
  const info = apiStatusOf(err);
  if (info === undefined) return false;
  if (info.reason !== undefined && info.reason !== 'Unknown') return info.reason === reason;
  return code !== undefined && info.code === code;
}

/** True when the server answered 404 NotFound: the object (or the resource) is not there. */
export function isNotFound(err: unknown): boolean {
  return matches(err, 'NotFound', 404);
}

/**
 * True when the server answered 409 Conflict: a stale `resourceVersion` on an update, a failed
 * precondition, or a server-side apply conflict (`ApplyConflictError`). Read again and retry.
 */
export function isConflict(err: unknown): boolean {
  return matches(err, 'Conflict', 409);
}

/** True when a create was refused because the name is taken (409 AlreadyExists). */
export function isAlreadyExists(err: unknown): boolean {
  return matches(err, 'AlreadyExists', undefined);
}

/** True when the object was refused by validation (422 Invalid); the Status `details.causes` say which fields. */
export function isInvalid(err: unknown): boolean {
  return matches(err, 'Invalid', 422);
}

/** True when the request was not allowed (403 Forbidden: RBAC, or a namespace being terminated). */
export function isForbidden(err: unknown): boolean {
  return matches(err, 'Forbidden', 403);
}

/**
 * True for an HTTP 410: the resource version asked for is too old (`Expired`, `Gone`) — a list's
 * `continue` token or a watch's version; list again from the start.
 */
export function isGone(err: unknown): boolean {
  const info = apiStatusOf(err);
  return info !== undefined && (info.code === 410 || info.reason === 'Expired' || info.reason === 'Gone');
}

/** True when the server is shedding load (429 TooManyRequests); `retryAfterSeconds` on the error says when to retry. */
export function isTooManyRequests(err: unknown): boolean {
  return matches(err, 'TooManyRequests', 429);
}

/**
 * The wait the server asked for with `Retry-After` (or a Status `details.retryAfterSeconds`), in ms:
 * the `retryAfterSeconds` of `err` (an `ApiStatusError`), of an error on its `cause` chain, or of one
 * of an `AggregateError`'s `errors`, at most 3 levels deep. 0 when none asked for a wait.
 */
export function retryAfterMs(err: unknown): number {
  return retryAfterIn(err, 3);
}

function retryAfterIn(err: unknown, depth: number): number {
  if (depth <= 0 || err === null || typeof err !== 'object') return 0;
  const e = err as { retryAfterSeconds?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.retryAfterSeconds === 'number' && e.retryAfterSeconds > 0) return e.retryAfterSeconds * 1000;
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const ms = retryAfterIn(inner, depth - 1);
      if (ms > 0) return ms;
    }
  }
  return retryAfterIn(e.cause, depth - 1);
}
