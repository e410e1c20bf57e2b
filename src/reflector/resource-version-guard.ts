// Holds the reflector's resource version and makes sure it only ever moves forward.

import { compareResourceVersion, isComparableResourceVersion } from '../core/resource-version.js';
import { ResourceVersionGuardDisabledError } from './errors.js';

/**
 * The answer of a guard check: `newer`, `same`, `older`, or `unchecked` (no comparison was possible: an
 * empty version, nothing held yet, or the guard is off).
 */
export type GuardVerdict = 'newer' | 'same' | 'older' | 'unchecked';

/**
 * The reflector's resource version, guarded against going backwards (kubernetes #58545 / client-go
 * #338: a DELETE carrying an old version made client-go re-watch from the past and replay events).
 *
 * Versions are compared as unbounded decimal integers (`compareResourceVersion`). The first version that
 * is not one (some aggregated APIs send opaque strings) turns the guard off for good, reported once
 * through `onDisabled`; from then on versions are taken as they come, as client-go does.
 */
export class ResourceVersionGuard {
  readonly #name: string;
  readonly #onDisabled: (warning: ResourceVersionGuardDisabledError) => void;
  #held = '';
  #observed: string | undefined;
  #enabled = true;

  constructor(name: string, onDisabled: (warning: ResourceVersionGuardDisabledError) => void) {
    this.#name = name;
    this.#onDisabled = onDisabled;
  }

  /** The resource version held: the newest accepted from a list, a bookmark or a watch event. */
  held(): string {
    return this.#held;
  }

  /**
   * The newest version of an event applied without being adopted (synthetic ADDED events of a watch
   * started at `""`/`"0"`), or `undefined`. Lists ask not older than it; a watch cannot resume from it.
   */
  observed(): string | undefined {
    return this.#observed;
  }

  /** Notes the version of an event applied without being adopted. */
  observe(rv: string | undefined): void {
    if (!this.#enabled || rv === undefined || !isComparableResourceVersion(rv)) return;
    if (this.#observed === undefined || compareResourceVersion(rv, this.#observed) > 0) this.#observed = rv;
  }

  /** The newer of the held and the observed version (what a list must not be older than). */
  newest(): string {
    const held = this.#held;
    const seen = this.#observed;
    if (seen === undefined || !this.#enabled) return held;
    if (held === '' || !isComparableResourceVersion(held)) return seen;
    return compareResourceVersion(seen, held) > 0 ? seen : held;
  }

  /** False once a non-integer resource version turned the guard off. */
  enabled(): boolean {
    return this.#enabled;
  }

  /** How `rv` orders against the held version. */
  check(rv: string | undefined): GuardVerdict {
    return this.compare(rv, this.#held);
  }

  /** How `rv` orders against `reference` (e.g. the cached copy of the same object). */
  compare(rv: string | undefined, reference: string | undefined): GuardVerdict {
    if (!this.#enabled || rv === undefined || rv === '' || reference === undefined || reference === '') return 'unchecked';
    if (!this.#comparable(rv) || !this.#comparable(reference)) return 'unchecked';
    const order = compareResourceVersion(rv, reference);
    return order < 0 ? 'older' : order === 0 ? 'same' : 'newer';
  }

  /**
   * Takes `rv` as the held version when it is newer (or, with the guard off, whatever it is). Empty
   * versions are ignored. Returns true when the held version changed.
   */
  advance(rv: string | undefined): boolean {
    if (rv === undefined || rv === '' || rv === this.#held) return false;
    if (this.#enabled && this.#held !== '' && this.#comparable(rv) && this.#comparable(this.#held)) {
      if (compareResourceVersion(rv, this.#held) <= 0) return false;
    } else if (this.#enabled && this.#held === '') {
      this.#comparable(rv);
    }
    this.#held = rv;
    return true;
  }

  /**
   * Replaces the held version even when older. Only for a consistent list (`resourceVersion: ""`) that
   * answered older than what was held: the server's history really went back (etcd restored from a
   * backup), and the consistent read is the truth.
   */
  reset(rv: string): void {
    if (rv !== '') {
      if (this.#enabled) this.#comparable(rv);
      this.#held = rv;
    }
  }

  /** True when `rv` can be ordered; otherwise turns the guard off (warning once) and returns false. */
  #comparable(rv: string): boolean {
    if (isComparableResourceVersion(rv)) return true;
    if (this.#enabled) {
      this.#enabled = false;
      this.#onDisabled(new ResourceVersionGuardDisabledError(this.#name, rv));
    }
    return false;
  }
}
