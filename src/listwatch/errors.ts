// The listwatch room's errors: network failures, undecodable bodies, KubeConfig problems, HTTP Status answers.

import type { IncomingMessage } from 'node:http';
import {
  ApiStatusError,
  ErrorCodes,
  KubeInformerError,
  PREVIEW_MAX_CHARS,
  type KubeInformerErrorOptions,
} from '../core/index.js';

/**
 * A request failed below HTTP: connection refused or reset, DNS, timeout, TLS handshake. `cause` is the
 * Node error; `syscallCode` repeats its `code` (`'ECONNREFUSED'`, `'ECONNRESET'`,
 * `'DEPTH_ZERO_SELF_SIGNED_CERT'`, ...) so a caller can tell "nobody listens" from "the link broke".
 */
export class NetworkError extends KubeInformerError {
  /** The Node error code of the cause (`'ECONNREFUSED'`, ...), or `undefined` when it had none. */
  readonly syscallCode: string | undefined;

  constructor(message: string, options?: KubeInformerErrorOptions & { syscallCode?: string }) {
    super(ErrorCodes.NETWORK, message, options);
    this.syscallCode = options?.syscallCode;
  }
}

/**
 * The KubeConfig could not produce a server address or credentials: no current cluster, a server URL
 * that does not parse, an exec or auth-provider plugin that failed, an unreadable certificate file, or
 * a plain `http://` server without `insecure-skip-tls-verify` (which client-node refuses). `cause`
 * keeps the original error.
 */
export class KubeConfigError extends KubeInformerError {
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.KUBECONFIG, message, options);
  }
}

/**
 * The in-cluster configuration could not be loaded or its token re-read: the service environment
 * variables unset, or the service-account `token` or `ca.crt` file missing, unreadable or empty. The
 * message names the file or the variables; `cause` keeps the file system's error.
 */
export class InClusterConfigError extends KubeInformerError {
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.IN_CLUSTER_CONFIG, message, options);
  }
}

/** Why a response body could not be decoded. */
/**
 * What was wrong: not JSON, not a watch event, an unknown event type, a cut body, not a list, or a
 * list whose `metadata.shardInfo` names another shard selector than the one sent (`shard-mismatch`).
 */
export type DecodeFailure = 'malformed-json' | 'not-an-event' | 'unknown-type' | 'truncated' | 'not-a-list' | 'shard-mismatch';

/** Cuts a raw line of text to at most 200 characters (`PREVIEW_MAX_CHARS`) for an error message. */
export function previewLine(text: string): string {
  return text.length > PREVIEW_MAX_CHARS ? `${text.slice(0, PREVIEW_MAX_CHARS - 1)}…` : text;
}

/**
 * A 2xx response whose body is not what the protocol promises: a list answer that is not JSON or has
 * no `items` array. Shares the code `WATCH_DECODE` with {@link WatchDecodeError}: both mean "the server
 * (or something in between) sent bytes we cannot use; retry".
 */
export class ResponseDecodeError extends KubeInformerError {
  /** What was wrong with the body. */
  readonly failure: DecodeFailure;
  /** The start of the offending text, at most 200 characters (`PREVIEW_MAX_CHARS`). */
  readonly preview: string;

  constructor(failure: DecodeFailure, message: string, text: string, options?: KubeInformerErrorOptions) {
    const shown = previewLine(text);
    super(ErrorCodes.WATCH_DECODE, `${message}: ${shown}`, options);
    this.failure = failure;
    this.preview = shown;
  }
}

/**
 * A watch stream carried a line that is not a watch event: not JSON (`malformed-json`), JSON without a
 * string `type` and an object `object` (`not-an-event`), an event type outside ADDED, MODIFIED,
 * DELETED, BOOKMARK and ERROR (`unknown-type`), or a body that ended in the middle of a line
 * (`truncated`). The iterator throws it after every good event before the bad line; the stream is
 * closed. Code `WATCH_DECODE`; `preview` holds a bounded start of the line.
 */
export class WatchDecodeError extends ResponseDecodeError {}

const RETRY_AFTER = /^\s*(\d+)\s*$/;

interface StatusLike {
  kind?: unknown;
  code?: unknown;
  reason?: unknown;
  message?: unknown;
  details?: { retryAfterSeconds?: unknown };
}

/**
 * Builds the {@link ApiStatusError} for a non-2xx answer: the Status `reason` and `message` when the
 * body is a JSON Status, `retryAfterSeconds` from `Retry-After` (whole seconds) or the Status
 * `details.retryAfterSeconds`. A 410 gets code `EXPIRED` (see `ApiStatusError`).
 */
export function statusErrorFromResponse(res: IncomingMessage, body: string, what: string): ApiStatusError {
  const statusCode = res.statusCode ?? 0;
  let status: StatusLike | undefined;
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) status = parsed;
    } catch {
      // Not JSON after all (a proxy's error page): the raw text goes into the message below.
    }
  }
  const reason = typeof status?.reason === 'string' && status.reason !== '' ? status.reason : undefined;
  const header = res.headers['retry-after'];
  const headerMatch = typeof header === 'string' ? RETRY_AFTER.exec(header) : null;
  const detailRetry = status?.details?.retryAfterSeconds;
  const retryAfterSeconds =
    headerMatch !== null
      ? Number(headerMatch[1])
      : typeof detailRetry === 'number' && Number.isFinite(detailRetry)
        ? detailRetry
        : undefined;
  const detail =
    typeof status?.message === 'string' && status.message !== ''
      ? status.message
      : body.trim() !== ''
        ? previewLine(body.trim())
        : (res.statusMessage ?? 'no body');
  const message = `${what}: HTTP ${statusCode}${reason === undefined ? '' : ` ${reason}`}: ${detail}`;
  return new ApiStatusError(statusCode, message, {
    reason,
    status: status ?? (body === '' ? undefined : previewLine(body)),
    retryAfterSeconds,
  });
}

/** Wraps a Node-level failure of `what` (a request description) into a {@link NetworkError}. */
export function toNetworkError(err: unknown, what: string): KubeInformerError {
  if (err instanceof KubeInformerError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const text = err instanceof Error ? err.message : String(err);
  return new NetworkError(`${what}: ${text}`, {
    cause: err,
    syscallCode: typeof code === 'string' ? code : undefined,
  });
}
