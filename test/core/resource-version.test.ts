import { describe, expect, it } from 'vitest';
import {
  InvalidResourceVersionError,
  compareResourceVersion,
  isComparableResourceVersion,
  maxResourceVersion,
} from '../../src/core/index.js';

describe('compareResourceVersion', () => {
  it('orders by numeric value, not by string order', () => {
    expect(compareResourceVersion('9', '10')).toBeLessThan(0);
    expect(compareResourceVersion('10', '9')).toBeGreaterThan(0);
    expect(compareResourceVersion('123', '123')).toBe(0);
  });

  it('orders versions far beyond 2^53 exactly', () => {
    const a = '123456789012345678901234567890';
    const b = '123456789012345678901234567891';
    expect(compareResourceVersion(a, b)).toBeLessThan(0);
    // Number() would call these equal:
    expect(Number('9007199254740993') === Number('9007199254740992')).toBe(true);
    expect(compareResourceVersion('9007199254740993', '9007199254740992')).toBeGreaterThan(0);
  });

  it('accepts "0" as the smallest version', () => {
    expect(compareResourceVersion('0', '1')).toBeLessThan(0);
    expect(compareResourceVersion('0', '0')).toBe(0);
  });

  it.each([['007'], [''], ['-1'], ['+1'], ['1.5'], ['abc'], ['1e3'], [' 1'], ['1 ']])(
    'rejects the non-comparable version %j with INVALID_RESOURCE_VERSION',
    (bad) => {
      expect(() => compareResourceVersion(bad, '1')).toThrow(InvalidResourceVersionError);
      expect(() => compareResourceVersion('1', bad)).toThrow(
        expect.objectContaining({ code: 'INVALID_RESOURCE_VERSION', resourceVersion: bad }),
      );
    },
  );

  it('lets callers tell "not comparable" apart from "older" before comparing', () => {
    expect(isComparableResourceVersion('12')).toBe(true);
    expect(isComparableResourceVersion('opaque-v1')).toBe(false);
    expect(isComparableResourceVersion(12)).toBe(false);
  });

  it('agrees with BigInt ordering on random pairs', () => {
    let seed = 12345;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const gen = (): string => {
      const len = 1 + Math.floor(rnd() * 25);
      let s = String(1 + Math.floor(rnd() * 9));
      for (let i = 1; i < len; i++) s += String(Math.floor(rnd() * 10));
      return s;
    };
    for (let i = 0; i < 2000; i++) {
      const a = gen();
      const b = gen();
      const expected = BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
      expect(Math.sign(compareResourceVersion(a, b)), `seed pair ${a} ${b}`).toBe(expected);
    }
  });

  it('picks the newer of two versions', () => {
    expect(maxResourceVersion('99', '100')).toBe('100');
    expect(maxResourceVersion('100', '99')).toBe('100');
  });
});
