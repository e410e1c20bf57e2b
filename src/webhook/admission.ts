// Admission webhooks (admission.k8s.io/v1 AdmissionReview): typed validating and mutating handlers, allow() and deny().

import { InvalidOptionError, formatDuration, jsonPatchDiff, validateOptions } from '../core/index.js';
import type { FieldError } from '../crd/index.js';
import { reviewRequest, type Webhook, type WebhookContext } from './review.js';

/** The operation under review. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** Who asked (authentication's answer, as the API server passes it). */
export interface AdmissionUserInfo {
  /** The user's name. */
  username?: string;
  /** The user's UID. */
  uid?: string;
  /** The user's groups. */
  groups?: string[];
  /** Extra attributes from the authenticator. */
  extra?: Record<string, string[]>;
}

/** A request of an `AdmissionReview`, typed by the object under review. */
export interface AdmissionRequest<T = Record<string, unknown>> {
  /** The review's identifier; echoed in the response. */
  uid: string;
  /** The kind of the object. */
  kind: {
    /** The API group (`''` for the core group). */
    group: string;
    /** The version. */
    version: string;
    /** The kind. */
    kind: string;
  };
  /** The resource. */
  resource: {
    /** The API group (`''` for the core group). */
    group: string;
    /** The version. */
    version: string;
    /** The resource, plural. */
    resource: string;
  };
  /** The subresource (`'status'`, `'scale'`, …), if any. */
  subResource?: string;
  /** The name of the object (empty on a CREATE with `generateName`). */
  name?: string;
  /** The namespace, for a namespaced resource. */
  namespace?: string;
  /** CREATE, UPDATE, DELETE or CONNECT. */
  operation: AdmissionOperation;
  /** Who asked. */
  userInfo: AdmissionUserInfo;
  /** The new object (CREATE, UPDATE; absent on DELETE). */
  object?: T;
  /** The object before: UPDATE and DELETE. */
  oldObject?: T;
  /** True for a dry run: nothing is stored, so a handler must have no side effects (the configuration says `sideEffects: None`). */
  dryRun: boolean;
  /** The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`). */
  options?: Record<string, unknown>;
}

/** The `status` of a denial, as the client receives it (a `metav1.Status`). */
export interface AdmissionStatus {
  /** The HTTP status code the client gets. */
  code: number;
  /** The message (the API server prefixes `admission webhook "<name>" denied the request: `). */
  message: string;
  /** The machine-readable reason (`'Invalid'`, `'Forbidden'`, …). */
  reason?: string;
  /** The field errors. */
  details?: {
    /** One per field error. */
    causes: Array<{
      /** The field's path. */
      field: string;
      /** What is wrong. */
      message: string;
      /** The cause's reason, e.g. `'FieldValueInvalid'`. */
      reason: string;
    }>;
  };
}

/** The decision of an admission handler: make it with {@link allow} or {@link deny}. */
export interface AdmissionDecision {
  /** Whether the request is admitted. */
  readonly allowed: boolean;
  /** The status sent with a denial. */
  readonly status?: AdmissionStatus;
  /** Warnings shown to the client (kubectl prints them), allowed or not. */
  readonly warnings?: string[];
  /** Marks a decision (so a mutating handler's return is told apart from an object). */
  readonly [decisionMark]: true;
}

const decisionMark = Symbol('kube-informer.admissionDecision');

/** Admits the request, with optional warnings. */
export function allow(options: { warnings?: string[] } = {}): AdmissionDecision {
  return { allowed: true, ...(options.warnings?.length ? { warnings: options.warnings } : {}), [decisionMark]: true };
}

