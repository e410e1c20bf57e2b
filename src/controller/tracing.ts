// A controller's OpenTelemetry spans (option `tracerProvider`): a short span per watch event, the
// links each key's pending request collected from them, the reconcile span, a child span per
// `ctx.client` write, and the read-your-writes wait as an event. Made only when the option is given.

import { apiStatusOf } from '../core/api-errors.js';
import { splitMetaNamespaceKey } from '../core/keys.js';
import type { Logger } from '../core/log.js';
import type { ResourceDescriptor } from '../core/resources.js';
import type { ResourceEventHandler } from '../informer/handler.js';
import { gvrKey } from '../informer/factory.js';
import type { ResourceClient } from '../listwatch/index.js';
import type { ObservedWrites } from './writes.js';
import { failSpan, handedTracerProvider, SpanKinds, traceFields, tracerOf, TracingFaults, withSpan, type OtelApi, type TraceAttributeValue, type TraceLink, type TraceSpan, type TraceTracer, type TracerProviderLike } from '../observability/index.js';
import type { ReconcileReason, RunTrace } from './context.js';
import { unwrapTombstone } from './mapping.js';
import type { Action } from './scheduler.js';

/** The most links one reconcile span keeps (the events merged into its request past it are counted, not linked). */
export const MAX_LINKS = 16;

/** What a key's next reconcile span takes: the events its request merged, the write waits since. */
interface Pending {
  links: TraceLink[];
  last: TraceLink | undefined;
  dropped: number;
  observed: Array<Record<string, TraceAttributeValue>> | undefined;
}

interface Meta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** The kube verb of each write method of `ResourceClient` and where its object's name is. */
const WRITES: Readonly<Record<string, { verb: string; named: boolean }>> = {
  create: { verb: 'create', named: false },
  update: { verb: 'update', named: false },
  replace: { verb: 'update', named: false },
  updateStatus: { verb: 'update', named: false },
  replaceStatus: { verb: 'update', named: false },
  updateScale: { verb: 'update', named: false },
  apply: { verb: 'patch', named: false },
  applyStatus: { verb: 'patch', named: false },
  createOrUpdate: { verb: 'update', named: false },
  patch: { verb: 'patch', named: true },
  patchStatus: { verb: 'patch', named: true },
  delete: { verb: 'delete', named: true },
};

/** The tracing of one controller: made when its `tracerProvider` is given (else the controller holds `undefined`). */
export class ControllerTracing {
  readonly #name: string;
  readonly #cluster: string | undefined;
  readonly #tracer: TraceTracer;
  readonly #api: OtelApi;
  readonly #faults: TracingFaults;
  readonly #pending = new Map<string, Pending>();
  /** The event being handed to the controller's handler now: its keys' requests link to it. */
  #current: TraceLink | undefined;

  /**
   * The tracing of a controller: with its own `provider`, else the one a Manager handed to `target`
   * (the controller); undefined without either. Throws `INVALID_OPTION` as the constructor does.
   */
  static of(owner: string, name: string, provider: TracerProviderLike | undefined, target: object, log: Logger, cluster?: string): ControllerTracing | undefined {
    const p = provider ?? handedTracerProvider(target);
    return p === undefined ? undefined : new ControllerTracing(owner, name, p, log, cluster);
  }

  /** Throws `INVALID_OPTION` naming `owner` for a provider that is not one, or whose `getTracer` throws. `cluster`: the reconcile spans' `k8s.cluster.name`. */
  constructor(owner: string, name: string, provider: TracerProviderLike, log: Logger, cluster?: string) {
    const { tracer, api } = tracerOf(owner, provider);
    this.#name = name;
    this.#cluster = cluster;
    this.#tracer = tracer;
    this.#api = api;
    this.#faults = new TracingFaults(owner, log);
  }

  /** Hears the read-your-writes waits of `writes` (a run's); returns this. */
  follow(writes: ObservedWrites): this {
    writes.observer = (key, count, missed, waitedMs) => this.observed(key, count, missed, waitedMs);
    return this;
  }

  /** How many tracer or span calls threw (each logged once per kind; the work went on). */
  get faults(): number {
    return this.#faults.count;
  }

  /**
   * `inner` (a source's handler) with a short span per event — the resource, the event, the object's
   * namespace, name and resourceVersion — that the requests it makes link to.
   */
  handler(resource: ResourceDescriptor<unknown>, inner: ResourceEventHandler<unknown>): ResourceEventHandler<unknown> {
    const key = gvrKey(resource);
    const around = (event: string, obj: unknown, initial: boolean, deliver: () => void): void => {
      this.#current = this.#eventLink(key, event, obj, initial);
      try {
        deliver();
      } finally {
        this.#current = undefined;
      }
    };
    return {
      onAdd: (obj, initial) => around('add', obj, initial, () => void inner.onAdd?.(obj, initial)),
      onUpdate: (old, obj) => around('update', obj, false, () => void inner.onUpdate?.(old, obj)),
      onDelete: (obj) => around('delete', unwrapTombstone(obj), false, () => void inner.onDelete?.(obj)),
    };
  }

