// defineCustomResource: the CRD it builds, the types it gives, and the definitions it refuses before anything reaches a server.

import { describe, expect, expectTypeOf, it } from 'vitest';
import { type ResourceDescriptor, type SharedIndexInformer, SharedInformerFactory } from '../../src/index.js';
import { Controller, type ControllerBuilder } from '../../src/controller.js';
import { Type, IntOrString, defineCustomResource, type ObjectOfDefinition } from '../../src/crd/index.js';
import { gadgets, refusal, widgets } from './definitions.js';

const spec = Type.Object({ size: Type.Integer() });

describe('defineCustomResource', () => {
  it('builds a CustomResourceDefinition with names, scope, versions in priority order, and one storage version', () => {
    const { crd } = widgets;
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata?.name).toBe('widgets.crdtest.kube-informer.dev');
    expect(crd.spec.names).toEqual({ kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget', shortNames: ['wd'], categories: ['all', 'kitest'] });
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false])).toEqual([
      ['v1', true, true, false],
      ['v1beta1', true, false, true],
    ]);
    expect(gadgets.crd.spec.scope).toBe('Cluster');
    expect(gadgets.crd.spec.versions[0].storage).toBe(true);
  });

  it('writes the structural schema with defaults, enums, int-or-string, nullable, list types, CEL rules and preserve-unknown-fields', () => {
    const root = widgets.crd.spec.versions[0].schema?.openAPIV3Schema as Record<string, any>;
    expect(root.required).toEqual(['spec']);
    expect(root['x-kubernetes-validations']).toEqual([{ rule: "self.metadata.name != 'forbidden'", message: 'this name is reserved' }]);
    const s = root.properties.spec;
    expect(s['x-kubernetes-validations'][0].message).toBe('minReplicas must not exceed maxReplicas');
    expect(s.properties.color).toEqual({ type: 'string', enum: ['red', 'green', 'blue'], default: 'red' });
    expect(s.properties.maxUnavailable).toEqual({ 'x-kubernetes-int-or-string': true, default: '25%' });
    expect(s.properties.note).toEqual({ type: 'string', nullable: true });
    expect(s.properties.ratio).toEqual({ type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1 });
    expect(s.properties.labels).toEqual({ type: 'object', maxProperties: 2, additionalProperties: { type: 'string', maxLength: 5 } });
    expect(s.properties.ports['x-kubernetes-list-map-keys']).toEqual(['name']);
    expect(s.properties.extra).toMatchObject({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { level: { type: 'integer' } } });
    expect(JSON.stringify(root)).not.toContain('~');
  });

  it('writes printer columns, the status and scale subresources, selectable fields and the deprecation warning', () => {
    const [v1, v1beta1] = widgets.crd.spec.versions;
    expect(v1.additionalPrinterColumns?.map((c) => c.name)).toEqual(['Size', 'Color', 'Phase']);
    expect(v1.subresources).toEqual({ status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } });
    expect(v1.selectableFields).toEqual([{ jsonPath: '.spec.color' }]);
    expect(v1beta1.deprecationWarning).toContain('deprecated');
  });

  it('gives a descriptor per version typed by the object, usable wherever a ResourceDescriptor is', () => {
    expect(widgets.descriptor).toEqual({ group: 'crdtest.kube-informer.dev', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true });
    expect(widgets.descriptors.v1beta1.version).toBe('v1beta1');
    type Widget = ObjectOfDefinition<typeof widgets>;
    expectTypeOf<Widget['spec']['size']>().toEqualTypeOf<number>();
    expectTypeOf<Widget['spec']['color']>().toEqualTypeOf<'red' | 'green' | 'blue'>();
    expectTypeOf<Widget['spec']['maxUnavailable']>().toEqualTypeOf<number | string | undefined>();
    expectTypeOf<Widget['spec']['note']>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<NonNullable<Widget['status']>['phase']>().toEqualTypeOf<string | undefined>();
    expectTypeOf(widgets.descriptor).toExtend<ResourceDescriptor<Widget>>();
    expectTypeOf(widgets.withDefaults({ spec: {} }, 'v1beta1').spec.size).toEqualTypeOf<number>();
    // The descriptor types the informer, the controller and its owned resources without a type argument.
    // (type-checked only: never called)
    const typed = (factory: SharedInformerFactory): void => {
      expectTypeOf(factory.forResource(widgets.descriptor)).toEqualTypeOf<SharedIndexInformer<Widget>>();
      expectTypeOf(Controller.for(factory, widgets.descriptor)).toEqualTypeOf<ControllerBuilder<Widget>>();
      expectTypeOf(Controller.for(factory, gadgets.descriptor).owns(widgets.descriptors.v1beta1)).toEqualTypeOf<ControllerBuilder<ObjectOfDefinition<typeof gadgets>>>();
    };
    expect(typeof typed).toBe('function');
    const w: Widget = { spec: { name: 'a', size: 1, color: 'red', enabled: true } };
    expect(w.spec.size).toBe(1);
  });

  it('refuses a schema with no structural form, naming its path', () => {
    const message = refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object({ x: Type.Union([Type.String(), Type.Boolean()]) }) } } }));
    expect(message).toContain('versions.v1.spec.properties.x.anyOf');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object({ x: Type.Any() }) } } }))).toContain('versions.v1.spec.properties.x.type: must not be empty');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object({ x: Type.Tuple([Type.String()]) }) } } }))).toContain('versions.v1.spec.properties.x');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object({ x: Type.Array(Type.String(), { uniqueItems: true }) }) } } }))).toContain('properties.x.uniqueItems');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.String() } } }))).toContain('versions.v1.spec.type: must be object');
  });

  it('refuses a default that does not validate against its own schema', () => {
    const message = refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object({ size: Type.Integer({ minimum: 1, default: 0 }) }) } } }));
    expect(message).toContain('versions.v1.schema.properties.spec.properties.size.default');
    expect(message).toContain('greater than or equal to 1');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object({ m: IntOrString({ default: true }) }) } } }))).toContain('properties.m.default');
  });

  it('refuses options of the wrong type, naming the version', () => {
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec, printerColumns: 'Size' as never } } }))).toContain('versions.v1.printerColumns: must be an array');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec, served: 'yes' as never } } }))).toContain('served');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, scope: 'Global' as never, versions: { v1: { spec } } }))).toContain('scope');
  });

  it('refuses storage on zero or two versions', () => {
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec }, v2: { spec } } }))).toContain('storage: true on no version');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec, storage: true }, v2: { spec, storage: true } } }))).toContain('storage: true on 2 versions (v2, v1)');
  });

  it('refuses a kind that is not UpperCamelCase, a bad group, a bad version name, a bad short name', () => {
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'widget' }, versions: { v1: { spec } } }))).toContain('names.kind: must be UpperCamelCase');
    expect(refusal(() => defineCustomResource({ group: 'example', names: { kind: 'A' }, versions: { v1: { spec } } }))).toContain('group:');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { one: { spec } } }))).toContain('versions.one');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A', shortNames: ['A_'] }, versions: { v1: { spec } } }))).toContain('names.shortNames[0]');
  });

  it('refuses a selectable field or scale path that is not an integer/string field of the schema, and a map list key that is optional', () => {
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec, selectableFields: ['.spec.nope'] } } }))).toContain('versions.v1.selectableFields[0]');
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec, subresources: { scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.n' } } } } }))).toContain('scale.statusReplicasPath');
    const list = Type.Array(Type.Object({ k: Type.Optional(Type.String()) }), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'] });
    expect(refusal(() => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object({ list }) } } }))).toContain('properties.list.items.properties.k: a map key must be required or have a default');
  });
});

