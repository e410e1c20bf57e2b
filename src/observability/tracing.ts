// OpenTelemetry tracing without a hard dependency: the structural types our options accept, the
// `@opentelemetry/api` loaded on first use (never when no tracer provider is given), and the guard
// that keeps a throwing tracer from costing a reconcile or a review.

import { createRequire } from 'node:module';
import { InvalidOptionError } from '../core/options.js';
import { describeValue } from '../core/options.js';
import type { Logger } from '../core/log.js';

/** An attribute value a span takes (OpenTelemetry's `AttributeValue`, the scalar forms). */
export type TraceAttributeValue = string | number | boolean;

/** A span's identity (OpenTelemetry's `SpanContext`): what a link or a log line refers to. */
export interface TraceSpanContext {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
  /** The W3C trace flags (1: sampled). */
  readonly traceFlags: number;
}

/** A link from one span to another (OpenTelemetry's `Link`). */
export interface TraceLink {
  /** The span linked to. */
  readonly context: TraceSpanContext;
  /** What the link says. */
  readonly attributes?: Readonly<Record<string, TraceAttributeValue>>;
}

/** The options of a span at its start (the part of OpenTelemetry's `SpanOptions` the library sets). */
export interface TraceSpanOptions {
  /** OpenTelemetry's `SpanKind`: 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
  kind?: number;
  /** The attributes known at the start. */
  attributes?: Record<string, TraceAttributeValue>;
  /** The spans this one follows from. */
  links?: TraceLink[];
}

/** The part of an OpenTelemetry `Span` the library calls. */
export interface TraceSpan {
  /** The span's identity. */
  spanContext(): TraceSpanContext;
  /** Sets one attribute. */
  setAttribute(key: string, value: TraceAttributeValue): unknown;
  /** Adds an event now. */
  addEvent(name: string, attributes?: Record<string, TraceAttributeValue>): unknown;
  /** Sets the status: code 1 ok, 2 error. */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Records an exception as an event. */
  recordException(exception: Error): void;
  /** Ends the span. */
  end(): void;
}

/** The part of an OpenTelemetry `Tracer` the library calls. */
export interface TraceTracer {
  /** Starts a span, a child of the span in `context` when there is one. */
  startSpan(name: string, options?: TraceSpanOptions, context?: unknown): TraceSpan;
}

/**
 * An OpenTelemetry `TracerProvider` (`@opentelemetry/api`'s, as the SDKs' `BasicTracerProvider`,
 * `NodeTracerProvider` and `NodeSDK`'s global provider are): the `tracerProvider` option of
 * controllers, the Manager and the webhook server. A structural type of the library's own, so that
 * nothing in kube-informer's types needs the package installed; any provider from the api 1.x is one.
 */
export interface TracerProviderLike {
  /** The tracer of an instrumentation scope (the library asks for `kube-informer`). */
  getTracer(name: string, version?: string): TraceTracer;
}

/** The part of `@opentelemetry/api` the library uses once a tracer provider is given. */
export interface OtelApi {
  readonly context: {
    active(): unknown;
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: unknown, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F>;
  };
  readonly trace: {
    setSpan(context: unknown, span: TraceSpan): unknown;
  };
}

const requireHere = createRequire(import.meta.url);
let api: OtelApi | undefined;

/**
 * `@opentelemetry/api`, loaded on the first call (a `tracerProvider` was given): never at import, so
 * the package root loads without it. Throws `INVALID_OPTION` naming `owner` when it is not installed.
 */
export function otelApi(owner: string): OtelApi {
  if (api !== undefined) return api;
  try {
    api = requireHere('@opentelemetry/api') as OtelApi;
  } catch (err) {
    throw new InvalidOptionError(`${owner}: option tracerProvider needs the package @opentelemetry/api (an optional peer dependency): install it (npm install @opentelemetry/api); loading it failed: ${(err as Error)?.message ?? String(err)}`);
  }
  return api;
}

/** The instrumentation scope of every span the library starts. */
export const TRACER_NAME = 'kube-informer';

/**
 * The tracer of `provider`, asked for once when the owner is constructed: a provider without
 * `getTracer`, one whose `getTracer` throws, or one that returns no tracer fails with `INVALID_OPTION`
 * naming `owner` and the option.
 */
