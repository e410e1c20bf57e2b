// Label selectors as Kubernetes defines them: requirements, matching, validation, and the object forms.

import { ErrorCodes, KubeInformerError } from './errors.js';
import { preview } from './preview.js';

/**
 * A requirement's operator, spelled as Kubernetes spells it (`selection.Operator`): `=`, `==`, `!=`,
 * `in`, `notin`, `exists`, `!` (does not exist), `gt`, `lt`.
 */
export type SelectorOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One condition of a label selector; a selector is the AND of its requirements. */
export interface LabelRequirement {
  /** The label key (a qualified name, optionally with a DNS-subdomain prefix: `example.com/tier`). */
  readonly key: string;
  /** How the label's value is tested. */
  readonly operator: SelectorOperator;
  /** The values, sorted and without duplicates; empty for `exists` and `!`, one value for `=` and friends. */
  readonly values: readonly string[];
}

/** Labels as found in `metadata.labels`. */
export type Labels = Readonly<Record<string, string>>;

/**
 * A parsed label selector: client-go's `labels.Selector`. Build one with `parseLabelSelector`,
 * {@link labelSelectorFromSet} or {@link labelSelectorFromObject}.
 */
export interface LabelSelector {
  /** True when `labels` (`undefined` = no labels) satisfy every requirement. */
  matches(labels: Labels | undefined | null): boolean;
  /** True when the selector has no requirement and therefore matches everything. */
  empty(): boolean;
  /** The requirements, sorted by key. */
  requirements(): readonly LabelRequirement[];
  /**
   * The canonical text form (requirements sorted by key, set values sorted), which parses back to
   * an equal selector and means the same to an API server.
   */
  toString(): string;
}

/**
 * A label or field selector that cannot be parsed or validated (code `INVALID_SELECTOR`). `selector`
 * is the input (a preview for the object forms); `position` is the 0-based character offset in the
 * text where the problem is, when the input was text. Never a silent match-all: a malformed selector
 * always throws this.
 */
export class SelectorParseError extends KubeInformerError {
  /** The input (or a preview of it). */
  readonly selector: string;
  /** 0-based offset of the problem in the text, or `undefined` for the object forms. */
  readonly position: number | undefined;
  /** Why it failed, without the input. */
  readonly reason: string;
  /** Which kind of selector it was. */
  readonly kind: 'label' | 'field';

  /**
   * @param selector - the input (or a preview of it)
   * @param reason - why it failed
   * @param position - 0-based offset of the problem in the text, when the input was text
   * @param kind - a label selector (default) or a field selector
   */
  constructor(selector: string, reason: string, position?: number, kind: 'label' | 'field' = 'label') {
    const where = position === undefined ? '' : ` at position ${position}`;
    super(ErrorCodes.INVALID_SELECTOR, `invalid ${kind} selector ${preview(selector)}${where}: ${reason}`);
    this.selector = selector;
    this.position = position;
    this.reason = reason;
    this.kind = kind;
  }
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** A lowercase RFC 1123 DNS label (`my-operator`: a Namespace's or a Service's name); the length limit (63) is checked apart. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A lowercase RFC 1123 DNS subdomain (`example.com`); the length limit (253) is checked apart. */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const INTEGER = /^[+-]?[0-9]+$/;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * Why `key` is not a valid label key, or `undefined` when it is: a name of at most 63 characters
 * (alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric), optionally after a DNS-subdomain
 * prefix of at most 253 characters and a `/`.
 */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    const [prefix] = parts;
    name = parts[1];
    if (prefix.length === 0) return `key ${JSON.stringify(key)}: the prefix before '/' must not be empty`;
    if (prefix.length > 253) return `key prefix ${JSON.stringify(prefix)} is longer than 253 characters`;
    if (!DNS_SUBDOMAIN.test(prefix)) {
      return `key prefix ${JSON.stringify(prefix)} must be a lowercase DNS subdomain (like "example.com")`;
    }
  } else if (parts.length > 2) {
    return `key ${JSON.stringify(key)} has more than one '/'`;
  }
  if (name.length === 0) return `key ${JSON.stringify(key)}: the name part must not be empty`;
  if (name.length > 63) return `key ${JSON.stringify(key)}: the name part is longer than 63 characters`;
  if (!NAME.test(name)) {
    return `key ${JSON.stringify(key)}: the name part must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit`;
  }
  return undefined;
}

/**
 * Why `value` is not a valid label value, or `undefined` when it is: empty, or at most 63 characters
 * of letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit.
 */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return `value ${JSON.stringify(value)} is longer than 63 characters`;
  if (value !== '' && !NAME.test(value)) {
    return `value ${JSON.stringify(value)} must be empty or consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit`;
  }
  return undefined;
}

