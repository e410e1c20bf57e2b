// The Event recorder's public shapes: the events.k8s.io/v1 resource, what an event names, its options and its counters.

import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import type { Event } from 'kubernetes-types/events/v1.js';
import type { Clock } from '../../core/clock.js';
import type { LoggerOption } from '../../core/log.js';
import type { BuiltInResource } from '../../core/resources.js';

/**
 * An `events.k8s.io/v1` Event as JSON (the `Event` type of `kubernetes-types/events/v1`): the object an
 * {@link EventRecorder} creates, and whose `series` it patches.
 */
export type EventsV1Event = Event;

/** The `events.k8s.io/v1` `events` resource (namespaced): what an {@link EventRecorder} writes. */
export const eventsV1Resource: BuiltInResource<EventsV1Event, 'events.k8s.io', 'v1', 'events', 'Event', true> = Object.freeze({
  group: 'events.k8s.io',
  version: 'v1',
  resource: 'events',
  kind: 'Event',
  namespaced: true,
});

/** The two Event types Kubernetes accepts: `Normal` (something happened) and `Warning` (something went wrong). */
export type EventType = 'Normal' | 'Warning';

/**
 * Any Kubernetes object an Event can be about: `apiVersion`, `kind` and `metadata.name` are required;
 * `metadata.namespace`, `uid` and `resourceVersion` go into the reference when set. Objects from an
 * informer's cache (read-only) fit.
 */
export interface EventObject {
  /** `group/version`, or `v1` for the core group. Required. */
  readonly apiVersion?: string;
  /** The kind, e.g. `Pod`. Required. */
  readonly kind?: string;
  /** The object's metadata: `name` required, the rest optional. */
  readonly metadata?: {
    /** The object's name. Required. */
    readonly name?: string;
    /** The object's namespace; absent for cluster-scoped objects. */
    readonly namespace?: string;
    /** The object's uid. */
    readonly uid?: string;
    /** The object's resourceVersion when the event happened. */
    readonly resourceVersion?: string;
  };
}

/**
 * What an Event is about (`regarding`) or relates to (`related`): an object ({@link EventObject}), or a
 * ready-made `ObjectReference` (`{ apiVersion, kind, name, namespace?, uid?, fieldPath? }`) — for an
 * object you know only by name, or a part of one (`fieldPath: 'spec.containers{app}'`). Either way
 * `apiVersion`, `kind` and `name` are required.
 */
export type EventSubject = EventObject | Readonly<ObjectReference>;

/** What happened: the second argument of {@link EventRecorder.event}. */
export interface EventDetails {
  /** `Normal` or `Warning`. Required. */
  type: EventType;
  /**
   * Why the action was taken, machine-readable and stable (`ReconcileFailed`, `ScalingUp`): at most
   * 128 characters. Required. Repeats with the same reason fold into one Event's series.
   */
  reason: string;
  /** What was done or attempted (`Reconcile`, `CreatePod`): at most 128 characters. Required. */
  action: string;
  /**
   * A human-readable description. Cut to 1024 bytes (the API's limit, with `…` at the end) when longer.
   * Not part of the series key: a repeat with another note extends the series, whose Event keeps the
   * first note (client-go's rule). Default: none.
   */
  note?: string;
  /** A second object involved (the Pod a ReplicaSet created, the Node a Pod was bound to). Default: none. */
  related?: EventSubject;
}

