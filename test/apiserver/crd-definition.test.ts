// The definition and its validator held to kube-apiserver (issue 47, defect 3): formats, defaults as written, embedded resources, an unknown format, the default plural.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { ApiStatusError, newResourceClient, resources } from '../../src/index.js';
import { EmbeddedResource, Type, defineCustomResource, ensureCustomResourceDefinitions, validateObject, type StructuralSchema, type TSchema } from '../../src/crd/index.js';
import { checkSchemaDefaults } from '../../src/crd/defaults.js';
import { sortedJson } from '../../src/crd/validate.js';
import { formatCases, stamps } from '../crd/format-cases.js';
import { startRealApiServer, type RealApiServer } from './harness.js';

const GROUP = 'crddef.kube-informer.dev';

/**
 * The causes of a 422 answer as `field: message`, sorted; [] for an accepted write. A 400 of the
 * decoder (`… cannot be handled as a Stamp: <field error>`) gives its one field error.
 */
function causes(err: unknown): string[] {
  if (err === undefined) return [];
  if (!(err instanceof ApiStatusError)) throw err;
  const decoding = / cannot be handled as a \w+: (.*)$/.exec(err.message);
  if (err.statusCode === 400 && decoding !== null) return [decoding[1]];
  if (err.statusCode !== 422) return [`${err.statusCode} ${err.message}`];
  const list = (err.status as { details?: { causes?: { field?: string; message?: string }[] } }).details?.causes ?? [];
  return list.map((c) => `${c.field === undefined || c.field === '' ? '<nil>' : c.field}: ${c.message}`).sort();
}

/** The client-side errors in the same shape (the server's cause message is the error without its `field: ` prefix). */
const local = (errors: readonly { field: string; message: string }[]): string[] => errors.map((e) => `${e.field}: ${e.message.slice(e.field.length + 2)}`).sort();

/** A CRD of one version whose spec is `spec` (a structural schema), named after `kind`. */
function rawCrd(kind: string, spec: StructuralSchema): CustomResourceDefinition {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } as never } }],
    },
  };
}

