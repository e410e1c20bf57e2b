// The Event recorder: events.k8s.io/v1 Events about objects, folded into series, rate-limited, buffered, written in the background.

import { callWithTimeout, ABORTED, TIMED_OUT } from '../../core/abort.js';
import { realClock, sleep, type Clock, type ClockTimer } from '../../core/clock.js';
import { AbortedError, AlreadyStartedError, ApiStatusError } from '../../core/errors.js';
import { RateLimitedLog, errorFields, formatDuration, resolveLogger, withFields } from '../../core/log.js';
import { describeValue, InvalidOptionError, validateOptions } from '../../core/options.js';
import type { HasPermissions, Permission, Verb } from '../../core/permissions.js';
import { NetworkError } from '../../listwatch/errors.js';
import { newResourceClient, type ResourceClient } from '../../listwatch/resource-client.js';
import type { KubeConfigLike } from '../../listwatch/transport.js';
import { defaultRandom, jittered, type RandomSource } from '../../runtime/backoff.js';
import {
  checkDetails,
  classify,
  defaultReportingInstance,
  describeEvent,
  eventName,
  failureCode,
  identityKey,
  isQualifiedName,
  LIMITS,
  microTime,
  newEventBody,
  rateKey,
  referenceOf,
  seriesKey,
  wallMs,
  type Failure,
} from './build.js';
import { SeriesCache, TokenBuckets, type SeriesEntry } from './series.js';
import { eventsV1Resource, type EventDetails, type EventRecorderOptions, type EventRecorderStats, type EventsV1Event, type EventSubject } from './types.js';

const OWNER = 'EventRecorder';

type State = 'new' | 'running' | 'stopping' | 'stopped';

/**
 * Records `events.k8s.io/v1` Events about Kubernetes objects, the way client-go's `tools/events`
 * recorder and `tools/record` correlator do: an event is written once, and a repeat of it (same type,
 * reason, action, regarding and related object) within `seriesWindowMs` becomes the Event's series — a
 * PATCH of `series.count` and `series.lastObservedTime` — instead of a new Event.
 *
 * {@link EventRecorder.event} is fire-and-forget: it returns at once, never waits and never throws for
 * an API failure, so it can be called from a reconcile without changing its outcome. Each occurrence
 * passes a token bucket per object, type and reason (25, then one per 5 min), then waits in a bounded
 * buffer for the writer that {@link EventRecorder.run} runs. Writes are serial; retryable failures
 * (network, timeout, 429, 5xx) are retried up to `maxAttempts`.
 *
 * Recovery: an Event deleted on the server (or expired by its TTL) while its series goes on is created
 * again, with the same name and the current count; a create whose answer was lost and that turns out
 * to exist (409) is patched instead of duplicated; a name collision gets a new name.
 *
 * Warning: the recorder's own failures are never thrown (incident 5: silence is a bug, so they are not
 * silent either): every drop, rate limit and failed write is counted in {@link EventRecorder.stats}
 * and logged, rate-limited. Only a programming error throws — `INVALID_OPTION` from the constructor or
 * from `event()` (a missing reason or action, an unknown type, an object without apiVersion, kind or
 * name), which a test of the call site finds at once.
 *
 * Lifecycle: events emitted before `run` wait in the buffer; `run(signal)` writes until `signal`
 * aborts, then drains what is queued for at most `drainTimeoutMs` and resolves, leaving no timer and
 * no connection open. Events emitted after that are dropped (counted). Stop it after the controllers
 * that record events (abort its signal once `controller.run` or `manager.run` resolved), so the events
 * of reconciles still draining are written. (It is also a `Runnable`; as one of a `Manager`'s
 * `runnables` it stops after the controllers drained.)
 *
 * @example
 * ```ts
 * const recorder = new EventRecorder(kubeConfig, { reportingController: 'example.com/widget-controller' });
 * void recorder.run(signal);
 * recorder.event(widget, { type: 'Warning', reason: 'ReconcileFailed', action: 'Reconcile', note: err.message });
 * ```
 */
