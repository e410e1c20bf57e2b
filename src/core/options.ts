// The one option validator: every constructor checks its options here, so a mistake fails at once.

import { shardSelector, type HashRange, type ShardField } from './shard-selector.js';
import { ErrorCodes, KubeInformerError } from './errors.js';
import { parseFieldSelector } from './field-selector.js';
import { SelectorParseError } from './label-selector.js';
import { preview } from './preview.js';
import { parseLabelSelector } from './selector-parser.js';
import type { GroupVersionResource } from './types.js';

/** An option value outside its documented range (code `INVALID_OPTION`); the message names owner, option and value. */
export class InvalidOptionError extends KubeInformerError {
  /** `message` names the option and the value. */
  constructor(message: string) {
    super(ErrorCodes.INVALID_OPTION, message);
  }
}

/**
 * What one option may hold. `undefined` is always allowed (the option takes its default); the rule
 * describes every other value.
 *
 * - `duration`: milliseconds, a finite number ≥ 0; `positiveDuration`: > 0.
 * - `count`: a whole number ≥ 0; `positiveCount`: ≥ 1.
 * - `string`, `boolean`, `function`, `object`: that type (`object` excludes `null` and arrays).
 * - `clock`: an object with `now`, `setTimeout` and `clearTimeout`.
 * - `logger`: `false`, or an object with `debug`, `info`, `warn` and `error` functions.
 * - `labelSelector`, `fieldSelector`: text that parses (else `INVALID_SELECTOR`).
 * - `shardSelector`: a `ShardSelector` whose field and ranges are valid (else `INVALID_SELECTOR`).
 * - an array of strings: one of them.
 * - a nested schema: an object whose fields follow it.
 */
export type OptionRule =
  | 'duration'
  | 'positiveDuration'
  | 'count'
  | 'positiveCount'
  | 'string'
  | 'boolean'
  | 'function'
  | 'object'
  | 'clock'
  | 'logger'
  | 'labelSelector'
  | 'fieldSelector'
  | 'shardSelector'
  | readonly string[]
  | OptionSchema;

/** The rules of an options object, by option name. Options not named are not checked. */
export interface OptionSchema {
  readonly [option: string]: OptionRule;
}

/**
 * Checks `options` against `schema`. Throws {@link InvalidOptionError} (code `INVALID_OPTION`) naming
 * `owner`, the option's path and the value, or a `SelectorParseError` (code `INVALID_SELECTOR`) for a
 * selector that does not parse. A non-object `options` (other than `undefined`) is itself an error.
 *
 * @example
 * ```ts
 * validateOptions('SharedIndexInformer', options, { resyncPeriodMs: 'duration', errorPolicy: ['stop', 'report'] });
 * ```
 */
export function validateOptions(owner: string, options: unknown, schema: OptionSchema): void {
  if (options === undefined) return;
  if (!isPlainObject(options)) {
    throw new InvalidOptionError(`${owner}: options must be an object, got ${describeValue(options)}`);
  }
  checkFields(owner, '', options, schema);
}

function checkFields(owner: string, prefix: string, options: Record<string, unknown>, schema: OptionSchema): void {
  for (const [name, rule] of Object.entries(schema)) {
    const value = options[name];
    if (value === undefined) continue;
    const path = `${prefix}${name}`;
    if (isSchema(rule)) {
      if (!isPlainObject(value)) fail(owner, path, 'an object', value);
      checkFields(owner, `${path}.`, value, rule);
      continue;
    }
    checkValue(owner, path, rule, value);
  }
}

