// Logging: the injectable logger and the rate limiter that keeps a retry loop from flooding it.

import { wallTime, type Clock } from './clock.js';

/**
 * The fields of one log line, for the JSON log pipelines clusters run: `component` (`informer`,
 * `controller`, `manager`, …), its `name`, and where they apply `controller`, `resource`, `key`,
 * `reconcileID`, `attempt`, `code` (an error's stable code) and `error` (its message). A field whose
 * value is `undefined` is left out.
 */
export interface LogFields {
  readonly [field: string]: string | number | boolean | undefined;
}

/**
 * Where the library writes what a person should see: the `{ debug, info, warn, error }` shape of
 * `console` and winston. Each method receives a readable message and, as its second argument, the
 * line's {@link LogFields} — winston's `(message, meta)` order, so a logger that takes one string
 * still works (it ignores the fields). For pino or bunyan, whose order is `(fields, message)`, wrap
 * the logger with {@link fieldsFirst}.
 */
export interface Logger {
  /** Detail for debugging (syncs, recoveries). */
  debug(message: string, fields?: LogFields): void;
  /** Normal but noteworthy events. */
  info(message: string, fields?: LogFields): void;
  /** A failure the library retries: something is wrong, and it may fix itself. */
  warn(message: string, fields?: LogFields): void;
  /** A failure that stops something or makes a wait reject. */
  error(message: string, fields?: LogFields): void;
}

/** A logger whose methods take the fields first: pino's and bunyan's `(fields, message)` shape. */
export interface FieldsFirstLogger {
  /** `debug(fields, message)`. */
  debug(fields: LogFields, message: string): void;
  /** `info(fields, message)`. */
  info(fields: LogFields, message: string): void;
  /** `warn(fields, message)`. */
  warn(fields: LogFields, message: string): void;
  /** `error(fields, message)`. */
  error(fields: LogFields, message: string): void;
}

/**
 * Adapts a pino (or bunyan) logger to the `logger` option: each line becomes `target.level(fields,
 * message)`, so the fields are the JSON line's keys.
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * import { fieldsFirst } from 'kube-informer/operations';
 * const factory = new SharedInformerFactory(kc, { logger: fieldsFirst(pino()) });
 * ```
 */
export function fieldsFirst(target: FieldsFirstLogger): Logger {
  return {
    debug: (message, fields) => target.debug(definedFields(fields), message),
    info: (message, fields) => target.info(definedFields(fields), message),
    warn: (message, fields) => target.warn(definedFields(fields), message),
    error: (message, fields) => target.error(definedFields(fields), message),
  };
}

function definedFields(fields: LogFields | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (fields !== undefined) for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * `message key=value …`: a line a person reads, with the fields after it in logfmt style (a value
 * with a space, a quote or `=` is quoted). What the default console logger prints.
 */
export function formatLogLine(message: string, fields: LogFields | undefined): string {
  if (fields === undefined) return message;
  let out = message;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    const text = String(v);
    out += ` ${k}=${text === '' || /[\s"=]/.test(text) ? JSON.stringify(text) : text}`;
  }
  return out;
}

/**
 * A duration as a message prints it: whole milliseconds (`5001 ms`), however precise the clock
 * readings it was measured from. Every duration in a log line or error message goes through it.
 */
export function formatDuration(ms: number): string {
  return `${Number.isFinite(ms) ? Math.round(ms) : ms} ms`;
}

/**
 * A reading of `clock` as a message prints it: its wall-clock time, ISO 8601 in UTC
 * (`2026-11-26T23:10:42.186Z`), through {@link wallTime} so a fake clock's dates are its own.
 */
export function formatClockTime(clock: Clock, at: number): string {
  return formatWallTime(wallTime(clock, at));
}

/** A wall-clock time (ms since the Unix epoch) as {@link formatClockTime} prints it. */
export function formatWallTime(epochMs: number): string {
  return new Date(Math.round(epochMs)).toISOString();
}

/** The default logger: `console`, each line as {@link formatLogLine} writes it. */
export const consoleLogger: Logger = {
  debug: (message, fields) => console.debug(formatLogLine(message, fields)),
  info: (message, fields) => console.info(formatLogLine(message, fields)),
  warn: (message, fields) => console.warn(formatLogLine(message, fields)),
  error: (message, fields) => console.error(formatLogLine(message, fields)),
};

/** The `logger` option: a {@link Logger}, or `false` to print nothing. Default: `console`. */
export type LoggerOption = Logger | false;

/**
 * A logger that adds `fields` to every line it passes to `logger` (a line's own fields win on a clash):
 * how a controller's lines all carry `controller`, and a reconcile's lines its `key` and `reconcileID`.
 */
export function withFields(logger: Logger, fields: LogFields): Logger {
  if (logger === silentLogger) return logger;
  const merge = (own: LogFields | undefined): LogFields => (own === undefined ? fields : { ...fields, ...own });
  return {
    debug: (message, own) => logger.debug(message, merge(own)),
    info: (message, own) => logger.info(message, merge(own)),
    warn: (message, own) => logger.warn(message, merge(own)),
    error: (message, own) => logger.error(message, merge(own)),
  };
}

/** The fields that describe a failure: `code` (its stable code, when it has one) and `error` (its message). */
export function errorFields(err: unknown): { code?: string; error: string } {
  if (!(err instanceof Error)) return { error: String(err) };
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? { code, error: err.message } : { error: err.message };
}

/** A logger that drops everything (what `logger: false` means). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** Resolves the `logger` option: `undefined` → {@link consoleLogger}, `false` → {@link silentLogger}. */
export function resolveLogger(option: LoggerOption | undefined): Logger {
  if (option === false) return silentLogger;
  return option ?? consoleLogger;
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

  /**
   * Logs `message` (with `fields`) at `level` unless `reason` was logged within the interval (then it
   * is counted; the count goes into the next line's message and its `suppressed` field).
   */
  log(level: keyof Logger, reason: string, message: string, fields?: LogFields): void {
    const now = this.#clock.now();
    const entry = this.#entries.get(reason);
    if (entry !== undefined && now - entry.lastLoggedAt < this.#intervalMs) {
      entry.suppressed++;
      return;
    }
    const seconds = Math.round(this.#intervalMs / 1000);
    const more = entry !== undefined && entry.suppressed > 0 ? ` (and ${entry.suppressed} more like it in the last ${seconds} s)` : '';
    this.#entries.set(reason, { lastLoggedAt: now, suppressed: 0 });
    const suppressed = entry !== undefined && entry.suppressed > 0 ? entry.suppressed : undefined;
    this.#logger[level](`${message}${more}`, suppressed === undefined ? fields : { ...fields, suppressed });
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
