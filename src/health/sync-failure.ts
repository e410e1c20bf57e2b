// Why a cache cannot sync: which list/watch failures retrying will not fix, and when sync waits give up.

import type { Clock, ClockTimer } from '../core/clock.js';
import { ApiStatusError, ErrorCodes, toError } from '../core/errors.js';
import { KubeConfigError, NetworkError } from '../listwatch/errors.js';
import { statusCodeOf } from '../reflector/index.js';
import type { ReflectorEvents } from '../reflector/events.js';

/**
 * How a list/watch failure bears on a cache that has not synced yet:
 * - `persistent`: retrying the same request will not help (HTTP 400, 401, 403, 404, 405, 406, 415,
 *   422; a KubeConfig problem; a TLS or DNS failure). Sync waits reject after
 *   `syncFailureThreshold` of them in a row.
 * - `unreachable`: nobody answers (connection refused, host or network unreachable, connect timeout).
 *   Sync waits reject once the server has been unreachable for `syncUnreachableMs`.
 * - `transient`: anything else (5xx, 429, 410, a reset or stalled stream, a bad line): retried
 *   quietly as far as sync waits go.
 */
export type SyncFailureKind = 'persistent' | 'unreachable' | 'transient';

/** HTTP statuses that the same request will get again: the request or the credentials are wrong. */
const PERSISTENT_STATUSES = new Set([400, 401, 403, 404, 405, 406, 415, 422]);
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EHOSTDOWN']);
const PERSISTENT_NETWORK = /^(ENOTFOUND|EAI_FAIL|EAI_NONAME|EPROTO|ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_INVALID_URL)/;

function syscallOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const s = e as { syscallCode?: unknown; code?: unknown };
    if (typeof s.syscallCode === 'string') return s.syscallCode;
    if (typeof s.code === 'string' && s.code.toUpperCase() === s.code && !(s.code in ErrorCodes)) return s.code;
  }
  return undefined;
}

/** Classifies one list/watch failure (see {@link SyncFailureKind}). */
export function classifySyncFailure(err: unknown): SyncFailureKind {
  const status = statusCodeOf(err);
  if (status !== undefined) return PERSISTENT_STATUSES.has(status) ? 'persistent' : 'transient';
  if ((err as { code?: unknown } | null)?.code === ErrorCodes.KUBECONFIG) return 'persistent';
  const syscall = syscallOf(err);
  if (syscall === undefined) return 'transient';
  if (UNREACHABLE_CODES.has(syscall)) return 'unreachable';
  return PERSISTENT_NETWORK.test(syscall) ? 'persistent' : 'transient';
}

/** A short, stable reason for log rate-limiting and messages: `HTTP 403`, `ECONNREFUSED`, a code. */
export function failureReason(err: unknown): string {
  const status = statusCodeOf(err);
  if (status !== undefined) return `HTTP ${status}`;
  return syscallOf(err) ?? (err as { code?: unknown } | null)?.code?.toString() ?? (err as Error | null)?.name ?? 'error';
}

/** The error sync waits reject with: the cause's class and code, a message that names the informer. */
function wrapSyncFailure(cause: Error, message: string): Error {
  const status = statusCodeOf(cause);
  if (status !== undefined) return new ApiStatusError(status, message, { cause, reason: (cause as { reason?: string }).reason });
  if ((cause as { code?: unknown }).code === ErrorCodes.KUBECONFIG) return new KubeConfigError(message, { cause });
  return new NetworkError(message, { cause, syscallCode: syscallOf(cause) });
}

/** Options of {@link SyncFailureTracker}. */
export interface SyncFailureTrackerOptions {
  /** The informer's name, for messages. */
  name: string;
  /** Timers. */
  clock: Clock;
  /** Persistent failures in a row that make sync waits reject. */
  threshold: number;
  /** How long the server may be unreachable before sync waits reject, in ms. */
  unreachableMs: number;
  /** True once the cache has synced: failures then no longer concern sync waits. */
  hasSynced: () => boolean;
  /** Called with the error every sync wait should reject with. */
  onBlocked: (err: Error) => void;
}

/**
 * Watches the list/watch failures of a cache that has not synced and decides when waiting for the
 * sync is hopeless. It never stops the informer (which keeps retrying, as client-go's does): it only
 * produces the error that sync waits reject with, so "never synced" always comes with a why.
 */
export class SyncFailureTracker {
  readonly #o: SyncFailureTrackerOptions;
  #persistentInARow = 0;
  #unreachableTimer: ClockTimer | undefined;
  #blocked: Error | undefined;

  /** See {@link SyncFailureTrackerOptions}. */
  constructor(options: SyncFailureTrackerOptions) {
    this.#o = options;
  }

  /** The error sync waits reject with now, or `undefined` while waiting still makes sense. */
  blocked(): Error | undefined {
    return this.#blocked;
  }

  /**
   * Follows a reflector's events: an `error` with `requestFailed` is a failure; a completed list
   * (`listed`) or an opened watch (`watchOpened`) is a success.
   */
  subscribe(events: ReflectorEvents): void {
    events.on('error', (e) => {
      if (e.requestFailed) this.failed(e.error);
    });
    events.on('listed', () => this.succeeded());
    // Not served, under onResourceMissing 'absent': the cache synced empty, nothing to give up on.
    events.on('absent', () => this.succeeded());
    events.on('watchOpened', () => this.succeeded());
  }

  /** A list or watch request failed (aborts excluded). */
  failed(error: unknown): void {
    if (this.#o.hasSynced()) return;
    const kind = classifySyncFailure(error);
    const err = toError(error);
    if (kind !== 'unreachable') this.#clearTimer();
    if (kind === 'transient') {
      this.#persistentInARow = 0;
      return;
    }
    if (kind === 'unreachable') {
      this.#persistentInARow = 0;
      if (this.#unreachableTimer === undefined && this.#blocked === undefined) {
        this.#unreachableTimer = this.#o.clock.setTimeout(() => {
          this.#unreachableTimer = undefined;
          if (!this.#o.hasSynced()) this.#block(this.#unreachable(err));
        }, this.#o.unreachableMs);
      }
      return;
    }
    this.#persistentInARow++;
    if (this.#persistentInARow >= this.#o.threshold) this.#block(this.#persistent(err));
  }

  /** A list or watch succeeded, or the cache synced: waiting makes sense again. */
  succeeded(): void {
    this.#persistentInARow = 0;
    this.#blocked = undefined;
    this.#clearTimer();
  }

  /** Clears the timer (the informer stopped). */
  stop(): void {
    this.#clearTimer();
  }

  #block(err: Error): void {
    this.#blocked = err;
    this.#o.onBlocked(err);
  }

  #persistent(cause: Error): Error {
    const what = `${this.#persistentInARow} list/watch requests in a row failed with ${failureReason(cause)}`;
    return wrapSyncFailure(cause, `informer ${this.#o.name} cannot sync: ${what}: ${cause.message}`);
  }

  #unreachable(cause: Error): Error {
    const seconds = Math.round(this.#o.unreachableMs / 100) / 10;
    const what = `the API server has been unreachable for ${seconds} s (${failureReason(cause)})`;
    return wrapSyncFailure(cause, `informer ${this.#o.name} cannot sync: ${what}: ${cause.message}`);
  }

  #clearTimer(): void {
    if (this.#unreachableTimer !== undefined) this.#o.clock.clearTimeout(this.#unreachableTimer);
    this.#unreachableTimer = undefined;
  }
}
