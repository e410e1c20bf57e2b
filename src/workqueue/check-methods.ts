// A construction-time check of the work queues' options: that an option holds an object with the methods its interface needs.

import { describeValue, InvalidOptionError } from '../core/options.js';
import { preview } from '../core/preview.js';

/**
 * Throws {@link InvalidOptionError} (code `INVALID_OPTION`) naming `owner` and `option` unless `value`
 * is `undefined` (the option takes its default) or an object — a plain object or a class instance —
 * whose `methods` are all functions. `validateOptions` checks the types of the fields it is given but
 * not that they are present; this closes that gap for interface-typed options (a rate limiter, a queue
 * strategy, a metrics provider), so a wrong value fails at construction and not at first use.
 *
 * Internal to the workqueue room (not re-exported by its barrel).
 */
export function checkMethods(owner: string, option: string, value: unknown, what: string, methods: readonly string[]): void {
  if (value === undefined) return;
  const expected = `a ${what} (an object with ${methods.join(', ')})`;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionError(`${owner}: option ${option} must be ${expected}, got ${describeValue(value)}`);
  }
  const record = value as Record<string, unknown>;
  const missing = methods.filter((m) => typeof record[m] !== 'function');
  if (missing.length > 0) {
    throw new InvalidOptionError(
      `${owner}: option ${option} must be ${expected}, got an object whose ${missing.join(', ')} ${missing.length === 1 ? 'is not a function' : 'are not functions'}: ${preview(value, 60)}`,
    );
  }
}