/** Parses a label value as Go's `strconv.ParseInt(v, 10, 64)` would; `undefined` when it would fail. */
function parseInt64(text: string): bigint | undefined {
  if (!INTEGER.test(text)) return undefined;
  const n = BigInt(text);
  return n > INT64_MAX || n < INT64_MIN ? undefined : n;
}

/**
 * Checks one requirement and returns it normalized (values sorted, deduplicated), or the reason it is
 * invalid. Shared by the text parser and the object forms.
 */
export function checkRequirement(key: string, operator: SelectorOperator, values: readonly string[]): LabelRequirement | string {
  const keyProblem = labelKeyProblem(key);
  if (keyProblem !== undefined) return keyProblem;
  const sorted = Array.from(new Set(values)).sort();
  switch (operator) {
    case 'in':
    case 'notin':
      if (sorted.length === 0) return `'${operator}' needs at least one value`;
      break;
    case '=':
    case '==':
    case '!=':
      if (sorted.length !== 1) return `'${operator}' needs exactly one value`;
      break;
    case 'exists':
    case '!':
      if (sorted.length !== 0) return `'${operator === '!' ? 'does not exist' : 'exists'}' takes no values`;
      break;
    case 'gt':
    case 'lt':
      if (sorted.length !== 1) return `'${operator}' needs exactly one value`;
      if (parseInt64(sorted[0]) === undefined) return `'${operator}' needs an integer value, not ${JSON.stringify(sorted[0])}`;
      break;
    default:
      return `unknown operator ${JSON.stringify(operator)}`;
  }
  for (const v of sorted) {
    const problem = labelValueProblem(v);
    if (problem !== undefined) return problem;
  }
  return { key, operator, values: sorted };
}

function has(labels: Labels, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(labels, key);
}

function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has(labels, r.key) && r.values.includes(labels[r.key]);
    case '!=':
    case 'notin':
      return !has(labels, r.key) || !r.values.includes(labels[r.key]);
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt':
    case 'lt': {
      if (!has(labels, r.key)) return false;
      const actual = parseInt64(labels[r.key]);
      if (actual === undefined) return false;
      const bound = BigInt(r.values[0]);
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

function requirementText(r: LabelRequirement): string {
  const v = r.values.join(',');
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
      return `${r.key} in (${v})`;
    case 'notin':
      return `${r.key} notin (${v})`;
    case 'gt':
      return `${r.key}>${v}`;
    case 'lt':
      return `${r.key}<${v}`;
    default:
      return `${r.key}${r.operator}${v}`;
  }
}

const EMPTY_LABELS: Labels = Object.freeze({});

/** The selector over a list of checked requirements. */
class RequirementSelector implements LabelSelector {
  readonly #reqs: readonly LabelRequirement[];

