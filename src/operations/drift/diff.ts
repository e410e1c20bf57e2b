// The drift audit's comparison: the server's keys and resource versions at one list's version, against the cache's.

import { compareResourceVersion, isComparableResourceVersion } from '../../core/resource-version.js';

/**
 * How a key differs: `missing` — the server has it, the cache does not (a missed ADDED); `extra` — the
 * cache has it at or before the list's version, the server does not (a missed DELETED); `stale` — the
 * cache holds an older version than the server listed (a missed MODIFIED).
 */
export type DriftKind = 'missing' | 'extra' | 'stale';

/** One key that differs. */
export interface Divergence {
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  readonly key: string;
  /** How it differs. */
  readonly kind: DriftKind;
  /** The resource version the list had (`undefined` for `extra`). */
  readonly serverResourceVersion: string | undefined;
  /** The resource version the cache holds (`undefined` for `missing`). */
  readonly cachedResourceVersion: string | undefined;
}

/** The cache as the comparison reads it: its keys, and the resource version it holds for one. */
export interface CacheView {
  /** Every key the cache holds. */
  keys(): Iterable<string>;
  /** The resource version held for `key` (`""` when the object has none), `undefined` when absent. */
  versionOf(key: string): string | undefined;
}

/** -1, 0 or 1; versions that are not comparable (not integers) only compare as equal or not (then 1). */
function order(a: string, b: string): number {
  if (isComparableResourceVersion(a) && isComparableResourceVersion(b)) return compareResourceVersion(a, b);
  return a === b ? 0 : 1;
}

/**
 * Compares a list read at resource version `listRv` (`listed`: key → resource version) with `cache`.
 * A key the cache holds newer than listed, or holds only at a version after `listRv`, changed after the
 * list: it does not count. With `only`, just those keys are compared (a second look at suspects).
 * Every key the result names is a divergence only once the cache has applied everything up to `listRv`
 * (`awaitResourceVersion`); before that, it is a suspect.
 */
export function diffAgainstCache(listed: ReadonlyMap<string, string>, listRv: string, cache: CacheView, only?: Iterable<string>): Divergence[] {
  const out: Divergence[] = [];
  const check = (key: string): void => {
    const server = listed.get(key);
    const cached = cache.versionOf(key);
    if (server === undefined) {
      if (cached !== undefined && order(cached, listRv) <= 0) out.push({ key, kind: 'extra', serverResourceVersion: undefined, cachedResourceVersion: cached });
    } else if (cached === undefined) {
      out.push({ key, kind: 'missing', serverResourceVersion: server, cachedResourceVersion: undefined });
    } else if (order(cached, server) < 0 || (cached !== server && !isComparableResourceVersion(cached))) {
      out.push({ key, kind: 'stale', serverResourceVersion: server, cachedResourceVersion: cached });
    }
  };
  if (only !== undefined) {
    for (const key of only) check(key);
    return out;
  }
  for (const key of listed.keys()) check(key);
  for (const key of cache.keys()) if (!listed.has(key)) check(key);
  return out;
}

/** Counts by kind. */
export function countByKind(divergences: readonly Divergence[]): Record<DriftKind, number> {
  const counts: Record<DriftKind, number> = { missing: 0, extra: 0, stale: 0 };
  for (const d of divergences) counts[d.kind]++;
  return counts;
}

/** `ns/a (stale: cache 5, server 9), ns/b (missing), …` — the first `limit` divergences, for a log line. */
export function describeDivergences(divergences: readonly Divergence[], limit: number): string {
  const shown = divergences.slice(0, limit).map((d) => {
    switch (d.kind) {
      case 'missing': return `${d.key} (missing: server ${d.serverResourceVersion ?? ''})`;
      case 'extra': return `${d.key} (extra: cache ${d.cachedResourceVersion ?? ''})`;
      case 'stale': return `${d.key} (stale: cache ${d.cachedResourceVersion ?? ''}, server ${d.serverResourceVersion ?? ''})`;
    }
  });
  const more = divergences.length - shown.length;
  return shown.join(', ') + (more > 0 ? `, and ${more} more` : '');
}
