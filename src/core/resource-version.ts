// Resource-version comparison as unbounded decimal integers, without Number().

import { InvalidResourceVersionError } from './errors.js';
import { preview } from './preview.js';


/**
 * True when `rv` is a resource version that can be ordered: a decimal integer with no sign, no
 * leading zeros and no other characters (`"0"` alone is allowed). Kubernetes 1.35 made resource
 * versions of one resource comparable this way; aggregated APIs may still send opaque ones.
 */
export function isComparableResourceVersion(rv: unknown): rv is string {
  if (typeof rv !== 'string') return false;
  const n = rv.length;
  if (n === 0) return false;
  if (n === 1) return rv.charCodeAt(0) >= 48 && rv.charCodeAt(0) <= 57; // '0'..'9'
  // A character loop, not a regular expression: it runs two or three times per watch event.
  let c = rv.charCodeAt(0);
  if (c < 49 || c > 57) return false; // '1'..'9': no leading zero, no sign
  for (let i = 1; i < n; i++) {
    c = rv.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function check(rv: string, which: string): void {
  if (!isComparableResourceVersion(rv)) {
    throw new InvalidResourceVersionError(
      String(rv),
      `resource version ${which} is not comparable (expected a decimal integer without leading zeros): ${preview(rv, 60)}`,
    );
  }
}

/**
 * Orders two resource versions as unbounded decimal integers: negative when `a` is older, zero when
 * equal, positive when `a` is newer. Compares by length, then digit by digit, so versions beyond
 * 2^53 order correctly.
 *
 * Throws {@link InvalidResourceVersionError} (code `INVALID_RESOURCE_VERSION`) when either is not
 * comparable, so callers can tell "not comparable" apart from "older". Use
 * {@link isComparableResourceVersion} to check first.
 */
export function compareResourceVersion(a: string, b: string): number {
  check(a, 'a');
  check(b, 'b');
  return compareComparable(a, b);
}

/**
 * {@link compareResourceVersion} for two versions already known to be comparable (checked with
 * {@link isComparableResourceVersion}): the same order, without checking them again. Given anything
 * else, its answer means nothing.
 */
export function compareComparable(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The newer of two comparable resource versions. */
export function maxResourceVersion(a: string, b: string): string {
  return compareResourceVersion(a, b) >= 0 ? a : b;
}
