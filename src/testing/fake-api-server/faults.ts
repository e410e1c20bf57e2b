// Scripted faults of the fake API server: a queue matched by verb and path, each consumed once.

import { ErrorCodes, KubeInformerError } from '../../core/errors.js';
import { InvalidOptionError } from '../../core/options.js';
import type { KubeObject } from '../../core/types.js';

/** The verbs the server recognizes (`watch` is a GET with `watch=true`). */
export type FakeApiVerb = 'list' | 'watch' | 'get' | 'create' | 'update' | 'patch' | 'delete';

/** Which requests a fault applies to. Every field given must match; absent fields match anything. */
export interface FaultMatch {
  /** The verb(s). Default: any verb (stream faults: `watch`). */
  verb?: FakeApiVerb | FakeApiVerb[];
  /** The plural resource name (`pods`, `leases`). Default: any. */
  resource?: string;
  /** The namespace in the path. Default: any. */
  namespace?: string;
  /** The exact request path (no query) or a pattern it must match. Default: any. */
  path?: string | RegExp;
}

/** Fields every stream fault has. */
export interface StreamFaultBase {
  /** Acts once this many events (of any type) were sent on the watch. Default 0: before the first. */
  afterEvents?: number;
}

/** Ends the watch: a clean end of the chunked body, or (`abrupt`) a dropped TCP connection. */
export interface EndWatchFault extends StreamFaultBase {
  /** Discriminator. */
  type: 'endWatch';
  /** Close the connection without ending the chunked body (the client sees a truncated response). Default false. */
  abrupt?: boolean;
}

/** Sends a line that is not JSON. */
export interface MalformedLineFault extends StreamFaultBase {
  /** Discriminator. */
  type: 'malformedLine';
  /** The line to send. Default: a truncated event. */
  line?: string;
}

/** Sends the last event again, byte for byte. */
export interface DuplicateEventFault extends StreamFaultBase {
  /** Discriminator. */
  type: 'duplicateEvent';
}

/** Sends an event whose object carries an older resourceVersion (the production incident kubernetes #58545). */
export interface RegressedEventFault extends StreamFaultBase {
  /** Discriminator. */
  type: 'regressedEvent';
  /** The event type. Default `DELETED`. */
  eventType?: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The resourceVersion. Default: one less than the last one sent on this stream (or than the start version). */
  resourceVersion?: string;
  /** The object. Default: the last object sent on this stream. */
  object?: KubeObject;
}

/** Sends a line that is valid JSON but not a watch event. */
export interface NotAnEventFault extends StreamFaultBase {
  /** Discriminator. */
  type: 'notAnEvent';
  /** The line to send. Default: a bare object with no `type`. */
  line?: string;
}

/** Sends an event with a type no client knows. */
export interface UnknownEventTypeFault extends StreamFaultBase {
  /** Discriminator. */
  type: 'unknownEventType';
  /** The type. Default `"SURPRISE"`. */
  eventType?: string;
}

/** Something going wrong inside an open watch stream; the stream goes on afterwards unless the fault ends it. */
export type StreamFault =
  | EndWatchFault
  | MalformedLineFault
  | DuplicateEventFault
  | RegressedEventFault
  | NotAnEventFault
  | UnknownEventTypeFault;

/** Answers with a Status of `code` (500, 429, 403, 404, 410, ...). */
export interface StatusFault {
  /** Discriminator. */
  type: 'status';
  /** The HTTP code (and Status `code`). */
  code: number;
  /** The Status reason. Default: kube-apiserver's for the code (`InternalError`, `TooManyRequests`, ...). */
  reason?: string;
  /** The Status message. Default: `injected fault: <reason>`. */
  message?: string;
  /** Sets `Retry-After` and `details.retryAfterSeconds`. Default: none. */
  retryAfterSeconds?: number;
}

/** Accepts the request and never answers (until the client gives up or the server closes). */
export interface StallFault {
  /** Discriminator. */
  type: 'stall';
  /** Send `200` headers first: a half-open watch. Default false: not a byte. */
  sendHeaders?: boolean;
}

