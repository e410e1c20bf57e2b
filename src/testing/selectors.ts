// Label and field selectors as the API server evaluates them, for the fakes' list and watch filters.

import { SelectorParseError, type LabelSelector } from '../core/label-selector.js';
import { parseLabelSelector } from '../core/selector-parser.js';
import { statusError, type StoredEntry } from './resource-state.js';

/** A parsed selector: true when an object matches. */
export type ObjectPredicate = (obj: { metadata?: unknown }) => boolean;

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

/**
 * A predicate for a Kubernetes label selector, parsed by the library's own parser
 * (`parseLabelSelector` of the package root): equality, set-based and existence terms joined by
 * commas. `""` or `undefined` gives `undefined` (no filter). A selector that does not parse throws a
 * 400 BadRequest {@link statusError}, as the API server answers.
 */
export function labelSelectorPredicate(text: string | undefined): ObjectPredicate | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let selector: LabelSelector;
  try {
    selector = parseLabelSelector(text);
  } catch (err) {
    if (err instanceof SelectorParseError) throw badSelector('label', text, err.reason);
    throw err;
  }
  return (obj) => selector.matches(((obj.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}));
}

function fieldValue(obj: unknown, path: string): string | undefined {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are stringified as JSON; only primitives reach String().
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

/**
 * Parses a field selector: terms `path=value`, `path==value`, `path!=value` joined by commas, where
 * `path` is any dotted path (`metadata.name`, `metadata.namespace`, `spec.nodeName`, `status.phase`).
 * A missing field compares as `""`. Throws a 400 BadRequest {@link statusError} when it does not parse.
 */
export function fieldSelectorPredicate(text: string | undefined): ObjectPredicate | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const reqs = splitTerms(text).map((term) => {
    const m = /^([A-Za-z0-9_.-]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badSelector('field', text, `cannot parse "${term}"`);
    return { path: m[1], neg: m[2] === '!=', value: m[3] };
  });
  return (obj) => reqs.every((r) => (fieldValue(obj, r.path) ?? '') === r.value !== r.neg);
}

/** The field labels (paths) a field selector names, in order: `metadata.name=a,spec.x!=b` → `metadata.name`, `spec.x`. Terms that do not parse are left out. */
export function fieldSelectorLabels(text: string | undefined): string[] {
  if (text === undefined) return [];
  return splitTerms(text).flatMap((term) => /^([A-Za-z0-9_.-]+)\s*(?:==|=|!=)/.exec(term)?.[1] ?? []);
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
 * The DELETED entry of an object that left a watch's selection: as kube-apiserver's watch cache sends
 * it, the object as it last matched (`prev`) at the resourceVersion of the change that took it out.
 */
export function asLeft(prev: StoredEntry, now: StoredEntry): StoredEntry {
  const obj = JSON.parse(prev.json) as { metadata?: Record<string, unknown> };
  obj.metadata = { ...obj.metadata, resourceVersion: String(now.rv) };
  return { ...prev, rv: now.rv, json: JSON.stringify(obj), meta: { ...prev.meta, resourceVersion: String(now.rv) } };
}

/**
 * A filter over stored entries for a label and a field selector (either may be absent); `undefined`
 * when neither is given. Selectors on `metadata.*` read only the stored metadata; others parse the object.
 */
export function entryMatcher(
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): ((entry: StoredEntry) => boolean) | undefined {
  const label = labelSelectorPredicate(labelSelector);
  const field = fieldSelectorPredicate(fieldSelector);
  if (label === undefined && field === undefined) return undefined;
  const metaOnly = isMetadataOnlyFieldSelector(fieldSelector);
  return (entry) => {
    const view = field !== undefined && !metaOnly ? (JSON.parse(entry.json) as { metadata?: unknown }) : { metadata: entry.meta };
    return (label === undefined || label(view)) && (field === undefined || field(view));
  };
}