  constructor(reqs: readonly LabelRequirement[]) {
    this.#reqs = Object.freeze([...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  }

  matches(labels: Labels | undefined | null): boolean {
    const l = labels ?? EMPTY_LABELS;
    for (const r of this.#reqs) if (!requirementMatches(r, l)) return false;
    return true;
  }

  empty(): boolean {
    return this.#reqs.length === 0;
  }

  requirements(): readonly LabelRequirement[] {
    return this.#reqs;
  }

  toString(): string {
    return this.#reqs.map(requirementText).join(',');
  }
}

/** A key used only to spell the nothing-selector as text. */
const NOTHING_KEY = 'kube-informer.io/nothing';

/** The selector that matches no labels at all (client-go's `labels.Nothing()`). */
class NothingSelector implements LabelSelector {
  matches(): boolean {
    return false;
  }
  empty(): boolean {
    return false;
  }
  requirements(): readonly LabelRequirement[] {
    return NOTHING_REQS;
  }
  toString(): string {
    return `${NOTHING_KEY},!${NOTHING_KEY}`;
  }
}

const NOTHING_REQS: readonly LabelRequirement[] = Object.freeze([
  { key: NOTHING_KEY, operator: 'exists', values: [] },
  { key: NOTHING_KEY, operator: '!', values: [] },
]);
const EVERYTHING = new RequirementSelector([]);
const NOTHING = new NothingSelector();

/** Builds a selector from requirements already checked by {@link checkRequirement}. */
export function selectorFromRequirements(reqs: readonly LabelRequirement[]): LabelSelector {
  return reqs.length === 0 ? EVERYTHING : new RequirementSelector(reqs);
}

/** The selector that matches everything (client-go's `labels.Everything()`); its text is `''`. */
export function everythingSelector(): LabelSelector {
  return EVERYTHING;
}

/**
 * The selector that matches nothing (client-go's `labels.Nothing()`). Unlike client-go's, its text is
 * not `''` (which an API server reads as "everything") but `kube-informer.io/nothing,!kube-informer.io/nothing`,
 * a contradiction that matches nothing on a server too.
 */
export function nothingSelector(): LabelSelector {
  return NOTHING;
}

/**
 * A selector matching exactly the labels of `set` (every key present with that value), like
 * `metav1.LabelSelector.matchLabels` or client-go's `ValidatedSelectorFromSet`. An empty set matches
 * everything. Throws {@link SelectorParseError} (code `INVALID_SELECTOR`) for an invalid key or value.
 */
export function labelSelectorFromSet(set: Readonly<Record<string, string>>): LabelSelector {
  return selectorFromRequirements(setRequirements(set, 'labels'));
}

function setRequirements(set: unknown, path: string): LabelRequirement[] {
  if (set === null || typeof set !== 'object' || Array.isArray(set)) {
    throw new SelectorParseError(preview(set), `${path} must be an object of label key to value`);
  }
  const reqs: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(set)) {
    if (typeof value !== 'string') {
      throw new SelectorParseError(preview(set), `${path}[${JSON.stringify(key)}] must be a string, not ${typeof value}`);
    }
    const r = checkRequirement(key, '=', [value]);
    if (typeof r === 'string') throw new SelectorParseError(preview(set), `${path}: ${r}`);
    reqs.push(r);
  }
  return reqs;
}

/** One `matchExpressions` entry of the API's `LabelSelector` (`V1LabelSelectorRequirement`). */
export interface LabelSelectorRequirementObject {
  /** The label key. */
  readonly key: string;
  /** `In`, `NotIn`, `Exists` or `DoesNotExist`. */
  readonly operator: string;
  /** The values: non-empty for `In`/`NotIn`, empty or absent for `Exists`/`DoesNotExist`. */
  readonly values?: readonly string[];
}

/**
 * The API's `LabelSelector` object (`metav1.LabelSelector`, client-node's `V1LabelSelector`); a
 * read-only one straight from the cache is accepted as is.
 */
export interface LabelSelectorObject {
  /** Labels that must be present with exactly these values. */
  readonly matchLabels?: Readonly<Record<string, string>>;
  /** Further requirements; all must hold. */
  readonly matchExpressions?: readonly LabelSelectorRequirementObject[];
}

const OBJECT_OPERATORS: Record<string, SelectorOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * Converts the API's `LabelSelector` object (as in `spec.selector` of a Deployment) the way
 * `metav1.LabelSelectorAsSelector` does: `undefined`/`null` matches **nothing**, `{}` (no labels, no
 * expressions) matches everything. Throws {@link SelectorParseError} (code `INVALID_SELECTOR`) for an
 * unknown operator, a missing or extra value list, or an invalid key or value, naming the field.
 */
export function labelSelectorFromObject(selector: LabelSelectorObject | undefined | null): LabelSelector {
  if (selector === undefined || selector === null) return NOTHING;
  if (typeof selector !== 'object' || Array.isArray(selector)) {
    throw new SelectorParseError(preview(selector), 'a LabelSelector must be an object with matchLabels and/or matchExpressions');
  }
  const reqs = selector.matchLabels == null ? [] : setRequirements(selector.matchLabels, 'matchLabels');
  const exprs: unknown = selector.matchExpressions ?? [];
  if (!Array.isArray(exprs)) throw new SelectorParseError(preview(selector), 'matchExpressions must be an array');
  exprs.forEach((e: Partial<LabelSelectorRequirementObject> | null, i) => {
    const fail = (why: string): never => {
      throw new SelectorParseError(preview(selector), `matchExpressions[${i}]: ${why}`);
    };
    if (e === null || typeof e !== 'object') fail('must be an object with key, operator and values');
    const op = typeof e!.operator === 'string' && Object.hasOwn(OBJECT_OPERATORS, e!.operator) ? OBJECT_OPERATORS[e!.operator] : undefined;
    if (op === undefined) fail(`${preview(e!.operator, 40)} is not a valid operator (In, NotIn, Exists, DoesNotExist)`);
    if (typeof e!.key !== 'string') fail('key must be a string');
    const values: unknown = e!.values ?? [];
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) fail('values must be an array of strings');
    const r = checkRequirement(e!.key as string, op!, values as string[]);
    if (typeof r === 'string') fail(r);
    reqs.push(r as LabelRequirement);
  });
  return selectorFromRequirements(reqs);
}
