// What the server asks of every webhook it serves (admission or conversion), and the errors of a bad review body.

import { KubeInformerError, ErrorCodes, type Logger } from '../core/index.js';

/** What a webhook's handler is given besides the review: its cancellation and the server's logger. */
export interface WebhookContext {
  /** Aborted when the server answers without the handler (its deadline passed) or stops past its grace. */
  signal: AbortSignal;
  /** The server's logger. */
  logger: Logger;
}

/**
 * A webhook the {@link WebhookServer} serves at a path: made by {@link validatingWebhook},
 * {@link mutatingWebhook} or {@link conversionWebhook}.
 */
export interface Webhook {
  /** The webhook's name: in logs, in denials, and the configuration's `webhooks[].name`. */
  readonly name: string;
  /** `'validating'`, `'mutating'` or `'conversion'`. */
  readonly type: 'validating' | 'mutating' | 'conversion';
  /** Answers a parsed review body. Throws {@link BadReviewError} when the body is not a review it serves. */
  review(body: unknown, context: WebhookContext): Promise<unknown>;
  /** The answer when the handler did not answer within `timeoutMs` (the body was already checked). */
  timedOut(body: unknown, timeoutMs: number): unknown;
  /** The answer when the handler threw (logged by the server): never an allowed review. */
  failed(body: unknown): unknown;
}

/** A review body that is not what the webhook serves (wrong apiVersion or kind, no `request`, no `uid`): a 400. */
export class BadReviewError extends KubeInformerError {
  constructor(message: string) {
    super(ErrorCodes.WEBHOOK_CONFIG, message);
  }
}

/** Checks `body` is `{ apiVersion, kind, request: { uid } }` of the given type and returns its request. */
export function reviewRequest(body: unknown, apiVersion: string, kind: string): Record<string, unknown> & { uid: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadReviewError(`expected a ${kind} object`);
  const review = body as Record<string, unknown>;
  if (review.apiVersion !== apiVersion || review.kind !== kind) {
    throw new BadReviewError(`expected apiVersion ${apiVersion} kind ${kind}, got ${String(review.apiVersion)} ${String(review.kind)}`);
  }
  const request = review.request;
  if (request === null || typeof request !== 'object' || Array.isArray(request)) throw new BadReviewError(`${kind} has no request`);
  const uid = (request as Record<string, unknown>).uid;
  if (typeof uid !== 'string' || uid === '') throw new BadReviewError(`${kind}.request has no uid`);
  return request as Record<string, unknown> & { uid: string };
}
