// The client-side validator of a structural schema: prunes, defaults and validates as the API server does, with its field paths and messages.

import { deepEqual, getMember, isObject, setMember } from '../core/index.js';
import { isKnownFormat, stringFormatRule } from './formats.js';
import { coerceObjectMeta } from './object-meta.js';
import type { StructuralSchema } from './schema.js';

/**
 * The kinds of field error the API server reports (`reason` in a Status cause). The validator reports
 * the first seven; a webhook's denial may use any (`FieldValueForbidden`, `FieldValueNotFound`, `InternalError`).
 */
export type FieldErrorType =
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueRequired'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueForbidden'
  | 'FieldValueNotFound'
  | 'InternalError';

/** One failing field, as the API server names it in a 422 Invalid answer's `details.causes`. */
export interface FieldError {
  /** The field path, as the server writes it: `spec.replicas`, `spec.ports[1]`, `spec.labels.app`; `<nil>` for the object itself. */
  readonly field: string;
  /** The kind of failure (the cause's `reason`). */
  readonly type: FieldErrorType;
  /** The whole message, in the server's words: `spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`. */
  readonly message: string;
}

/** What {@link validateObject} found. */
export interface ValidationResult {
  /** `true` when no field failed (CEL rules are not evaluated: see `unchecked`). */
  readonly valid: boolean;
  /** Every failing field at once, in document order. */
  readonly errors: readonly FieldError[];
  /**
   * The paths of the `x-kubernetes-validations` (CEL) rules this validator did not evaluate (`<nil>`
   * for a rule on the object itself): only the API server (or a CEL engine) can. Empty when the object
   * reached no CEL rule.
   */
  readonly unchecked: readonly string[];
  /** The object as the server would store it: unknown fields pruned, `null`s of non-nullable fields dropped, defaults applied. */
  readonly object: unknown;
}

const TYPE_NAMES: Record<string, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
};

/** Go's `%#v`/`%q` rendering of a bad value, as `field.Error` prints it (an object as JSON with its keys sorted, as Go writes a map). */
function goValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return sortedJson(value);
}

