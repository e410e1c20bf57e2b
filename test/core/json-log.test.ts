// jsonLogger: one JSON object per line — time, level, msg, then the fields — a level threshold, a stream.
import { describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/core/json-log.js';
import { FakeClock } from '../../src/core/clock.js';

function sink(): { lines: string[]; stream: { write(text: string): void } } {
  const lines: string[] = [];
  return { lines, stream: { write: (text: string) => void lines.push(text) } };
}

describe('jsonLogger', () => {
  it('writes one JSON object per line: time (UTC, from the clock), level, msg, then the fields; undefined fields left out', () => {
    const out = sink();
    const logger = jsonLogger({ stream: out.stream, clock: new FakeClock(0, Date.UTC(2026, 11, 6, 10)) });
    logger.info('reconciled', { controller: 'backups', key: 'ns/b1', attempt: 2, ok: true, error: undefined });
    expect(out.lines).toEqual(['{"time":"2026-12-06T10:00:00.000Z","level":"info","msg":"reconciled","controller":"backups","key":"ns/b1","attempt":2,"ok":true}\n']);
  });

  it("drops lines below the level (default 'info'); every line is one line, whatever the message holds", () => {
    const out = sink();
    const logger = jsonLogger({ stream: out.stream });
    logger.debug('hidden');
    logger.warn('two\nlines "quoted"');
    const debug = sink();
    jsonLogger({ stream: debug.stream, level: 'debug' }).debug('shown');
    const errorsOnly = sink();
    const quiet = jsonLogger({ stream: errorsOnly.stream, level: 'error' });
    quiet.warn('no');
    quiet.error('yes');
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0].split('\n')).toHaveLength(2); // the text, and the empty rest after the final newline
    expect(JSON.parse(out.lines[0])).toMatchObject({ level: 'warn', msg: 'two\nlines "quoted"' });
    expect(debug.lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['shown']);
    expect(errorsOnly.lines.map((l) => (JSON.parse(l) as { level: string }).level)).toEqual(['error']);
  });

  it('adds the fields of every line (a line’s own win), renames a field named time, level or msg, and writes a non-finite number as text', () => {
    const out = sink();
    jsonLogger({ stream: out.stream, fields: { pod: 'p-1', component: 'default' } }).error('x', { component: 'manager', msg: 'clash', level: 'clash', waitMs: Infinity });
    expect(JSON.parse(out.lines[0])).toMatchObject({ level: 'error', msg: 'x', pod: 'p-1', component: 'manager', _msg: 'clash', _level: 'clash', waitMs: 'Infinity' });
  });

  it('refuses a bad option naming it', () => {
    expect(() => jsonLogger({ level: 'verbose' as never })).toThrow(/jsonLogger: option level/);
    expect(() => jsonLogger({ levle: 'info' } as never)).toThrow(/jsonLogger: unknown option levle \(did you mean level\?\)/);
  });
});
