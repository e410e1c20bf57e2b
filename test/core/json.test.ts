// The JSON toolkit's ground: isObject, deepEqual (own keys, prototype-named keys), member writes, RFC 6901 pointers.

import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import fastDeepEqual from 'fast-deep-equal';
import {
  arrayIndexOf,
  deepEqual,
  ErrorCodes,
  escapeJsonPointerToken,
  formatJsonPointer,
  getMember,
  isObject,
  JsonPointerError,
  parseJsonPointer,
  setMember,
} from '../../src/core/index.js';

const parse = (text: string): unknown => JSON.parse(text);

describe('isObject', () => {
  it('is true for plain objects, from any realm, and false for arrays, null, dates, buffers, maps and class instances', () => {
    expect([{}, parse('{"a":1}'), Object.create(null), structuredClone({ a: 1 }), runInNewContext('({ a: 1 })')].every(isObject)).toBe(true);
    class Thing {}
    expect([[], null, undefined, 'x', 1, new Date(), Buffer.from('x'), new Map(), new Thing()].some(isObject)).toBe(false);
  });
});

describe('deepEqual', () => {
  it('compares objects by own keys in any order, arrays element by element', () => {
    expect(deepEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual({ 0: 'a' }, ['a'])).toBe(false);
    expect(deepEqual([], {})).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
    expect(deepEqual(1, '1')).toBe(false);
  });

  it('compares members named constructor, toString, valueOf and hasOwnProperty like any other (where fast-deep-equal throws or is wrong)', () => {
    const cases: Array<[unknown, unknown, boolean]> = [
      [{ toString: 'x' }, { toString: 'x' }, true],
      [{ toString: 'x' }, { toString: 'y' }, false],
      [{ valueOf: 1 }, { valueOf: 1 }, true],
      [{ constructor: {} }, { constructor: {} }, true],
      [{ hasOwnProperty: true }, { hasOwnProperty: true }, true],
      [{ constructor: 1 }, { constructor: 2 }, false],
    ];
    for (const [a, b, equal] of cases) expect(deepEqual(a, b), JSON.stringify([a, b])).toBe(equal);
    // Why the toolkit has its own: fast-deep-equal calls a.toString() and compares a.constructor.
    expect(() => fastDeepEqual({ toString: 'x' }, { toString: 'x' })).toThrow(TypeError);
    expect(fastDeepEqual({ constructor: {} }, { constructor: {} })).toBe(false);
  });

  it('counts an own __proto__ member as a member and never looks at inherited ones', () => {
    expect(deepEqual(parse('{"__proto__":{"x":1}}'), parse('{"__proto__":{"x":1}}'))).toBe(true);
    expect(deepEqual(parse('{"__proto__":{"x":1}}'), parse('{"__proto__":{"x":2}}'))).toBe(false);
    expect(deepEqual(parse('{"__proto__":{}}'), {})).toBe(false);
    expect(deepEqual({ toString: Object.prototype.toString }, {})).toBe(false);
  });

  it('compares byte arrays byte by byte, dates by their time, maps and sets by their entries, and anything else that is not plain by identity', () => {
    expect(deepEqual(Buffer.from('pem'), Buffer.from('pem'))).toBe(true);
    expect(deepEqual([Buffer.from('a'), 'b'], [Buffer.from('a'), 'b'])).toBe(true);
    expect(deepEqual(Buffer.from('pem'), Buffer.from('pam'))).toBe(false);
    expect(deepEqual(Buffer.from('pem'), 'pem')).toBe(false);
    expect(deepEqual(Buffer.from('pem'), new Uint8Array(Buffer.from('pem')))).toBe(false);
    expect(deepEqual(new Date(0), new Date(0))).toBe(true);
    expect(deepEqual(new Date(0), new Date(1))).toBe(false);
    expect(deepEqual(new Date(0), 0)).toBe(false);
    class Key {}
    const key = new Key();
    expect(deepEqual(key, key)).toBe(true);
    expect(deepEqual(new Key(), new Key())).toBe(false);
    expect(deepEqual(new Map([['k', { v: [1] }]]), new Map([['k', { v: [1] }]]))).toBe(true);
    expect(deepEqual(new Map([['k', 1]]), new Map([['k', 2]]))).toBe(false);
    expect(deepEqual(new Set(['a', 1]), new Set([1, 'a']))).toBe(true);
    expect(deepEqual(new Set(['a']), new Set(['b']))).toBe(false);
    expect(deepEqual(new Map(), new Set())).toBe(false);
  });
});

describe('setMember and getMember', () => {
  it('writes __proto__ as an own member, leaving the prototype alone', () => {
    const target: Record<string, unknown> = {};
    setMember(target, '__proto__', { polluted: true });
    setMember(target, 'toString', 'x');
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(Object.keys(target)).toEqual(['__proto__', 'toString']);
    expect(JSON.stringify(target)).toBe('{"__proto__":{"polluted":true},"toString":"x"}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads own members only', () => {
    expect(getMember({}, 'constructor')).toBeUndefined();
    expect(getMember({ constructor: 1 }, 'constructor')).toBe(1);
    expect(getMember(parse('{"__proto__":2}') as Record<string, unknown>, '__proto__')).toBe(2);
  });
});

describe('JSON pointers (RFC 6901)', () => {
  it('parses tokens and unescapes ~1 then ~0', () => {
    expect(parseJsonPointer('')).toEqual([]);
    expect(parseJsonPointer('/')).toEqual(['']);
    expect(parseJsonPointer('/a~1b/0/~01')).toEqual(['a/b', '0', '~1']);
    expect(parseJsonPointer('/m~0n//ключ')).toEqual(['m~n', '', 'ключ']);
  });

  it('refuses a pointer that does not start with / or holds a bad ~ escape, with INVALID_JSON_POINTER naming it', () => {
    for (const bad of ['a/b', '#/a', '/a~2', '/a~']) {
      let err: unknown;
      try {
        parseJsonPointer(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(JsonPointerError);
      expect(err).toMatchObject({ code: ErrorCodes.INVALID_JSON_POINTER, pointer: bad });
      expect((err as Error).message).toContain(JSON.stringify(bad));
    }
  });

  it('formats and escapes tokens so that parsing gives them back', () => {
    const tokens = ['a/b', '~', '~1', '', '0', '-', '🙂'];
    expect(escapeJsonPointerToken('~/')).toBe('~0~1');
    expect(formatJsonPointer(tokens)).toBe('/a~1b/~0/~01//0/-/🙂');
    expect(parseJsonPointer(formatJsonPointer(tokens))).toEqual(tokens);
    expect(formatJsonPointer([])).toBe('');
  });

  it('reads array indexes as RFC 6901 writes them: digits without a leading zero', () => {
    expect(['0', '7', '10'].map(arrayIndexOf)).toEqual([0, 7, 10]);
    expect(['-', '-1', '01', '1e3', ' 1', '', '99999999999999999999'].map(arrayIndexOf)).toEqual(Array(7).fill(undefined));
  });
});
