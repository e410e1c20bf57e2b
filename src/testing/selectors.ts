// Label and field selectors as the API server evaluates them, for the fakes' list and watch filters.

import { statusError, type StoredEntry } from './resource-state.js';

/** A parsed selector: true when an object matches. */
export type ObjectPredicate = (obj: { metadata?: unknown }) => boolean;

interface Requirement {
  key: string;
  op: '=' | '!=' | 'in' | 'notin' | 'exists' | '!';
  values: string[];
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;

function badSelector(kind: string, text: string, why: string): Error {
  return statusError(400, 'BadRequest', `unable to parse requirement: invalid ${kind} selector "${text}": ${why}`);
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t !== '');
}

function parseLabelTerm(term: string, whole: string): Requirement {
  let m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (m) {
    const values = m[3].split(',').map((v) => v.trim());
    return { key: checkKey(m[1], whole), op: m[2] as 'in' | 'notin', values };
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (m) {
    return { key: checkKey(m[1], whole), op: m[2] === '!=' ? '!=' : '=', values: [m[3]] };
  }
  m = /^!\s*(\S+)$/.exec(term);
  if (m) return { key: checkKey(m[1], whole), op: '!', values: [] };
  if (/^\S+$/.test(term)) return { key: checkKey(term, whole), op: 'exists', values: [] };
  throw badSelector('label', whole, `cannot parse "${term}"`);
}

function checkKey(key: string, whole: string): string {
  if (!KEY.test(key)) throw badSelector('label', whole, `invalid key "${key}"`);
  return key;
}

function matches(req: Requirement, has: boolean, value: string | undefined): boolean {
  switch (req.op) {
    case '=':
      return has && value === req.values[0];
    case '!=':
      return !has || value !== req.values[0];
    case 'in':
      return has && req.values.includes(value as string);
    case 'notin':
      return !has || !req.values.includes(value as string);
    case 'exists':
      return has;
    case '!':
      return !has;
  }
}

/**
 * Parses a Kubernetes label selector: equality (`a=b`, `a==b`, `a!=b`), set-based (`a in (x,y)`,
 * `a notin (x)`), existence (`a`, `!a`), joined by commas. `""` matches everything. Throws a 400
 * BadRequest {@link statusError} on a selector that does not parse.
 */
export function parseLabelSelector(text: string | undefined): ObjectPredicate | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const reqs = splitTerms(text).map((t) => parseLabelTerm(t, text));
  return (obj) => {
    const labels = ((obj.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<
      string,
      string
    >;
    return reqs.every((r) => matches(r, Object.hasOwn(labels, r.key), labels[r.key]));
  };
}

function fieldValue(obj: unknown, path: string): string | undefined {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return undefined;
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

/**
 * Parses a field selector: terms `path=value`, `path==value`, `path!=value` joined by commas, where
 * `path` is any dotted path (`metadata.name`, `metadata.namespace`, `spec.nodeName`, `status.phase`).
 * A missing field compares as `""`. Throws a 400 BadRequest {@link statusError} when it does not parse.
 */
export function parseFieldSelector(text: string | undefined): ObjectPredicate | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const reqs = splitTerms(text).map((term) => {
    const m = /^([A-Za-z0-9_.-]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badSelector('field', text, `cannot parse "${term}"`);
    return { path: m[1], neg: m[2] === '!=', value: m[3] };
  });
  return (obj) => reqs.every((r) => (fieldValue(obj, r.path) ?? '') === r.value !== r.neg);
}

/** True when a field selector only reads `metadata.*`, so stored metadata is enough to evaluate it. */
export function isMetadataOnlyFieldSelector(text: string | undefined): boolean {
  if (text === undefined) return true;
  return splitTerms(text).every((t) => t.startsWith('metadata.'));
}

/**
 * How a change looks to a watcher that filters with `predicate` (the API server's rule): an object
 * that starts matching is ADDED, one that stops matching is DELETED, one that never matched is not
 * sent. `undefined` = skip. `matchesEntry` is evaluated on the old and new versions.
 */
export function eventTypeFor<E>(
  type: 'ADDED' | 'MODIFIED' | 'DELETED',
  entry: E,
  prev: E | undefined,
  matchesEntry: ((e: E) => boolean) | undefined,
): 'ADDED' | 'MODIFIED' | 'DELETED' | undefined {
  if (matchesEntry === undefined) return type;
  const now = matchesEntry(entry);
  if (type !== 'MODIFIED') return now ? type : undefined;
  const before = prev !== undefined && matchesEntry(prev);
  if (now) return before ? 'MODIFIED' : 'ADDED';
  return before ? 'DELETED' : undefined;
}

/**
 * A filter over stored entries for a label and a field selector (either may be absent); `undefined`
 * when neither is given. Selectors on `metadata.*` read only the stored metadata; others parse the object.
 */
export function entryMatcher(
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): ((entry: StoredEntry) => boolean) | undefined {
  const label = parseLabelSelector(labelSelector);
  const field = parseFieldSelector(fieldSelector);
  if (label === undefined && field === undefined) return undefined;
  const metaOnly = isMetadataOnlyFieldSelector(fieldSelector);
  return (entry) => {
    const view = field !== undefined && !metaOnly ? (JSON.parse(entry.json) as { metadata?: unknown }) : { metadata: entry.meta };
    return (label === undefined || label(view)) && (field === undefined || field(view));
  };
}
