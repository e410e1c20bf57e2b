// `kube-informer-envtest use`: prints a cached set's path as setup-envtest does, builds the pinned release when none is cached.
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEnvtestCommand } from '../../src/envtest/command.js';
import { fakeBinaries, scratch } from './fake-binaries.js';

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
  const code = await runEnvtestCommand(argv, {
    env,
    out: (t) => (out += t),
    err: (t) => (err += t),
    build: async () => {
      builds++;
      if (!build) throw new Error('no build in this test');
      return build();
    },
  });
  return { code, out, err, builds };
}

function cache(version: string): string {
  const dir = join(s.root, 'cache', 'bin', `k8s-v${version}-etcd-v3.7.0-0123abcd`);
  mkdirSync(join(s.root, 'cache', 'bin'), { recursive: true });
  renameSync(fakeBinaries(s.root, { version }), dir);
  return dir;
}

describe('kube-informer-envtest use', () => {
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
    expect(result.err).toContain('npx kube-informer-envtest use 1.37.2 -p path');
  });

  it('a release it cannot build: fails at once pointing at setup-envtest', async () => {
    const result = await run(['use', '1.30.4']);
    expect(result).toMatchObject({ code: 1, builds: 0 });
    expect(result.err).toContain('setup-envtest@latest use 1.30.4 -p path');
    expect(result.err).toContain('builds only 1.37.2');
  });

  it('refuses unknown arguments with the usage', async () => {
    expect(await run(['use', '--frobnicate'])).toMatchObject({ code: 2, err: expect.stringContaining('Usage: kube-informer-envtest use') });
    expect(await run(['use', '-p', 'json'])).toMatchObject({ code: 2, err: expect.stringContaining('-p must be overview, path or env') });
    expect(await run(['fetch'])).toMatchObject({ code: 2 });
    expect(await run([])).toMatchObject({ code: 0, out: expect.stringContaining('Usage:') });
  });
});
