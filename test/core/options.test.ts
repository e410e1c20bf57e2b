// The one option validator, the field-selector grammar and the rate-limited log.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { parseFieldSelector } from '../../src/core/field-selector.js';
import { RateLimitedLog, consoleLogger, resolveLogger, silentLogger, type Logger } from '../../src/core/log.js';
import { InvalidOptionError, validateGroupVersionResource, validateOptions } from '../../src/core/options.js';
import { newListWatch } from '../../src/listwatch/index.js';

describe('validateOptions', () => {
  const schema = {
    periodMs: 'duration',
    timeoutMs: 'positiveDuration',
    retries: 'count',
    workers: 'positiveCount',
    name: 'string',
    enabled: 'boolean',
    hook: 'function',
    policy: ['stop', 'report'],
    nested: { limitMs: 'duration' },
    labelSelector: 'labelSelector',
    fieldSelector: 'fieldSelector',
  } as const;

  it('accepts undefined options, undefined fields and values in range', () => {
    expect(() => validateOptions('Thing', undefined, schema)).not.toThrow();
    expect(() =>
      validateOptions('Thing', { periodMs: 0, timeoutMs: 1.5, retries: 0, workers: 2, name: '', enabled: false, hook: () => {}, policy: 'report', nested: {}, labelSelector: 'app in (a,b),!legacy', fieldSelector: 'spec.nodeName=n1,status.phase!=Running' }, schema),
    ).not.toThrow();
  });

  const bad: Array<[Record<string, unknown>, string]> = [
    [{ periodMs: -1 }, 'Thing: option periodMs must be a finite number of milliseconds >= 0, got -1'],
    [{ periodMs: Number.NaN }, 'Thing: option periodMs must be a finite number of milliseconds >= 0, got NaN'],
    [{ periodMs: '10' }, 'Thing: option periodMs must be a finite number of milliseconds >= 0, got "10"'],
    [{ timeoutMs: 0 }, 'Thing: option timeoutMs must be a finite number of milliseconds > 0, got 0'],
    [{ retries: 1.5 }, 'Thing: option retries must be a whole number >= 0, got 1.5'],
    [{ workers: 0 }, 'Thing: option workers must be a whole number >= 1, got 0'],
    [{ name: 3 }, 'Thing: option name must be a string, got 3'],
    [{ enabled: 'yes' }, 'Thing: option enabled must be a boolean, got "yes"'],
    [{ hook: {} }, 'Thing: option hook must be a function, got {}'],
    [{ policy: 'ignore' }, "Thing: option policy must be one of 'stop', 'report', got \"ignore\""],
    [{ nested: 5 }, 'Thing: option nested must be an object, got 5'],
    [{ nested: { limitMs: -2 } }, 'Thing: option nested.limitMs must be a finite number of milliseconds >= 0, got -2'],
  ];
  for (const [options, message] of bad) {
    it(`rejects ${JSON.stringify(options) ?? String(options)} with INVALID_OPTION`, () => {
      expect(() => validateOptions('Thing', options, schema)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message }));
      expect(() => validateOptions('Thing', options, schema)).toThrow(InvalidOptionError);
    });
  }

  it('rejects a non-object options argument', () => {
    expect(() => validateOptions('Thing', 'fast', schema)).toThrow('Thing: options must be an object, got "fast"');
    expect(() => validateOptions('Thing', [1], schema)).toThrow(/options must be an object, got an array/);
  });

  for (const labelSelector of ['app in (web', 'app=we b', '!!']) {
    it(`rejects the label selector ${JSON.stringify(labelSelector)} with INVALID_SELECTOR naming owner and option`, () => {
      expect(() => validateOptions('Thing', { labelSelector }, schema)).toThrow(
        expect.objectContaining({ code: 'INVALID_SELECTOR', kind: 'label', message: expect.stringMatching(/^invalid label selector .* at position \d+: .*\(Thing option labelSelector\)$/) }),
      );
    });
  }
});