function checkValue(owner: string, path: string, rule: Exclude<OptionRule, OptionSchema>, value: unknown): void {
  if (Array.isArray(rule)) {
    if (!rule.includes(value)) fail(owner, path, `one of ${rule.map((r) => `'${r}'`).join(', ')}`, value);
    return;
  }
  switch (rule) {
    case 'duration':
    case 'positiveDuration':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (rule === 'positiveDuration' && value === 0)) {
        fail(owner, path, `a finite number of milliseconds ${rule === 'duration' ? '>= 0' : '> 0'}`, value);
      }
      return;
    case 'count':
    case 'positiveCount':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < (rule === 'count' ? 0 : 1)) {
        fail(owner, path, `a whole number ${rule === 'count' ? '>= 0' : '>= 1'}`, value);
      }
      return;
    case 'string':
    case 'boolean':
    case 'function':
      if (typeof value !== rule) fail(owner, path, `a ${rule}`, value);
      return;
    case 'object':
      if (!isPlainObject(value)) fail(owner, path, 'an object', value);
      return;
    case 'clock': {
      const c = value as Record<string, unknown> | null;
      if (c === null || typeof c !== 'object' || typeof c.now !== 'function' || typeof c.setTimeout !== 'function' || typeof c.clearTimeout !== 'function') {
        fail(owner, path, 'a Clock (now, setTimeout, clearTimeout)', value);
      }
      return;
    }
    case 'logger': {
      const l = value as Record<string, unknown> | null;
      if (value === false) return;
      if (l === null || typeof l !== 'object' || !['debug', 'info', 'warn', 'error'].every((m) => typeof l[m] === 'function')) {
        fail(owner, path, 'false or a logger with debug, info, warn and error methods', value);
      }
      return;
    }
    case 'labelSelector':
    case 'fieldSelector':
      validateSelector(owner, path, rule === 'labelSelector' ? 'label' : 'field', value);
      return;
    case 'shardSelector': {
      const s = value as { field?: unknown; ranges?: unknown } | null;
      if (s === null || typeof s !== 'object') fail(owner, path, 'a ShardSelector (field and ranges)', value);
      shardSelector(s.field as ShardField, s.ranges as HashRange[]);
      return;
    }
  }
}

/**
 * Parses a label or field selector where it is given, so a malformed one fails at construction with
 * `INVALID_SELECTOR` (naming `owner`, the option, the position and the reason) instead of as a 400 on
 * every list.
 */
export function validateSelector(owner: string, option: string, kind: 'label' | 'field', value: unknown): void {
  if (typeof value !== 'string') fail(owner, option, `a ${kind} selector string`, value);
  try {
    if (kind === 'label') parseLabelSelector(value);
    else parseFieldSelector(value);
  } catch (err) {
    if (!(err instanceof SelectorParseError)) throw err;
    const e = new SelectorParseError(value, `${err.reason} (${owner} option ${option})`, err.position, kind);
    throw e;
  }
}

/**
 * Checks a {@link GroupVersionResource}: `group` a string (`''` for the core group), `version` and
 * `resource` non-empty strings without `/`. Throws {@link InvalidOptionError}.
 */
export function validateGroupVersionResource(owner: string, gvr: unknown): asserts gvr is GroupVersionResource {
  if (!isPlainObject(gvr)) fail(owner, 'resource', "a { group, version, resource } object", gvr);
  const { group, version, resource } = gvr;
  if (typeof group !== 'string' || group.includes('/')) {
    fail(owner, 'group', "a string without '/' ('' for the core group)", group);
  }
  for (const [name, v] of [['version', version], ['resource', resource]] as const) {
    if (typeof v !== 'string' || v === '' || v.includes('/')) fail(owner, name, "a non-empty string without '/'", v);
  }
  if (resource !== (resource as string).toLowerCase()) {
    fail(owner, 'resource', "the lower-case plural resource name (e.g. 'pods', not 'Pod')", resource);
  }
}

function fail(owner: string, option: string, expected: string, value: unknown): never {
  throw new InvalidOptionError(`${owner}: option ${option} must be ${expected}, got ${describeValue(value)}`);
}

/** A short description of any option value for an error message (`"10"`, `null`, `an array [...]`, `{"a":1}`). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array ${preview(value, 60)}`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 59)}…` : value);
  if (typeof value === 'object') return preview(value, 60);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects were handled above; only primitives reach here.
  return String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isSchema(rule: OptionRule): rule is OptionSchema {
  return typeof rule === 'object' && !Array.isArray(rule);
}
