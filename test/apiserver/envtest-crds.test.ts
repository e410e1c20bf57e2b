// envtest's `crds` on the real kube-apiserver: a CRD read from a YAML file keeps its CEL rules and
// schema defaults, so it behaves exactly as the same CRD passed as an object (issue 47, defect 1).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { startTestEnvironment, type TestEnvironment } from '../../src/envtest/index.js';
import { ApiStatusError, newResourceClient, resources, type KubeObject, type ResourceDescriptor } from '../../src/index.js';

const fixture = fileURLToPath(new URL('fixtures/ranges-crd.yaml', import.meta.url));
const fileGroup = 'envtest.kube-informer.dev';
const objectGroup = 'object.envtest.kube-informer.dev';
type Range = KubeObject & { spec?: { min?: number; max?: number; retention?: string } };

/** The fixture's CRD as a plain object, moved to another group so both can live on one server. */
function asObject(): CustomResourceDefinition {
  const crd = parse(readFileSync(fixture, 'utf8')) as CustomResourceDefinition;
  return { ...crd, metadata: { name: `ranges.${objectGroup}` }, spec: { ...crd.spec, group: objectGroup } };
}

describe('envtest crds: the same CRD from a YAML file and as an object', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await startTestEnvironment({ crds: [fixture], kubernetesVersion: '1.37' });
    await env.installCrds([asObject()]);
  });
  afterAll(async () => {
    await env?.stop();
  });

  const ranges = (group: string): ResourceDescriptor<Range> => ({ group, version: 'v1', resource: 'ranges', kind: 'Range', namespaced: true });

  it.each([
    ['from the YAML file', fileGroup],
    ['as an object', objectGroup],
  ])('%s: the CEL rule refuses { min: 5, max: 0 }', async (_how, group) => {
    const client = newResourceClient(env.kubeConfig, ranges(group));
    try {
      const err = await client
        .create({ apiVersion: `${group}/v1`, kind: 'Range', metadata: { name: 'inverted', namespace: 'default' }, spec: { min: 5, max: 0 } })
        .then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ApiStatusError);
      expect((err as ApiStatusError).statusCode).toBe(422);
      expect((err as Error).message).toContain('min must not exceed max');
    } finally {
      client.close();
    }
  });

  it.each([
    ['from the YAML file', fileGroup],
    ['as an object', objectGroup],
  ])('%s: the schema default applies (spec.retention: 7d)', async (_how, group) => {
    const client = newResourceClient(env.kubeConfig, ranges(group));
    try {
      const created = await client.create({ apiVersion: `${group}/v1`, kind: 'Range', metadata: { name: 'plain', namespace: 'default' }, spec: { min: 1, max: 2 } });
      expect(created.spec).toEqual({ min: 1, max: 2, retention: '7d' });
    } finally {
      client.close();
    }
  });

  it('keeps the rule and the default in the CRD the server holds', async () => {
    const crds = newResourceClient(env.kubeConfig, resources.customresourcedefinitions);
    try {
      const held = await crds.get(`ranges.${fileGroup}`);
      const spec = held.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec;
      expect((spec as Record<string, unknown> | undefined)?.['x-kubernetes-validations']).toEqual([{ rule: 'self.min <= self.max', message: 'min must not exceed max' }]);
      expect(spec?.properties?.retention?.default).toBe('7d');
    } finally {
      crds.close();
    }
  });

  it('installs a CRD already there again by server-side apply: updated to the spec given, not refused as existing', async () => {
    const changed = asObject();
    changed.spec.names.shortNames = ['rg'];
    await expect(env.installCrds([fixture])).resolves.toEqual([`ranges.${fileGroup}`]);
    await expect(env.installCrds([changed])).resolves.toEqual([`ranges.${objectGroup}`]);
    const crds = newResourceClient(env.kubeConfig, resources.customresourcedefinitions);
    try {
      expect((await crds.get(`ranges.${objectGroup}`)).spec.names.shortNames).toEqual(['rg']);
    } finally {
      crds.close();
    }
  });
});