describe('parseFieldSelector', () => {
  it('parses terms as the API server does, with escapes', () => {
    expect(parseFieldSelector('')).toEqual([]);
    expect(parseFieldSelector('metadata.name=a,spec.nodeName!=n1, status.phase==Running')).toEqual([
      { field: 'metadata.name', operator: '=', value: 'a' },
      { field: 'spec.nodeName', operator: '!=', value: 'n1' },
      { field: 'status.phase', operator: '==', value: 'Running' },
    ]);
    expect(parseFieldSelector('metadata.name=a\\,b\\=c\\\\')).toEqual([{ field: 'metadata.name', operator: '=', value: 'a,b=c\\' }]);
    expect(parseFieldSelector('spec.nodeName=')).toEqual([{ field: 'spec.nodeName', operator: '=', value: '' }]);
  });

  const bad: Array<[string, RegExp]> = [
    ['spec.nodeName', /cannot understand "spec.nodeName"/],
    ['=x', /has no field name/],
    ['a=b,,c=d', /empty term/],
    ['a=b=c', /"=" in a value must be escaped/],
    ['a=\\x', /invalid escape sequence/],
  ];
  for (const [text, reason] of bad) {
    it(`rejects ${JSON.stringify(text)} with INVALID_SELECTOR`, () => {
      expect(() => parseFieldSelector(text)).toThrow(expect.objectContaining({ code: 'INVALID_SELECTOR', kind: 'field', message: expect.stringMatching(reason) }));
    });
  }
});

describe('validateGroupVersionResource', () => {
  it('accepts the core group and named groups', () => {
    expect(() => validateGroupVersionResource('x', { group: '', version: 'v1', resource: 'pods' })).not.toThrow();
    expect(() => validateGroupVersionResource('x', { group: 'apps', version: 'v1', resource: 'deployments' })).not.toThrow();
  });

  it('rejects what would only fail later as a 404 on every request', () => {
    expect(() => validateGroupVersionResource('x', { group: '', version: 'v1', resource: 'Pod' })).toThrow(/lower-case plural resource name/);
    expect(() => validateGroupVersionResource('x', { group: 'apps/v1', version: 'v1', resource: 'deployments' })).toThrow(/option group/);
    expect(() => validateGroupVersionResource('x', { group: '', version: '', resource: 'pods' })).toThrow(/option version/);
    expect(() => validateGroupVersionResource('x', { version: 'v1', resource: 'pods' })).toThrow(/option group/);
    expect(() => validateGroupVersionResource('x', 'pods')).toThrow(/option resource must be a \{ group, version, resource \} object/);
  });

  it('is applied by newListWatch before any request', () => {
    const kc = { getCurrentCluster: () => null } as never;
    expect(() => newListWatch(kc, { group: '', version: 'v1', resource: 'Pod' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => newListWatch(kc, { group: '', version: 'v1', resource: 'pods' }, { labelSelector: 'app in (web' })).toThrow(
      expect.objectContaining({ code: 'INVALID_SELECTOR', message: expect.stringMatching(/newListWatch option labelSelector/) }),
    );
    expect(() => newListWatch(kc, { group: '', version: 'v1', resource: 'pods' }, { fieldSelector: 'spec.nodeName' })).toThrow(
      expect.objectContaining({ code: 'INVALID_SELECTOR', kind: 'field' }),
    );
  });
});

describe('RateLimitedLog', () => {
  function recorder(): Logger & { lines: string[] } {
    const lines: string[] = [];
    const push = (m: string): void => void lines.push(m);
    return { lines, debug: push, info: push, warn: push, error: push };
  }

  it('logs the first occurrence at once, counts repeats, and logs the count after the interval', async () => {
    const clock = new FakeClock();
    const logger = recorder();
    const log = new RateLimitedLog(logger, clock);
    log.log('warn', 'a', 'first');
    log.log('warn', 'a', 'second');
    log.log('warn', 'b', 'other reason');
    await clock.advance(29_999);
    log.log('warn', 'a', 'third');
    expect(logger.lines).toEqual(['first', 'other reason']);
    await clock.advance(1);
    log.log('warn', 'a', 'fourth');
    expect(logger.lines).toEqual(['first', 'other reason', 'fourth (and 2 more like it in the last 30 s)']);
    log.reset();
    log.log('warn', 'a', 'after reset');
    expect(logger.lines.at(-1)).toBe('after reset');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves the logger option: console by default, nothing with false', () => {
    expect(resolveLogger(undefined)).toBe(consoleLogger);
    expect(resolveLogger(false)).toBe(silentLogger);
    const mine = recorder();
    expect(resolveLogger(mine)).toBe(mine);
  });
});
