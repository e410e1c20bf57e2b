// `kube-informer crd types`: types from real CRDs (golden files that tsc compiles under strict), honest loose types. The command's own cases: test/cli/crd.test.ts.

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { runCommand } from '../../src/cli/index.js';
import { crdTypes } from '../../src/crd/index.js';
import { examplesSource, fixtures, sets } from './examples-gen.js';
import type { HTTPRoute, HTTPRouteV1, ReferenceGrantV1beta1, gatewaysV1 } from './generated/gateway-api.js';
import type { ServiceMonitor } from './generated/prometheus-operator.js';
import type { Certificate } from './generated/cert-manager.js';

async function run(argv: string[], cwd = process.cwd()): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCommand(['crd', ...argv], { stdout: (t) => (out += t), stderr: (t) => (err += t), cwd, env: {} });
  return { code, out, err };
}

function crd(versionSchema: unknown): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: { group: 'example.com', scope: 'Cluster', names: { kind: 'Thing', plural: 'things' }, versions: [{ name: 'v1', served: true, storage: true, ...(versionSchema === undefined ? {} : { schema: { openAPIV3Schema: versionSchema as never } }) }] },
  };
}

/** Where each fixture comes from in the Go module cache (`go mod download <module>@<version>`): test/fixtures/crd/README.md. */
const origins: Record<string, { module: string; files: Record<string, string> }> = {
  'gateway-api': {
    module: 'sigs.k8s.io/gateway-api@v1.6.3',
    files: {
      'gateway.networking.k8s.io_gatewayclasses.yaml': 'config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml',
      'gateway.networking.k8s.io_gateways.yaml': 'config/crd/standard/gateway.networking.k8s.io_gateways.yaml',
      'gateway.networking.k8s.io_httproutes.yaml': 'config/crd/standard/gateway.networking.k8s.io_httproutes.yaml',
      'gateway.networking.k8s.io_referencegrants.yaml': 'config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml',
      'basic-http.yaml': 'examples/standard/basic-http.yaml',
      'http-filter.yaml': 'examples/standard/http-filter.yaml',
      'reference-grant.yaml': 'examples/standard/reference-grant.yaml',
      'gateway.yaml': 'examples/standard/simple-gateway/gateway.yaml',
    },
  },
  'prometheus-operator': {
    module: 'github.com/prometheus-operator/prometheus-operator@v0.85.0',
    files: {
      'monitoring.coreos.com_prometheusrules.yaml': 'example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml',
      'monitoring.coreos.com_servicemonitors.yaml': 'example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml',
      'example-app-service-monitor.yaml': 'example/user-guides/getting-started/example-app-service-monitor.yaml',
      'prometheus-example-rules.yaml': 'example/user-guides/alerting/prometheus-example-rules.yaml',
    },
  },
  'cert-manager': {
    module: 'github.com/cert-manager/cert-manager@v1.18.2',
    files: { 'crd-certificates.yaml': 'deploy/crds/crd-certificates.yaml', 'cert-manager-resources.yaml': 'test/fixtures/cert-manager-resources.yaml' },
  },
};
const moduleCache = process.env.GOMODCACHE ?? join(process.env.GOPATH ?? join(homedir(), 'go'), 'pkg', 'mod');
const cached = Object.values(origins).every((o) => existsSync(join(moduleCache, o.module)));

describe('the real CRDs', () => {
  it('are every file the sets use, each with its origin in a module', () => {
    for (const set of sets) expect(Object.keys(origins[set.name].files).sort(), set.name).toEqual([...set.crds, ...set.examples].sort());
  });

  // Runs where `go mod download` filled the module cache (the real-apiserver machines do); elsewhere it says it skipped.
  it.skipIf(!cached)('are the Go module proxy\'s files, byte for byte (from the module cache)', () => {
    for (const [name, origin] of Object.entries(origins)) {
      for (const [file, path] of Object.entries(origin.files)) {
        expect(readFileSync(join(fixtures, name, file), 'utf8'), `${name}/${file} = ${origin.module}/${path}`).toBe(readFileSync(join(moduleCache, origin.module, path), 'utf8'));
      }
    }
  });
});

