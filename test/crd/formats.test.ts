// The formats kube-apiserver validates, checked by the client-side validator with the server's rules and words; an unknown format refused at definition.

import { describe, expect, it } from 'vitest';
import { refusal } from './definitions.js';
import { Type, defineCustomResource, validateObject, type StructuralSchema } from '../../src/crd/index.js';
import { formatCases, stamps } from './format-cases.js';

const define = (spec: ReturnType<typeof Type.Object>) => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec } } });

describe('string formats', () => {
  it.each(formatCases.map((c) => [JSON.stringify(c.spec), c.valid, c] as const))('%s → valid: %s', (_, valid, c) => {
    const result = stamps.validate({ spec: c.spec });
    expect(result.valid, result.errors.map((e) => e.message).join('\n')).toBe(valid);
  });

  it('says what the server says: the field, the format and the value', () => {
    const messages = (spec: Record<string, unknown>) => stamps.validate({ spec }).errors.map((e) => e.message);
    expect(messages({ when: 'yesterday' })).toEqual(['spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"']);
    expect(messages({ id: 'x', ip6: '1.2.3.4' })).toEqual([
      'spec.id: Invalid value: "x": spec.id in body must be of type uuid: "x"',
      'spec.ip6: Invalid value: "1.2.3.4": spec.ip6 in body must be of type ipv6: "1.2.3.4"',
    ]);
    // A value of another type is named by the format, as kube-openapi's type check words it.
    expect(messages({ when: 5 })).toEqual(['spec.when: Invalid value: "int64": spec.when in body must be of type date-time: "int64"']);
    // The length limit and the format are two checks: both report.
    expect(messages({ limited: 'nope-nope' })).toEqual([
      'spec.limited: Too long: may not be more than 5 bytes',
      'spec.limited: Invalid value: "nope-nope": spec.limited in body must be of type date: "nope-nope"',
    ]);
    expect(messages({ count: 2147483648 })).toEqual(['<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.count']);
  });

  it('ignores a format the server does not know in a schema read from elsewhere (the server drops it), as the server does', () => {
    const schema: StructuralSchema = { type: 'object', properties: { spec: { type: 'object', properties: { when: { type: 'string', format: 'date-tme' }, n: { type: 'integer', format: 'uint8' } } } } };
    expect(validateObject(schema, { spec: { when: 'yesterday', n: 300 } }).errors).toEqual([]);
  });
});

describe('an unknown format at definition', () => {
  it('is refused, naming the field path and the format meant', () => {
    const message = refusal(() => define(Type.Object({ when: Type.String({ format: 'date-tme' }) })));
    expect(message).toContain('versions.v1.spec.properties.when.format: unknown format "date-tme" (did you mean "date-time"?)');
    expect(message).toContain('kube-apiserver ignores a format it does not validate');
    expect(refusal(() => define(Type.Object({ a: Type.String({ format: 'uuid-v4' }) })))).toContain('(did you mean "uuid4"?)');
    expect(refusal(() => define(Type.Object({ a: Type.String({ format: 'uri-reference' }) })))).toContain('properties.a.format: unknown format "uri-reference"');
  });

  it('is refused on a type the format does not fit: an integer takes int32/int64, a number float/double, an object or boolean none', () => {
    expect(refusal(() => define(Type.Object({ n: Type.Integer({ format: 'int8' }) })))).toContain('properties.n.format: unknown format "int8" (did you mean "int32"?)');
    expect(refusal(() => define(Type.Object({ n: Type.Number({ format: 'int32' }) })))).toContain('on number: float, double');
    expect(refusal(() => define(Type.Object({ b: Type.Boolean({ format: 'date' }) })))).toContain('no format on boolean');
  });

  it('accepts every format the server validates, written with or without dashes', () => {
    for (const format of ['date-time', 'datetime', 'date', 'duration', 'uuid', 'uuid3', 'uuid4', 'uuid5', 'email', 'hostname', 'ipv4', 'ipv6', 'cidr', 'mac', 'uri', 'byte', 'password', 'bsonobjectid', 'isbn', 'isbn10', 'isbn13', 'creditcard', 'ssn', 'hexcolor', 'rgbcolor', 'k8s-short-name', 'k8s-long-name']) {
      expect(() => define(Type.Object({ a: Type.String({ format }) })), format).not.toThrow();
    }
    expect(() => define(Type.Object({ a: Type.Integer({ format: 'int64' }), b: Type.Number({ format: 'double' }) }))).not.toThrow();
  });
});
