// Custom resources held to their CRD as kube-apiserver holds them: pruned, defaulted and validated with the library's own validator (kube-informer/crd), the 422 worded as the server words it, ratcheting, field selectors.

import { deepEqual, isObject } from '../../core/index.js';
import { ApiStatusError } from '../../core/errors.js';
import type { KubeObject } from '../../core/types.js';
import { applyDefaults, propertyOf, validateObject, type FieldError } from '../../crd/validate.js';
import { statusError } from '../resource-state.js';

/** A version's schema, as `validateObject` takes it (the CRD's `openAPIV3Schema`). */
type VersionSchema = Parameters<typeof validateObject>[0];

/** What the server reads from one served version of a stored CRD. */
export interface CustomResourceVersion {
  /** The CRD's name (`widgets.example.com`). */
  readonly crd: string;
  /** The API group. */
  readonly group: string;
  /** The kind. */
  readonly kind: string;
  /** The version's `schema.openAPIV3Schema`; undefined when the CRD gives none (the fake then stores objects as sent). */
  readonly schema: VersionSchema | undefined;
  /** The field labels a field selector may use: `metadata.name`, `metadata.namespace` (namespaced only) and the version's `selectableFields`. */
  readonly fieldLabels: readonly string[];
  /** The version's scale subresource: the paths the server checks for an integer on every write. */
  readonly scale?: { readonly specReplicasPath?: string; readonly statusReplicasPath?: string };
}

/** The part of a custom resource a write changes: the whole object, or only `status` (the status subresource). */
type CustomWrite = 'object' | 'status';

/** The custom-resource view of one served version of a CRD (its `spec.versions[]` entry). */
export function customResourceVersion(crdName: string, group: string, kind: string, namespaced: boolean, version: Record<string, unknown>): CustomResourceVersion {
  const schema = isObject(version.schema) && isObject(version.schema.openAPIV3Schema) ? (version.schema.openAPIV3Schema as VersionSchema) : undefined;
  const selectable = Array.isArray(version.selectableFields) ? version.selectableFields : [];
  const fieldLabels = ['metadata.name', ...(namespaced ? ['metadata.namespace'] : [])];
  for (const f of selectable) if (isObject(f) && typeof f.jsonPath === 'string') fieldLabels.push(f.jsonPath.replace(/^\./, ''));
  const scale = isObject(version.subresources) && isObject(version.subresources.scale) ? version.subresources.scale : undefined;
  const path = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const scalePaths = scale === undefined ? undefined : { specReplicasPath: path(scale.specReplicasPath), statusReplicasPath: path(scale.statusReplicasPath) };
  return { crd: crdName, group, kind, schema, fieldLabels, ...(scalePaths === undefined ? {} : { scale: scalePaths }) };
}

/**
 * kube-apiserver's 422 for a custom resource (apimachinery's `NewInvalid`): the message
 * `<Kind>.<group> "<name>" is invalid: <errors>` (one error as is, several bracketed and comma-separated,
 * repeats once), and a cause per error whose message is the error without its field.
 */
function invalidError(cr: { kind: string; group: string }, name: string, errors: readonly FieldError[]): ApiStatusError {
  const texts = [...new Set(errors.map((e) => e.message))];
  const message = `${cr.kind}.${cr.group} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`;
  const causes = errors.map((e) => ({ reason: e.type, message: e.message.slice(e.field.length + 2), field: e.field }));
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Invalid', details: { name, group: cr.group, kind: cr.kind, causes }, code: 422 };
  return new ApiStatusError(422, message, { reason: 'Invalid', status });
}

/** True when `field` is `path` or lies below it. */
function under(field: string, path: string): boolean {
  return path === '' || field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);
}

/**
 * The paths (as the validator writes them) of the nodes an update left unchanged, where kube-apiserver's
 * ratcheting correlates old and new: object properties by name, list-type map items by their keys;
 * other lists only as a whole.
 */