describe('the definition and its validator against kube-apiserver', () => {
  let server: RealApiServer;
  const namespace = `ki-crddef-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    server = await startRealApiServer();
    const namespaces = newResourceClient(server.kubeConfig, resources.namespaces);
    await namespaces.create({ metadata: { name: namespace } });
    namespaces.close();
    const crds = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    await ensureCustomResourceDefinitions(crds, [stamps]);
    crds.close();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses exactly the formatted values and embedded resources the client-side validator refuses, in the same words, and stores the same', async () => {
    const client = newResourceClient(server.kubeConfig, stamps.descriptor);
    const report: string[] = [];
    for (const [i, c] of formatCases.entries()) {
      const obj = { apiVersion: `${stamps.crd.spec.group}/v1`, kind: 'Stamp', metadata: { name: `s${i}`, namespace }, spec: c.spec };
      const mine = stamps.validate(obj);
      let stored: { spec?: unknown } | undefined;
      let err: unknown;
      try {
        stored = (await client.create(obj as never, { dryRun: true })) as { spec?: unknown };
      } catch (e) {
        err = e;
      }
      const theirs = causes(err);
      const title = JSON.stringify(c.spec);
      if (JSON.stringify(theirs) !== JSON.stringify(local(mine.errors))) report.push(`${title}: server ${JSON.stringify(theirs)}, client ${JSON.stringify(local(mine.errors))}`);
      if ((err === undefined) !== c.valid) report.push(`table ${title}: the server ${err === undefined ? `stores it as ${JSON.stringify(stored?.spec)}` : 'refuses it'}`);
      if (stored !== undefined && sortedJson(stored.spec) !== sortedJson((mine.object as { spec?: unknown }).spec)) {
        report.push(`stored ${title}: server ${JSON.stringify(stored.spec)}, client ${JSON.stringify((mine.object as { spec?: unknown }).spec)}`);
      }
    }
    console.log(`crd formats: ${formatCases.length} objects, ${formatCases.filter((c) => !c.valid).length} refused\n${report.join('\n')}`);
    expect(report).toEqual([]);
    client.close();
  });

  it('refuses the CRDs whose defaults do not validate as written, with the causes checkSchemaDefaults gives', async () => {
    const crds = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const specs: Record<string, StructuralSchema> = {
      Required: { type: 'object', properties: { settings: { type: 'object', required: ['compress'], properties: { compress: { type: 'boolean', default: true } }, default: {} } } },
      Unpruned: { type: 'object', properties: { settings: { type: 'object', properties: { level: { type: 'integer' } }, default: { level: 1, extra: true } } } },
      Minimum: { type: 'object', properties: { size: { type: 'integer', minimum: 1, default: 0 }, limits: { type: 'object', properties: { cpu: { type: 'integer', minimum: 1 } }, default: { cpu: 0 } } } },
      Format: { type: 'object', properties: { when: { type: 'string', format: 'date-time', default: 'yesterday' }, tags: { type: 'array', items: { type: 'string', enum: ['a'] }, default: ['b'] } } },
      Embedded: { type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, default: { apiVersion: 'v1' } } } },
    };
    const report: string[] = [];
    for (const [kind, spec] of Object.entries(specs)) {
      const err = await crds.create(rawCrd(`Def${kind}`, spec), { dryRun: true }).then(() => undefined, (e: unknown) => e);
      const theirs = causes(err);
      const mine = local(checkSchemaDefaults({ type: 'object', properties: { spec } }, 'spec.validation.openAPIV3Schema'));
      console.log(`crd defaults ${kind}: ${JSON.stringify(theirs)}`);
      if (JSON.stringify(theirs) !== JSON.stringify(mine)) report.push(`${kind}: server ${JSON.stringify(theirs)}, client ${JSON.stringify(mine)}`);
    }
    expect(report).toEqual([]);
    // The definition the issue names is refused before it reaches the server, with the server's cause in the message.
    expect(() => defineCustomResource({ group: GROUP, names: { kind: 'Archive' }, versions: { v1: { spec: Type.Object({ settings: Type.Object({ compress: Type.Boolean({ default: true }) }, { default: {} }) }) } } })).toThrow(
      'spec.validation.openAPIV3Schema.properties[spec].properties[settings].default.compress: Required value',
    );
    crds.close();
  });

  it('accepts an object default whose members are optional, and then fills the members\' defaults in, as withDefaults does', async () => {
    const archives = defineCustomResource({
      group: GROUP,
      names: { kind: 'Archive' },
      versions: { v1: { spec: Type.Object({ settings: Type.Object({ compress: Type.Optional(Type.Boolean({ default: true })), level: Type.Optional(Type.Integer()) }, { default: {} }) }) } },
    });
    const crds = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    await ensureCustomResourceDefinitions(crds, [archives]);
    crds.close();
    const client = newResourceClient(server.kubeConfig, archives.descriptor);
    const obj = { apiVersion: `${GROUP}/v1`, kind: 'Archive', metadata: { name: 'a', namespace }, spec: {} };
    const created = (await client.create(obj as never)) as { spec?: unknown };
    expect(created.spec).toEqual({ settings: { compress: true } });
    expect(created.spec).toEqual(archives.withDefaults(obj).spec);
    client.close();
  });

  it('ignores a format it does not know (a warning only): the value passes, as validateObject lets it; defineCustomResource refuses the format instead', async () => {
    const spec: StructuralSchema = { type: 'object', properties: { when: { type: 'string', format: 'date-tme' } } };
    const crds = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    await crds.create(rawCrd('Misspelt', spec));
    crds.close();
    const descriptor = { group: GROUP, version: 'v1', resource: 'misspelts', kind: 'Misspelt', namespaced: true };
    const client = newResourceClient(server.kubeConfig, descriptor);
    const obj = { apiVersion: `${GROUP}/v1`, kind: 'Misspelt', metadata: { name: 'm', namespace }, spec: { when: 'yesterday' } };
    let created: { spec?: unknown } | undefined;
    for (let i = 0; i < 100 && created === undefined; i++) {
      created = await client.create(obj as never).then(
        (x) => x as { spec?: unknown },
        async (e: unknown) => {
          if (e instanceof ApiStatusError && e.statusCode === 404) return new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100));
          throw e;
        },
      );
    }
    expect(created?.spec).toEqual({ when: 'yesterday' });
    expect(validateObject({ type: 'object', properties: { spec } }, obj).errors).toEqual([]);
    expect(() => defineCustomResource({ group: GROUP, names: { kind: 'Misspelt' }, versions: { v1: { spec: Type.Object({ when: Type.String({ format: 'date-tme' }) }) } } })).toThrow(
      'versions.v1.spec.properties.when.format: unknown format "date-tme" (did you mean "date-time"?)',
    );
    client.close();
  });

  it('serves a custom resource under the default plural (NetworkPolicy → networkpolicies)', async () => {
    const spec: Record<string, TSchema> = { template: Type.Optional(EmbeddedResource()) };
    const policies = defineCustomResource({ group: GROUP, names: { kind: 'NetworkPolicy' }, versions: { v1: { spec: Type.Object(spec) } } });
    expect(policies.crd.metadata?.name).toBe(`networkpolicies.${GROUP}`);
    const crds = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const [installed] = await ensureCustomResourceDefinitions(crds, [policies]);
    crds.close();
    expect(installed.spec.names).toMatchObject({ plural: 'networkpolicies', singular: 'networkpolicy', kind: 'NetworkPolicy' });
    const client = newResourceClient(server.kubeConfig, policies.descriptor);
    const created = await client.create({ apiVersion: `${GROUP}/v1`, kind: 'NetworkPolicy', metadata: { name: 'p', namespace }, spec: {} } as never);
    expect(created.metadata?.name).toBe('p');
    client.close();
  });
});
