// `kube-informer webhook manifests`: the webhook configurations modules export, as YAML; flags and exit codes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCommand } from '../../src/cli/index.js';
import { manifestYaml, mutatingWebhookConfiguration, validatingWebhookConfiguration } from '../../src/webhook/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ki-webhook-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rules = [{ operations: ['CREATE' as const], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }];
const validating = validatingWebhookConfiguration({ name: 'widgets', endpoint: { service: { namespace: 'system', name: 'webhooks' } }, webhooks: [{ name: 'v.example.com', path: '/validate', rules }] });
const mutating = mutatingWebhookConfiguration({ name: 'widgets', endpoint: { service: { namespace: 'system', name: 'webhooks' } }, caBundle: 'T1dO', webhooks: [{ name: 'm.example.com', path: '/mutate', rules }] });
// A module as a user writes it: configurations exported one by one or in a list, next to other exports.
writeFileSync(join(dir, 'hooks.mjs'), `export const validating = ${JSON.stringify(validating)};\nexport const all = [${JSON.stringify(mutating)}];\nexport const port = 9443;\n`);
writeFileSync(join(dir, 'none.mjs'), 'export const x = 1;\n');
writeFileSync(join(dir, 'ca.pem'), 'CA PEM');

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(['webhook', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: dir, env: {} });
  return { code, stdout, stderr };
}

describe('kube-informer webhook manifests', () => {
  it('prints every webhook configuration a module exports as YAML documents, in export order', async () => {
    const r = await run('manifests', 'hooks.mjs');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(parseAllDocuments(r.stdout).map((d) => d.toJS())).toEqual([validating, mutating]);
    expect(r.stdout).toBe(manifestYaml([validating, mutating]));
  });

  it('sets the caBundle of every webhook without one from --ca-file, and keeps one already set', async () => {
    const r = await run('manifests', 'hooks.mjs', '--ca-file', 'ca.pem');
    const [v, m] = parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(v.webhooks[0].clientConfig.caBundle).toBe(Buffer.from('CA PEM').toString('base64'));
    expect(m.webhooks[0].clientConfig.caBundle).toBe('T1dO');
  });

  it('fails with the reason for a module without configurations (1), and prints the usage for bad arguments (2)', async () => {
    expect(await run('manifests', 'none.mjs')).toMatchObject({ code: 1, stdout: '', stderr: 'kube-informer webhook manifests: none.mjs exports no ValidatingWebhookConfiguration or MutatingWebhookConfiguration\n' });
    expect(await run('manifests')).toMatchObject({ code: 2, stderr: expect.stringContaining('kube-informer webhook manifests: needs <module>... (got nothing)') });
    expect(await run('manifests', 'hooks.mjs', '--ca-file')).toMatchObject({ code: 2, stderr: expect.stringContaining('flag --ca-file needs a value (<ca.pem>)') });
    expect(await run('manifests', 'hooks.mjs', '--ca')).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown flag --ca (did you mean --ca-file?)') });
    expect(await run('manifests', 'hooks.mjs', '--ca-file', 'missing.pem')).toMatchObject({ code: 1, stderr: expect.stringContaining('missing.pem') });
    expect(await run('generate')).toMatchObject({ code: 2, stderr: expect.stringContaining('kube-informer webhook: unknown command "generate"') });
  });

  it('prints its help on stdout (0)', async () => {
    const help = await run('manifests', '--help');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('Usage: kube-informer webhook manifests <module>... [--ca-file <ca.pem>]');
    expect((await run('--help')).stdout).toContain('manifests  YAML of every webhook configuration each module exports');
  });
});
