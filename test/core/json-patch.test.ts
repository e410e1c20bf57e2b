// The core JSON Patch (RFC 6902): the diff, every operation of the applier, and each error path with its code, index and pointer.

import { describe, expect, it } from 'vitest';
import { applyJsonPatch, ErrorCodes, JsonPatchError, jsonPatchDiff, type ApplyJsonPatchOptions, type JsonPatchOperation } from '../../src/core/index.js';

function failure(doc: unknown, patch: unknown, options?: ApplyJsonPatchOptions): JsonPatchError {
  try {
    applyJsonPatch(doc, patch as JsonPatchOperation[], options);
  } catch (err) {
    if (err instanceof JsonPatchError) return err;
    throw err;
  }
  throw new Error('the patch applied');
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe('jsonPatchDiff', () => {
  it('removes, adds and recurses over own keys, escaping / and ~, and replaces a changed array whole', () => {
    const before = { a: 1, 'x/y': { '~k': 1, keep: true }, list: [1, 2], gone: 'g', constructor: 'c' };
    const after = { a: 1, 'x/y': { '~k': 2, keep: true }, list: [1, 2, 3], fresh: { n: null }, toString: 't' };
    expect(jsonPatchDiff(before, after)).toEqual([
      { op: 'remove', path: '/gone' },
      { op: 'remove', path: '/constructor' },
      { op: 'replace', path: '/x~1y/~0k', value: 2 },
      { op: 'replace', path: '/list', value: [1, 2, 3] },
      { op: 'add', path: '/fresh', value: { n: null } },
      { op: 'add', path: '/toString', value: 't' },
    ]);
  });

  it('is empty for equal values whatever their key order, and replaces the whole document when its type changes', () => {
    expect(jsonPatchDiff({ a: 1, b: { c: [1] } }, { b: { c: [1] }, a: 1 })).toEqual([]);
    expect(jsonPatchDiff({ a: 1 }, [1])).toEqual([{ op: 'replace', path: '', value: [1] }]);
    expect(jsonPatchDiff('x', 'y')).toEqual([{ op: 'replace', path: '', value: 'y' }]);
  });

  it('counts a member whose value is undefined as absent', () => {
    expect(jsonPatchDiff({ a: undefined, b: 1 }, { a: 2, b: undefined })).toEqual([
      { op: 'remove', path: '/b' },
      { op: 'add', path: '/a', value: 2 },
    ]);
  });

  it('adds and removes a member named __proto__ as an own member', () => {
    const withProto = JSON.parse('{"labels":{"__proto__":"x"}}') as unknown;
    expect(jsonPatchDiff({ labels: {} }, withProto)).toEqual([{ op: 'add', path: '/labels/__proto__', value: 'x' }]);
    expect(jsonPatchDiff(withProto, { labels: {} })).toEqual([{ op: 'remove', path: '/labels/__proto__' }]);
  });
});

describe('applyJsonPatch: the operations', () => {
  it('adds members, inserts into arrays at an index or at the end (-), and replaces the document at ""', () => {
    expect(applyJsonPatch({ a: [1, 2] }, [
      { op: 'add', path: '/a/0', value: 0 },
      { op: 'add', path: '/a/3', value: 3 },
      { op: 'add', path: '/a/-', value: 4 },
      { op: 'add', path: '/b', value: { c: 1 } },
      { op: 'add', path: '/b/c', value: 2 },
    ])).toEqual({ a: [0, 1, 2, 3, 4], b: { c: 2 } });
    expect(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '', value: [1] }])).toEqual([1]);
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: 'x' }])).toEqual('x');
  });

  it('removes and replaces existing members and elements', () => {
    expect(applyJsonPatch({ a: [1, 2, 3], b: 1, c: 2 }, [
      { op: 'remove', path: '/a/1' },
      { op: 'replace', path: '/a/0', value: 9 },
      { op: 'remove', path: '/b' },
      { op: 'replace', path: '/c', value: null },
    ])).toEqual({ a: [9, 3], c: null });
  });

  it('moves (remove, then add in the changed document) and copies without sharing', () => {
    expect(applyJsonPatch({ a: [1, 2, 3] }, [{ op: 'move', from: '/a/0', path: '/a/2' }])).toEqual({ a: [2, 3, 1] });
    expect(applyJsonPatch({ a: { b: 1 }, c: {} }, [{ op: 'move', from: '/a/b', path: '/c/d' }])).toEqual({ a: {}, c: { d: 1 } });
    expect(applyJsonPatch({ a: 1 }, [{ op: 'move', from: '/a', path: '/a' }])).toEqual({ a: 1 });
    const copied = applyJsonPatch({ a: { n: [1] } }, [{ op: 'copy', from: '/a', path: '/b' }]) as { a: { n: number[] }; b: { n: number[] } };
    copied.b.n.push(2);
    expect(copied.a.n).toEqual([1]);
  });

  it('tests deeply, in any key order; a missing object member tests equal to null, as on kube-apiserver', () => {
    const doc = { labels: { a: '1', b: '2' }, list: [1, { x: null }] };
    expect(applyJsonPatch(doc, [
      { op: 'test', path: '/labels', value: { b: '2', a: '1' } },
      { op: 'test', path: '/list/1', value: { x: null } },
      { op: 'test', path: '/finalizers', value: null },
      { op: 'test', path: '', value: doc },
    ])).toEqual(doc);
    expect(failure(doc, [{ op: 'test', path: '/labels/a', value: 1 }])).toMatchObject({ code: ErrorCodes.JSON_PATCH_FAILED, operationIndex: 0, pointer: '/labels/a' });
    expect(failure(doc, [{ op: 'test', path: '/finalizers', value: [] }]).message).toContain('"/finalizers" does not exist');
    expect(failure(doc, [{ op: 'test', path: '/list/2', value: null }]).code).toBe(ErrorCodes.JSON_PATCH_FAILED);
  });
});