describe('crd types', () => {
  it.each(sets.map((s) => [s.name, s] as const))('regenerates the committed types of %s exactly (tsc compiles them under strict)', async (_name, set) => {
    const { code, out, err } = await run(['types', ...set.crds.map((f) => join(fixtures, set.name, f)), '--import-from', '../../../src/index.js']);
    expect(code, err).toBe(0);
    const committed = readFileSync(join(import.meta.dirname, 'generated', `${set.name}.ts`), 'utf8');
    // The header names the files as given; compare the rest.
    expect(out.split('\n').slice(1).join('\n')).toBe(committed.split('\n').slice(1).join('\n'));
  });

  it('types the modules\' own example objects (examples.ts is current; tsc checks it)', () => {
    const { source, typed, skipped } = examplesSource();
    expect(readFileSync(join(import.meta.dirname, 'generated', 'examples.ts'), 'utf8')).toBe(source);
    expect(typed).toBe(10);
    expect(skipped).toEqual(['cert-manager/cert-manager-resources.yaml: Issuer cert-manager.io/v1']);
  });

  it('gives precise types, not unknown: enums, required fields, int-or-string, descriptors', () => {
    expectTypeOf<NonNullable<HTTPRouteV1['spec']['rules']>[number]['matches']>().not.toBeUnknown();
    expectTypeOf<NonNullable<NonNullable<NonNullable<HTTPRoute['spec']['rules']>[number]['matches']>[number]['path']>['type']>().toEqualTypeOf<'Exact' | 'PathPrefix' | 'RegularExpression' | undefined>();
    expectTypeOf<ServiceMonitor['spec']['selector']['matchLabels']>().toEqualTypeOf<{ [key: string]: string } | undefined>();
    expectTypeOf<NonNullable<ServiceMonitor['spec']['endpoints']>[number]['targetPort']>().toEqualTypeOf<number | string | undefined>();
    expectTypeOf<NonNullable<Certificate['spec']>['secretName']>().toEqualTypeOf<string>();
    expectTypeOf<ReferenceGrantV1beta1['spec']['from'][number]['kind']>().toEqualTypeOf<string>();
    expectTypeOf<typeof gatewaysV1.kind>().toEqualTypeOf<string>();
    // @ts-expect-error: the HTTPRoute type refuses a port given as text.
    const bad: HTTPRouteV1 = { spec: { parentRefs: [{ name: 'g', port: '80' }] } };
    expect(bad).toBeDefined();
  });

  it('says so, instead of guessing, for a version with no schema or preserve-unknown-fields at the root', () => {
    const none = crdTypes([crd(undefined)], 'none.yaml');
    expect(none.notes).toEqual(['things.example.com v1: the version has no schema: typed { [key: string]: unknown }']);
    expect(none.source).toContain('// Note: things.example.com v1: the version has no schema');
    expect(none.source).toMatch(/export interface ThingV1 \{[^}]*metadata\?: ObjectMeta;\n {2}\[key: string\]: unknown;\n\}/);
    const open = crdTypes([crd({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true })], 'open.yaml');
    expect(open.notes).toEqual(['things.example.com v1: x-kubernetes-preserve-unknown-fields at the root: other fields typed unknown']);
    const inner = crdTypes([crd({ type: 'object', properties: { spec: { type: 'object', properties: { raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, n: { 'x-kubernetes-int-or-string': true }, c: { type: 'string', enum: ['a', 'b'], nullable: true } } } } })], 'inner.yaml');
    expect(inner.notes).toEqual(['things.example.com v1: spec.raw: x-kubernetes-preserve-unknown-fields with no properties: typed { [key: string]: unknown }']);
    expect(inner.source).toContain('raw?: {\n      [key: string]: unknown;\n    };');
    expect(inner.source).toContain('n?: number | string;');
    expect(inner.source).toContain('c?: "a" | "b" | null;');
  });
});
