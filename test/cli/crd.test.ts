// `kube-informer crd`: generate (YAML from definitions, TypeScript inputs, the conversion warning) and types (files, flags, exit codes).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { runCommand } from '../../src/cli/index.js';
import { conversionWarning } from '../../src/crd/cli.js';
import { Type, defineCustomResource } from '../../src/crd/index.js';
import { crdConversion } from '../../src/webhook/index.js';
import { fixtures } from '../crd/examples-gen.js';
import { gadgets, widgets } from '../crd/definitions.js';

const definitions = join(import.meta.dirname, '../crd/definitions.ts');
const dir = mkdtempSync(join(tmpdir(), 'ki-crd-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(argv: string[], cwd = process.cwd()): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCommand(['crd', ...argv], { stdout: (t) => (out += t), stderr: (t) => (err += t), cwd, env: {} });
  return { code, out, err };
}

describe('kube-informer crd generate', () => {
  it("writes one YAML document per exported definition, equal to the definition's CRD, from a TypeScript module", async () => {
    const { code, out } = await run(['generate', definitions]);
    expect(code).toBe(0);
    const docs = parseAllDocuments(out).map((d) => d.toJS() as unknown);
    expect(docs).toEqual([widgets.crd, gadgets.crd]);
    expect(parse(out.split('---\n')[0])).toEqual(widgets.crd);
  });

  it('fails (1) with the reason for a module that exports no definition, and for a file that is not there', async () => {
    const none = await run(['generate', join(import.meta.dirname, '../crd/examples-gen.ts')]);
    expect(none).toMatchObject({ code: 1, out: '' });
    expect(none.err).toMatch(/^kube-informer crd generate: .*examples-gen\.ts exports no custom resource definition/);
    const missing = await run(['generate', 'nope.ts'], dir);
    expect(missing).toMatchObject({ code: 1, err: expect.stringContaining('nope.ts: no such file') });
  });

  it('warns on stderr when a CRD serves two schemas under conversion strategy None, naming the CRD, the versions and the fix', async () => {
    const { code, err } = await run(['generate', definitions]);
    expect(code).toBe(0);
    expect(err).toBe(
      'warning: CustomResourceDefinition widgets.crdtest.kube-informer.dev serves 2 versions with different schemas (v1, v1beta1) under conversion strategy None: ' +
        'the API server converts between them by rewriting apiVersion only. Serve a conversion webhook (conversionWebhook of kube-informer/webhook) and export the definition with ' +
        'spec.conversion = crdConversion({ endpoint, path }) instead (docs/custom-resources.md, "Conversion between versions")\n',
    );
  });

  it('does not warn with a conversion webhook attached, with one served version, or with equal schemas', () => {
    const spec = Type.Object({ n: Type.Integer() });
    const two = defineCustomResource({ group: 'example.com', names: { kind: 'Thing' }, versions: { v1: { storage: true, spec }, v2: { spec: Type.Object({ m: Type.String() }) } } });
    expect(conversionWarning(two.crd)).toContain('things.example.com serves 2 versions');
    const conversion = crdConversion({ endpoint: { service: { namespace: 'system', name: 'webhooks' } }, path: '/convert' });
    expect(conversionWarning({ ...two.crd, spec: { ...two.crd.spec, conversion } })).toBeUndefined();
    const same = defineCustomResource({ group: 'example.com', names: { kind: 'Same' }, versions: { v1: { storage: true, spec }, v2: { spec } } });
    expect(conversionWarning(same.crd)).toBeUndefined();
    const oneServed = defineCustomResource({ group: 'example.com', names: { kind: 'Old' }, versions: { v1: { storage: true, spec }, v1beta1: { served: false, spec: Type.Object({ m: Type.String() }) } } });
    expect(conversionWarning(oneServed.crd)).toBeUndefined();
  });

  it('takes a definition exported with its conversion stanza (as docs/custom-resources.md shows), without a warning', async () => {
    const two = defineCustomResource({ group: 'example.com', names: { kind: 'Backup' }, versions: { v1: { storage: true, spec: Type.Object({ target: Type.String() }) }, v2: { spec: Type.Object({ targets: Type.Array(Type.String()) }) } } });
    const conversion = crdConversion({ endpoint: { service: { namespace: 'system', name: 'webhooks' } }, path: '/convert-backups' });
    const crd = { ...two.crd, spec: { ...two.crd.spec, conversion } };
    writeFileSync(join(dir, 'with-conversion.mjs'), `export const backups = { crd: ${JSON.stringify(crd)} };\n`);
    const { code, out, err } = await run(['generate', 'with-conversion.mjs'], dir);
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(parse(out)).toEqual(crd);
  });

  it('refuses a flag it does not take (2), naming the flag', async () => {
    const r = await run(['generate', definitions, '--output', 'x.yaml']);
    expect(r).toMatchObject({ code: 2, out: '' });
    expect(r.err).toContain('kube-informer crd generate: unknown flag --output');
    expect(r.err).toContain('Usage: kube-informer crd generate <module>...');
    expect((await run(['generate'])).err).toContain('kube-informer crd generate: needs <module>... (got nothing)');
  });
});

describe('kube-informer crd types', () => {
  it('writes the notes on stderr and exits 0; refuses a file with no CRD (1) and a missing argument (2)', async () => {
    const ok = await run(['types', join(fixtures, 'gateway-api', 'gateway.networking.k8s.io_gatewayclasses.yaml'), '--import-from=kube-informer']);
    expect(ok).toMatchObject({ code: 0, out: expect.stringContaining("import type { ResourceDescriptor } from 'kube-informer';") });
    const noCrd = await run(['types', join(fixtures, 'gateway-api', 'gateway.yaml')]);
    expect(noCrd.code).toBe(1);
    expect(noCrd.err).toContain('no CustomResourceDefinition found');
    const usage = await run(['types']);
    expect(usage).toMatchObject({ code: 2, err: expect.stringContaining('kube-informer crd types: needs a CRD file or --name') });
    expect(usage.err).toContain('Usage: kube-informer crd types [<crd.yaml>...] [--import-from <module>] [--name <crd-name>] [--kubeconfig <file>]');
  });

  it('names a misspelt flag with the closest known one, and a flag without its value', async () => {
    expect((await run(['types', 'x.yaml', '--import-frm', 'y'])).err).toContain('unknown flag --import-frm (did you mean --import-from?)');
    expect((await run(['types', 'x.yaml', '--kubeconfig'])).err).toContain('flag --kubeconfig needs a value (<file>)');
    expect((await run(['types', 'x.yaml', '--name', 'a.b'])).err).toContain('give CRD files or --name, not both');
    expect((await run(['types', 'x.yaml', '--kubeconfig', 'k'])).err).toContain('--kubeconfig goes with --name');
  });

  it('prints its help on stdout (0): the usage, every flag and the exit codes', async () => {
    const help = await run(['types', '--help']);
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toContain('Usage: kube-informer crd types');
    for (const flag of ['--import-from <module>', '--name <crd-name>', '--kubeconfig <file>', '-h, --help']) expect(help.out).toContain(flag);
    expect(help.out).toContain('Exit codes: 0 done, 1 failed (the reason on stderr), 2 usage error (the usage on stderr).');
    expect((await run(['help', 'types'])).out).toBe(help.out);
  });
});
