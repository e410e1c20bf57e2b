// The validator, pruner and defaulter read a field by own key: a field named like an Object.prototype
// member (toString, constructor, __proto__) is a field like any other, as it is for kube-apiserver.

import { describe, expect, it } from 'vitest';
import { applyDefaults, pruneObject, validateObject, type StructuralSchema } from '../../src/crd/index.js';

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['toString'],
      properties: {
        toString: { type: 'string' },
        valueOf: { type: 'string', default: 'v' },
      },
    },
  },
};

describe('fields named like Object.prototype members', () => {
  it('a missing required toString is Required, not a type error about a function', () => {
    const result = validateObject(schema, { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'a' }, spec: {} });
    expect(result.errors.map((e) => e.message)).toEqual(['spec.toString: Required value']);
  });

  it('a present toString validates as a string', () => {
    expect(validateObject(schema, { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'a' }, spec: { toString: 's' } }).valid).toBe(true);
    const bad = validateObject(schema, { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'a' }, spec: { toString: 1 } });
    expect(bad.errors.map((e) => e.field)).toEqual(['spec.toString']);
  });

  it('a default for valueOf applies when the field is missing', () => {
    const obj = { spec: { toString: 's' } as Record<string, unknown> };
    applyDefaults(schema, obj);
    expect(Object.hasOwn(obj.spec, 'valueOf')).toBe(true);
    expect(obj.spec.valueOf).toBe('v');
  });

  it('unknown fields named constructor and __proto__ are pruned, never kept or written to a prototype', () => {
    const spec = JSON.parse('{"toString":"s","constructor":"c","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const pruned = pruneObject(schema, { spec }) as { spec: Record<string, unknown> };
    expect(Object.keys(pruned.spec)).toEqual(['toString']);
    expect(Object.getPrototypeOf(pruned.spec)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a field named __proto__ that the schema declares is kept as an own field', () => {
    const s: StructuralSchema = { type: 'object', properties: { __proto__: { type: 'string' } } as Record<string, StructuralSchema> };
    Object.defineProperty(s.properties, '__proto__', { value: { type: 'string' }, enumerable: true });
    const pruned = pruneObject(s, JSON.parse('{"__proto__":"p"}')) as Record<string, unknown>;
    expect(Object.hasOwn(pruned, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(pruned)).toBe(Object.prototype);
  });

  it('metadata keeps ObjectMeta fields only: a member named toString or constructor is dropped', () => {
    const metadata = JSON.parse('{"name":"a","toString":"x","constructor":"y","__proto__":{"p":1}}') as Record<string, unknown>;
    const pruned = pruneObject(schema, { apiVersion: 'x/v1', kind: 'X', metadata }) as { metadata: Record<string, unknown> };
    expect(pruned.metadata).toEqual({ name: 'a' });
    expect(Object.keys(pruned.metadata)).toEqual(['name']);
  });
});
