// Building an Event: the checks of what a caller passes, object references, the correlation keys, names and times; describing a failed write.

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import { ApiStatusError, ErrorCodes, KubeInformerError, toError } from '../../core/errors.js';
import { DNS_SUBDOMAIN, labelKeyProblem } from '../../core/label-selector.js';
import { describeValue, InvalidOptionError, validateOptions } from '../../core/options.js';
import type { SeriesEntry } from './series.js';
import type { EventDetails, EventsV1Event, EventSubject, EventType } from './types.js';

/** The API's limits on an events.k8s.io/v1 Event (kubernetes `pkg/apis/core/validation/events.go`). */
export const LIMITS = { reason: 128, action: 128, reportingInstance: 128, noteBytes: 1024 } as const;

/** True for a Kubernetes qualified name: `name` or `dns.prefix/name` (`IsQualifiedName`, a label key's rules). */
export function isQualifiedName(value: string): boolean {
  return labelKeyProblem(value) === undefined;
}

/** client-go's default `reportingInstance`: `<controller>-<hostname>`, cut to the API's 128 characters. */
export function defaultReportingInstance(controller: string): string {
  return `${controller}-${hostname()}`.slice(0, LIMITS.reportingInstance);
}

/** The details with `note` cut to the API's limit; throws `INVALID_OPTION` for a programming error. */
export function checkDetails(owner: string, details: EventDetails): EventDetails {
  if (details === null || typeof details !== 'object') throw new InvalidOptionError(`${owner}: the event details must be an object, got ${describeValue(details)}`);
  validateOptions(owner, details, { type: ['Normal', 'Warning'], reason: 'string', action: 'string', note: 'string', related: 'object' });
  for (const field of ['type', 'reason', 'action'] as const) {
    if (details[field] === undefined || details[field] === '') throw new InvalidOptionError(`${owner}: ${field} is required (a non-empty string)`);
  }
  for (const field of ['reason', 'action'] as const) {
    if (details[field].length > LIMITS[field]) throw new InvalidOptionError(`${owner}: ${field} can have at most ${LIMITS[field]} characters, got ${details[field].length}`);
  }
  const note = details.note === undefined ? undefined : truncateNote(details.note);
  return note === details.note ? details : { ...details, note };
}

/** Cuts `note` to 1024 UTF-8 bytes (the API counts bytes), ending in `…`, on a character boundary. */
export function truncateNote(note: string): string {
  // Fast path: a UTF-16 unit is at most 3 UTF-8 bytes.
  if (note.length * 3 <= LIMITS.noteBytes || Buffer.byteLength(note) <= LIMITS.noteBytes) return note;
  const bytes = Buffer.from(note);
  let end = LIMITS.noteBytes - 3; // room for '…'
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // back to the start of a character
  return `${bytes.subarray(0, end).toString()}…`;
}

/** The ObjectReference of an object or a reference; throws `INVALID_OPTION` when apiVersion, kind or name is missing. */
export function referenceOf(owner: string, what: 'regarding' | 'related', subject: EventSubject): ObjectReference {
  if (subject === null || typeof subject !== 'object') throw new InvalidOptionError(`${owner}: ${what} must be a Kubernetes object or an ObjectReference, got ${describeValue(subject)}`);
  const s = subject as Record<string, unknown> & { metadata?: Record<string, unknown> };
  const meta = typeof s.metadata === 'object' && s.metadata !== null ? s.metadata : undefined;
  const from = meta ?? s;
  const ref: ObjectReference = { apiVersion: s.apiVersion as string, kind: s.kind as string, name: from.name as string };
  for (const field of ['namespace', 'uid', 'resourceVersion'] as const) {
    if (typeof from[field] === 'string' && from[field] !== '') ref[field] = from[field];
  }
  if (meta === undefined && typeof s.fieldPath === 'string' && s.fieldPath !== '') ref.fieldPath = s.fieldPath;
  for (const field of ['apiVersion', 'kind', 'name'] as const) {
    if (typeof ref[field] !== 'string' || ref[field] === '') {
      const where = field === 'name' && meta !== undefined ? 'metadata.name' : field;
      throw new InvalidOptionError(`${owner}: ${what} needs a non-empty ${where} (apiVersion, kind and name are required), got ${describeValue(subject)}`);
    }
  }
  return ref;
}