function unchangedPaths(schema: VersionSchema | undefined, next: unknown, prev: unknown, path: string, out: string[]): void {
  if (deepEqual(next, prev)) {
    out.push(path);
    return;
  }
  if (isObject(next) && isObject(prev)) {
    for (const [key, value] of Object.entries(next)) {
      if (!Object.hasOwn(prev, key)) continue;
      const sub = schema === undefined ? undefined : propertyOf(schema, key);
      unchangedPaths(sub, value, prev[key], path === '' ? key : `${path}.${key}`, out);
    }
    return;
  }
  if (Array.isArray(next) && Array.isArray(prev) && schema?.['x-kubernetes-list-type'] === 'map') {
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    const olds: unknown[] = prev;
    next.forEach((item: unknown, i) => {
      if (!isObject(item)) return;
      const old = olds.find((p) => isObject(p) && keys.every((k) => deepEqual(p[k], item[k])));
      if (old !== undefined) unchangedPaths(schema.items, item, old, `${path}[${i}]`, out);
    });
  }
}

/**
 * Drops the errors kube-apiserver's ratcheting forgives on an update: an error on a value the update
 * did not change (the value itself, or the object a required field is missing from, equals the old one).
 */
function ratchet(schema: VersionSchema, errors: readonly FieldError[], next: unknown, prev: unknown): FieldError[] {
  const unchanged: string[] = [];
  unchangedPaths(schema, next, prev, '', unchanged);
  return errors.filter((e) => {
    const field = e.field === '<nil>' ? '' : e.field;
    // A missing required field is reported by the object it is missing from.
    const node = e.type === 'FieldValueRequired' ? field.replace(/(\.[^.[\]]+|\[\d+\])$/, '') : field;
    return !unchanged.some((p) => under(node, p));
  });
}

/** Go's `%T` of a decoded JSON value, as apimachinery's accessor errors print it. */
function goType(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return Array.isArray(value) ? '[]interface {}' : 'map[string]interface {}';
}

/**
 * The scale subresource's checks kube-apiserver runs on every write of a custom resource that has one
 * (`ValidateScaleSpec`, `ValidateScaleStatus`): the replicas at each path, when present, is an integer
 * between 0 and 2^31-1. The field is the path as the CRD writes it (`.spec.replicas`).
 */
function scaleErrors(cr: CustomResourceVersion, obj: KubeObject, write: CustomWrite): FieldError[] {
  const out: FieldError[] = [];
  const paths = write === 'status' ? [cr.scale?.statusReplicasPath] : [cr.scale?.specReplicasPath, cr.scale?.statusReplicasPath];
  for (const path of paths) {
    if (path === undefined) continue;
    let value: unknown = obj;
    for (const step of path.replace(/^\./, '').split('.')) value = isObject(value) ? value[step] : undefined;
    const error = (bad: unknown, detail: string): FieldError => {
      const body = `Invalid value: ${String(bad)}: ${detail}`;
      return { field: path, type: 'FieldValueInvalid', message: `${path}: ${body}` };
    };
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      const shown = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
      out.push(error(0, `${path} accessor error: ${shown} is of the type ${goType(value)}, expected int64`));
    } else if (value < 0) out.push(error(value, 'should be a non-negative integer'));
    else if (value > 2 ** 31 - 1) out.push(error(value, `should be less than or equal to ${2 ** 31 - 1}`));
  }
  return out;
}

/**
 * The errors of a status write, as kube-apiserver finds them: `status` validated against its own
 * schema, so each message names the path below `status` (`replicas in body must be …`) while the
 * field is the whole path (`status.replicas`).
 */
function statusErrors(schema: VersionSchema, obj: KubeObject): FieldError[] {
  const sub = schema.properties?.status;
  const status = (obj as { status?: unknown }).status;
  if (sub === undefined || status === undefined) return [];
  return validateObject(sub, status).errors.map((e) => {
    const field = e.field === '<nil>' ? 'status' : `status.${e.field}`;
    return { ...e, field, message: `${field}${e.message.slice(e.field.length)}` };
  });
}