describe('applyJsonPatch: own keys only, and nothing shared or changed', () => {
  it('writes a member named __proto__ as an own member and never touches a prototype', () => {
    const result = applyJsonPatch({ data: {} }, [
      { op: 'add', path: '/data/__proto__', value: { polluted: true } },
      { op: 'add', path: '/data/constructor', value: 'c' },
      { op: 'copy', from: '/data/__proto__', path: '/__proto__' },
    ]) as Record<string, Record<string, unknown>>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(result.data)).toBe(Object.prototype);
    expect(JSON.stringify(result)).toBe('{"data":{"__proto__":{"polluted":true},"constructor":"c"},"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(applyJsonPatch(result, [{ op: 'remove', path: '/data/__proto__' }, { op: 'replace', path: '/__proto__', value: 1 }])).toEqual(
      JSON.parse('{"data":{"constructor":"c"},"__proto__":1}'),
    );
  });

  it('finds no member Object.prototype has but the object does not', () => {
    for (const op of [{ op: 'remove', path: '/toString' }, { op: 'replace', path: '/constructor', value: 1 }, { op: 'add', path: '/hasOwnProperty/x', value: 1 }]) {
      expect(failure({}, [op]).code).toBe(ErrorCodes.JSON_PATCH_FAILED);
    }
  });

  it('never changes the document or the patch, and shares no value with them', () => {
    const doc = deepFreeze({ a: { list: [1] }, b: 'x' });
    const patch = deepFreeze<JsonPatchOperation[]>([{ op: 'add', path: '/c', value: { n: [1] } }, { op: 'add', path: '/a/list/-', value: 2 }, { op: 'remove', path: '/b' }]);
    const result = applyJsonPatch(doc, patch) as { a: { list: number[] }; c: { n: number[] } };
    expect(result).toEqual({ a: { list: [1, 2] }, c: { n: [1] } });
    result.c.n.push(9);
    expect(patch[0].value).toEqual({ n: [1] });
    expect(doc).toEqual({ a: { list: [1] }, b: 'x' });
  });
});

describe("applyJsonPatch: kube-apiserver's dialect", () => {
  const apiServer = { dialect: 'kube-apiserver' } as const;

  it('reads indexes as Go does: leading zeros, a sign, negative ones from the end (-1 in an add appends)', () => {
    expect(applyJsonPatch({ a: [1, 2, 3] }, [{ op: 'remove', path: '/a/-1' }, { op: 'replace', path: '/a/01', value: 9 }], apiServer)).toEqual({ a: [1, 9] });
    expect(applyJsonPatch({ a: [1, 2] }, [{ op: 'add', path: '/a/-1', value: 3 }, { op: 'add', path: '/a/+0', value: 0 }], apiServer)).toEqual({ a: [0, 1, 2, 3] });
    expect(applyJsonPatch({ a: [[1], [2]] }, [{ op: 'add', path: '/a/-1/-', value: 3 }], apiServer)).toEqual({ a: [[1], [2, 3]] });
    expect(failure({ a: [1] }, [{ op: 'remove', path: '/a/-2' }], apiServer).code).toBe(ErrorCodes.JSON_PATCH_FAILED);
    expect(failure({ a: [1] }, [{ op: 'remove', path: '/a/-1' }]).code).toBe(ErrorCodes.JSON_PATCH_FAILED); // the RFC's reading
  });

  it('adds on a replace of a missing member, and takes a missing value as null', () => {
    expect(applyJsonPatch({ data: {} }, [{ op: 'replace', path: '/data/x', value: 1 }, { op: 'add', path: '/data/y' }] as JsonPatchOperation[], apiServer)).toEqual({ data: { x: 1, y: null } });
    expect(failure({ data: {} }, [{ op: 'replace', path: '/data/x', value: 1 }]).message).toContain('"/data/x" does not exist');
  });

  it('refuses an unknown dialect or option with INVALID_OPTION', () => {
    expect(() => applyJsonPatch({}, [], { dialect: 'evanphx' as never })).toThrow(/applyJsonPatch: option dialect/);
    expect(() => applyJsonPatch({}, [], { dialekt: 'rfc6902' } as never)).toThrow('applyJsonPatch: unknown option dialekt (did you mean dialect?)');
  });
});

