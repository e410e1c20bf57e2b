// Kubernetes' structural OpenAPI subset: the TypeBox helpers for its extensions, and the conversion of a TypeBox schema into it.

import Type, { type Static, type TSchema, type TUnsafe } from 'typebox';
import { closestOption, InvalidOptionError } from '../core/options.js';
import { isKnownFormat, KNOWN_FORMATS } from './formats.js';

/** One CEL rule of `x-kubernetes-validations`, evaluated by the API server (not by {@link validateObject}). */
export interface ValidationRule {
  /** The CEL expression; `self` is the value of the node the rule sits on: `self.minReplicas <= self.maxReplicas`. */
  readonly rule: string;
  /** The message the server returns when the rule is false. Default: the server's own (`failed rule: <rule>`). */
  readonly message?: string;
  /** A CEL expression that builds the message instead (`"replicas " + string(self.replicas) + " too high"`). */
  readonly messageExpression?: string;
  /** The field path the error is reported on, relative to the node (`.spec.minReplicas`). Default: the node itself. */
  readonly fieldPath?: string;
  /** The `reason` of the error: `FieldValueInvalid` (the server's default), `FieldValueForbidden`, `FieldValueRequired`, `FieldValueDuplicate`. */
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  /** Whether the rule is also checked on updates where the value did not change (ratcheting). Default: the server's. */
  readonly optionalOldSelf?: boolean;
}

/**
 * `x-kubernetes-int-or-string`: an integer or a string (`replicas: 3` or `replicas: "50%"`), like
 * `IntOrString` in Go. Pass extra keywords (`description`, `default`, `x-kubernetes-validations`) in
 * `options`.
 */
export function IntOrString(options: Record<string, unknown> = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({ ...options, 'x-kubernetes-int-or-string': true });
}

/**
 * An object whose unknown fields the server keeps (`x-kubernetes-preserve-unknown-fields: true`): its
 * static type is an index type `{ [key: string]: unknown }`. Fields declared in `properties` are typed
 * and validated; everything else is stored as sent.
 */
export function PreserveUnknownFields<P extends Record<string, TSchema> = Record<never, TSchema>>(
  properties?: P,
  options: Record<string, unknown> = {},
): TUnsafe<{ [K in keyof P]?: Static<P[K]> } & { [key: string]: unknown }> {
  const props = properties === undefined ? {} : { properties: Type.Partial(Type.Object(properties)).properties };
  return Type.Unsafe({ ...options, type: 'object', ...props, 'x-kubernetes-preserve-unknown-fields': true });
}

/** The static type of {@link EmbeddedResource}: an object with its own `apiVersion`, `kind` and `metadata`. */
export interface EmbeddedObject {
  /** The embedded object's API version. */
  apiVersion: string;
  /** The embedded object's kind. */
  kind: string;
  /** The embedded object's metadata. */
  metadata?: Record<string, unknown>;
  /** Any other field, kept as sent. */
  [key: string]: unknown;
}

/**
 * An embedded Kubernetes object (`x-kubernetes-embedded-resource: true`, e.g. a Pod template): the
 * server checks its `apiVersion`, `kind` and `metadata` and keeps its other fields.
 */
export function EmbeddedResource(options: Record<string, unknown> = {}): TUnsafe<EmbeddedObject> {
  return Type.Unsafe({
    ...options,
    type: 'object',
    'x-kubernetes-embedded-resource': true,
    'x-kubernetes-preserve-unknown-fields': true,
  });
}

/**
 * One node of a structural schema (Kubernetes' `JSONSchemaProps`, with the `x-kubernetes-*` extensions
 * that `kubernetes-types` leaves out).
 */
export interface StructuralSchema {
  /** `object`, `array`, `string`, `integer`, `number` or `boolean`; absent only with int-or-string or preserve-unknown-fields. */
  type?: string;
  /** A format hint (`int32`, `date-time`, …). */
  format?: string;
  /** The title. */
  title?: string;
  /** Text for `kubectl explain`. */
  description?: string;
  /** The value the server sets when the field is missing. */
  default?: unknown;
  /** An example value. */
  example?: unknown;
  /** The largest allowed number. */
  maximum?: number;
  /** Whether `maximum` itself is excluded. */
  exclusiveMaximum?: boolean;
  /** The smallest allowed number. */
  minimum?: number;
  /** Whether `minimum` itself is excluded. */
  exclusiveMinimum?: boolean;
  /** The numbers must be multiples of this. */
  multipleOf?: number;
  /** The longest allowed string, in characters. */
  maxLength?: number;
  /** The shortest allowed string, in characters. */
  minLength?: number;
  /** A regular expression (ECMA 262) the string must match. */
  pattern?: string;
  /** The most items of an array. */
  maxItems?: number;
  /** The fewest items of an array. */
  minItems?: number;
  /** The allowed values. */
  enum?: unknown[];
  /** The most properties of an object. */
  maxProperties?: number;
  /** The fewest properties of an object. */
  minProperties?: number;
  /** The properties an object must have. */
  required?: string[];
  /** Whether `null` is allowed. */
  nullable?: boolean;
  /** The fields of an object. */
  properties?: Record<string, StructuralSchema>;
  /** The schema of every value of a map-like object (or `true`: any value). */
  additionalProperties?: StructuralSchema | boolean;
  /** The schema of every item of an array. */
  items?: StructuralSchema;
  /** An integer or a string. */
  'x-kubernetes-int-or-string'?: boolean;
  /** Keep fields the schema does not name. */
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  /** An embedded object with apiVersion, kind and metadata. */
  'x-kubernetes-embedded-resource'?: boolean;
  /** `atomic`, `set` or `map`: how server-side apply merges the list (and, for set and map, uniqueness). */
  'x-kubernetes-list-type'?: string;
  /** The keys that identify an item of a `map` list. */
  'x-kubernetes-list-map-keys'?: string[];
  /** `granular` or `atomic`: how server-side apply merges the object. */
  'x-kubernetes-map-type'?: string;
  /** CEL rules, evaluated by the server. */
  'x-kubernetes-validations'?: ValidationRule[];
}