/**
 * `next` as kube-apiserver stores it for a write of a custom resource: unknown fields pruned (but
 * under `x-kubernetes-preserve-unknown-fields`), defaults applied, then validated against the
 * version's schema — the whole object, or only `status` for the status subresource — with the old
 * object's unchanged values forgiven on an update (ratcheting), and the replicas at the paths of a
 * scale subresource checked. Throws the server's 422 Invalid. A
 * version without a schema stores `next` as it is. CEL rules (`x-kubernetes-validations`) are not
 * evaluated.
 */
export function admitCustomResource(cr: CustomResourceVersion | undefined, next: KubeObject, prev: KubeObject | undefined, write: CustomWrite = 'object'): KubeObject {
  if (cr?.schema === undefined) return next;
  const result = validateObject(cr.schema, next);
  const object = result.object as KubeObject;
  let errors = write === 'status' ? statusErrors(cr.schema, object) : [...result.errors];
  if (prev !== undefined && errors.length > 0) errors = ratchet(cr.schema, errors, object, prev);
  errors.push(...scaleErrors(cr, object, write));
  if (errors.length > 0) throw invalidError(cr, next.metadata?.name ?? '', errors);
  return object;
}

/** A stored custom resource as a read answers it: with the version's defaults applied (the server defaults what it reads from storage). */
export function defaultedOnRead(cr: CustomResourceVersion | undefined, stored: KubeObject): KubeObject {
  if (cr?.schema === undefined) return stored;
  return applyDefaults(cr.schema, structuredClone(stored)) as KubeObject;
}

/** The first field (in the body's order) of each object in `value` that `schema` does not declare, as structured-merge-diff names it (`.spec.gone`). */
function undeclaredFields(schema: VersionSchema | undefined, value: unknown, path: string, root: boolean, out: string[]): void {
  if (schema === undefined || schema['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => undeclaredFields(schema.items, item, `${path}[${i}]`, false, out));
    return;
  }
  if (!isObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (root && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const sub = propertyOf(schema, key);
    if (sub === undefined && schema.additionalProperties !== true) {
      out.push(`${path}.${key}`);
      return; // structured-merge-diff stops at the first one of a map
    }
    undeclaredFields(sub, v, `${path}.${key}`, false, out);
  }
}

/**
 * Checks a server-side apply configuration of a custom resource as kube-apiserver's field manager
 * does before anything else: a field the schema does not declare (outside
 * `x-kubernetes-preserve-unknown-fields`) is a 500 `failed to create typed patch object (…): .spec.gone:
 * field not declared in schema` — an apply is not pruned.
 */
export function checkApplyFields(cr: CustomResourceVersion | undefined, version: string, config: KubeObject): void {
  if (cr?.schema === undefined) return;
  const paths: string[] = [];
  undeclaredFields(cr.schema, config, '', true, paths);
  if (paths.length === 0) return;
  const errors = paths.map((p) => `${p}: field not declared in schema`);
  const detail = errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  const meta = config.metadata ?? {};
  const message = `failed to create typed patch object (${meta.namespace ?? ''}/${meta.name ?? ''}; ${cr.group}/${version}, Kind=${cr.kind}): ${detail}`;
  throw new ApiStatusError(500, message, { status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 } });
}

/**
 * Checks a field selector against the field labels of a custom resource as kube-apiserver does before
 * it lists or watches: any other label is 400 `field label not supported: <label>`.
 */
export function checkFieldLabels(cr: CustomResourceVersion, labels: readonly string[]): void {
  for (const label of labels) {
    if (!cr.fieldLabels.includes(label)) throw statusError(400, 'BadRequest', `field label not supported: ${label}`);
  }
}