export function tracerOf(owner: string, provider: unknown): { tracer: TraceTracer; api: OtelApi } {
  const p = provider as Partial<TracerProviderLike> | null;
  if (p === null || typeof p !== 'object' || typeof p.getTracer !== 'function') {
    throw new InvalidOptionError(`${owner}: option tracerProvider must be an OpenTelemetry TracerProvider (with getTracer), got ${describeValue(provider)}`);
  }
  const loaded = otelApi(owner);
  let tracer: TraceTracer;
  try {
    tracer = p.getTracer(TRACER_NAME);
  } catch (err) {
    throw new InvalidOptionError(`${owner}: option tracerProvider: its getTracer('${TRACER_NAME}') threw: ${(err as Error)?.message ?? String(err)}`);
  }
  if (tracer === null || typeof tracer !== 'object' || typeof tracer.startSpan !== 'function') {
    throw new InvalidOptionError(`${owner}: option tracerProvider: its getTracer('${TRACER_NAME}') returned no tracer (startSpan), got ${describeValue(tracer)}`);
  }
  return { tracer, api: loaded };
}

/**
 * Where a tracer or span method that threw goes: logged once per kind of call (`start`, `end`,
 * `link`, …) so a broken exporter cannot flood the log, and counted, every time. The work it was
 * tracing proceeds as if tracing were off.
 */
export class TracingFaults {
  readonly #owner: string;
  readonly #log: Logger;
  readonly #seen = new Set<string>();
  #count = 0;

  constructor(owner: string, log: Logger) {
    this.#owner = owner;
    this.#log = log;
  }

  /** How many tracer or span calls threw. */
  get count(): number {
    return this.#count;
  }

  /** Counts a failure of `kind`; logs the first of each kind. */
  fault(kind: string, err: unknown): void {
    this.#count++;
    if (this.#seen.has(kind)) return;
    this.#seen.add(kind);
    this.#log.warn(`${this.#owner}: tracing failed (${kind}): ${(err as Error)?.message ?? String(err)}; the work goes on untraced where it failed (logged once per kind)`, { tracing: kind });
  }
}

/**
 * Runs `fn` with `span` as the active span (so spans the caller's code starts nest under it). A
 * context manager that throws before calling `fn` is a fault and `fn` runs anyway: the work is never lost.
 */
export function withSpan<R>(api: OtelApi, span: TraceSpan, faults: TracingFaults, fn: () => R): R {
  let called = false;
  try {
    return api.context.with(api.trace.setSpan(api.context.active(), span), () => {
      called = true;
      return fn();
    });
  } catch (err) {
    if (called) throw err;
    faults.fault('context', err);
    return fn();
  }
}

/** The status codes of OpenTelemetry's `SpanStatusCode`. */
export const SpanStatus = Object.freeze({ ok: 1, error: 2 });

/** The kinds of OpenTelemetry's `SpanKind` the library starts. */
export const SpanKinds = Object.freeze({ internal: 0, server: 1, client: 2 });

/** Sets ERROR on `span` and records `err` (an `Error`, or a value wrapped in one). */
export function failSpan(span: TraceSpan, err: unknown): void {
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  span.setStatus({ code: SpanStatus.error, message: error.message });
}

/** The trace ids a log line carries (`traceId`, `spanId`) for `span`. */
export function traceFields(span: TraceSpan): { traceId: string; spanId: string } {
  const c = span.spanContext();
  return { traceId: c.traceId, spanId: c.spanId };
}

/**
 * The tracer provider a Manager hands to the controllers and webhook server it runs (the
 * `ManagerOptions.tracerProvider`), kept beside each of them: their own option wins.
 */
const handed = new WeakMap<object, TracerProviderLike>();

/** Hands `provider` to `target` (a Controller or WebhookServer the Manager runs). */
export function handTracerProvider(target: object, provider: TracerProviderLike): void {
  handed.set(target, provider);
}

/** The provider a Manager handed to `target`, if any. */
export function handedTracerProvider(target: object): TracerProviderLike | undefined {
  return handed.get(target);
}