/** JSON with every object's keys in sorted order: Go's encoding of a map, and a comparison that ignores key order. */
export function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** A field error in the server's words (`field.Error` of apimachinery); `field` `''` is the object itself (`<nil>`). */
export function fieldError(field: string, type: FieldErrorType, badValue: unknown, detail: string, omitValue = false): FieldError {
  let body = TYPE_NAMES[type];
  if (type !== 'FieldValueRequired' && type !== 'FieldValueTooLong' && !omitValue) body += `: ${goValue(badValue)}`;
  if (detail !== '') body += `: ${detail}`;
  const name = field === '' ? '<nil>' : field;
  return { field: name, type, message: `${name}: ${body}` };
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The path of a property: `spec.x`; the server writes a map entry the same way. */
function child(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/** The schema of member `key`: its own entry in `properties`, else `additionalProperties` when that is a schema. */
export function propertyOf(schema: StructuralSchema, key: string): StructuralSchema | undefined {
  const own = schema.properties === undefined ? undefined : (getMember(schema.properties, key) as StructuralSchema | undefined);
  return own ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
}

/**
 * Removes what the server removes before it validates: fields the schema does not name (unless
 * `x-kubernetes-preserve-unknown-fields`), and `null` values of non-nullable properties that have no
 * default. Works on (and returns) a copy.
 */
export function pruneObject(schema: StructuralSchema, value: unknown, root = true): unknown {
  if (Array.isArray(value)) return schema.items === undefined ? value : value.map((v) => pruneObject(schema.items as StructuralSchema, v, false));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  const extra = schema.additionalProperties;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  for (const [key, v] of Object.entries(value)) {
    // The object's own apiVersion, kind and metadata are not the schema's to prune: the server reads the
    // metadata into ObjectMeta (dropping what ObjectMeta has not).
    if ((root || embedded) && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) {
      setMember(out, key, key === 'metadata' ? coerceObjectMeta(v) : v);
      continue;
    }
    const sub = propertyOf(schema, key);
    if (sub === undefined) {
      const keep = schema['x-kubernetes-preserve-unknown-fields'] === true || extra === true;
      if (keep) setMember(out, key, v);
      continue;
    }
    if (v === null && sub.nullable !== true && sub.default === undefined) continue;
    setMember(out, key, pruneObject(sub, v, false));
  }
  return out;
}

/** Applies the schema's defaults the way the server does (missing or non-nullable `null` fields get a copy of `default`), recursively. Mutates `value`. */
export function applyDefaults(schema: StructuralSchema, value: unknown): unknown {
  if (Array.isArray(value)) {
    if (schema.items !== undefined) for (let i = 0; i < value.length; i++) value[i] = applyDefaults(schema.items, value[i]);
    return value;
  }
  if (!isObject(value)) return value;
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    const missing = !Object.hasOwn(value, key) || (value[key] === null && sub.nullable !== true);
    if (missing && sub.default !== undefined) setMember(value, key, structuredClone(sub.default));
    if (Object.hasOwn(value, key)) setMember(value, key, applyDefaults(sub, value[key]));
  }
  if (typeof schema.additionalProperties === 'object') {
    for (const key of Object.keys(value)) setMember(value, key, applyDefaults(schema.additionalProperties, value[key]));
  }
  return value;
}

/**
 * Validates `value` against a structural schema exactly as far as the API server's schema validation
 * goes (types, enums, limits, patterns, required fields, list-type set/map uniqueness), collecting every
 * failing path. `x-kubernetes-validations` rules are listed in `unchecked`, not evaluated. The formats
 * the server knows are checked (`date-time`, `uuid`, …), as are the `apiVersion` and `kind` of an
 * embedded resource (not of the object itself, at path `''`). Prune and default first ({@link validateObject} does all three).
 */
export function validateValue(schema: StructuralSchema, value: unknown, path: string, errors: FieldError[], unchecked: string[]): void {
  if (schema['x-kubernetes-validations'] !== undefined && schema['x-kubernetes-validations'].length > 0 && value !== null) unchecked.push(path === '' ? '<nil>' : path);
  if (value === null) {
    if (schema.nullable === true) return;
    if (schema['x-kubernetes-int-or-string'] === true || (schema.type === undefined && schema['x-kubernetes-preserve-unknown-fields'] === true)) {
      if (schema['x-kubernetes-int-or-string'] === true) errors.push(fieldError(path, 'FieldValueTypeInvalid', 'null', `${path} in body must be of type integer,string: "null"`));
      return;
    }
    errors.push(fieldError(path, 'FieldValueTypeInvalid', 'null', `${path} in body must be of type ${schema.type}: "null"`));
    return;
  }
  const actual = jsonType(value);
  const format = schema.format !== undefined && isKnownFormat(schema.type, schema.format) ? schema.format : undefined;
  let typeOk = true;
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (actual !== 'integer' && actual !== 'string') {
      errors.push(fieldError(path, 'FieldValueTypeInvalid', actual, `${path} in body must be of type integer,string: ${JSON.stringify(actual)}`));
      typeOk = false;
    }
  } else if (format !== undefined && actual !== 'string' && actual !== 'array' && !matchesType(schema.type, actual)) {
    // With a format the server keeps, a value of another type is named by the format (kube-openapi's type validator).
    const inferred = actual === 'integer' ? 'int64' : actual === 'number' ? 'float64' : '';
    errors.push(fieldError(path, 'FieldValueTypeInvalid', inferred, `${path} in body must be of type ${format}: ${JSON.stringify(inferred)}`));
    typeOk = false;
  } else if (format !== undefined && schema.type !== 'integer' && schema.type !== 'number' && (actual === 'string' || actual === 'array')) {
    // The same validator lets a string or an array through unchecked on a formatted non-numeric field (an array then meets no string rule).
    typeOk = true;
  } else if (schema.type !== undefined) {
    typeOk = matchesType(schema.type, actual);
    if (!typeOk) {
      errors.push(fieldError(path, 'FieldValueTypeInvalid', actual, `${path} in body must be of type ${schema.type}: ${JSON.stringify(actual)}`));
      // The server's format check of an integer reports a fraction a second time, on the object.
      if (schema.type === 'integer' && actual === 'number') errors.push(fieldError('', 'FieldValueInvalid', '', `Checked value must be of type integer (default format) in ${path}`));
    }
  }
  // The server checks the enum even when the type is wrong.
  if (schema.enum !== undefined && !schema.enum.some((e) => deepEqual(e, value))) {
    errors.push(fieldError(path, 'FieldValueNotSupported', value, `supported values: ${schema.enum.map((e) => goValue(e)).join(', ')}`));
  }
  if (format !== undefined && typeof value === 'number') checkNumberFormat(schema.type, format, value, path, errors);
  if (!typeOk) return;
  if (typeof value === 'number') checkNumber(schema, value, path, errors);
  else if (typeof value === 'string') {
    checkString(schema, value, path, errors);
    const rule = format === undefined ? undefined : stringFormatRule(format);
    if (rule !== undefined && !rule(value)) errors.push(fieldError(path, 'FieldValueTypeInvalid', value, `${path} in body must be of type ${format}: ${JSON.stringify(value)}`));
  } else if (Array.isArray(value)) checkArray(schema, value, path, errors, unchecked);
  else if (isObject(value)) {
    if (schema['x-kubernetes-embedded-resource'] === true && path !== '') errors.push(...embeddedErrors(value, path));
    checkObject(schema, value, path, errors, unchecked);
  }
}