  /** A request for `key` was made: it links to the event being handled, if any (merged requests keep every link, up to {@link MAX_LINKS}). */
  requested(key: string): void {
    const link = this.#current;
    if (link === undefined) return;
    const pending = this.#pendingOf(key);
    // An update requests the keys of both states: one link per event.
    if (pending.last === link) return;
    pending.last = link;
    if (pending.links.length < MAX_LINKS) pending.links.push(link);
    else pending.dropped++;
  }

  /**
   * The writes a reconcile of `key` recorded were waited for (`waitedMs`, `missed` of `writes` not
   * observed in time): an event at the start of the key's next reconcile span (the wait runs before
   * it — between two reconciles, holding no worker, or as the next one begins).
   */
  observed(key: string, writes: number, missed: number, waitedMs: number): void {
    const attributes = { 'kube_informer.writes': writes, 'kube_informer.writes.missed': missed, 'kube_informer.writes.wait_ms': waitedMs, 'kube_informer.writes.timed_out': missed > 0 };
    const pending = this.#pendingOf(key);
    (pending.observed ??= []).push(attributes);
  }

  /** Starts the reconcile span of `key` (undefined when the tracer threw: the reconcile runs untraced). */
  start(key: string, reason: ReconcileReason, attempt: number): ReconcileTrace | undefined {
    const pending = this.#pending.get(key);
    this.#pending.delete(key);
    const { namespace } = splitMetaNamespaceKey(key);
    const attributes: Record<string, TraceAttributeValue> = {
      'kube_informer.controller': this.#name,
      'kube_informer.key': key,
      'kube_informer.reason': reason.kind,
      'kube_informer.attempt': attempt,
    };
    if (namespace !== '') attributes['k8s.namespace.name'] = namespace;
    if (this.#cluster !== undefined) attributes['k8s.cluster.name'] = this.#cluster;
    if (reason.kind === 'watch') {
      attributes['kube_informer.reason.role'] = reason.role;
      attributes['kube_informer.reason.resource'] = reason.resource;
      attributes['kube_informer.reason.event'] = reason.event;
      attributes['kube_informer.reason.initial'] = reason.initial;
    }
    if (pending !== undefined && pending.dropped > 0) attributes['kube_informer.links.dropped'] = pending.dropped;
    let span: TraceSpan;
    try {
      span = this.#tracer.startSpan(`reconcile ${this.#name}`, { kind: SpanKinds.internal, attributes, links: pending?.links }, this.#api.context.active());
    } catch (err) {
      this.#faults.fault('start reconcile span', err);
      return undefined;
    }
    const trace = new ReconcileTrace(span, this);
    for (const o of pending?.observed ?? []) trace.event('kube_informer.writes_observed', o);
    return trace;
  }

  /** Runs `fn` (the user's reconcile) with the reconcile span active, so their own spans nest under it. */
  run<R>(trace: ReconcileTrace, fn: () => R): R {
    return withSpan(this.#api, trace.span, this.#faults, fn);
  }

  /** Ends the reconcile span: `outcome` the action's kind, `error`, `terminal` or `aborted`; a failure's error recorded. */
  end(trace: ReconcileTrace, outcome: Action | 'error' | 'terminal' | 'aborted', error?: unknown): void {
    this.guard('end reconcile span', () => {
      const span = trace.span;
      if (typeof outcome === 'string') {
        span.setAttribute('kube_informer.outcome', outcome);
        if (outcome !== 'aborted') failSpan(span, error);
      } else {
        span.setAttribute('kube_informer.outcome', outcome.kind);
        if (outcome.kind === 'requeueAfter') span.setAttribute('kube_informer.requeue_after_ms', outcome.ms);
      }
      span.end();
    });
  }

  /** `client` with a child span of `trace` around each write (the reads are not traced). */
  client<C>(client: ResourceClient<C>, resource: ResourceDescriptor<C>, trace: ReconcileTrace): ResourceClient<C> {
    const resourceKey = gvrKey(resource);
    return new Proxy(client, {
      get: (target, property, receiver): unknown => {
        const value: unknown = Reflect.get(target, property, receiver);
        const write = typeof property === 'string' ? WRITES[property] : undefined;
        if (write === undefined || typeof value !== 'function') return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        const method = property as string;
        return (...args: unknown[]): unknown => {
          const meta = (args[0] as Meta | undefined)?.metadata;
          const name = write.named ? (args[0] as string | undefined) : meta?.name;
          const namespace = write.named ? (args[1] as string | undefined) : meta?.namespace;
          const span = this.#writeSpan(trace, method, write.verb, resourceKey, name, namespace);
          const call = (): Promise<unknown> => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (span === undefined) return call();
          return withSpan(this.#api, span, this.#faults, call).then(
            (answer) => {
              this.guard('end write span', () => {
                const result = (answer as { result?: unknown } | null)?.result;
                if (method === 'createOrUpdate' && typeof result === 'string') span.setAttribute('kube_informer.result', result);
                span.end();
              });
              return answer;
            },
            (err: unknown) => {
              this.guard('end write span', () => {
                const status = apiStatusOf(err);
                if (status !== undefined) span.setAttribute('http.response.status_code', status.code);
                if (status?.reason !== undefined) span.setAttribute('error.type', status.reason);
                failSpan(span, err);
                span.end();
              });
              throw err;
            },
          );
        };
      },
    });
  }

  /** Forgets the pending links and waits (the run ended). */
  clear(): void {
    this.#pending.clear();
  }

  /** Runs a tracing call; a throw is a fault (logged once per `kind`, counted), never the caller's failure. */
  guard(kind: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#faults.fault(kind, err);
    }
  }

  #pendingOf(key: string): Pending {
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      pending = { links: [], last: undefined, dropped: 0, observed: undefined };
      this.#pending.set(key, pending);
    }
    return pending;
  }

  #eventLink(resource: string, event: string, obj: unknown, initial: boolean): TraceLink | undefined {
    try {
      const m = (obj as Meta | null)?.metadata;
      const attributes: Record<string, TraceAttributeValue> = { 'kube_informer.resource': resource, 'kube_informer.event': event, 'kube_informer.initial': initial };
      if (m?.namespace !== undefined) attributes['k8s.namespace.name'] = m.namespace;
      if (m?.name !== undefined) attributes['kube_informer.name'] = m.name;
      if (m?.resourceVersion !== undefined) attributes['kube_informer.resource_version'] = m.resourceVersion;
      const span = this.#tracer.startSpan(`${event} ${resource}`, { kind: SpanKinds.internal, attributes }, this.#api.context.active());
      span.end();
      return { context: span.spanContext(), attributes: { 'kube_informer.event': event, 'kube_informer.resource': resource } };
    } catch (err) {
      this.#faults.fault('watch event span', err);
      return undefined;
    }
  }

  #writeSpan(trace: ReconcileTrace, method: string, verb: string, resource: string, name: string | undefined, namespace: string | undefined): TraceSpan | undefined {
    try {
      const attributes: Record<string, TraceAttributeValue> = { 'kube_informer.verb': verb, 'kube_informer.method': method, 'kube_informer.resource': resource };
      if (name !== undefined) attributes['kube_informer.name'] = name;
      if (namespace !== undefined && namespace !== '') attributes['k8s.namespace.name'] = namespace;
      return this.#tracer.startSpan(`${method} ${resource}`, { kind: SpanKinds.client, attributes }, this.#api.trace.setSpan(this.#api.context.active(), trace.span));
    } catch (err) {
      this.#faults.fault('start write span', err);
      return undefined;
    }
  }
}

