// Admission webhooks from a custom resource definition (kube-informer/crd): its schema's defaults and its validator, one call each.

import type { CustomResource, FieldError, VersionObject, VersionOptions, ValidationResult } from '../crd/index.js';
import { InvalidOptionError, validateOptions } from '../core/index.js';
import { allow, deny, mutatingWebhook, validatingWebhook, type AdmissionDecision, type AdmissionRequest } from './admission.js';
import type { AdmissionRule } from './manifests.js';
import type { Webhook, WebhookContext } from './review.js';

/** The object of any version of a definition: a review carries the version the API server sent (`apiVersion` tells which). */
export type AnyVersionObject<V extends Readonly<Record<string, VersionOptions>>> = { [K in keyof V]: VersionObject<V[K]> }[keyof V];

/** Options of {@link defaultingWebhook} and {@link validationWebhook}. */
export interface DefinitionWebhookOptions {
  /** The webhook's name (in denials and the configuration's `webhooks[].name`). Default: `default.<plural>.<group>` or `validate.<plural>.<group>`. */
  name?: string;
  /** The answer when the handler does not answer before the deadline: `'deny'` or `'allow'`. Default: `'deny'`. */
  onTimeout?: 'deny' | 'allow';
}

/** A webhook made from a definition, with the admission rules that send it the definition's resource (CREATE and UPDATE, every served version). */
export interface DefinitionWebhook extends Webhook {
  /** `[{ operations: ['CREATE', 'UPDATE'], apiGroups: [group], apiVersions: <served versions>, resources: [plural] }]`: for the configuration's `webhooks[].rules`. */
  readonly rules: AdmissionRule[];
}

/**
 * A typed defaulter run after the schema's defaults: it gets a private copy of the defaulted object
 * (`request.object`), changes it in place or returns a new one, or returns {@link deny}.
 */
export type DefinitionDefaulter<V extends Readonly<Record<string, VersionOptions>>> = (
  request: AdmissionRequest<AnyVersionObject<V>>,
  context: WebhookContext,
) => AnyVersionObject<V> | AdmissionDecision | undefined | void | Promise<AnyVersionObject<V> | AdmissionDecision | undefined | void>;

/**
 * A typed validator run after the schema's validator passed (so `request.object` has the types the
 * schema promises, defaults applied): field errors (empty: admitted), or an {@link allow} / {@link deny}.
 */
export type DefinitionValidator<V extends Readonly<Record<string, VersionOptions>>> = (
  request: AdmissionRequest<AnyVersionObject<V>>,
  context: WebhookContext,
) => readonly FieldError[] | AdmissionDecision | undefined | void | Promise<readonly FieldError[] | AdmissionDecision | undefined | void>;

const optionSchema = { name: 'string', onTimeout: ['deny', 'allow'] } as const;

interface Resolved {
  name: string;
  rules: AdmissionRule[];
  versions: string[];
  kind: string;
  validate: (obj: unknown, version: string) => ValidationResult;
}

function resolve<V extends Readonly<Record<string, VersionOptions>>>(owner: string, prefix: string, def: CustomResource<V>, options: DefinitionWebhookOptions): Resolved {
  validateOptions(owner, options, optionSchema);
  if (def === null || typeof def !== 'object' || typeof def.validate !== 'function' || def.crd?.spec === undefined) {
    throw new InvalidOptionError(`${owner}: the first argument must be a definition from defineCustomResource (kube-informer/crd)`);
  }
  const { group, names, versions } = def.crd.spec;
  const served = versions.filter((v) => v.served).map((v) => v.name);
  return {
    name: options.name ?? `${prefix}.${names.plural}.${group}`,
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [group], apiVersions: served, resources: [names.plural] }],
    versions: versions.map((v) => v.name),
    kind: names.kind,
    validate: (obj, version) => def.validate(obj, version),
  };
}

/** The version of the object under review: its `apiVersion`'s, else the request's kind's. */
function versionOf(request: AdmissionRequest<unknown>): string {
  const apiVersion = (request.object as { apiVersion?: unknown } | undefined)?.apiVersion;
  return typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : request.kind.version;
}

function resourceMatch(r: Resolved): Array<{ group: string; resource: string; versions: string[] }> {
  return [{ group: r.rules[0].apiGroups[0], resource: r.rules[0].resources[0], versions: r.versions }];
}

