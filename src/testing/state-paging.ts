// Key-ordered pages over a resource's objects, as of now or of an older resourceVersion.

import type { ObjectMeta } from '../core/types.js';

/**
 * One stored version of an object. `json` is the object serialized once, with the resourceVersion the
 * change gave it; every copy handed out is parsed from it, so nothing outside can change the store.
 */
export interface StoredEntry {
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  readonly key: string;
  /** `metadata.namespace`, `''` when cluster-scoped. */
  readonly namespace: string;
  /** `metadata.name`. */
  readonly name: string;
  /** The resourceVersion this version was written at. */
  readonly rv: number;
  /** The object as JSON (serialized once per change). */
  readonly json: string;
  /** A private parsed copy of the metadata, for selectors and preconditions. Never hand it out. */
  readonly meta: Readonly<ObjectMeta>;
}

/** What {@link ResourceState.page} should return. */
export interface PageOptions {
  /** Only objects in this namespace. Default: every namespace. */
  namespace?: string;
  /** The resourceVersion to read at (rebuilt from the history). Default: now. */
  atRv?: number;
  /** Start after this key (exclusive): the position a continue token carries. Default: the start. */
  after?: string;
  /** At most this many entries; `0`/absent = all of them. */
  limit?: number;
  /** Only entries it accepts are returned (rejected ones still count as scanned). Default: all. */
  filter?: (entry: StoredEntry) => boolean;
}

/** One page of a resource. */
export interface PageResult {
  /** The entries, in key order. */
  entries: StoredEntry[];
  /** The resourceVersion the page was read at. */
  rv: number;
  /** Set when more objects follow: the key the next page starts after. */
  nextAfter?: string;
  /** How many objects follow (ignoring any filter); set together with `nextAfter`. */
  remaining?: number;
}

/** The keys of `objects`, sorted as strings (the order the API server lists in). */
export function sortedKeys(objects: Map<string, StoredEntry>): string[] {
  return [...objects.keys()].sort();
}

/**
 * Merges sorted `base` with sorted `added`, keeping only keys still in `objects`, once each: O(n + k)
 * instead of re-sorting everything after a few creates and deletes.
 */
export function mergeSortedKeys(base: readonly string[], added: readonly string[], objects: Map<string, StoredEntry>): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  let last: string | undefined;
  while (i < base.length || j < added.length) {
    const k = j >= added.length || (i < base.length && base[i] <= added[j]) ? base[i++] : added[j++];
    if (k !== last && objects.has(k)) out.push(k);
    last = k;
  }
  return out;
}

/** The first index in sorted `keys` whose key is `> s` (or `>= s` when `inclusive`). */
export function searchKeys(keys: readonly string[], s: string, inclusive: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid];
    if (k < s || (!inclusive && k === s)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Pages through `sorted` (the current keys) merged with `overlay` (keys whose state at the read
 * version differs from now: the old entry, or null when the key did not exist then). Costs
 * O(log n + page + overlay), never a re-sort of everything.
 */
export function pageEntries(
  sorted: readonly string[],
  objects: Map<string, StoredEntry>,
  overlay: Map<string, StoredEntry | null> | undefined,
  rv: number,
  options: PageOptions,
): PageResult {
  const { namespace, after, filter } = options;
  const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
  const lowKey = namespace ? `${namespace}/` : '';
  const highKey = namespace ? `${namespace}0` : undefined; // '0' is the character after '/'
  const inRange = (k: string): boolean => k >= lowKey && (highKey === undefined || k < highKey);
  const end = highKey === undefined ? sorted.length : searchKeys(sorted, highKey, true);
  let i =
    after !== undefined && after >= lowKey ? searchKeys(sorted, after, false) : searchKeys(sorted, lowKey, true);
  const past = (k: string): boolean => after === undefined || k > after;
  const extra: string[] = [];
  if (overlay !== undefined) {
    for (const [k, v] of overlay) if (v !== null && inRange(k) && past(k)) extra.push(k);
    extra.sort();
  }
  let j = 0;
  const entries: StoredEntry[] = [];
  let last: string | undefined;
  const nextCurrent = (): void => {
    while (i < end && overlay?.has(sorted[i])) i++;
  };
  for (;;) {
    nextCurrent();
    const a = i < end ? sorted[i] : undefined;
    const b = j < extra.length ? extra[j] : undefined;
    if (a === undefined && b === undefined) break;
    if (entries.length >= limit) {
      return { entries, rv, nextAfter: last, remaining: remainingAfter(last as string) };
    }
    let entry: StoredEntry;
    if (b === undefined || (a !== undefined && a < b)) {
      entry = objects.get(a as string) as StoredEntry;
      i++;
    } else {
      entry = overlay?.get(b) as StoredEntry;
      j++;
    }
    last = entry.key;
    if (filter === undefined || filter(entry)) entries.push(entry);
  }
  return { entries, rv };

  function remainingAfter(key: string): number {
    let n = end - searchKeys(sorted, key, false);
    if (overlay !== undefined) {
      for (const [k, v] of overlay) {
        if (!inRange(k) || k <= key) continue;
        if (objects.has(k)) n--;
        if (v !== null) n++;
      }
    }
    return n;
  }
}

/** What a continue token carries: the list's resourceVersion and the key the next page starts after. */
export interface ContinuePosition {
  /** The resourceVersion every page of the list is read at. */
  rv: number;
  /** The last key of the previous page. */
  after: string;
}

/** Encodes a continue token (opaque to clients: base64 of a small JSON document). */
export function encodeContinue(position: ContinuePosition): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: position.rv, start: position.after }), 'utf8').toString(
    'base64url',
  );
}

/** Decodes a continue token; `undefined` when it is not one of ours. */
export function decodeContinue(token: string): ContinuePosition | undefined {
  try {
    const doc = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { v?: unknown; rv?: unknown; start?: unknown };
    if (doc.v !== 'meta.k8s.io/v1' || typeof doc.rv !== 'number' || typeof doc.start !== 'string') return undefined;
    return { rv: doc.rv, after: doc.start };
  } catch {
    return undefined;
  }
}
