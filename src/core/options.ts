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
 * - `any`: any value — the option is known, and checked where it is used (or can be anything).
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
  | 'any'
  | 'clock'
  | 'logger'
  | 'labelSelector'
  | 'fieldSelector'
  | 'shardSelector'
  | readonly string[]
  | OptionSchema;

/**
 * The rules of an options object, by option name. It names every option: a key it does not name is
 * refused as unknown (with the closest known name), so a misspelt option fails instead of being ignored.
 */
export interface OptionSchema {
  readonly [option: string]: OptionRule;
}

/**
 * The schema of an options type `T`: one rule for every option `T` has — the compiler refuses a schema
 * that forgets one, so an option added to a type without its rule fails to build (and would otherwise be
 * refused as unknown at run time). `T` unknown (an options value not typed) takes any {@link OptionSchema}.
 */
export type OptionSchemaFor<T> = unknown extends T
  ? OptionSchema
  : Exclude<T, undefined> extends string | number | boolean | bigint | symbol | null | readonly unknown[] | ((...args: never[]) => unknown)
    ? OptionSchema
    : { readonly [K in keyof Exclude<T, undefined>]-?: OptionRule };

/**
 * `schema` without the rules of `omitted`: the schema of an `Omit<Options, ...>` option built from the
 * full one (the informer's `reflector` option from the reflector's).
 */
export function omitRules<S extends OptionSchema, K extends keyof S>(schema: S, ...omitted: readonly K[]): Omit<S, K> {
  const rest: Record<string, OptionRule> = { ...schema };
  for (const key of omitted) delete rest[key as string];
  return rest as Omit<S, K>;
}

/**
 * Checks `options` against `schema`. Throws {@link InvalidOptionError} (code `INVALID_OPTION`) naming
 * `owner`, the option's path and the value, or a `SelectorParseError` (code `INVALID_SELECTOR`) for a
 * selector that does not parse. A non-object `options` (other than `undefined`) is itself an error, and
 * so is a key the schema does not name, at any depth: `SharedInformerFactory: unknown option
 * resyncPeriod (did you mean resyncPeriodMs?)` — the closest known name, compared without case, when
 * one is close; else the list of known options. Typed options need a schema naming every option of
 * their type ({@link OptionSchemaFor}).
 *
 * @example
 * ```ts
 * validateOptions('SharedIndexInformer', options, { resyncPeriodMs: 'duration', errorPolicy: ['stop', 'report'] });
 * ```
 */
export function validateOptions<T>(owner: string, options: T, schema: NoInfer<OptionSchemaFor<T>>): void {
  if (options === undefined) return;
  if (!isPlainObject(options)) {
    throw new InvalidOptionError(`${owner}: options must be an object, got ${describeValue(options)}`);
  }
  checkFields(owner, '', options, schema);
}

function checkFields(owner: string, prefix: string, options: Record<string, unknown>, schema: OptionSchema): void {
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(schema, key)) unknownOption(owner, `${prefix}${key}`, key, Object.keys(schema));
  }
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
    case 'any':
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

/**
 * The known option closest to `key`, compared without case, or `undefined` when none is close: within
 * an edit distance (insertions, deletions, substitutions, swaps of neighbours) of a third of the longer
 * name, at least 2 — `resyncPeriod` → `resyncPeriodMs`, `labelselector` → `labelSelector`, `nmae` → `name`.
 */
export function closestOption(key: string, known: readonly string[]): string | undefined {
  const k = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(k, candidate.toLowerCase());
    const limit = Math.max(2, Math.floor(Math.max(k.length, candidate.length) / 3));
    if (d <= limit && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal-string-alignment distance: Levenshtein plus swaps of two neighbouring characters. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length][b.length];
}

function unknownOption(owner: string, path: string, key: string, known: readonly string[]): never {
  const suggestion = closestOption(key, known);
  const hint = suggestion !== undefined ? `did you mean ${path.slice(0, path.length - key.length)}${suggestion}?` : known.length === 0 ? 'it takes no options' : `known options: ${known.join(', ')}`;
  throw new InvalidOptionError(`${owner}: unknown option ${path} (${hint})`);
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