/** The keywords a structural schema node may carry, besides `properties`, `items` and `additionalProperties`. */
const PLAIN_KEYWORDS = new Set([
  'type', 'format', 'title', 'description', 'default', 'example', 'maximum', 'minimum', 'maxLength', 'minLength',
  'pattern', 'maxItems', 'minItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties', 'required', 'nullable',
  'x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-validations',
]);

/** Keywords of TypeBox or JSON Schema that carry no meaning for the server and are dropped. */
const DROPPED_KEYWORDS = new Set(['$schema', '$id', 'additionalProperties', 'examples', 'readOnly', 'writeOnly', '$comment']);

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

function fail(owner: string, path: string, message: string): never {
  throw new InvalidOptionError(`${owner}: ${path}: ${message}`);
}

/**
 * Converts a TypeBox (JSON Schema 2020-12) schema into Kubernetes' structural OpenAPI v3 subset, or
 * throws `INVALID_OPTION` naming the path of the first node that has no structural form. Literal
 * unions become `enum`, `T | null` becomes `nullable: true`, `integer | string` becomes
 * `x-kubernetes-int-or-string`, `Type.Record(Type.String(), T)` becomes `additionalProperties`, a numeric
 * `exclusiveMinimum` becomes `minimum` + `exclusiveMinimum: true`; `additionalProperties: false` is
 * dropped (the server prunes unknown fields instead). `path` is the path shown in errors.
 */
export function toStructural(owner: string, path: string, schema: unknown): StructuralSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) fail(owner, path, 'a schema must be an object');
  const input = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (PLAIN_KEYWORDS.has(key)) out[key] = structuredClone(value);
    else if (key === 'const') out.enum = [structuredClone(value)];
    else if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') {
      if (typeof value === 'number') {
        out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
        out[key] = true;
      } else out[key] = value;
    } else if (key === 'properties') {
      const props: Record<string, StructuralSchema> = {};
      for (const [name, sub] of Object.entries(value as Record<string, unknown>)) props[name] = toStructural(owner, `${path}.properties.${name}`, sub);
      out.properties = props;
    } else if (key === 'items') {
      if (Array.isArray(value)) fail(owner, `${path}.items`, 'tuples are not structural: items must be one schema');
      out.items = toStructural(owner, `${path}.items`, value);
    } else if (key === 'patternProperties') {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length !== 1 || !['^.*$', '^(.*)$'].includes(entries[0][0])) fail(owner, `${path}.patternProperties`, 'only a Record with string keys is structural (additionalProperties)');
      out.additionalProperties = toStructural(owner, `${path}.additionalProperties`, entries[0][1]);
    } else if (key === 'anyOf') {
      Object.assign(out, fromUnion(owner, path, value as unknown[]));
    } else if (key === 'uniqueItems') {
      if (value === true) fail(owner, `${path}.uniqueItems`, 'uniqueItems: true is not allowed by the API server; use x-kubernetes-list-type: set');
    } else if (key.startsWith('~') || DROPPED_KEYWORDS.has(key)) {
      if (key === 'additionalProperties' && typeof value === 'object' && value !== null) out.additionalProperties = toStructural(owner, `${path}.additionalProperties`, value);
    } else fail(owner, `${path}.${key}`, `the keyword ${key} has no structural form (allowed: type, properties, items, additionalProperties, enum, the x-kubernetes-* extensions and the value limits)`);
  }
  if (Array.isArray(out.type)) {
    const types = (out.type as unknown[]).filter((t) => t !== 'null');
    if (types.length !== 1) fail(owner, `${path}.type`, `one type is structural, got ${JSON.stringify(out.type)}`);
    if ((out.type as unknown[]).includes('null')) out.nullable = true;
    out.type = types[0];
  }
  checkNode(owner, path, out);
  return out;
}