export class EventRecorder implements HasPermissions {
  /** `events:<reportingController>`: the recorder's name as a `Runnable`, and in its log lines. */
  readonly name: string;
  readonly #client: ResourceClient<EventsV1Event>;
  readonly #clock: Clock;
  readonly #random: RandomSource;
  readonly #log: RateLimitedLog;
  readonly #controller: string;
  readonly #instance: string;
  readonly #bufferSize: number;
  readonly #maxAttempts: number;
  readonly #retryDelayMs: number;
  readonly #writeTimeoutMs: number;
  readonly #drainTimeoutMs: number;
  readonly #series: SeriesCache;
  readonly #buckets: TokenBuckets;
  /** The buffer: series with a write waiting, in order. */
  readonly #queue = new Set<SeriesEntry>();
  readonly #flushWaiters = new Set<() => void>();
  readonly #stats = { emitted: 0, created: 0, patched: 0, rateLimited: 0, dropped: 0, failed: 0 };
  #state: State = 'new';
  #writing = false;
  #wake: (() => void) | undefined;
  #seq = 0;
  /** Option `namespaces` (sorted), and the namespaces outside it already warned about. */
  readonly #namespaces: readonly string[] | undefined;
  readonly #outside = new Set<string>();

  /** A recorder writing through `kubeConfig`'s cluster. Throws `INVALID_OPTION` for a bad option. */
  constructor(kubeConfig: KubeConfigLike, options: EventRecorderOptions) {
    if (options === null || typeof options !== 'object') throw new InvalidOptionError(`${OWNER}: options with a reportingController are required, got ${describeValue(options)}`);
    validateOptions(OWNER, options, {
      reportingController: 'string',
      reportingInstance: 'string',
      bufferSize: 'positiveCount',
      cacheSize: 'positiveCount',
      seriesWindowMs: 'duration',
      rateLimitBurst: 'positiveCount',
      rateLimitRefillMs: 'duration',
      maxAttempts: 'positiveCount',
      retryDelayMs: 'duration',
      writeTimeoutMs: 'positiveDuration',
      drainTimeoutMs: 'duration',
      fieldManager: 'string',
      namespaces: 'any', // checked below
      clock: 'clock',
      random: 'function',
      logger: 'logger',
    });
    const controller = options.reportingController;
    if (typeof controller !== 'string' || !isQualifiedName(controller)) {
      throw new InvalidOptionError(`${OWNER}: option reportingController must be a qualified name such as 'example.com/my-controller', got ${describeValue(controller)}`);
    }
    const instance = options.reportingInstance ?? defaultReportingInstance(controller);
    if (instance === '' || instance.length > LIMITS.reportingInstance) {
      throw new InvalidOptionError(`${OWNER}: option reportingInstance must have 1 to ${LIMITS.reportingInstance} characters, got ${describeValue(instance)}`);
    }
    this.name = `events:${controller}`;
    this.#controller = controller;
    this.#instance = instance;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? defaultRandom;
    this.#log = new RateLimitedLog(withFields(resolveLogger(options.logger), { component: 'event-recorder', name: this.name }), this.#clock);
    this.#bufferSize = options.bufferSize ?? 1000;
    this.#maxAttempts = options.maxAttempts ?? 12;
    this.#retryDelayMs = options.retryDelayMs ?? 10_000;
    this.#writeTimeoutMs = options.writeTimeoutMs ?? 10_000;
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 5_000;
    const cacheSize = options.cacheSize ?? 4096;
    this.#series = new SeriesCache(options.seriesWindowMs ?? 360_000, cacheSize);
    this.#buckets = new TokenBuckets(options.rateLimitBurst ?? 25, options.rateLimitRefillMs ?? 300_000, cacheSize);
    const namespaces: unknown = options.namespaces;
    if (namespaces !== undefined && !(Array.isArray(namespaces) && namespaces.every((n) => typeof n === 'string' && n !== ''))) {
      throw new InvalidOptionError(`${OWNER}: option namespaces must be an array of namespace names, got ${describeValue(namespaces)}`);
    }
    this.#namespaces = namespaces === undefined ? undefined : [...new Set(namespaces as string[])].sort();
    this.#client = newResourceClient(kubeConfig, eventsV1Resource, { fieldManager: options.fieldManager ?? 'kube-informer', userAgent: 'kube-informer-events' });
  }

