// Structured logs: the fields of a line, the console default's logfmt tail, and the pino adapter.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock, realClock } from '../../src/core/clock.js';
import { RateLimitedLog, consoleLogger, errorFields, fieldsFirst, formatClockTime, formatDuration, formatLogLine, silentLogger, withFields, type LogFields, type Logger } from '../../src/core/log.js';
import { InvalidOptionError } from '../../src/core/options.js';

function capture(): { lines: { level: string; message: string; fields?: LogFields }[]; logger: Logger } {
  const lines: { level: string; message: string; fields?: LogFields }[] = [];
  const at = (level: string) => (message: string, fields?: LogFields) => void lines.push({ level, message, fields });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('formatLogLine', () => {
  it('appends the fields after the message as key=value, leaving undefined ones out', () => {
    expect(formatLogLine('reconcile failed', { controller: 'sets', key: 'default/a', attempt: 2, code: undefined })).toBe(
      'reconcile failed controller=sets key=default/a attempt=2',
    );
  });

  it('quotes a value with a space, a quote, an equals sign, or nothing in it', () => {
    expect(formatLogLine('m', { error: 'connect ECONNREFUSED 127.0.0.1:6443', q: 'a"b', eq: 'a=b', empty: '' })).toBe(
      'm error="connect ECONNREFUSED 127.0.0.1:6443" q="a\\"b" eq="a=b" empty=""',
    );
  });

  it('is the message alone without fields', () => {
    expect(formatLogLine('manager stopped', undefined)).toBe('manager stopped');
  });
});

describe('consoleLogger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('prints one readable line per call at the matching console level', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    consoleLogger.warn('list failed', { component: 'informer', name: 'v1/pods' });
    expect(warn).toHaveBeenCalledWith('list failed component=informer name=v1/pods');
  });
});

describe('fieldsFirst', () => {
  it('calls a pino-shaped logger with (fields, message), without undefined fields', () => {
    const calls: unknown[][] = [];
    const pinoLike = {
      debug: (...a: unknown[]) => void calls.push(['debug', ...a]),
      info: (...a: unknown[]) => void calls.push(['info', ...a]),
      warn: (...a: unknown[]) => void calls.push(['warn', ...a]),
      error: (...a: unknown[]) => void calls.push(['error', ...a]),
    };
    const logger = fieldsFirst(pinoLike);
    logger.error('controller stopped', { controller: 'sets', code: 'HANDLER_FAILED', key: undefined });
    logger.info('synced');
    expect(calls).toEqual([
      ['error', { controller: 'sets', code: 'HANDLER_FAILED' }, 'controller stopped'],
      ['info', {}, 'synced'],
    ]);
  });
});

describe('RateLimitedLog with fields', () => {
  it('passes the fields through, and the count of suppressed repeats as a field of the next line', async () => {
    const { lines, logger } = capture();
    const clock = new FakeClock();
    const log = new RateLimitedLog(logger, clock, 1000);
    log.log('warn', 'list:503', 'list failed', { name: 'v1/pods', code: 'API_STATUS' });
    log.log('warn', 'list:503', 'list failed', { name: 'v1/pods', code: 'API_STATUS' });
    log.log('warn', 'list:503', 'list failed', { name: 'v1/pods', code: 'API_STATUS' });
    await clock.advance(1000);
    log.log('warn', 'list:503', 'list failed', { name: 'v1/pods', code: 'API_STATUS' });
    expect(lines).toEqual([
      { level: 'warn', message: 'list failed', fields: { name: 'v1/pods', code: 'API_STATUS' } },
      { level: 'warn', message: 'list failed (and 2 more like it in the last 1 s)', fields: { name: 'v1/pods', code: 'API_STATUS', suppressed: 2 } },
    ]);
  });
});

describe('withFields and errorFields', () => {
  it("adds the base fields to every line; a line's own field wins on a clash", () => {
    const { lines, logger } = capture();
    const log = withFields(logger, { component: 'controller', controller: 'sets' });
    log.info('synced');
    log.warn('failed', { key: 'ns/a', controller: 'other' });
    expect(lines).toEqual([
      { level: 'info', message: 'synced', fields: { component: 'controller', controller: 'sets' } },
      { level: 'warn', message: 'failed', fields: { component: 'controller', controller: 'other', key: 'ns/a' } },
    ]);
    expect(withFields(silentLogger, { a: 1 })).toBe(silentLogger);
  });

  it('describes an error by its stable code and message, and anything else by its text', () => {
    expect(errorFields(new InvalidOptionError('bad'))).toEqual({ code: 'INVALID_OPTION', error: 'bad' });
    expect(errorFields(new Error('plain'))).toEqual({ error: 'plain' });
    expect(errorFields('text')).toEqual({ error: 'text' });
  });
});

describe('formatDuration and formatClockTime: what a log line prints of time', () => {
  it('rounds a measured duration to whole milliseconds', () => {
    expect(formatDuration(5000.655115000001)).toBe('5001 ms');
    expect(formatDuration(0.4)).toBe('0 ms');
    expect(formatDuration(30_000)).toBe('30000 ms');
    expect(formatDuration(Infinity)).toBe('Infinity ms');
  });

  it("prints a clock reading as the wall-clock time of the real clock, not the monotonic reading as a date (issue 47, defect 6)", () => {
    const text = formatClockTime(realClock, realClock.now() + 1600);
    expect(text).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(text) - (Date.now() + 1600))).toBeLessThan(1000);
  });

  it("prints a fake clock's reading on the fake clock's own wall clock", async () => {
    const clock = new FakeClock(0, Date.UTC(2026, 10, 26, 23, 10, 40));
    await clock.advance(600);
    expect(formatClockTime(clock, clock.now() + 1600)).toBe('2026-11-26T23:10:42.200Z');
    expect(formatClockTime(new FakeClock(), 40_000)).toBe('1970-01-01T00:00:40.000Z');
  });

  it('takes the wall clock from performance.timeOrigin for a clock that has no wallNow', () => {
    const clock = { now: () => performance.now(), setTimeout: realClock.setTimeout, clearTimeout: realClock.clearTimeout };
    expect(Math.abs(Date.parse(formatClockTime(clock, clock.now())) - Date.now())).toBeLessThan(1000);
  });
});
