// What the fake API server says about a CustomResourceDefinition: deleting one takes its objects with it (DELETED events, 404 after) with a warning; CEL rules it cannot evaluate are named in a warning.

import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/index.js';
import type { Logger } from '../../src/core/log.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { openWatch, sendJson } from './helpers.js';

let server: FakeApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

const crd: KubeObject = {
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [{ name: 'v1', served: true, storage: true }],
  },
} as KubeObject;

function recordingLogger(): { logger: Logger; warnings: Array<{ message: string; fields: unknown }> } {
  const warnings: Array<{ message: string; fields: unknown }> = [];
  const none = (): void => {};
  return { warnings, logger: { debug: none, info: none, error: none, warn: (message, fields) => warnings.push({ message, fields }) } };
}

describe('fake API server: deleting a CustomResourceDefinition', () => {
  it('deletes its objects (a DELETED event for each on open watches), ends those watches, answers 404 and logs a warning', async () => {
    const { logger, warnings } = recordingLogger();
    const s = (server = await startFakeApiServer({ logger }));
    s.create(CRDS, crd);
    s.create('widgets.example.com', { metadata: { name: 'a' }, spec: {} } as KubeObject);
    s.create('widgets.example.com', { metadata: { name: 'b', namespace: 'other' }, spec: {} } as KubeObject);
    const rv = s.resourceVersion();
    const watch = await openWatch(`${s.url}/apis/example.com/v1/widgets?watch=true&resourceVersion=${rv}`);
    try {
      const deleted = await sendJson(s.url, 'DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com`);
      expect(deleted.status).toBe(200);
      const events = await watch.rest(); // the watch ends once its resource is gone
      expect(events.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual(['DELETED default/a', 'DELETED other/b']);
    } finally {
      watch.close();
    }
    const gone = await fetch(`${s.url}${WIDGETS}`);
    expect(gone.status).toBe(404);
    expect(await gone.text()).toBe('404 page not found\n');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toContain('widgets.example.com');
    expect(warnings[0].fields).toMatchObject({ crd: 'widgets.example.com', deleted: 2 });
    // Recreating the CRD does not bring the objects back.
    s.create(CRDS, crd);
    expect(s.list('widgets.example.com')).toEqual([]);
  });

  it('does the same for a CRD deleted by a state operation, and logs nothing with logger: false', async () => {
    const s = (server = await startFakeApiServer({ logger: false }));
    s.create(CRDS, crd);
    s.create('widgets.example.com', { metadata: { name: 'a' }, spec: {} } as KubeObject);
    const watch = await openWatch(`${s.url}${WIDGETS}?watch=true&resourceVersion=${s.resourceVersion()}`);
    try {
      s.delete(CRDS, 'widgets.example.com');
      const events = await watch.rest();
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['DELETED a']);
    } finally {
      watch.close();
    }
    expect(() => s.list('widgets.example.com')).toThrow(/not served|neither built in/);
  });
});

describe('fake API server: CEL rules of a CRD', () => {
  it('warns once per CRD generation that its x-kubernetes-validations rules are not evaluated, naming where they are', async () => {
    const { logger, warnings } = recordingLogger();
    const s = (server = await startFakeApiServer({ logger }));
    const schema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { min: { type: 'integer' }, max: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.min <= self.max' }] } },
    };
    const withRules = structuredClone(crd) as KubeObject & { spec: { versions: Array<Record<string, unknown>> } };
    withRules.spec.versions[0].schema = { openAPIV3Schema: schema };
    s.create(CRDS, withRules);
    // The CRD's status write (Established) is no new generation: still one warning.
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toContain('x-kubernetes-validations');
    expect(warnings[0].fields).toMatchObject({ crd: 'widgets.example.com', version: 'v1', rules: 'spec' });
    // The fake stores what kube-apiserver would refuse: that is what the warning is for.
    expect(s.create('widgets.example.com', { metadata: { name: 'w' }, spec: { min: 5, max: 0 } } as KubeObject).metadata?.name).toBe('w');
    s.create(CRDS, { ...crd, metadata: { name: 'gadgets.example.com' }, spec: { ...(crd as { spec: object }).spec, names: { plural: 'gadgets', kind: 'Gadget' } } } as KubeObject);
    expect(warnings).toHaveLength(1);
  });
});