/** Options of an {@link EventRecorder}. Every duration is in ms on `clock`. */
export interface EventRecorderOptions {
  /**
   * The Event's `reportingController`: the name of the controller, a qualified name such as
   * `example.com/widget-controller` (the API rejects anything else). Required.
   */
  reportingController: string;
  /**
   * The Event's `reportingInstance`: which replica wrote it, at most 128 characters. Default
   * `<reportingController>-<hostname>` (client-go's), cut to 128 characters.
   */
  reportingInstance?: string;
  /**
   * How many Event writes may wait for the writer. A repeat of an event whose write is already waiting
   * takes no room (it raises the count that write will send); anything beyond is dropped and counted in
   * {@link EventRecorderStats.dropped}. Default `1000` (client-go's `maxQueuedEvents`).
   */
  bufferSize?: number;
  /** How many series and how many rate-limit buckets are remembered (least recently used go first). Default `4096` (client-go's). */
  cacheSize?: number;
  /**
   * A repeat within this long of the series' last occurrence extends the series (a PATCH of the same
   * Event); a later one starts a new Event. Default `360_000` (6 min, client-go's `finishTime`).
   */
  seriesWindowMs?: number;
  /**
   * Token-bucket burst: how many events one object may have with one type and reason before the rate
   * limit applies. Default `25` (client-go's event spam filter).
   */
  rateLimitBurst?: number;
  /**
   * One token comes back this often per object, type and reason; events with no token are dropped and
   * counted in {@link EventRecorderStats.rateLimited}. `0` turns the limit off. Default `300_000`
   * (5 min: client-go's spam filter refills 1 token per 300 s).
   */
  rateLimitRefillMs?: number;
  /**
   * Attempts per write before it is given up (counted in {@link EventRecorderStats.failed}). Only
   * network failures, timeouts, 429 and 5xx answers are retried. Default `12` (client-go's `maxTriesPerEvent`).
   */
  maxAttempts?: number;
  /** The wait before a retry, stretched at random by up to 25 % (or the server's `Retry-After` when longer). Default `10_000` (client-go's). */
  retryDelayMs?: number;
  /** One request's deadline; past it the request is aborted and counts as a retryable failure. Default `10_000`. */
  writeTimeoutMs?: number;
  /**
   * Once `run`'s signal aborted, how long the writer may go on writing what is queued (no retries). At
   * the end, the request in flight is aborted and what is left is dropped (counted). Default `5_000`.
   */
  drainTimeoutMs?: number;
  /** The `fieldManager` the writes name. Default `'kube-informer'`. */
  fieldManager?: string;
  /**
   * The namespaces its Events are written in — an Event goes to the namespace of the object it is about,
   * `default` for a cluster-scoped one — as {@link EventRecorder.permissions} reports them: `create` and
   * `patch` of `events.k8s.io` events there (a Role each) instead of in every namespace (a ClusterRole).
   * An Event written elsewhere is still sent, with a warning (once per namespace): the rules do not
   * grant it. Default: every namespace.
   */
  namespaces?: readonly string[];
  /** The clock every timer, the series window and the rate limit use. Default `realClock`. */
  clock?: Clock;
  /** Uniform random numbers in `[0, 1)`, for the retry delays' jitter. Default `Math.random`. */
  random?: () => number;
  /** Where the recorder's own failures and drops are logged (rate-limited); `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
}

/**
 * A snapshot of an {@link EventRecorder}'s counters, all since it was created. `emitted`,
 * `rateLimited` and `dropped` count calls of {@link EventRecorder.event}; `created`, `patched` and
 * `failed` count API writes (one write may carry several occurrences of a series).
 */
export interface EventRecorderStats {
  /** Calls of `event()` that passed validation. */
  readonly emitted: number;
  /** Events created (POST), including an Event created again after it vanished from the server. */
  readonly created: number;
  /** Series updates written (PATCH of `series.count` and `series.lastObservedTime`). */
  readonly patched: number;
  /** Occurrences dropped by the per-object, type and reason token bucket. */
  readonly rateLimited: number;
  /** Occurrences dropped because the buffer was full, the recorder had stopped, or the drain ran out of time. */
  readonly dropped: number;
  /** Writes given up on: refused by the API (4xx other than 429), or still failing after `maxAttempts`. */
  readonly failed: number;
  /** Writes queued or in flight now. */
  readonly pending: number;
  /** Series remembered now (each the Event a repeat would extend). */
  readonly series: number;
}