/**
 * A mutating webhook that applies the definition's schema to the object under review as the API server
 * stores it — unknown fields pruned, the schema's `default`s filled in — then runs `defaulter` (if
 * given) on the result: computed defaults the schema cannot say (from the name, the user, another
 * field). The version is the object's (`apiVersion`): each version's own schema and defaults.
 *
 * ```ts
 * server.register('/default-widgets', defaultingWebhook(widgets, (req) => { req.object!.spec.owner ??= req.userInfo.username; }));
 * ```
 *
 * Warning: the API server applies a CRD's own schema defaults before admission and again after every
 * mutating webhook, so on a CRD installed from the same definition the schema step changes nothing; it
 * matters when the installed CRD is older than the definition (an upgrade in progress), and it hands
 * `defaulter` a complete object.
 */
export function defaultingWebhook<V extends Readonly<Record<string, VersionOptions>>>(
  def: CustomResource<V>,
  defaulter?: DefinitionDefaulter<V>,
  options: DefinitionWebhookOptions = {},
): DefinitionWebhook {
  const r = resolve('defaultingWebhook', 'default', def, options);
  if (defaulter !== undefined && typeof defaulter !== 'function') throw new InvalidOptionError(`defaultingWebhook: the defaulter must be a function, got ${typeof defaulter}`);
  const webhook = mutatingWebhook<AnyVersionObject<V>>({ name: r.name, resources: resourceMatch(r), onTimeout: options.onTimeout }, async (request, context) => {
    if (request.object === undefined) return undefined;
    const defaulted = r.validate(request.object, versionOf(request)).object as AnyVersionObject<V>;
    if (defaulter === undefined) return defaulted;
    const result = await defaulter({ ...request, object: defaulted }, context);
    return result ?? defaulted;
  });
  return { ...webhook, rules: r.rules };
}

/**
 * A validating webhook that runs the definition's validator on the object under review (its version's
 * schema, defaults applied first, as the server does) and denies with every failing field in the API
 * server's paths and words (422 `Invalid`, `details.causes`); when the schema passes, it runs
 * `validator` (if given) with the typed object — cross-field rules, rules on `oldObject` (UPDATE),
 * lookups — whose field errors deny the same way.
 *
 * ```ts
 * server.register('/validate-widgets', validationWebhook(widgets, (req) =>
 *   req.object!.spec.min > req.object!.spec.max ? [{ field: 'spec.min', type: 'FieldValueInvalid', message: 'must not exceed spec.max' }] : []));
 * ```
 *
 * Warning: the API server validates a CRD's schema itself before validating webhooks run, so on a CRD
 * installed from the same definition the schema step denies nothing the server would not; it matters
 * when the installed CRD is looser than the definition (an upgrade in progress, `x-kubernetes-preserve-unknown-fields`),
 * and it guarantees `validator` the types the schema promises. CEL rules are the server's to evaluate.
 */
export function validationWebhook<V extends Readonly<Record<string, VersionOptions>>>(
  def: CustomResource<V>,
  validator?: DefinitionValidator<V>,
  options: DefinitionWebhookOptions = {},
): DefinitionWebhook {
  const r = resolve('validationWebhook', 'validate', def, options);
  if (validator !== undefined && typeof validator !== 'function') throw new InvalidOptionError(`validationWebhook: the validator must be a function, got ${typeof validator}`);
  const webhook = validatingWebhook<AnyVersionObject<V>>({ name: r.name, resources: resourceMatch(r), onTimeout: options.onTimeout }, async (request, context) => {
    if (request.object === undefined) return allow(); // DELETE, CONNECT: no object to validate
    const name = request.name || (request.object as { metadata?: { name?: string } }).metadata?.name || '';
    const result = r.validate(request.object, versionOf(request));
    if (!result.valid) return deny(`${r.kind} "${name}" is invalid`, { fieldErrors: result.errors });
    if (validator === undefined) return allow();
    const answer = await validator({ ...request, object: result.object as AnyVersionObject<V> }, context);
    if (answer === undefined) return allow();
    if (!Array.isArray(answer)) return answer as AdmissionDecision;
    return answer.length === 0 ? allow() : deny(`${r.kind} "${name}" is invalid`, { fieldErrors: answer as readonly FieldError[] });
  });
  return { ...webhook, rules: r.rules };
}