describe('the client-side validator', () => {
  it('gives every failing path at once, in the API server\'s words', () => {
    const result = widgets.validate({ spec: { size: 0, color: 'pink', name: 'A', ports: [{ name: 'p', port: 0 }, { name: 'p', port: 1 }], enabled: 'no' } });
    expect(result.valid).toBe(false);
    expect(result.errors.map((e) => e.message)).toEqual([
      'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
      'spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"',
      'spec.name: Invalid value: "A": spec.name in body should be at least 2 chars long',
      'spec.ports[0].port: Invalid value: 0: spec.ports[0].port in body should be greater than or equal to 1',
      'spec.ports[1]: Duplicate value: {"name":"p"}',
      'spec.enabled: Invalid value: "string": spec.enabled in body must be of type boolean: "string"',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it('prunes unknown fields and applies defaults before it validates, and lists the CEL rules it did not evaluate', () => {
    const result = widgets.validate({ metadata: { name: 'x' }, spec: { name: 'ab', bogus: 1, size: null } });
    expect(result.valid).toBe(true);
    expect(result.unchecked).toEqual(['<nil>', 'spec']);
    expect((result.object as { spec: unknown }).spec).toEqual({ name: 'ab', size: 1, color: 'red', enabled: true, maxUnavailable: '25%', minReplicas: 1, maxReplicas: 3 });
  });

  it('keeps the metadata, apiVersion and kind it was given (the server stores ObjectMeta whole; only the schema below it is pruned)', () => {
    const metadata = { name: 'x', namespace: 'ns', labels: { app: 'a' }, annotations: { note: 'n' }, resourceVersion: '7' };
    const obj = { apiVersion: 'example.com/v1', kind: 'Widget', metadata, spec: { name: 'ab' } };
    expect((widgets.validate(obj).object as { metadata: unknown }).metadata).toEqual(metadata);
    expect(widgets.withDefaults(obj).metadata).toEqual(metadata);
    expect(widgets.withDefaults(obj)).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
  });

  it('withDefaults throws INVALID_OBJECT with every failing path rather than return an object of the wrong type', () => {
    expect(() => widgets.withDefaults({ spec: { size: 0 } })).toThrow('Widget is invalid: [spec.name: Required value, spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1, <nil>: Invalid value: null: some validation rules were not checked');
    expect(widgets.withDefaults({ spec: {} }, 'v1beta1').spec).toEqual({ size: 2 });
  });

  it('says spec is required when it is missing', () => {
    expect(gadgets.validate({ metadata: { name: 'g' } }).errors.map((e) => e.message)).toEqual(['spec: Required value']);
  });
});
