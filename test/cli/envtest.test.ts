// `kube-informer envtest use`: prints a cached set's path as setup-envtest does, builds the pinned release when none is cached.
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSubcommand } from '../../src/cli/args.js';
import { envtestCommand } from '../../src/cli/envtest.js';
import { fakeBinaries, scratch } from '../envtest/fake-binaries.js';

let s: ReturnType<typeof scratch>;
beforeEach(() => {
  s = scratch();
});
afterEach(() => rmSync(s.root, { recursive: true, force: true }));

async function run(argv: string[], build?: () => Promise<string>): Promise<{ code: number; out: string; err: string; builds: number }> {
  let out = '';
  let err = '';
  let builds = 0;
  const env = { HOME: s.root, KUBE_INFORMER_CACHE: join(s.root, 'cache'), XDG_DATA_HOME: join(s.root, 'xdg'), KUBEBUILDER_ASSETS: '/elsewhere' };
  const command = envtestCommand(async () => {
    builds++;
    if (!build) throw new Error('no build in this test');
    return build();
  });
  const code = await runSubcommand(command, argv, { env, stdout: (t) => (out += t), stderr: (t) => (err += t), cwd: s.root });
  return { code, out, err, builds };
}

function cache(version: string): string {
  const dir = join(s.root, 'cache', 'bin', `k8s-v${version}-etcd-v3.7.0-0123abcd`);
  mkdirSync(join(s.root, 'cache', 'bin'), { recursive: true });
  renameSync(fakeBinaries(s.root, { version }), dir);
  return dir;
}

describe('kube-informer envtest use', () => {
  it('prints a cached set as a path, an export line or an overview, without building', async () => {
    const dir = cache('1.37.2');
    expect(await run(['use', '1.37.2', '-p', 'path'])).toEqual({ code: 0, out: `${dir}\n`, err: '', builds: 0 });
    expect((await run(['use', '-p', 'env'])).out).toBe(`export KUBEBUILDER_ASSETS='${dir}'\n`);
    expect((await run(['use', '1.37'])).out).toMatch(new RegExp(`^Version: 1\\.37\\.2\\nOS/Arch: [a-z0-9]+/[a-z0-9]+\\nPath: ${dir.replaceAll('/', '\\/')}\\n$`));
  });

  it('builds the pinned release when nothing is cached, then prints where it landed', async () => {
    const built = fakeBinaries(s.root);
    const result = await run(['use', '1.37.2', '-p', 'path'], async () => built);
    expect(result).toMatchObject({ code: 0, out: `${built}\n`, builds: 1 });
  });

  it('with -i never builds, and fails saying what to run', async () => {
    const result = await run(['use', '1.37.2', '-i', '-p', 'path']);
    expect(result).toMatchObject({ code: 1, out: '', builds: 0 });
    expect(result.err).toMatch(/^kube-informer envtest use: /);
    expect(result.err).toContain('npx kube-informer envtest use 1.37.2 -p path');
  });

  it('a release it cannot build: fails at once pointing at setup-envtest', async () => {
    const result = await run(['use', '1.30.4']);
    expect(result).toMatchObject({ code: 1, builds: 0 });
    expect(result.err).toContain('setup-envtest@latest use 1.30.4 -p path');
    expect(result.err).toContain('builds only 1.37.2');
  });

  it('says when the build fails (1)', async () => {
    const result = await run(['use'], async () => {
      throw new Error('go: not found');
    });
    expect(result).toMatchObject({ code: 1, out: '', builds: 1, err: 'kube-informer envtest use: the build failed: go: not found\n' });
  });

  it('refuses unknown arguments with the usage (2), naming the flag', async () => {
    const unknown = await run(['use', '--frobnicate']);
    expect(unknown).toMatchObject({ code: 2, out: '' });
    expect(unknown.err).toContain('kube-informer envtest use: unknown flag --frobnicate (known flags: --print, --installed-only, --help)');
    expect(unknown.err).toContain('Usage: kube-informer envtest use [version] [--print <overview|path|env>] [--installed-only]');
    expect((await run(['use', '--installed'])).err).toContain('unknown flag --installed (did you mean --installed-only?)');
    expect((await run(['use', '-x'])).err).toContain('unknown flag -x');
    expect(await run(['use', '-p', 'json'])).toMatchObject({ code: 2, err: expect.stringContaining('--print must be overview, path or env, got "json"') });
    expect(await run(['use', 'latest'])).toMatchObject({ code: 2, err: expect.stringContaining('"latest" is not a Kubernetes release') });
    expect(await run(['use', '1.37.2', '1.36'])).toMatchObject({ code: 2, err: expect.stringContaining('unexpected argument "1.36"') });
    expect(await run(['use', '-p'])).toMatchObject({ code: 2, err: expect.stringContaining('kube-informer envtest use: flag -p needs a value (<overview|path|env>)') });
    expect(await run(['use', '--installed-only=yes'])).toMatchObject({ code: 2, err: expect.stringContaining('takes no value') });
    expect(await run(['fetch'])).toMatchObject({ code: 2, err: expect.stringContaining('unknown command "fetch"') });
    expect(await run([])).toMatchObject({ code: 2, err: expect.stringContaining('no command given') });
  });

  it('takes the long and the = forms of its flags, and prints its help (0)', async () => {
    const dir = cache('1.37.2');
    expect(await run(['use', '--print=path', '--installed-only'])).toMatchObject({ code: 0, out: `${dir}\n` });
    expect(await run(['use', '1.37.x', '--print', 'path'])).toMatchObject({ code: 0, out: `${dir}\n` });
    const help = await run(['use', '-h']);
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toContain('-p, --print <overview|path|env>');
    expect(help.out).toContain('-i, --installed-only');
    expect(help.out).toContain('export KUBEBUILDER_ASSETS=$(npx kube-informer envtest use 1.37.2 -p path)');
  });
});