  /**
   * What the recorder needs (see `HasPermissions`): `create` and `patch` of `events.k8s.io` events, in
   * each namespace of option `namespaces`, or in every namespace without it.
   */
  permissions(): Permission[] {
    const p = { group: eventsV1Resource.group, resource: eventsV1Resource.resource, verbs: ['create', 'patch'] as Verb[], reason: `Event recorder ${this.#controller}` };
    return this.#namespaces === undefined ? [p] : this.#namespaces.map((namespace) => ({ ...p, namespace }));
  }

  /**
   * Records that something happened to `regarding`. Returns at once; the write happens in the
   * background (see the class). Never throws for an API failure, a full buffer, the rate limit or a
   * stopped recorder — those are counted in {@link EventRecorder.stats} and logged. Throws
   * `INVALID_OPTION` only for a programming error: `type` not `Normal`/`Warning`, `reason` or `action`
   * missing or over 128 characters, `regarding`/`related` without apiVersion, kind or name.
   */
  event(regarding: EventSubject, details: EventDetails): void {
    const owner = `${OWNER}.event`;
    const spec = checkDetails(owner, details);
    const regardingRef = referenceOf(owner, 'regarding', regarding);
    const relatedRef = spec.related === undefined ? undefined : referenceOf(owner, 'related', spec.related);
    this.#stats.emitted++;
    const what = (): string => `${spec.type} ${spec.reason} about ${regardingRef.kind} ${regardingRef.namespace === undefined ? '' : `${regardingRef.namespace}/`}${regardingRef.name}`;
    if (this.#state === 'stopped') {
      this.#drop(1, 'stopped', `${this.name}: the recorder has stopped; dropped the event ${what()}`);
      return;
    }
    const now = this.#clock.now();
    const regardingKey = identityKey(regardingRef);
    if (!this.#buckets.tryTake(rateKey(regardingKey, spec.type, spec.reason), now)) {
      this.#stats.rateLimited++;
      this.#log.log('debug', 'rate-limited', `${this.name}: rate limit reached for ${what()}; dropped the event`);
      return;
    }
    const key = seriesKey(spec, regardingKey, relatedRef === undefined ? undefined : identityKey(relatedRef));
    const observed = microTime(wallMs(now));
    const live = this.#series.get(key, now);
    if (live !== undefined) {
      if (!live.queued && !this.#enqueue(live, what)) return;
      live.count++;
      live.pending++;
      live.lastObservedAt = now;
      live.lastObservedTime = observed;
      this.#series.touch(live);
      return;
    }
    const name = eventName(regardingRef.name as string, wallMs(now), this.#seq++);
    const event = newEventBody(spec, regardingRef, relatedRef, { controller: this.#controller, instance: this.#instance }, observed, name);
    const entry: SeriesEntry = { key, event, count: 1, lastObservedAt: now, lastObservedTime: observed, pending: 1, writtenCount: 0, created: false, ambiguousCount: 0, queued: false };
    if (this.#enqueue(entry, what)) this.#series.add(entry);
  }

  /** A snapshot of the counters (see {@link EventRecorderStats}). */
  stats(): EventRecorderStats {
    return { ...this.#stats, pending: this.#queue.size + (this.#writing ? 1 : 0), series: this.#series.size };
  }

  /**
   * Resolves once nothing is queued or being written: every occurrence recorded so far was written,
   * given up on, or dropped. Before `run` starts nothing is written, so it waits for `run`; after `run`
   * resolved, it resolves at once. Rejects with `ABORTED` when `signal` aborts first (only the wait ends).
   */
  flush(signal?: AbortSignal): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    if (signal?.aborted === true) return Promise.reject(new AbortedError(`${OWNER}.flush: the signal was aborted`, { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#flushWaiters.delete(done);
        reject(new AbortedError(`${OWNER}.flush: stopped waiting, the signal was aborted`, { cause: signal?.reason }));
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#flushWaiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Writes Events until `signal` aborts, then drains the buffer for at most `drainTimeoutMs` (no
   * retries; the request in flight at the deadline is aborted, what is left is dropped and counted),
   * closes its connections and resolves. Never rejects for an API failure. Rejects with
   * `ALREADY_STARTED` when called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'new') throw new AlreadyStartedError(OWNER);
    this.#state = 'running';
    // The drain deadline runs from the stop, so it also bounds the write in flight at that moment.
    const deadline = new AbortController();
    let timer: ClockTimer | undefined;
    const onStop = (): void => {
      this.#state = 'stopping';
      timer = this.#clock.setTimeout(() => deadline.abort(new AbortedError(`${this.name}: the drain ran out of time`)), this.#drainTimeoutMs);
    };
    if (signal.aborted) onStop();
    else signal.addEventListener('abort', onStop, { once: true });
    try {
      while (!signal.aborted) {
        const entry = this.#take();
        if (entry === undefined) await this.#waitForWork(signal);
        else await this.#write(entry, signal, deadline.signal);
      }
      while (!deadline.signal.aborted) {
        const entry = this.#take();
        if (entry === undefined) break;
        await this.#write(entry, signal, deadline.signal);
      }
    } finally {
      signal.removeEventListener('abort', onStop);
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      this.#state = 'stopped';
      let left = 0;
      for (const entry of this.#queue) {
        left += entry.pending;
        entry.pending = 0;
        entry.queued = false;
      }
      this.#queue.clear();
      if (left > 0) this.#drop(left, 'drain', `${this.name}: stopped with ${left} event occurrence(s) not written (drainTimeoutMs ${this.#drainTimeoutMs})`);
      this.#client.close();
      this.#settleFlushes();
    }
  }

  #idle(): boolean {
    return this.#queue.size === 0 && !this.#writing;
  }

  #enqueue(entry: SeriesEntry, what: () => string): boolean {
    if (this.#queue.size >= this.#bufferSize) {
      this.#drop(1, 'full', `${this.name}: the event buffer is full (${this.#bufferSize} writes waiting); dropped the event ${what()}`);
      return false;
    }
    entry.queued = true;
    this.#queue.add(entry);
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
    return true;
  }

  #take(): SeriesEntry | undefined {
    const first = this.#queue.values().next();
    if (first.done === true) {
      this.#settleFlushes();
      return undefined;
    }
    this.#queue.delete(first.value);
    first.value.queued = false;
    return first.value;
  }

  #waitForWork(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        this.#wake = undefined;
        resolve();
      };
      this.#wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  #settleFlushes(): void {
    if (!this.#idle() && this.#state !== 'stopped') return;
    const waiters = [...this.#flushWaiters];
    this.#flushWaiters.clear();
    for (const done of waiters) done();
  }

  #drop(occurrences: number, reason: string, message: string): void {
    this.#stats.dropped += occurrences;
    this.#log.log('warn', `dropped:${reason}`, message);
  }

  /**
   * One write of a series: brings the server to the series' current count, retrying what may succeed
   * later. Retry waits end when `stop` aborts (then one last attempt is made); `deadline` aborts the
   * request itself (the drain ran out of time).
   */
  async #write(entry: SeriesEntry, stop: AbortSignal, deadline: AbortSignal): Promise<void> {
    const occurrences = entry.pending;
    entry.pending = 0;
    this.#writing = true;
    try {
      for (let attempt = 1; ; attempt++) {
        const failure = await this.#attempt(entry, deadline);
        if (failure === undefined) return;
        if (deadline.aborted) {
          this.#drop(occurrences, 'deadline', `${this.name}: the drain ran out of time writing Event ${describeEvent(entry)}`);
          return;
        }
        if (failure.retryable && failure.immediate === true && attempt < this.#maxAttempts) continue;
        if (!failure.retryable || attempt >= this.#maxAttempts || stop.aborted) {
          this.#stats.failed++;
          const tries = `${attempt} attempt${attempt === 1 ? '' : 's'}`;
          this.#log.log('warn', `failed:${failureCode(failure.error)}`, `${this.name}: gave up writing Event ${describeEvent(entry)} after ${tries}: ${failure.error.message}`, { attempt, ...errorFields(failure.error) });
          return;
        }
        const delayMs = Math.max(failure.retryAfterMs ?? 0, jittered(this.#retryDelayMs, 0.25, this.#random));
        this.#log.log('debug', `retry:${failureCode(failure.error)}`, `${this.name}: writing Event ${describeEvent(entry)} failed (attempt ${attempt}), retrying in ${formatDuration(delayMs)}: ${failure.error.message}`, { attempt, ...errorFields(failure.error) });
        await sleep(this.#clock, delayMs, stop); // a stop ends the wait: one last attempt follows
      }
    } finally {
      this.#writing = false;
      if (this.#queue.size === 0) this.#settleFlushes();
    }
  }

  /** One attempt: a PATCH of the series when the Event exists, else a create. Resolves the failure, if any. */
  async #attempt(entry: SeriesEntry, signal: AbortSignal): Promise<Failure | undefined> {
    const count = entry.count;
    const series = count >= 2 ? { count, lastObservedTime: entry.lastObservedTime } : undefined;
    const meta = entry.event.metadata ?? {};
    const name = meta.name ?? '';
    const namespace = meta.namespace ?? 'default';
    if (this.#namespaces !== undefined && !this.#namespaces.includes(namespace) && !this.#outside.has(namespace)) {
      this.#outside.add(namespace);
      this.#log.log('warn', `outside:${namespace}`, `${this.name}: an Event goes to namespace ${namespace}, outside option namespaces (${this.#namespaces.join(', ')}): the rules from permissions() do not grant it`);
    }
    try {
      if (entry.created) {
        if (entry.writtenCount >= count) return undefined;
        try {
          await this.#call(signal, `PATCH Event ${namespace}/${name}`, (s) => this.#client.patch(name, namespace, { series }, 'merge', s));
          this.#stats.patched++;
          entry.writtenCount = count;
          return undefined;
        } catch (err) {
          if (!(err instanceof ApiStatusError && err.statusCode === 404)) throw err;
          entry.created = false; // deleted or expired on the server: create it again, same name, current count
        }
      }
      try {
        await this.#call(signal, `POST Event ${namespace}/${name}`, (s) => this.#client.create(series === undefined ? entry.event : { ...entry.event, series }, s));
        this.#stats.created++;
        entry.created = true;
        entry.ambiguousCount = 0;
        entry.writtenCount = count;
        return undefined;
      } catch (err) {
        if (!(err instanceof ApiStatusError && err.statusCode === 409)) throw err;
        if (entry.ambiguousCount > 0) {
          // Our earlier create went through after all (its answer was lost): patch it, do not duplicate it.
          entry.created = true;
          entry.writtenCount = entry.ambiguousCount;
          entry.ambiguousCount = 0;
        } else {
          meta.name = eventName(entry.event.regarding?.name ?? 'event', wallMs(this.#clock.now()), this.#seq++);
        }
        return { error: err, retryable: true, immediate: true };
      }
    } catch (err) {
      const failure = classify(err);
      if (!entry.created && failure.retryable) entry.ambiguousCount = count;
      return failure;
    }
  }

  /** Runs one request with the write timeout; a timeout is a `NetworkError`, an abort an `AbortedError`. */
  async #call<T>(signal: AbortSignal, what: string, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const result = await callWithTimeout(this.#clock, this.#writeTimeoutMs, signal, request);
    if (result === ABORTED) throw new AbortedError(`${what} was aborted`, { cause: signal.reason });
    if (result === TIMED_OUT) throw new NetworkError(`${what} got no answer within ${formatDuration(this.#writeTimeoutMs)} (writeTimeoutMs)`);
    return result;
  }
}