/** Whether a JSON value's type meets the schema's (an integer is a number). */
function matchesType(type: string | undefined, actual: string): boolean {
  return type === actual || (type === 'number' && actual === 'integer');
}

/** The range of an `int32` integer or a `float` number (kube-openapi's range check, reported on the object). */
function checkNumberFormat(type: string | undefined, format: string, value: number, path: string, errors: FieldError[]): void {
  const fits = format === 'int32' ? Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 : format === 'float' ? Math.abs(value) <= 3.4028234663852886e38 : format !== 'int64' || Number.isInteger(value);
  if (!fits) errors.push(fieldError('', 'FieldValueInvalid', '', `Checked value must be of type ${type ?? 'number'} with format ${format} in ${path}`));
}

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The `apiVersion` and `kind` of an embedded object (`x-kubernetes-embedded-resource`), as the server
 * checks them: both required, strings, not empty; a group/version with at most one slash; a kind that is
 * a DNS-1035 label once lower-cased. (A value that is not a string the server refuses while it decodes
 * the request: 400 BadRequest `… cannot be handled as a <Kind>: <this error>`, not 422.)
 */
export function embeddedErrors(value: Record<string, unknown>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of ['apiVersion', 'kind']) {
    const field = child(path, key);
    const v = getMember(value, key);
    if (!Object.hasOwn(value, key)) errors.push(fieldError(field, 'FieldValueRequired', undefined, ''));
    else if (typeof v !== 'string') errors.push(fieldError(field, 'FieldValueInvalid', v, 'must be a string'));
    else if (v === '') errors.push(fieldError(field, 'FieldValueInvalid', v, 'must not be empty'));
    else if (key === 'apiVersion' && v.split('/').length > 2) errors.push(fieldError(field, 'FieldValueInvalid', v, `unexpected GroupVersion string: ${v}`));
    else if (key === 'kind') {
      const problems: string[] = [];
      if (v.length > 63) problems.push('must be no more than 63 characters');
      if (!DNS1035.test(v.toLowerCase())) {
        problems.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
      }
      if (problems.length > 0) errors.push(fieldError(field, 'FieldValueInvalid', v, `may have mixed case, but should otherwise match: ${problems.join(',')}`));
    }
  }
  return errors;
}

/** Numbers: like the server (kube-openapi), the first failing limit only, in the order multipleOf, maximum, minimum. */
function checkNumber(schema: StructuralSchema, value: number, path: string, errors: FieldError[]): void {
  if (schema.multipleOf !== undefined && !Number.isInteger(value / schema.multipleOf)) {
    errors.push(fieldError(path, 'FieldValueInvalid', value, `${path} in body should be a multiple of ${schema.multipleOf}`));
    return;
  }
  if (schema.maximum !== undefined && (schema.exclusiveMaximum === true ? value >= schema.maximum : value > schema.maximum)) {
    errors.push(fieldError(path, 'FieldValueInvalid', value, `${path} in body should be less than ${schema.exclusiveMaximum === true ? '' : 'or equal to '}${schema.maximum}`));
    return;
  }
  if (schema.minimum !== undefined && (schema.exclusiveMinimum === true ? value <= schema.minimum : value < schema.minimum)) {
    errors.push(fieldError(path, 'FieldValueInvalid', value, `${path} in body should be greater than ${schema.exclusiveMinimum === true ? '' : 'or equal to '}${schema.minimum}`));
  }
}

