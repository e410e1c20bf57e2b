// Custom resources defined once, shared by the unit tests and the real-apiserver test, and the table of objects both validate.

import { expect } from 'vitest';
import { InvalidOptionError } from '../../src/index.js';
import { Type, IntOrString, PreserveUnknownFields, defineCustomResource } from '../../src/crd/index.js';

/** A namespaced resource using every feature: limits, enums, defaults, int-or-string, CEL, list types, subresources, columns. */
export const widgets = defineCustomResource({
  group: 'crdtest.kube-informer.dev',
  names: { kind: 'Widget', shortNames: ['wd'], categories: ['all', 'kitest'] },
  versions: {
    v1: {
      storage: true,
      spec: Type.Object({
        size: Type.Integer({ minimum: 1, maximum: 10, default: 1 }),
        ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
        color: Type.Union([Type.Literal('red'), Type.Literal('green'), Type.Literal('blue')], { default: 'red' }),
        name: Type.String({ minLength: 2, maxLength: 8, pattern: '^[a-z][a-z0-9-]*$' }),
        step: Type.Optional(Type.Integer({ multipleOf: 5 })),
        maxUnavailable: Type.Optional(IntOrString({ default: '25%' })),
        tags: Type.Optional(Type.Array(Type.String(), { maxItems: 3, 'x-kubernetes-list-type': 'set' })),
        ports: Type.Optional(
          Type.Array(Type.Object({ name: Type.String(), port: Type.Integer({ minimum: 1, maximum: 65535 }), protocol: Type.String({ default: 'TCP' }) }), {
            minItems: 1,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
          }),
        ),
        labels: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 5 }), { maxProperties: 2 })),
        note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        enabled: Type.Boolean({ default: true }),
        extra: Type.Optional(PreserveUnknownFields({ level: Type.Integer() })),
        minReplicas: Type.Optional(Type.Integer({ default: 1 })),
        maxReplicas: Type.Optional(Type.Integer({ default: 3 })),
      }, { 'x-kubernetes-validations': [{ rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' }] }),
      status: Type.Object({ replicas: Type.Optional(Type.Integer()), selector: Type.Optional(Type.String()), phase: Type.Optional(Type.String()) }),
      printerColumns: [
        { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
        { name: 'Color', type: 'string', jsonPath: '.spec.color' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
      ],
      subresources: { status: true, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
      selectableFields: ['.spec.color'],
      validations: [{ rule: "self.metadata.name != 'forbidden'", message: 'this name is reserved' }],
    },
    v1beta1: {
      deprecated: true,
      deprecationWarning: 'crdtest.kube-informer.dev/v1beta1 Widget is deprecated; use v1',
      spec: Type.Object({ size: Type.Integer({ minimum: 0, default: 2 }) }),
    },
  },
});

/** A cluster-scoped resource with a lone version and a status of its own. */
export const gadgets = defineCustomResource({
  group: 'crdtest.kube-informer.dev',
  scope: 'Cluster',
  names: { kind: 'Gadget', plural: 'gadgets' },
  versions: {
    v1alpha1: {
      spec: Type.Object({ mode: Type.String({ enum: ['fast', 'slow'] }), budget: Type.Optional(Type.Number({ minimum: 0.5 })) }),
    },
  },
});

const base = { apiVersion: 'crdtest.kube-informer.dev/v1', kind: 'Widget' };
const ok = { name: 'ok', size: 3, color: 'green', enabled: true };

/**
 * One row: an object (its `spec`) and the field paths the server names when it rejects it (`<nil>` is
 * the object itself: the server adds "some validation rules were not checked" there when a type,
 * required, enum or size error stops it from evaluating CEL). `cel: true` marks a row that only a CEL
 * rule rejects: the client-side validator accepts it and lists the rule as unchecked.
 */
export interface Row {
  /** What the row checks. */
  readonly title: string;
  /** The spec (the object is built around it); `undefined` leaves spec out. */
  readonly spec: unknown;
  /** The field paths the server rejects (empty: accepted). */
  readonly fields: readonly string[];
  /** Only a CEL rule rejects it: the client-side validator accepts it and says the rule is unchecked. */
  readonly cel?: boolean;
  /** Use this name instead of a generated one. */
  readonly name?: string;
}

/** The table: accepted and rejected Widgets. */
export const rows: readonly Row[] = [
  { title: 'a minimal valid spec', spec: { name: 'ab' }, fields: [] },
  { title: 'a full valid spec', spec: { ...ok, ratio: 0.5, step: 10, maxUnavailable: 2, tags: ['a', 'b'], ports: [{ name: 'http', port: 80 }], labels: { a: 'x' }, note: 'n', extra: { level: 2, anything: { deep: true } } }, fields: [] },
  { title: 'int-or-string as a string', spec: { ...ok, maxUnavailable: '50%' }, fields: [] },
  { title: 'int-or-string as an integer', spec: { ...ok, maxUnavailable: 1 }, fields: [] },
  { title: 'int-or-string as a number', spec: { ...ok, maxUnavailable: 1.5 }, fields: ['spec.maxUnavailable', '<nil>'] },
  { title: 'int-or-string as a boolean', spec: { ...ok, maxUnavailable: true }, fields: ['spec.maxUnavailable', '<nil>'] },
  { title: 'no spec', spec: undefined, fields: ['spec', '<nil>'] },
  { title: 'spec is a string', spec: 'nope', fields: ['spec', '<nil>', '.spec.size'] },
  { title: 'missing required name', spec: { size: 2 }, fields: ['spec.name', '<nil>'] },
  { title: 'size below minimum', spec: { ...ok, size: 0 }, fields: ['spec.size'] },
  { title: 'size above maximum', spec: { ...ok, size: 11 }, fields: ['spec.size'] },
  { title: 'size at maximum', spec: { ...ok, size: 10 }, fields: [] },
  { title: 'size a string', spec: { ...ok, size: '3' }, fields: ['spec.size', '<nil>', '.spec.size'] },
  { title: 'size a fraction', spec: { ...ok, size: 2.5 }, fields: ['spec.size', '<nil>', '<nil>', '.spec.size'] },
  { title: 'size null (defaulted)', spec: { ...ok, size: null }, fields: [] },
  { title: 'ratio zero (exclusive minimum)', spec: { ...ok, ratio: 0 }, fields: ['spec.ratio'] },
  { title: 'ratio above maximum', spec: { ...ok, ratio: 1.5 }, fields: ['spec.ratio'] },
  { title: 'ratio an integer', spec: { ...ok, ratio: 1 }, fields: [] },
  { title: 'color not in the enum', spec: { ...ok, color: 'pink' }, fields: ['spec.color', '<nil>'] },
  { title: 'color wrong case', spec: { ...ok, color: 'Red' }, fields: ['spec.color', '<nil>'] },
  { title: 'color a number', spec: { ...ok, color: 1 }, fields: ['spec.color', 'spec.color', '<nil>'] },
  { title: 'name too short', spec: { ...ok, name: 'a' }, fields: ['spec.name'] },
  { title: 'name too long', spec: { ...ok, name: 'abcdefghi' }, fields: ['spec.name', '<nil>'] },
  { title: 'name bad pattern', spec: { ...ok, name: 'Ab' }, fields: ['spec.name'] },
  { title: 'name too short and bad pattern', spec: { ...ok, name: 'A' }, fields: ['spec.name'] },
  { title: 'name null', spec: { ...ok, name: null }, fields: ['spec.name', '<nil>'] },
  { title: 'step not a multiple', spec: { ...ok, step: 7 }, fields: ['spec.step'] },
  { title: 'step a multiple', spec: { ...ok, step: 15 }, fields: [] },
  { title: 'too many tags', spec: { ...ok, tags: ['a', 'b', 'c', 'd'] }, fields: ['spec.tags', '<nil>'] },
  { title: 'duplicate tags in a set', spec: { ...ok, tags: ['a', 'a'] }, fields: ['spec.tags[1]'] },
  { title: 'a tag not a string', spec: { ...ok, tags: ['a', 2] }, fields: ['spec.tags[1]', '<nil>'] },
  { title: 'tags not an array', spec: { ...ok, tags: 'a' }, fields: ['spec.tags', '<nil>'] },
  { title: 'empty ports (minItems)', spec: { ...ok, ports: [] }, fields: ['spec.ports'] },
  { title: 'duplicate port names in a map list', spec: { ...ok, ports: [{ name: 'a', port: 1 }, { name: 'a', port: 2 }] }, fields: ['spec.ports[1]'] },
  { title: 'port out of range', spec: { ...ok, ports: [{ name: 'a', port: 70000 }] }, fields: ['spec.ports[0].port'] },
  { title: 'port missing its key', spec: { ...ok, ports: [{ port: 80 }] }, fields: ['spec.ports[0].name', '<nil>'] },
  { title: 'two bad ports', spec: { ...ok, ports: [{ name: 'a', port: 0 }, { name: 'b', port: 'x' }] }, fields: ['spec.ports[0].port', 'spec.ports[1].port', '<nil>'] },
  { title: 'a label value too long', spec: { ...ok, labels: { a: 'toolong' } }, fields: ['spec.labels.a', '<nil>'] },
  { title: 'too many labels', spec: { ...ok, labels: { a: '1', b: '2', c: '3' } }, fields: ['spec.labels', '<nil>'] },
  { title: 'a label value not a string', spec: { ...ok, labels: { a: 1 } }, fields: ['spec.labels.a', '<nil>'] },
  { title: 'nullable note null', spec: { ...ok, note: null }, fields: [] },
  { title: 'note a number', spec: { ...ok, note: 5 }, fields: ['spec.note', '<nil>'] },
  { title: 'enabled a string', spec: { ...ok, enabled: 'yes' }, fields: ['spec.enabled', '<nil>'] },
  { title: 'unknown fields are pruned, not rejected', spec: { ...ok, bogus: 1, ports: [{ name: 'a', port: 1, bogus: true }] }, fields: [] },
  { title: 'preserve-unknown-fields keeps anything', spec: { ...ok, extra: { a: [1, 2], b: null } }, fields: [] },
  { title: 'a typed field inside preserve-unknown-fields', spec: { ...ok, extra: { level: 'high' } }, fields: ['spec.extra.level', '<nil>'] },
  { title: 'extra not an object', spec: { ...ok, extra: 3 }, fields: ['spec.extra', '<nil>'] },
  { title: 'CEL: min above max', spec: { ...ok, minReplicas: 5, maxReplicas: 2 }, fields: ['spec'], cel: true },
  { title: 'CEL: min equal to max', spec: { ...ok, minReplicas: 2, maxReplicas: 2 }, fields: [] },
  { title: 'CEL: defaults satisfy the rule', spec: { ...ok, minReplicas: 3 }, fields: [] },
  { title: 'CEL: the default max is below min', spec: { ...ok, minReplicas: 4 }, fields: ['spec'], cel: true },
  { title: 'CEL on the root: reserved name', spec: ok, fields: ['<nil>'], cel: true, name: 'forbidden' },
  { title: 'every failure at once', spec: { size: 0, color: 'pink', name: 'A', step: 3, tags: ['x', 'x'], ports: [{ name: 'p', port: 0 }], enabled: 'no' }, fields: ['spec.size', 'spec.color', 'spec.name', 'spec.step', 'spec.tags[1]', 'spec.ports[0].port', 'spec.enabled', '<nil>'] },
  { title: 'a nested object where a scalar belongs', spec: { ...ok, size: { n: 1 } }, fields: ['spec.size', '<nil>', '.spec.size'] },
  { title: 'an array where a scalar belongs', spec: { ...ok, name: ['ab'] }, fields: ['spec.name', '<nil>'] },
  { title: 'ports items not objects', spec: { ...ok, ports: ['http'] }, fields: ['spec.ports[0]', 'spec.ports[0]', '<nil>'] },
];

/** Builds a Widget from a row. */
export function objectOf(row: Row, index: number, namespace = 'default'): Record<string, unknown> {
  const obj: Record<string, unknown> = { ...base, metadata: { name: row.name ?? `row-${index}`, namespace } };
  if (row.spec !== undefined) obj.spec = row.spec;
  return obj;
}

/** The message of the `InvalidOptionError` that `build` throws (a definition refused); fails the test when it throws nothing. */
export function refusal(build: () => unknown): string {
  try {
    build();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as InvalidOptionError).code).toBe('INVALID_OPTION');
    return (err as Error).message;
  }
  throw new Error('the definition was accepted');
}
