// The reflector's resource version as a value, and the pure rules that keep it moving only forward.

import { compareResourceVersion, isComparableResourceVersion } from '../core/resource-version.js';

/**
 * The resource-version part of the reflector's state (kubernetes #58545 / client-go #338: a DELETE
 * carrying an old version made client-go re-watch from the past and replay events). Immutable: every
 * rule below returns a new value.
 *
 * Versions are compared as unbounded decimal integers. The first version that is not one (some
 * aggregated APIs send opaque strings) turns the guard off for good; from then on versions are taken as
 * they come, as client-go does.
 */
export interface Versions {
  /** The version held: the newest accepted from a list, a bookmark or a watch event; `""` at first. */
  readonly held: string;
  /**
   * The newest version of an event applied without being adopted (the synthetic ADDED events of a watch
   * opened at `""`/`"0"`), or `undefined`. A list asks not older than it; a watch cannot resume from it.
   */
  readonly observed: string | undefined;
  /** False once a version that is not a decimal integer turned the guard off. */
  readonly enabled: boolean;
}

/** How a version orders against another; `unchecked` when no comparison was possible. */
export type Order = 'newer' | 'same' | 'older' | 'unchecked';

/**
 * A rule's answer: the new versions, and the version that turned the guard off when this call did
 * (the caller reports it, once).
 */
export interface VersionsAfter {
  /** The versions after the rule. */
  readonly versions: Versions;
  /** Set when this call met the first non-integer version and turned the guard off. */
  readonly disabledBy?: string;
}

/** The answer of {@link compare}: the order, and the versions after the check. */
export interface Comparison extends VersionsAfter {
  /** How the version orders against the reference. */
  readonly order: Order;
}

/** The versions of a reflector that has seen nothing yet. */
export const NO_VERSIONS: Versions = { held: '', observed: undefined, enabled: true };

/** `v` with the guard turned off by `rv`, holding `held`. */
function disabled(v: Versions, rv: string, held: string): VersionsAfter {
  return { versions: { held, observed: v.observed, enabled: false }, disabledBy: rv };
}

/** How `rv` orders against `reference` (the held version, or the cached copy's); may turn the guard off. */
export function compare(v: Versions, rv: string | undefined, reference: string | undefined): Comparison {
  if (!v.enabled || rv === undefined || rv === '' || reference === undefined || reference === '') return { order: 'unchecked', versions: v };
  if (!isComparableResourceVersion(rv)) return { order: 'unchecked', ...disabled(v, rv, v.held) };
  if (!isComparableResourceVersion(reference)) return { order: 'unchecked', ...disabled(v, reference, v.held) };
  const c = compareResourceVersion(rv, reference);
  return { order: c < 0 ? 'older' : c === 0 ? 'same' : 'newer', versions: v };
}

/**
 * Takes `rv` as the held version when it is newer (or, with the guard off, whatever it is). An empty
 * version changes nothing.
 */
export function advance(v: Versions, rv: string | undefined): VersionsAfter {
  if (rv === undefined || rv === '' || rv === v.held) return { versions: v };
  if (v.enabled) {
    if (!isComparableResourceVersion(rv)) return disabled(v, rv, rv);
    if (v.held !== '') {
      if (!isComparableResourceVersion(v.held)) return disabled(v, v.held, rv);
      if (compareResourceVersion(rv, v.held) <= 0) return { versions: v };
    }
  }
  return { versions: { held: rv, observed: v.observed, enabled: v.enabled } };
}

/** Notes the version of an event applied without being adopted (never turns the guard off). */
export function observe(v: Versions, rv: string | undefined): Versions {
  if (!v.enabled || rv === undefined || !isComparableResourceVersion(rv)) return v;
  if (v.observed !== undefined && compareResourceVersion(rv, v.observed) <= 0) return v;
  return { held: v.held, observed: rv, enabled: v.enabled };
}

/** The newer of the held and the observed version: what a list must not be older than. */
export function newest(v: Versions): string {
  const seen = v.observed;
  if (seen === undefined || !v.enabled) return v.held;
  if (v.held === '' || !isComparableResourceVersion(v.held)) return seen;
  return compareResourceVersion(seen, v.held) > 0 ? seen : v.held;
}

/**
 * Replaces the held version even when older. Only for a consistent list (`resourceVersion: ""`) that
 * answered older than held: the server's history really went back (etcd restored from a backup).
 */
export function reset(v: Versions, rv: string): VersionsAfter {
  if (rv === '') return { versions: v };
  if (v.enabled && !isComparableResourceVersion(rv)) return disabled(v, rv, rv);
  return { versions: { held: rv, observed: v.observed, enabled: v.enabled } };
}
