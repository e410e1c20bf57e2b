// jsonLogger: a Logger writing one JSON object per line (time, level, msg and the line's fields), for a cluster's log pipeline.

import { realClock, wallTime, type Clock } from './clock.js';
import { formatWallTime, type Logger, type LogFields } from './log.js';
import { validateOptions, type OptionSchemaFor } from './options.js';

/** The levels of a {@link Logger}, least severe first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** Options of {@link jsonLogger}. */
export interface JsonLoggerOptions {
  /** The least severe level written; lines below it are dropped. Default `'info'`. */
  level?: LogLevel;
  /** Where the lines go: anything with `write(text)` (a file stream, a test's array). Default `process.stdout`. */
  stream?: {
    /** Writes one line (a JSON object and its newline). */
    write(text: string): unknown;
  };
  /** The clock whose wall time stamps each line. Default `realClock`. */
  clock?: Clock;
  /** Fields written on every line (a pod name, a version); a line's own fields win. Default: none. */
  fields?: LogFields;
}

const SCHEMA = {
  level: LEVELS,
  stream: 'object',
  clock: 'clock',
  fields: 'object',
} as const satisfies OptionSchemaFor<JsonLoggerOptions>;

/** The keys every line starts with; a field of the same name is written with a leading `_`. */
const RESERVED = new Set(['time', 'level', 'msg']);

/**
 * A {@link Logger} that writes each line as one JSON object followed by a newline — `time` (ISO 8601,
 * UTC), `level`, `msg`, then the line's {@link LogFields} (`component`, `controller`, `key`,
 * `reconcileID`, `code`, `error`, …; a field left `undefined` is left out, one named `time`, `level` or
 * `msg` is written as `_time`, `_level`, `_msg`) — the shape Loki, Elasticsearch and Cloud Logging
 * parse without a pattern. Lines below `level` are dropped. Pass it as the `logger` option of the
 * factory, the controllers and the Manager.
 *
 * Warning: writes are synchronous only as far as the stream's `write` is (`process.stdout` to a pipe —
 * a container's log — is asynchronous in Node: a process that calls `process.exit()` at once may lose
 * its last lines; let it end by itself).
 *
 * @example
 * ```ts
 * import { jsonLogger } from 'kube-informer/operations';
 * const logger = jsonLogger({ level: 'info' });
 * logger.info('reconciled', { controller: 'backups', key: 'ns/b1' });
 * // {"time":"2026-12-06T10:00:00.000Z","level":"info","msg":"reconciled","controller":"backups","key":"ns/b1"}
 * ```
 */
export function jsonLogger(options: JsonLoggerOptions = {}): Logger {
  validateOptions('jsonLogger', options, SCHEMA);
  const threshold = LEVELS.indexOf(options.level ?? 'info');
  const stream = options.stream ?? process.stdout;
  const clock = options.clock ?? realClock;
  const always = options.fields;
  const line = (level: LogLevel) => (message: string, fields?: LogFields): void => {
    if (LEVELS.indexOf(level) < threshold) return;
    const out: Record<string, string | number | boolean> = { time: formatWallTime(wallTime(clock)), level, msg: message };
    for (const source of [always, fields]) {
      if (source === undefined) continue;
      for (const [k, v] of Object.entries(source)) {
        if (v === undefined) continue;
        out[RESERVED.has(k) ? `_${k}` : k] = typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
      }
    }
    stream.write(`${JSON.stringify(out)}\n`);
  };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}