/** Strings: like the server, the first failing limit only, in the order maxLength, minLength, pattern. */
function checkString(schema: StructuralSchema, value: string, path: string, errors: FieldError[]): void {
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    errors.push(fieldError(path, 'FieldValueTooLong', value, `may not be more than ${schema.maxLength} bytes`));
    return;
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    errors.push(fieldError(path, 'FieldValueInvalid', value, `${path} in body should be at least ${schema.minLength} chars long`));
    return;
  }
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
    errors.push(fieldError(path, 'FieldValueInvalid', value, `${path} in body should match '${schema.pattern}'`));
  }
}

function checkArray(schema: StructuralSchema, value: unknown[], path: string, errors: FieldError[], unchecked: string[]): void {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push(fieldError(path, 'FieldValueTooMany', value.length, `must have at most ${schema.maxItems} items`));
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push(fieldError(path, 'FieldValueInvalid', value.length, `${path} in body should have at least ${schema.minItems} items`));
  }
  if (schema.items !== undefined) value.forEach((item, i) => validateValue(schema.items as StructuralSchema, item, `${path}[${i}]`, errors, unchecked));
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'map') {
    value.forEach((item, i) => {
      if (!isObject(item)) errors.push(fieldError(`${path}[${i}]`, 'FieldValueInvalid', item, 'must be an object for an array of list-type map'));
    });
  }
  if (listType === 'set' || listType === 'map') {
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    const seen: unknown[] = [];
    value.forEach((item, i) => {
      const identity = listType === 'set' ? item : isObject(item) ? keys.map((k) => item[k]) : item;
      if (listType === 'map' && !isObject(item)) return;
      if (seen.some((s) => deepEqual(s, identity))) {
        const shown = listType === 'set' ? item : Object.fromEntries(keys.map((k) => [k, (item as Record<string, unknown>)[k]]));
        errors.push(fieldError(`${path}[${i}]`, 'FieldValueDuplicate', shown, ''));
      } else seen.push(identity);
    });
  }
}

function checkObject(schema: StructuralSchema, value: Record<string, unknown>, path: string, errors: FieldError[], unchecked: string[]): void {
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push(fieldError(path, 'FieldValueTooMany', count, `must have at most ${schema.maxProperties} items`));
  }
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errors.push(fieldError(path, 'FieldValueInvalid', count, `${path} in body should have at least ${schema.minProperties} properties`));
  }
  for (const key of schema.required ?? []) {
    if (!Object.hasOwn(value, key)) errors.push(fieldError(child(path, key), 'FieldValueRequired', undefined, ''));
  }
  for (const [key, v] of Object.entries(value)) {
    const sub = propertyOf(schema, key);
    if (sub !== undefined) validateValue(sub, v, child(path, key), errors, unchecked);
  }
}

/**
 * Validates an object against a version's structural schema as the API server does on create: it
 * prunes unknown fields, drops `null`s of non-nullable fields, applies defaults, then checks every
 * field and returns every failure at once, with the server's field paths and messages
 * (`spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`).
 * CEL rules (`x-kubernetes-validations`) are not evaluated: their paths are in `unchecked`. The formats
 * kube-apiserver validates are checked with its rules and words (`spec.when in body must be of type date-time: "yesterday"`).
 * The object's `metadata` is kept as ObjectMeta (fields it has not are dropped) and not checked further.
 */
export function validateObject(schema: StructuralSchema, obj: unknown): ValidationResult {
  const object = applyDefaults(schema, pruneObject(schema, structuredClone(obj)));
  const errors: FieldError[] = [];
  const unchecked: string[] = [];
  validateValue(schema, object, '', errors, unchecked);
  if (hasRules(schema) && errors.some((e) => BLOCKING.has(e.type))) {
    errors.push(fieldError('', 'FieldValueInvalid', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'));
  }
  return { valid: errors.length === 0, errors, unchecked, object };
}

/** The error types after which the server does not evaluate CEL rules (and says so on the object). */
const BLOCKING = new Set<FieldErrorType>(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/** Whether a schema holds a CEL rule anywhere. */
function hasRules(schema: StructuralSchema): boolean {
  if ((schema['x-kubernetes-validations'] ?? []).length > 0) return true;
  const subs = [...Object.values(schema.properties ?? {}), ...(schema.items === undefined ? [] : [schema.items]), ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : [])];
  return subs.some(hasRules);
}