/** Options of {@link deny}. */
export interface DenyOptions {
  /** The HTTP status code the client gets. Default: 422 with field errors, else 403. */
  code?: number;
  /** The status's `reason` (`'Invalid'`, `'Forbidden'`, …). Default: `'Invalid'` with field errors, else `'Forbidden'`. */
  reason?: string;
  /**
   * Field errors, in the API server's shape (`kube-informer/crd`'s `FieldError`, as `validateObject`
   * reports them): each in `details.causes` (its `type` as the cause's `reason`, its message without the
   * leading `<field>: `) and appended to the message (`spec.x: must be …`; a message that does not start
   * with its field's path gets it). Default: none.
   */
  fieldErrors?: readonly FieldError[];
  /** Warnings shown to the client. Default: none. */
  warnings?: string[];
}

/** A field error's message as a Status cause carries it: without the leading `<field>: ` (the cause names the field). */
function causeMessage(e: FieldError): string {
  return e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message;
}

/**
 * Denies the request. The client sees `admission webhook "<name>" denied the request: <message>`
 * (the API server prefixes it), with the field errors in the message and in `details.causes`.
 */
export function deny(message: string, options: DenyOptions = {}): AdmissionDecision {
  const fieldErrors = options.fieldErrors ?? [];
  const full = fieldErrors.length ? `${message}: ${fieldErrors.map((e) => `${e.field}: ${causeMessage(e)}`).join(', ')}` : message;
  return {
    allowed: false,
    status: {
      code: options.code ?? (fieldErrors.length ? 422 : 403),
      message: full,
      reason: options.reason ?? (fieldErrors.length ? 'Invalid' : 'Forbidden'),
      ...(fieldErrors.length ? { details: { causes: fieldErrors.map((e) => ({ field: e.field, message: causeMessage(e), reason: e.type })) } } : {}),
    },
    ...(options.warnings?.length ? { warnings: options.warnings } : {}),
    [decisionMark]: true,
  };
}

function isDecision(value: unknown): value is AdmissionDecision {
  return value !== null && typeof value === 'object' && (value as Record<symbol, unknown>)[decisionMark] === true;
}

/** Which resources a webhook handles: group, resource, and optionally versions (`'*'` for any). */
export interface ResourceMatch {
  /** The API group (`''` for the core group). */
  group: string;
  /** The resource, plural (`'configmaps'`), or `'*'`. */
  resource: string;
  /** The versions. Default: any. */
  versions?: string[];
}

/** Options shared by {@link validatingWebhook} and {@link mutatingWebhook}. */
export interface AdmissionWebhookOptions {
  /** The webhook's name (a domain-qualified name, e.g. `'vconfigmapset.example.com'`): in logs and denials. Required. */
  name: string;
  /**
   * The resources this webhook handles. A review for another resource is answered per `unhandled`.
   * Default: every resource the configuration sends.
   */
  resources?: ResourceMatch[];
  /** The answer for a resource not in `resources`: `'deny'` (a 403 naming the resource) or `'allow'`. Default: `'deny'`. */
  unhandled?: 'deny' | 'allow';
  /**
   * The answer when the handler does not answer before the deadline (the API server's `timeout`
   * minus the server's margin): `'deny'` (fail closed) or `'allow'` (fail open). Default: `'deny'`.
   */
  onTimeout?: 'deny' | 'allow';
}

/** A validating handler: returns {@link allow} or {@link deny} (sync or async). */
export type ValidatingHandler<T> = (request: AdmissionRequest<T>, context: WebhookContext) => AdmissionDecision | Promise<AdmissionDecision>;

/**
 * A mutating handler: gets a request whose `object` is a private copy, changes it (in place or by
 * returning a new object) and returns the object, nothing (the copy as changed), {@link allow} (same)
 * or {@link deny}. The JSON Patch sent back is the difference from the object the API server sent.
 */
export type MutatingHandler<T> = (request: AdmissionRequest<T>, context: WebhookContext) => T | AdmissionDecision | undefined | void | Promise<T | AdmissionDecision | undefined | void>;

const optionSchema = { name: 'string', resources: 'any', unhandled: ['deny', 'allow'], onTimeout: ['deny', 'allow'] } as const; // resources: checked below