/** What identifies an object in the keys: everything in its reference but `resourceVersion`. */
export function identityKey(ref: ObjectReference): string {
  return [ref.apiVersion, ref.kind, ref.namespace ?? '', ref.name, ref.uid ?? '', ref.fieldPath ?? ''].join('\u0000');
}

/** The token-bucket key: one object, one type, one reason. */
export function rateKey(regarding: string, type: EventType, reason: string): string {
  return `${regarding}\u0001${type}\u0001${reason}`;
}

/**
 * The series key: client-go's `getKey` — type, action, reason, regarding and related (reporting
 * controller and instance are the recorder's own) — with the references compared without their
 * resourceVersion. The note is not in it.
 */
export function seriesKey(details: EventDetails, regarding: string, related: string | undefined): string {
  return [details.type, details.action, details.reason, regarding, related ?? ''].join('\u0001');
}

/** Wall-clock ms from the injected clock (as the leader elector does): real time on `realClock`. */
export function wallMs(clockNow: number): number {
  return performance.timeOrigin + clockNow;
}

/** A MicroTime (RFC 3339 with six fractional digits) for wall-clock ms. */
export function microTime(ms: number): string {
  const micros = Math.floor(ms * 1000);
  const iso = new Date(Math.floor(micros / 1000)).toISOString(); // …T12:34:56.789Z
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}

/**
 * client-go's `GenerateEventName`: `<object name>.<hex nanoseconds>`, here the microseconds of `ms`
 * and a per-recorder sequence in the last three digits (so events in the same microsecond differ);
 * a random UUID when that is not a valid name.
 */
export function eventName(objectName: string, ms: number, seq: number): string {
  const nanos = BigInt(Math.floor(ms * 1000)) * 1000n + BigInt(seq % 1000);
  const name = `${objectName}.${nanos.toString(16)}`;
  return name.length <= 253 && DNS_SUBDOMAIN.test(name) ? name : randomUUID();
}

/** The Event a recorder creates for a first occurrence. */
export function newEventBody(
  details: EventDetails,
  regarding: ObjectReference,
  related: ObjectReference | undefined,
  reporting: { controller: string; instance: string },
  eventTime: string,
  name: string,
): EventsV1Event {
  const event: EventsV1Event = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: regarding.namespace ?? 'default' },
    eventTime,
    type: details.type,
    reason: details.reason,
    action: details.action,
    reportingController: reporting.controller,
    reportingInstance: reporting.instance,
    regarding,
  };
  if (details.note !== undefined) event.note = details.note;
  if (related !== undefined) event.related = related;
  return event;
}

/** Why one write attempt failed, and whether another may succeed. */
export interface Failure {
  /** The error. */
  error: Error;
  /** Whether another attempt may succeed. */
  retryable: boolean;
  /** Retry at once (a name collision, a create that turned out to exist): no wait. */
  immediate?: boolean;
  /** The server's `Retry-After`, in ms. */
  retryAfterMs?: number;
}

/**
 * Retryable: network failures, timeouts, 429 and 5xx. client-go retries everything but a Status error;
 * we also retry 429 and 5xx, which an apiserver restarting or shedding load (APF) answers for a while.
 */
export function classify(err: unknown): Failure {
  const error = toError(err);
  if (error instanceof ApiStatusError) {
    const retryable = error.statusCode === 429 || error.statusCode >= 500;
    const retryAfterMs = error.retryAfterSeconds === undefined ? undefined : error.retryAfterSeconds * 1000;
    return { error, retryable, retryAfterMs };
  }
  if (error instanceof KubeInformerError && (error.code === ErrorCodes.INVALID_OPTION || error.code === ErrorCodes.ABORTED)) return { error, retryable: false };
  return { error, retryable: true };
}

/** A short code for the log's rate-limit reason: the HTTP status, or the error code. */
export function failureCode(error: Error): string {
  if (error instanceof ApiStatusError) return String(error.statusCode);
  if (error instanceof KubeInformerError) return error.code;
  return error.name;
}

/** `ns/name (Warning Reason about Kind ns/name)` for log lines. */
export function describeEvent(entry: SeriesEntry): string {
  const e = entry.event;
  const r = e.regarding;
  return `${e.metadata?.namespace ?? ''}/${e.metadata?.name ?? ''} (${e.type ?? ''} ${e.reason ?? ''} about ${r?.kind ?? ''} ${r?.namespace === undefined ? '' : `${r.namespace}/`}${r?.name ?? ''})`;
}