/** Several stream faults on the same watch. */
export interface SequenceFault {
  /** Discriminator. */
  type: 'sequence';
  /** The faults, applied in `afterEvents` order. */
  steps: StreamFault[];
}

/** What a fault does to the request it matches. */
export type FaultAction = StatusFault | StallFault | SequenceFault | StreamFault;

/** A scripted fault: where it applies and what it does. Each is consumed by the first request it matches. */
export type FaultSpec = FaultMatch & FaultAction;

/** The request facts faults are matched against. */
export interface FaultTarget {
  /** The request's verb. */
  verb: FakeApiVerb;
  /** The plural resource name. */
  resource: string;
  /** The namespace in the path, if any. */
  namespace?: string;
  /** The path without query. */
  path: string;
}

const STREAM_TYPES = new Set(['endWatch', 'malformedLine', 'duplicateEvent', 'regressedEvent', 'notAnEvent', 'unknownEventType', 'sequence']);

/** True for faults that act inside a watch stream (they default to the `watch` verb). */
export function isStreamFault(f: FaultAction): boolean {
  return STREAM_TYPES.has(f.type);
}

/** The stream faults of a consumed fault, in order of `afterEvents`. */
export function streamSteps(f: FaultAction): StreamFault[] {
  const steps = f.type === 'sequence' ? [...f.steps] : isStreamFault(f) ? [f as StreamFault] : [];
  return steps.sort((a, b) => (a.afterEvents ?? 0) - (b.afterEvents ?? 0));
}

function matches(f: FaultSpec, t: FaultTarget): boolean {
  const verbs = f.verb === undefined ? (isStreamFault(f) ? ['watch'] : undefined) : Array.isArray(f.verb) ? f.verb : [f.verb];
  if (verbs !== undefined && !verbs.includes(t.verb)) return false;
  if (f.resource !== undefined && f.resource !== t.resource) return false;
  if (f.namespace !== undefined && f.namespace !== t.namespace) return false;
  if (typeof f.path === 'string' && f.path !== t.path) return false;
  if (f.path instanceof RegExp && !f.path.test(t.path)) return false;
  return true;
}

function describe(f: FaultSpec): string {
  const where = [
    f.verb !== undefined ? `verb=${String(f.verb)}` : '',
    f.resource !== undefined ? `resource=${f.resource}` : '',
    f.namespace !== undefined ? `namespace=${f.namespace}` : '',
    f.path !== undefined ? `path=${String(f.path)}` : '',
  ].filter((s) => s !== '');
  return `${f.type}${'code' in f ? ` ${f.code}` : ''}${where.length ? ` (${where.join(', ')})` : ''}`;
}

/** The queue of scripted faults. */
export class FaultQueue {
  #faults: FaultSpec[] = [];

  /** Appends a fault. */
  add(fault: FaultSpec): void {
    if (fault.type === 'stall' || fault.type === 'status' || isStreamFault(fault)) {
      this.#faults.push(fault);
      return;
    }
    throw new InvalidOptionError(`unknown fault type: ${String((fault as { type: unknown }).type)}`);
  }

  /** Removes and returns the first fault matching `target`, if any. */
  take(target: FaultTarget): FaultSpec | undefined {
    const i = this.#faults.findIndex((f) => matches(f, target));
    if (i < 0) return undefined;
    return this.#faults.splice(i, 1)[0];
  }

  /** Faults scripted and not consumed yet. */
  pending(): FaultSpec[] {
    return [...this.#faults];
  }

  /** Drops every pending fault. */
  clear(): void {
    this.#faults = [];
  }

  /** Throws (code `PENDING_FAULTS`) listing every fault never consumed. */
  assertNone(): void {
    if (this.#faults.length === 0) return;
    throw new KubeInformerError(
      ErrorCodes.PENDING_FAULTS,
      `${this.#faults.length} scripted fault(s) never consumed: ${this.#faults.map(describe).join('; ')}`,
    );
  }
}
