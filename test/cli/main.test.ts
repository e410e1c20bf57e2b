// The `kube-informer` dispatcher: subcommands, help, unknown commands and flags named, exit codes, and each subcommand loaded only when it runs.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/index.js';

const repo = resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'ki-cli-main-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCommand(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t), cwd: scratch, env: {} });
  return { code, out, err };
}

describe('kube-informer', () => {
  it('prints its help on stdout with --help, -h and help (0): every subcommand, every verb and the exit codes', async () => {
    const help = await run('--help');
    expect(help).toMatchObject({ code: 0, err: '' });
    for (const line of [
      'Usage: kube-informer <command> [flags]',
      'crd       CRD YAML from defineCustomResource definitions; TypeScript from CRDs',
      'webhook   the webhook configurations a module exports, as YAML',
      'envtest   find or build the etcd and kube-apiserver of kube-informer/envtest',
      'kube-informer crd generate <module>...',
      'kube-informer webhook manifests <module>... [--ca-file <ca.pem>]',
      'kube-informer envtest use [version] [-p overview|path|env] [-i]',
      'Exit codes: 0 done, 1 failed (the reason on stderr), 2 usage error (the usage on stderr).',
    ]) {
      expect(help.out).toContain(line);
    }
    expect(await run('-h')).toEqual(help);
    expect(await run('help')).toEqual(help);
  });

  it('prints a subcommand\'s help with `<command> --help` and `help <command>` (0)', async () => {
    for (const sub of ['crd', 'webhook', 'envtest']) {
      const help = await run(sub, '--help');
      expect(help, sub).toMatchObject({ code: 0, err: '', out: expect.stringContaining(`Usage: kube-informer ${sub} <`) });
      expect(await run('help', sub)).toEqual(help);
      expect(await run(sub, 'help')).toEqual(help);
    }
    expect((await run('help', 'crd', 'generate')).out).toContain('Usage: kube-informer crd generate <module>...');
  });

  it('refuses no command, an unknown command and an unknown flag with the usage on stderr (2), suggesting the closest', async () => {
    expect(await run()).toMatchObject({ code: 2, out: '', err: expect.stringMatching(/^kube-informer: no command given\n\nUsage: kube-informer <command>/) });
    expect(await run('crds', 'generate', 'x.ts')).toMatchObject({ code: 2, out: '', err: expect.stringMatching(/^kube-informer: unknown command "crds" \(did you mean crd\?\)\n/) });
    expect(await run('envtset', 'use')).toMatchObject({ code: 2, err: expect.stringContaining('unknown command "envtset" (did you mean envtest?)') });
    expect(await run('deploy')).toMatchObject({ code: 2, err: expect.stringMatching(/^kube-informer: unknown command "deploy"\n/) });
    expect(await run('--verbose')).toMatchObject({ code: 2, err: expect.stringMatching(/^kube-informer: unknown flag --verbose\n/) });
    expect(await run('help', 'nope')).toMatchObject({ code: 2, err: expect.stringContaining('unknown command "nope"') });
    expect(await run('crd', 'generat', 'x.ts')).toMatchObject({ code: 2, err: expect.stringMatching(/^kube-informer crd: unknown command "generat" \(did you mean generate\?\)\n/) });
    expect(await run('crd')).toMatchObject({ code: 2, err: expect.stringMatching(/^kube-informer crd: no command given\n/) });
  });

  it('prints the package version with --version', async () => {
    const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
    expect(await run('--version')).toEqual({ code: 0, out: `${version}\n`, err: '' });
  });

  it('is the one bin of package.json', () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin).toEqual({ 'kube-informer': './dist/cli/bin.js' });
  });

  // A real process: the exit code of the executable, and the modules it loaded (a resolve hook records them).
  function exec(...argv: string[]): { status: number | null; stdout: string; stderr: string; loaded: string[] } {
    const record = join(scratch, `loads-${argv.join('-').replace(/\W/g, '_')}.txt`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', join(import.meta.dirname, 'fixtures/record-loads.mjs'), join(repo, 'src/cli/bin.ts'), ...argv], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, KI_RECORD_LOADS: record, KUBE_INFORMER_CACHE: join(scratch, 'cache'), XDG_DATA_HOME: join(scratch, 'xdg'), HOME: scratch },
    });
    let loaded: string[] = [];
    try {
      loaded = readFileSync(record, 'utf8').trim().split('\n');
    } catch {
      // nothing recorded
    }
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, loaded };
  }

  it('exits with its code as a process, and loads only the subcommand it runs: envtest loads neither TypeBox nor the webhook server', () => {
    const envtest = exec('envtest', 'use', '1.37.2', '-i', '-p', 'path');
    expect(envtest.status, envtest.stderr).toBe(1);
    expect(envtest.stderr).toMatch(/^kube-informer envtest use: no etcd and kube-apiserver 1\.37\.2 found\./);
    expect(envtest.loaded.some((u) => u.endsWith('/src/envtest/command.ts'))).toBe(true);
    expect(envtest.loaded.filter((u) => u.includes('/typebox/') || u.includes('/src/webhook/') || u.includes('/src/crd/') || u.includes('/src/cli/crd.ts'))).toEqual([]);
    const webhook = exec('webhook', 'manifests', '--help');
    expect(webhook.status).toBe(0);
    expect(webhook.loaded.filter((u) => u.includes('/typebox/') || u.endsWith('/src/webhook/server.ts') || u.includes('/src/envtest/'))).toEqual([]);
    const usage = exec('crd', 'generate', '--frobnicate');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('kube-informer crd generate: unknown flag --frobnicate');
    expect(usage.loaded.filter((u) => u.includes('/src/webhook/') || u.includes('/src/envtest/'))).toEqual([]);
    expect(exec('--help').status).toBe(0);
  });

  it('init loads neither @kubernetes/client-node nor the webhook server: `npx kube-informer init` runs before any project exists, whatever client-node npx installed', () => {
    const init = exec('init', 'loads-check', '--dir', join(scratch, 'loads-check'));
    expect(init.status, init.stderr).toBe(0);
    expect(init.loaded.some((u) => u.endsWith('/src/cli/init.ts'))).toBe(true);
    expect(init.loaded.filter((u) => u.includes('/@kubernetes/client-node/') || u.includes('/src/listwatch/') || u.includes('/src/webhook/') || u.includes('/src/envtest/'))).toEqual([]);
  });
});
