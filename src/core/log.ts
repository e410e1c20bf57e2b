// Logging: the injectable logger and the rate limiter that keeps a retry loop from flooding it.

import type { Clock } from './clock.js';

/**
 * Where the library writes what a person should see: the `{ debug, info, warn, error }` shape that
 * `console`, pino and winston loggers all fit. Each method receives one preformatted string.
 */
export interface Logger {
  /** Detail for debugging (syncs, recoveries). */
  debug(message: string): void;
  /** Normal but noteworthy events. */
  info(message: string): void;
  /** A failure the library retries: something is wrong, and it may fix itself. */
  warn(message: string): void;
  /** A failure that stops something or makes a wait reject. */
  error(message: string): void;
}

/** The `logger` option: a {@link Logger}, or `false` to print nothing. Default: `console`. */
export type LoggerOption = Logger | false;

/** A logger that drops everything (what `logger: false` means). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** Resolves the `logger` option: `undefined` → `console`, `false` → {@link silentLogger}. */
export function resolveLogger(option: LoggerOption | undefined): Logger {
  if (option === false) return silentLogger;
  return option ?? console;
}

/** How often a repeating message is logged again, with a count, in ms: 30 000. */
export const LOG_REPEAT_INTERVAL_MS = 30_000;

interface Entry {
  lastLoggedAt: number;
  suppressed: number;
}

/**
 * Rate-limits log lines by reason: the first occurrence of a reason is logged at once; repeats inside
 * {@link LOG_REPEAT_INTERVAL_MS} are counted, and the next occurrence after it is logged with that
 * count (`… (and 12 more like it in the last 30 s)`). No timer: a reason that stops occurring stops
 * logging. `reset(reason)` forgets a reason (after a recovery), so its next failure logs at once.
 */
export class RateLimitedLog {
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #entries = new Map<string, Entry>();

  /** `intervalMs` defaults to {@link LOG_REPEAT_INTERVAL_MS}. */
  constructor(logger: Logger, clock: Clock, intervalMs = LOG_REPEAT_INTERVAL_MS) {
    this.#logger = logger;
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  /** Logs `message` at `level` unless `reason` was logged within the interval (then it is counted). */
  log(level: keyof Logger, reason: string, message: string): void {
    const now = this.#clock.now();
    const entry = this.#entries.get(reason);
    if (entry !== undefined && now - entry.lastLoggedAt < this.#intervalMs) {
      entry.suppressed++;
      return;
    }
    const seconds = Math.round(this.#intervalMs / 1000);
    const more = entry !== undefined && entry.suppressed > 0 ? ` (and ${entry.suppressed} more like it in the last ${seconds} s)` : '';
    this.#entries.set(reason, { lastLoggedAt: now, suppressed: 0 });
    this.#logger[level](`${message}${more}`);
  }

  /** Forgets every reason (or only those starting with `prefix`), so the next occurrence logs at once. */
  reset(prefix = ''): void {
    for (const reason of [...this.#entries.keys()]) if (reason.startsWith(prefix)) this.#entries.delete(reason);
  }

  /** The logger lines go to. */
  get logger(): Logger {
    return this.#logger;
  }
}
