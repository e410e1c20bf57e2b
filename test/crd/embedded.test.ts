// x-kubernetes-embedded-resource as kube-apiserver treats it: apiVersion and kind required and checked, metadata kept as ObjectMeta.

import { describe, expect, it } from 'vitest';
import { EmbeddedResource, Type, defineCustomResource } from '../../src/crd/index.js';

const jobs = defineCustomResource({
  group: 'a.example.com',
  names: { kind: 'Job' },
  versions: { v1: { spec: Type.Object({ template: EmbeddedResource(), templates: Type.Optional(Type.Array(EmbeddedResource())) }) } },
});

const messages = (spec: unknown) => jobs.validate({ spec }).errors.map((e) => e.message);

describe('an embedded resource', () => {
  it('requires apiVersion and kind, as the server does', () => {
    expect(messages({ template: { apiVersion: 'v1', metadata: { name: 'x' } } })).toEqual(['spec.template.kind: Required value']);
    expect(messages({ template: {} })).toEqual(['spec.template.apiVersion: Required value', 'spec.template.kind: Required value']);
    expect(messages({ template: { apiVersion: 'v1', kind: 'ConfigMap' }, templates: [{ kind: 'Pod' }] })).toEqual(['spec.templates[0].apiVersion: Required value']);
  });

  it('checks their values: not empty, one slash at most, a kind that is a DNS-1035 label in any case', () => {
    expect(messages({ template: { apiVersion: '', kind: 'X' } })).toEqual(['spec.template.apiVersion: Invalid value: "": must not be empty']);
    expect(messages({ template: { apiVersion: 'a/b/c', kind: 'X' } })).toEqual(['spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']);
    expect(messages({ template: { apiVersion: 'v1', kind: 'Bad_Kind' } })[0]).toMatch(/^spec\.template\.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of/);
    // The server refuses this one while it decodes the request (400 BadRequest, `… cannot be handled as a Job: <the error>`).
    expect(messages({ template: { apiVersion: 5, kind: 'X' } })).toEqual(['spec.template.apiVersion: Invalid value: 5: must be a string']);
  });

  it('keeps its other fields and only the ObjectMeta fields of its metadata', () => {
    const template = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { a: 'b' }, bogus: 1, finalizers: [] }, data: { k: 'v' } };
    const result = jobs.validate({ spec: { template } });
    expect(result.valid).toBe(true);
    expect((result.object as { spec: unknown }).spec).toEqual({ template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { a: 'b' } }, data: { k: 'v' } } });
  });

  it('the object\'s own metadata is kept as ObjectMeta too', () => {
    const obj = { apiVersion: 'a.example.com/v1', kind: 'Job', metadata: { name: 'j', namespace: 'n', unknownField: 1 }, spec: { template: { apiVersion: 'v1', kind: 'Pod' } } };
    expect(jobs.withDefaults(obj).metadata).toEqual({ name: 'j', namespace: 'n' });
  });
});

describe("the object's own metadata, read into ObjectMeta and written back", () => {
  it('keeps a zero deletionGracePeriodSeconds (a pointer in ObjectMeta: omitempty keeps 0) and drops a zero generation (a plain int64)', async () => {
    const { pruneObject } = await import('../../src/crd/index.js');
    const metadata = { name: 'w', deletionGracePeriodSeconds: 0, deletionTimestamp: '2026-01-01T00:00:00Z', generation: 0, finalizers: [] };
    const pruned = pruneObject({ type: 'object', properties: {} }, { apiVersion: 'x/v1', kind: 'X', metadata }) as { metadata: Record<string, unknown> };
    expect(pruned.metadata).toEqual({ name: 'w', deletionGracePeriodSeconds: 0, deletionTimestamp: '2026-01-01T00:00:00Z' });
  });
});