/** One reconcile's span, as `ReconcileRun.trace`: the trace ids of its log lines, the client it wraps. */
export class ReconcileTrace implements RunTrace {
  readonly span: TraceSpan;
  readonly #tracing: ControllerTracing;
  #fields: { traceId: string; spanId: string } | undefined;

  constructor(span: TraceSpan, tracing: ControllerTracing) {
    this.span = span;
    this.#tracing = tracing;
  }

  get fields(): { traceId?: string; spanId?: string } {
    if (this.#fields === undefined) {
      try {
        this.#fields = traceFields(this.span);
      } catch (err) {
        this.#tracing.guard('span context', () => {
          throw err;
        });
        return {};
      }
    }
    return this.#fields;
  }

  client<C>(client: ResourceClient<C>, resource: ResourceDescriptor<C>): ResourceClient<C> {
    return this.#tracing.client(client, resource, this);
  }

  /** Sets the priority the run started with (`ctx.priority`, when the scheduler has priorities). */
  started(ctx: object): void {
    const priority = (ctx as { priority?: unknown }).priority;
    if (typeof priority === 'number') this.#tracing.guard('set attribute', () => this.span.setAttribute('kube_informer.priority', priority));
  }

  /** Adds an event to the span now. */
  event(name: string, attributes: Record<string, TraceAttributeValue>): void {
    this.#tracing.guard('add event', () => this.span.addEvent(name, attributes));
  }
}