/** A validating admission webhook: serve it with {@link WebhookServer.register}. */
export function validatingWebhook<T = Record<string, unknown>>(options: AdmissionWebhookOptions, handler: ValidatingHandler<T>): Webhook {
  return admissionWebhook<T>('validating', options, async (request, context) => {
    const decision = await handler(request, context);
    if (!isDecision(decision)) throw new TypeError(`validating webhook ${options.name}: the handler returned ${typeof decision}, not allow() or deny()`);
    return { decision };
  });
}

/** A mutating admission webhook: serve it with {@link WebhookServer.register}. */
export function mutatingWebhook<T = Record<string, unknown>>(options: AdmissionWebhookOptions, handler: MutatingHandler<T>): Webhook {
  return admissionWebhook<T>('mutating', options, async (request, context) => {
    const original = request.object;
    const copy = original === undefined ? undefined : structuredClone(original);
    const result: T | AdmissionDecision | undefined | void = await handler({ ...request, object: copy }, context);
    if (isDecision(result)) return result.allowed ? { decision: result, before: original, after: copy } : { decision: result };
    return { decision: allow(), before: original, after: result ?? copy };
  });
}

type Outcome = { decision: AdmissionDecision; before?: unknown; after?: unknown };

function admissionWebhook<T>(type: 'validating' | 'mutating', options: AdmissionWebhookOptions, run: (request: AdmissionRequest<T>, context: WebhookContext) => Promise<Outcome>): Webhook {
  validateOptions(`${type}Webhook`, options, optionSchema);
  if (typeof options?.name !== 'string' || options.name === '') throw new InvalidOptionError(`${type}Webhook: option name is required (a non-empty string)`);
  if (options.resources !== undefined && !Array.isArray(options.resources)) throw new InvalidOptionError(`${type}Webhook: option resources must be an array of { group, resource, versions? }`);
  const name = options.name;
  const handles = (r: AdmissionRequest<T>['resource']): boolean =>
    options.resources === undefined ||
    options.resources.some((m) => m.group === r.group && (m.resource === '*' || m.resource === r.resource) && (m.versions === undefined || m.versions.includes('*') || m.versions.includes(r.version)));
  const respond = (uid: string, decision: AdmissionDecision, patch?: unknown[]): unknown => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: decision.allowed,
      ...(decision.status ? { status: decision.status } : {}),
      ...(decision.warnings ? { warnings: decision.warnings } : {}),
      ...(patch?.length ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } : {}),
    },
  });
  const requestOf = (body: unknown): AdmissionRequest<T> => {
    const r = reviewRequest(body, 'admission.k8s.io/v1', 'AdmissionReview') as unknown as AdmissionRequest<T>;
    return { ...r, dryRun: r.dryRun === true, userInfo: r.userInfo ?? {} };
  };
  return {
    name,
    type,
    async review(body, context) {
      const request = requestOf(body);
      if (!handles(request.resource)) {
        const { group, version, resource } = request.resource;
        const gvr = `${group === '' ? '' : `${group}/`}${version}/${resource}`;
        return respond(request.uid, options.unhandled === 'allow' ? allow() : deny(`webhook ${name} has no handler for ${gvr}`, { code: 403, reason: 'Forbidden' }));
      }
      const outcome = await run(request, context);
      const patch = outcome.decision.allowed && type === 'mutating' ? jsonPatchDiff(outcome.before, outcome.after) : undefined;
      return respond(request.uid, outcome.decision, patch);
    },
    timedOut(body, timeoutMs) {
      const uid = requestOf(body).uid;
      if (options.onTimeout === 'allow') return respond(uid, allow({ warnings: [`webhook ${name} did not answer within ${formatDuration(timeoutMs)}; admitted (onTimeout: allow)`] }));
      return respond(uid, deny(`webhook ${name} did not answer within ${formatDuration(timeoutMs)}`, { code: 504, reason: 'Timeout' }));
    },
    failed(body) {
      return respond(requestOf(body).uid, deny(`webhook ${name} failed: internal error (see the webhook's log)`, { code: 500, reason: 'InternalError' }));
    },
  };
}
