// extract: the fields a manager owns, read from managedFields (FieldsV1: f:, k:, v:, i:, '.'), as client-go's Extract… does.

import { describe, expect, it } from 'vitest';
import { extract, formatFieldPath } from '../../src/objects.js';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'default',
    labels: { app: 'web', team: 'a' },
    finalizers: ['x.example.com/a', 'y.example.com/b'],
    managedFields: [
      {
        manager: 'ctl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:finalizers': { 'v:"x.example.com/a"': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {} } } } },
            'f:strategy': { '.': {} },
          },
        },
      },
      { manager: 'ctl', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } } } },
      { manager: 'hpa', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:args': { 'i:1': {} } } } },
      { manager: 'kubelet', operation: 'Apply', subresource: 'status', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:replicas': {} } } },
    ],
  },
  spec: {
    replicas: 3,
    args: ['a', 'b', 'c'],
    strategy: { type: 'RollingUpdate' },
    template: { spec: { containers: [{ name: 'sidecar', image: 's:1' }, { name: 'app', image: 'app:2', ports: [{ containerPort: 80 }] }] } },
  },
  status: { replicas: 2, ready: 1 },
};

describe('extract', () => {
  it('returns the fields of the manager’s Apply entry, with the identity, and nothing of its Update entry', () => {
    expect(extract(deployment, 'ctl')).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, finalizers: ['x.example.com/a'] },
      spec: { replicas: 3, strategy: {}, template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } },
    });
  });

  it('reads i: (by index) steps, and the status subresource’s entry only when asked', () => {
    expect(extract(deployment, 'hpa').spec).toEqual({ args: ['b'] });
    expect(extract(deployment, 'kubelet')).not.toHaveProperty('status');
    expect(extract(deployment, 'kubelet', { subresource: 'status' }).status).toEqual({ replicas: 2 });
  });

  it('gives the identity alone for a manager that never applied, and refuses an object without its identity', () => {
    expect(extract(deployment, 'nobody')).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' } });
    expect(() => extract({ metadata: { name: 'x' } }, 'ctl')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it('returns a copy: changing it leaves the object alone', () => {
    const mine = extract(deployment, 'ctl');
    (mine.spec as { replicas: number }).replicas = 9;
    expect(deployment.spec.replicas).toBe(3);
  });
});

describe('formatFieldPath', () => {
  it('prints paths as conflicts name them', () => {
    expect(formatFieldPath(['f:data', 'f:key'])).toBe('.data.key');
    expect(formatFieldPath(['f:spec', 'f:containers', 'k:{"name":"app"}', 'f:image'])).toBe('.spec.containers[name="app"].image');
    expect(formatFieldPath(['f:metadata', 'f:finalizers', 'v:"a"'])).toBe('.metadata.finalizers[="a"]');
    expect(formatFieldPath(['f:spec', 'f:args', 'i:1', '.'])).toBe('.spec.args[1]');
  });
});
