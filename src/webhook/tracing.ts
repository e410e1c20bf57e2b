// The webhook server's OpenTelemetry spans (option `tracerProvider`): one server span per review —
// the webhook, the operation, the kind, whether it was allowed, the size of its patch.

import type { Logger } from '../core/index.js';
import { failSpan, SpanKinds, SpanStatus, tracerOf, TracingFaults, withSpan, type OtelApi, type TraceAttributeValue, type TraceSpan, type TraceTracer, type TracerProviderLike } from '../observability/index.js';

interface ReviewBody {
  request?: { uid?: unknown; operation?: unknown; kind?: { kind?: unknown }; namespace?: unknown; name?: unknown; desiredAPIVersion?: unknown; objects?: unknown };
  response?: { allowed?: unknown; patch?: unknown; status?: { code?: unknown; message?: unknown }; result?: { status?: unknown; message?: unknown } };
}

/** The tracing of one webhook server: made when its `tracerProvider` is given (else the server holds `undefined`). */
export class WebhookTracing {
  readonly #tracer: TraceTracer;
  readonly #api: OtelApi;
  readonly #faults: TracingFaults;

  /** Throws `INVALID_OPTION` naming `owner` for a provider that is not one, or whose `getTracer` throws. */
  constructor(owner: string, provider: TracerProviderLike, log: Logger) {
    const { tracer, api } = tracerOf(owner, provider);
    this.#tracer = tracer;
    this.#api = api;
    this.#faults = new TracingFaults(owner, log);
  }

  /** How many tracer or span calls threw (each kind logged once; the reviews were answered). */
  get faults(): number {
    return this.#faults.count;
  }

  /** Starts the span of a review of `webhook` (undefined when the tracer threw: the review is answered untraced). */
  start(webhook: string, review: unknown): TraceSpan | undefined {
    try {
      const r = (review as ReviewBody | null)?.request;
      const attributes: Record<string, TraceAttributeValue> = { 'kube_informer.webhook': webhook };
      if (typeof r?.operation === 'string') attributes['kube_informer.webhook.operation'] = r.operation;
      if (typeof r?.kind?.kind === 'string') attributes['kube_informer.webhook.kind'] = r.kind.kind;
      if (typeof r?.namespace === 'string' && r.namespace !== '') attributes['k8s.namespace.name'] = r.namespace;
      if (typeof r?.name === 'string' && r.name !== '') attributes['kube_informer.webhook.name'] = r.name;
      if (typeof r?.uid === 'string') attributes['kube_informer.webhook.uid'] = r.uid;
      if (typeof r?.desiredAPIVersion === 'string') attributes['kube_informer.webhook.desired_api_version'] = r.desiredAPIVersion;
      if (Array.isArray(r?.objects)) attributes['kube_informer.webhook.objects'] = r.objects.length;
      return this.#tracer.startSpan(`webhook ${webhook}`, { kind: SpanKinds.server, attributes }, this.#api.context.active());
    } catch (err) {
      this.#faults.fault('start review span', err);
      return undefined;
    }
  }

  /** Runs the review with its span active (the handler's own spans nest under it). */
  run<R>(span: TraceSpan, fn: () => R): R {
    return withSpan(this.#api, span, this.#faults, fn);
  }

  /**
   * Ends the span with what was answered: `allowed` and the patch's size in bytes (admission), the
   * conversion's result; ERROR for a malformed review (an `Error`) and for an answer of code ≥ 500
   * (a handler that threw or ran out of time).
   */
  end(span: TraceSpan, answer: unknown): void {
    try {
      if (answer instanceof Error) failSpan(span, answer);
      else {
        const response = (answer as ReviewBody | null)?.response;
        if (typeof response?.allowed === 'boolean') span.setAttribute('kube_informer.webhook.allowed', response.allowed);
        if (typeof response?.patch === 'string') span.setAttribute('kube_informer.webhook.patch_bytes', Buffer.byteLength(response.patch, 'base64'));
        if (typeof response?.result?.status === 'string') span.setAttribute('kube_informer.webhook.result', response.result.status);
        const code = response?.status?.code;
        if (typeof code === 'number') span.setAttribute('kube_informer.webhook.status_code', code);
        if (typeof code === 'number' && code >= 500) span.setStatus({ code: SpanStatus.error, message: typeof response?.status?.message === 'string' ? response.status.message : undefined });
      }
      span.end();
    } catch (err) {
      this.#faults.fault('end review span', err);
    }
  }
}