/** The structural form of an `anyOf`: literals → enum, `T | null` → nullable, `integer | string` → int-or-string. */
function fromUnion(owner: string, path: string, variants: unknown[]): Record<string, unknown> {
  const nonNull = variants.filter((v) => (v as Record<string, unknown>).type !== 'null');
  const nullable = nonNull.length < variants.length;
  const extra = nullable ? { nullable: true } : {};
  if (nonNull.length === 1) return { ...toStructural(owner, path, nonNull[0]), ...extra };
  const parts = nonNull.map((v, i) => toStructural(owner, `${path}.anyOf[${i}]`, v));
  if (parts.every((p) => p.enum !== undefined && p.type !== undefined && p.type === parts[0].type)) {
    return { type: parts[0].type, enum: parts.flatMap((p) => p.enum), ...extra };
  }
  const types = new Set(parts.map((p) => p.type));
  if (parts.length === 2 && types.has('integer') && types.has('string') && parts.every((p) => Object.keys(p).length === 1)) {
    return { 'x-kubernetes-int-or-string': true, ...extra };
  }
  fail(owner, `${path}.anyOf`, 'a union is structural only as literals of one type, T | null, or integer | string');
}

function checkNode(owner: string, path: string, node: Record<string, unknown>): void {
  const type = node.type;
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (type === undefined && !intOrString && !preserve) fail(owner, `${path}.type`, 'must not be empty: every node of a structural schema has a type');
  if (type !== undefined && !TYPES.has(type as string)) fail(owner, `${path}.type`, `must be one of object, array, string, integer, number, boolean, got ${JSON.stringify(type)}`);
  if (intOrString && type !== undefined) fail(owner, `${path}.type`, 'must be empty with x-kubernetes-int-or-string');
  if (node.properties !== undefined && node.additionalProperties !== undefined) fail(owner, `${path}.additionalProperties`, 'properties and additionalProperties are mutually exclusive');
  if ((node.properties !== undefined || node.additionalProperties !== undefined) && type !== 'object') fail(owner, `${path}.type`, 'must be object with properties');
  if (type === 'array' && node.items === undefined) fail(owner, `${path}.items`, 'must be given for an array');
  if (node.items !== undefined && type !== 'array') fail(owner, `${path}.type`, 'must be array with items');
  if (node['x-kubernetes-embedded-resource'] === true && type !== 'object') fail(owner, `${path}.type`, 'must be object with x-kubernetes-embedded-resource');
  if (node.format !== undefined) checkFormat(owner, path, type as string | undefined, node.format);
  const listType = node['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (type !== 'array') fail(owner, `${path}.x-kubernetes-list-type`, 'is allowed on arrays only');
    if (!['atomic', 'set', 'map'].includes(listType as string)) fail(owner, `${path}.x-kubernetes-list-type`, `must be atomic, set or map, got ${JSON.stringify(listType)}`);
    const items = node.items as Record<string, unknown>;
    if (listType === 'set' && (items.type === 'object' || items.type === 'array')) fail(owner, `${path}.items.type`, 'the items of a set list must be scalars');
    if (listType === 'map') {
      const keys = node['x-kubernetes-list-map-keys'];
      if (!Array.isArray(keys) || keys.length === 0) fail(owner, `${path}.x-kubernetes-list-map-keys`, 'must name at least one key when x-kubernetes-list-type is map');
      if (items.type !== 'object') fail(owner, `${path}.items.type`, 'the items of a map list must be objects');
      const props = (items.properties ?? {}) as Record<string, Record<string, unknown>>;
      const required = (items.required ?? []) as string[];
      for (const key of keys as string[]) {
        const prop = props[key];
        if (prop === undefined) fail(owner, `${path}.x-kubernetes-list-map-keys`, `the key ${key} is not a property of the items`);
        if (!required.includes(key) && prop.default === undefined) fail(owner, `${path}.items.properties.${key}`, 'a map key must be required or have a default');
      }
    }
  } else if (node['x-kubernetes-list-map-keys'] !== undefined) fail(owner, `${path}.x-kubernetes-list-map-keys`, 'needs x-kubernetes-list-type: map');
  for (const key of (node.required ?? []) as string[]) {
    if (node.properties === undefined || !(key in (node.properties as object))) {
      if (!preserve) fail(owner, `${path}.required`, `names ${key}, which is not a property`);
    }
  }
}

/**
 * A format the server does not know on this type is dropped without a word (only a warning on the CRD):
 * refused here, naming the closest known format.
 */
function checkFormat(owner: string, path: string, type: string | undefined, format: unknown): void {
  if (typeof format === 'string' && isKnownFormat(type, format)) return;
  const known = type === 'integer' || type === 'number' ? KNOWN_FORMATS[type] : type === undefined || type === 'string' ? KNOWN_FORMATS.string : [];
  const close = typeof format === 'string' ? closestOption(format, known) : undefined;
  const meant = close === undefined ? '' : ` (did you mean ${JSON.stringify(close)}?)`;
  const formats = known.length === 0 ? `no format on ${type}` : `on ${type ?? 'a string'}: ${known.join(', ')}`;
  fail(owner, `${path}.format`, `unknown format ${JSON.stringify(format)}${meant}; kube-apiserver ignores a format it does not validate (it validates ${formats})`);
}
