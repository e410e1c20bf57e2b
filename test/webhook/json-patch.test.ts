// The webhook's JSON Patch (issue 47, defect 2): keys named like Object.prototype members, add for a missing member.

import { describe, expect, it } from 'vitest';
import { jsonPatchDiff } from '../../src/webhook/index.js';
import { applyJsonPatch } from '../../src/core/index.js';

describe('jsonPatchDiff (defect 2)', () => {
  it('removes a member named constructor', () => {
    expect(jsonPatchDiff({ a: 1, constructor: 2 }, { a: 1 })).toEqual([{ op: 'remove', path: '/constructor' }]);
  });

  it('adds (never replaces) a member named toString that was missing', () => {
    expect(jsonPatchDiff({}, { toString: 'x' })).toEqual([{ op: 'add', path: '/toString', value: 'x' }]);
  });

  it('adds a ConfigMap data key named hasOwnProperty and a label named __proto__', () => {
    const before = { metadata: { labels: {} }, data: {} };
    const after = { metadata: { labels: JSON.parse('{"__proto__":"x"}') as Record<string, string> }, data: { hasOwnProperty: 'y' } };
    expect(jsonPatchDiff(before, after)).toEqual([
      { op: 'add', path: '/metadata/labels/__proto__', value: 'x' },
      { op: 'add', path: '/data/hasOwnProperty', value: 'y' },
    ]);
  });
});

describe('applyJsonPatch (defect 2)', () => {
  it('inserts at an array index instead of overwriting', () => {
    expect(applyJsonPatch([1, 2], [{ op: 'add', path: '/0', value: 9 }])).toEqual([9, 1, 2]);
  });

  it('appends at -', () => {
    expect(applyJsonPatch([1, 2], [{ op: 'add', path: '/-', value: 9 }])).toEqual([1, 2, 9]);
  });
});
