// The admission webhook's test helper: one AdmissionReview built, answered in-process, and its response read back.

import {
  InvalidOptionError,
  applyJsonPatch,
  silentLogger,
  validateOptions,
  type GroupVersionResource,
  type JsonPatchOperation,
  type Logger,
  type OptionSchemaFor,
} from '../core/index.js';
import type { AdmissionOperation, AdmissionStatus, AdmissionUserInfo } from './admission.js';
import type { Webhook } from './review.js';

/** What {@link reviewAdmission} asks: the request of one AdmissionReview, every field but the resource optional. */
export interface AdmissionReviewInput<T = Record<string, unknown>> {
  /**
   * The resource under review: a descriptor (`resources.configmaps`, a definition's `descriptor`) or
   * `{ group, version, resource, kind? }`. Required: a webhook with `resources` answers only its own.
   */
  resource: GroupVersionResource & {
    /** The kind (a descriptor has it). Default: the object's `kind`. */
    readonly kind?: string;
  };
  /** The new object (CREATE, UPDATE). Default: none. */
  object?: T;
  /** The object before (UPDATE, DELETE). Default: none. */
  oldObject?: T;
  /**
   * The operation. Default: `UPDATE` with both objects, `DELETE` with `oldObject` alone, else `CREATE`.
   */
  operation?: AdmissionOperation;
  /** The subresource (`'status'`, `'scale'`). Default: none. */
  subResource?: string;
  /** The object's name. Default: `metadata.name` of `object` (or of `oldObject`). */
  name?: string;
  /** The object's namespace. Default: `metadata.namespace` of `object` (or of `oldObject`). */
  namespace?: string;
  /** Who asks. Default: `{}` (no user). */
  userInfo?: AdmissionUserInfo;
  /** A dry run. Default: `false`. */
  dryRun?: boolean;
  /** The operation's options (`CreateOptions`, …). Default: none. */
  options?: Record<string, unknown>;
  /** The review's uid, echoed in the response. Default: `'kube-informer-review'`. */
  uid?: string;
  /** The handler's signal (`context.signal`). Default: one that never aborts. */
  signal?: AbortSignal;
  /** The handler's logger (`context.logger`). Default: silent. */
  logger?: Logger;
}

/** The response of {@link reviewAdmission}, decoded. */
export interface AdmissionReviewResult<T = Record<string, unknown>> {
  /** Whether the request is admitted. */
  allowed: boolean;
  /** The status of a denial (code, message, reason, field errors as `details.causes`). */
  status?: AdmissionStatus;
  /** The warnings the client would print (`[]` when none). */
  warnings: string[];
  /** The JSON Patch of a mutating webhook, decoded (`[]` when none). */
  patch: JsonPatchOperation[];
  /**
   * The object as the API server would go on with it: the request's `object` with `patch` applied
   * (the request's `object` itself when there is no patch; `undefined` without one, as on DELETE).
   */
  object?: T;
  /** The AdmissionReview the webhook answered, as it would be sent. */
  review: unknown;
}

const inputSchema: OptionSchemaFor<AdmissionReviewInput> = {
  resource: 'object',
  object: 'object',
  oldObject: 'object',
  operation: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'],
  subResource: 'string',
  name: 'string',
  namespace: 'string',
  userInfo: 'object',
  dryRun: 'boolean',
  options: 'object',
  uid: 'string',
  signal: 'any',
  logger: 'logger',
};

/**
 * Runs an admission webhook ({@link validatingWebhook}, {@link mutatingWebhook}, `defaultingWebhook`,
 * `validationWebhook`) in-process on one `AdmissionReview` built from `input`, exactly as the
 * {@link WebhookServer} would answer it, and decodes the response: for tests without a server, a
 * certificate or an API server. A mutating webhook's patch is applied to the object for you.
 *
 * ```ts
 * const result = await reviewAdmission(webhook, { resource: resources.configmaps, object: cm });
 * expect(result.allowed).toBe(true);
 * expect(result.object?.metadata?.labels).toEqual({ team: 'a' });
 * ```
 *
 * Throws `INVALID_OPTION` on a misspelt or mistyped input field, a conversion webhook, and when the
 * resource is missing; rejects with what the handler threw (the server would log it and deny with 500).
 */
export function reviewAdmission<T = Record<string, unknown>>(webhook: Webhook, input: AdmissionReviewInput<T>): Promise<AdmissionReviewResult<T>> {
  validateOptions('reviewAdmission', input, inputSchema);
  if (webhook?.type !== 'validating' && webhook?.type !== 'mutating') throw new InvalidOptionError(`reviewAdmission: ${String(webhook?.name)} is not an admission webhook (type ${String(webhook?.type)}); test a conversion webhook with its convert()`);
  const r = input?.resource;
  if (r === undefined || typeof r.group !== 'string' || typeof r.version !== 'string' || typeof r.resource !== 'string') {
    throw new InvalidOptionError('reviewAdmission: option resource is required: a descriptor or { group, version, resource }');
  }
  const { object, oldObject } = input;
  const meta = ((object ?? oldObject) as { metadata?: { name?: string; namespace?: string } } | undefined)?.metadata;
  const kind = r.kind ?? ((object ?? oldObject) as { kind?: unknown } | undefined)?.kind;
  const uid = input.uid ?? 'kube-informer-review';
  const request = {
    uid,
    kind: { group: r.group, version: r.version, kind: typeof kind === 'string' ? kind : '' },
    resource: { group: r.group, version: r.version, resource: r.resource },
    ...(input.subResource === undefined ? {} : { subResource: input.subResource }),
    name: input.name ?? meta?.name ?? '',
    ...((input.namespace ?? meta?.namespace) === undefined ? {} : { namespace: input.namespace ?? meta?.namespace }),
    operation: input.operation ?? (object !== undefined && oldObject !== undefined ? 'UPDATE' : oldObject !== undefined ? 'DELETE' : 'CREATE'),
    userInfo: input.userInfo ?? {},
    // Through JSON, as the server receives them: what a handler gets is never the test's own object.
    ...(object === undefined ? {} : { object: JSON.parse(JSON.stringify(object)) as unknown }),
    ...(oldObject === undefined ? {} : { oldObject: JSON.parse(JSON.stringify(oldObject)) as unknown }),
    dryRun: input.dryRun ?? false,
    ...(input.options === undefined ? {} : { options: input.options }),
  };
  const body = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
  const context = { signal: input.signal ?? new AbortController().signal, logger: input.logger ?? silentLogger };
  return webhook.review(body, context).then((review) => decode<T>(review, uid, request.object as T | undefined));
}

function decode<T>(review: unknown, uid: string, object: T | undefined): AdmissionReviewResult<T> {
  const response = (review as { response?: Record<string, unknown> } | undefined)?.response;
  if (response === undefined || response.uid !== uid) throw new Error(`reviewAdmission: the webhook answered no response for uid ${uid}`);
  const patch = typeof response.patch === 'string' ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as JsonPatchOperation[]) : [];
  return {
    allowed: response.allowed === true,
    ...(response.status === undefined ? {} : { status: response.status as AdmissionStatus }),
    warnings: (response.warnings as string[] | undefined) ?? [],
    patch,
    ...(object === undefined ? {} : { object: patch.length === 0 ? object : (applyJsonPatch(object, patch, { dialect: 'kube-apiserver' }) as T) }),
    review,
  };
}