describe('applyJsonPatch: errors', () => {
  it('names the operation index and the pointer when a path does not exist', () => {
    const err = failure({ metadata: {} }, [{ op: 'add', path: '/metadata/labels', value: {} }, { op: 'add', path: '/spec/x/y', value: 1 }]);
    expect(err).toBeInstanceOf(JsonPatchError);
    expect(err).toMatchObject({ code: ErrorCodes.JSON_PATCH_FAILED, operationIndex: 1, pointer: '/spec/x/y' });
    expect(err.message).toBe('JSON patch operation 1 (add): the path "/spec/x/y" does not exist');
    expect(failure({ a: 1 }, [{ op: 'remove', path: '/b' }]).message).toContain('"/b" does not exist');
    expect(failure({ a: 1 }, [{ op: 'move', from: '/b', path: '/c' }])).toMatchObject({ pointer: '/b' });
    expect(failure({ a: 1 }, [{ op: 'copy', from: '/a/b', path: '/c' }])).toMatchObject({ pointer: '/a/b' });
    expect(failure({ a: 'text' }, [{ op: 'add', path: '/a/b', value: 1 }])).toMatchObject({ pointer: '/a/b' });
  });

  it('refuses an index out of range, one that is not an index, and - where it names no element', () => {
    expect(failure({ a: [1] }, [{ op: 'add', path: '/a/2', value: 0 }]).message).toContain('index 2 is out of range (the array at it has 1 elements)');
    expect(failure({ a: [1] }, [{ op: 'replace', path: '/a/1', value: 0 }]).code).toBe(ErrorCodes.JSON_PATCH_FAILED);
    expect(failure({ a: [1] }, [{ op: 'remove', path: '/a/-' }]).message).toContain('"-" names no element');
    expect(failure({ a: [1] }, [{ op: 'replace', path: '/a/-', value: 0 }]).code).toBe(ErrorCodes.JSON_PATCH_FAILED);
    for (const index of ['01', '-1', 'x', '1.0']) {
      expect(failure({ a: [1, 2] }, [{ op: 'remove', path: `/a/${index}` }]), index).toMatchObject({ code: ErrorCodes.JSON_PATCH_FAILED, pointer: `/a/${index}` });
    }
  });

  it('refuses a move into its own child and a removal of the whole document', () => {
    expect(failure({ a: { b: {} } }, [{ op: 'move', from: '/a', path: '/a/b/c' }]).message).toContain('into its own child');
    expect(failure({ a: 1 }, [{ op: 'remove', path: '' }]).message).toContain('whole document');
  });

  it('refuses a path that is not a JSON pointer, keeping the pointer error as the cause', () => {
    const err = failure({ a: 1 }, [{ op: 'add', path: 'a', value: 1 }]);
    expect(err).toMatchObject({ code: ErrorCodes.JSON_PATCH_FAILED, operationIndex: 0, pointer: 'a' });
    expect(err.cause).toMatchObject({ code: ErrorCodes.INVALID_JSON_POINTER });
  });

  it('refuses a patch that is not an array of operations with INVALID_JSON_PATCH', () => {
    expect(failure({}, { op: 'add', path: '/a', value: 1 })).toMatchObject({ code: ErrorCodes.INVALID_JSON_PATCH, operationIndex: undefined });
    expect(failure({}, [null])).toMatchObject({ code: ErrorCodes.INVALID_JSON_PATCH, operationIndex: 0 });
    expect(failure({}, [{ op: 'remove', path: '/a' }, { op: 'frobnicate', path: '/a' }])).toMatchObject({ code: ErrorCodes.INVALID_JSON_PATCH, operationIndex: 1 });
    expect(failure({}, [{ op: 'add', value: 1 }]).message).toBe('JSON patch operation 0: add needs a string "path"');
    expect(failure({}, [{ op: 'add', path: '/a' }]).message).toBe('JSON patch operation 0: add needs a "value"');
    expect(failure({}, [{ op: 'copy', path: '/a' }]).message).toBe('JSON patch operation 0: copy needs a string "from"');
  });

  it('checks the whole patch before applying any of it', () => {
    // The malformed second operation is reported, not the first one's missing path: nothing is applied before every operation is checked.
    expect(failure({}, [{ op: 'remove', path: '/missing' }, { op: 'nope' }]).code).toBe(ErrorCodes.INVALID_JSON_PATCH);
  });
});
