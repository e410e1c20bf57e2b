// The check of a structural schema's defaults, as kube-apiserver makes it when a CRD is created: each default as written, with the server's field paths.

import type { StructuralSchema } from './schema.js';
import { embeddedErrors, pruneObject, sortedJson, validateValue, type FieldError } from './validate.js';

/*
 * apiextensions' defaulting.ValidateDefaults, for each node with a `default` (the root of the version's
 * schema counts as an embedded resource):
 *   1. the default pruned by the node's schema must equal the default (`must not have unknown fields`);
 *   2. an embedded resource's default needs its own `apiVersion` and `kind`;
 *   3. only then is the default validated against the node's schema — as written: the defaults of its
 *      members are not applied to it first, so `{}` for an object with a required member is refused.
 * The server walks `properties` and `items`; we also walk `additionalProperties`, where the server checks
 * no default at creation but applies it to every map entry, which then fails.
 */

/** One error of a default, renamed under the default's own path (`…properties[settings].default.compress`). */
function under(base: string, error: FieldError): FieldError {
  const inner = error.field === '<nil>' ? '' : error.field;
  const field = inner === '' ? base : `${base}.${inner}`;
  return { ...error, field, message: `${field}${error.message.slice(error.field.length)}` };
}

/** The errors of one node's default, at `path.default`. */
function defaultErrors(schema: StructuralSchema, path: string): FieldError[] {
  const value = schema.default;
  const base = `${path}.default`;
  const errors: FieldError[] = [];
  if (sortedJson(pruneObject(schema, structuredClone(value), false)) !== sortedJson(value)) {
    errors.push(under(base, { field: '<nil>', type: 'FieldValueInvalid', message: `<nil>: Invalid value: ${sortedJson(value)}: must not have unknown fields` }));
  }
  const embedded = schema['x-kubernetes-embedded-resource'] === true && typeof value === 'object' && value !== null && !Array.isArray(value);
  const meta = embedded ? embeddedErrors(value as Record<string, unknown>, '') : [];
  if (meta.length > 0) return [...errors, ...meta.map((e) => under(base, e))];
  const found: FieldError[] = [];
  validateValue(schema, value, '', found, []);
  return [...errors, ...found.map((e) => under(base, e))];
}

/**
 * Every default of a structural schema that kube-apiserver would refuse, each with the server's path
 * below `path`: `…properties[spec].properties[size].default: Invalid value: …`. The server names a
 * schema `spec.validation.openAPIV3Schema` when every version has the same one (it keeps it once),
 * `spec.versions[<i>].schema.openAPIV3Schema` otherwise.
 */
export function checkSchemaDefaults(schema: StructuralSchema, path: string): FieldError[] {
  const errors = schema.default === undefined ? [] : defaultErrors(schema, path);
  for (const [name, sub] of Object.entries(schema.properties ?? {})) errors.push(...checkSchemaDefaults(sub, `${path}.properties[${name}]`));
  if (schema.items !== undefined) errors.push(...checkSchemaDefaults(schema.items, `${path}.items`));
  if (typeof schema.additionalProperties === 'object') errors.push(...checkSchemaDefaults(schema.additionalProperties, `${path}.additionalProperties`));
  return errors;
}
