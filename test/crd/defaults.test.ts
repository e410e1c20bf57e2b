// Defaults checked as kube-apiserver checks them when a CRD is created: as written (their members' defaults not applied first), pruned, with the server's field paths.

import { describe, expect, it } from 'vitest';
import { refusal } from './definitions.js';
import { EmbeddedResource, Type, defineCustomResource, type TSchema } from '../../src/crd/index.js';

const define = (properties: Record<string, TSchema>) => defineCustomResource({ group: 'a.example.com', names: { kind: 'A' }, versions: { v1: { spec: Type.Object(properties) } } });

describe('defaults at definition', () => {
  it('refuses an object default that lacks a required member, even when that member has a default of its own (the server does not apply it first)', () => {
    const message = refusal(() => define({ settings: Type.Object({ compress: Type.Boolean({ default: true }) }, { default: {} }) }));
    expect(message).toContain('versions.v1.schema.properties.spec.properties.settings.default: does not validate against its schema');
    expect(message).toContain('spec.validation.openAPIV3Schema.properties[spec].properties[settings].default.compress: Required value');
  });

  it('accepts an object default whose members are optional: their own defaults fill the object later', () => {
    const d = define({ settings: Type.Object({ compress: Type.Optional(Type.Boolean({ default: true })) }, { default: {} }) });
    expect(d.withDefaults({ spec: {} }).spec).toEqual({ settings: { compress: true } });
    const full = define({ settings: Type.Object({ compress: Type.Boolean({ default: true }) }, { default: { compress: true } }) });
    expect(full.withDefaults({ spec: {} }).spec).toEqual({ settings: { compress: true } });
  });

  it('refuses a default with a field the schema does not name (the server requires defaults to be pruned)', () => {
    const message = refusal(() => define({ settings: Type.Object({ level: Type.Optional(Type.Integer()) }, { default: { level: 1, extra: true } }) }));
    expect(message).toContain('properties[settings].default: Invalid value: {"extra":true,"level":1}: must not have unknown fields');
  });

  it('names the version by its place in the CRD when the versions\' schemas differ (the server keeps a shared one as spec.validation), and a failing member below the default', () => {
    const message = refusal(() =>
      defineCustomResource({
        group: 'a.example.com',
        names: { kind: 'A' },
        versions: { v1: { storage: true, spec: Type.Object({ a: Type.String() }) }, v2: { spec: Type.Object({ limits: Type.Object({ cpu: Type.Integer({ minimum: 1 }) }, { default: { cpu: 0 } }) }) } },
      }),
    );
    expect(message).toContain('versions.v2.schema.properties.spec.properties.limits.default');
    expect(message).toContain('spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[limits].default.cpu: Invalid value: 0: cpu in body should be greater than or equal to 1');
  });

  it('checks a format and an embedded resource in a default', () => {
    expect(refusal(() => define({ when: Type.String({ format: 'date-time', default: 'yesterday' }) }))).toContain('properties[when].default: Invalid value: "yesterday":  in body must be of type date-time: "yesterday"');
    const message = refusal(() => define({ template: EmbeddedResource({ default: { apiVersion: 'v1' } }) }));
    expect(message).toContain('properties[template].default.kind: Required value');
  });
});
