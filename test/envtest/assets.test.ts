// Where envtest finds etcd and kube-apiserver, and what it says when it finds none.
import { mkdirSync, readFileSync, renameSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PINNED_KUBERNETES_VERSION, resolveBinaryAssets } from '../../src/envtest/index.js';
import { checkApiServerVersion } from '../../src/envtest/assets.js';
import { fakeBinaries, scratch } from './fake-binaries.js';

let s: ReturnType<typeof scratch>;
beforeEach(() => {
  s = scratch();
});
afterEach(() => rmSync(s.root, { recursive: true, force: true }));

/** A cache entry named as build.sh names it, holding stand-in binaries. */
function cached(version: string, hash: string, mtimeSec: number): string {
  const bin = join(s.root, 'cache', 'bin');
  mkdirSync(bin, { recursive: true });
  const dir = join(bin, `k8s-v${version}-etcd-v3.7.0-${hash}`);
  const made = fakeBinaries(s.root, { version });
  mkdirSync(dir);
  for (const f of ['etcd', 'kube-apiserver']) renameSync(join(made, f), join(dir, f));
  utimesSync(dir, mtimeSec, mtimeSec);
  return dir;
}

describe('resolveBinaryAssets', () => {
  it('takes the binaryAssetsDir option first, then KUBEBUILDER_ASSETS', () => {
    const a = fakeBinaries(s.root);
    const b = fakeBinaries(s.root);
    expect(resolveBinaryAssets({ binaryAssetsDir: a, env: { KUBEBUILDER_ASSETS: b }, home: s.root })).toMatchObject({ dir: a, source: 'option' });
    expect(resolveBinaryAssets({ env: { KUBEBUILDER_ASSETS: b }, home: s.root })).toMatchObject({ dir: b, source: 'KUBEBUILDER_ASSETS', etcd: join(b, 'etcd') });
  });

  it('fails on a named directory that lacks a binary, naming it and the fix, instead of looking elsewhere', () => {
    const empty = join(s.root, 'empty');
    mkdirSync(empty);
    expect(() => resolveBinaryAssets({ env: { KUBEBUILDER_ASSETS: empty }, home: s.root })).toThrow(
      expect.objectContaining({ code: 'ENVTEST_NO_BINARIES', message: expect.stringContaining(`KUBEBUILDER_ASSETS=${empty} names a directory without an executable etcd or kube-apiserver`) }),
    );
  });

  it('picks the newest matching release from the kube-informer cache, then the setup-envtest store', () => {
    const env = { KUBE_INFORMER_CACHE: join(s.root, 'cache'), XDG_DATA_HOME: join(s.root, 'xdg') };
    const old = cached('1.36.1', 'aaaa', 1000);
    const newer = cached('1.37.2', 'bbbb', 1000);
    const rebuilt = cached('1.37.2', 'cccc', 2000);
    expect(resolveBinaryAssets({ env, home: s.root })).toMatchObject({ dir: rebuilt, source: 'kube-informer-cache', versionFromName: '1.37.2' });
    expect(resolveBinaryAssets({ env, home: s.root, kubernetesVersion: '1.36' }).dir).toBe(old);
    expect(newer).not.toBe(rebuilt);
    const store = join(s.root, 'xdg', 'kubebuilder-envtest', 'k8s');
    mkdirSync(store, { recursive: true });
    const made = fakeBinaries(s.root, { version: '1.30.0' });
    renameSync(made, join(store, '1.30.0-linux-amd64'));
    expect(resolveBinaryAssets({ env, home: s.root, kubernetesVersion: 'v1.30' })).toMatchObject({ source: 'setup-envtest-store', versionFromName: '1.30.0' });
  });

  it('with nothing found, says exactly what to run: the build command of this package and setup-envtest', () => {
    const env = { KUBE_INFORMER_CACHE: join(s.root, 'none'), XDG_DATA_HOME: join(s.root, 'none') };
    let message = '';
    try {
      resolveBinaryAssets({ env, home: s.root });
    } catch (err) {
      expect(err).toMatchObject({ code: 'ENVTEST_NO_BINARIES' });
      message = (err as Error).message;
    }
    expect(message).toContain(`export KUBEBUILDER_ASSETS=$(npx kube-informer envtest use ${PINNED_KUBERNETES_VERSION} -p path)`);
    expect(message).toContain(`setup-envtest@latest use ${PINNED_KUBERNETES_VERSION} -p path`);
    expect(message).toContain(join(s.root, 'none', 'bin'));
    // A release this package cannot build: setup-envtest only, and no build command that would fail.
    const other = (() => {
      try {
        resolveBinaryAssets({ env, home: s.root, kubernetesVersion: '1.30' });
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    expect(other).toContain('setup-envtest@latest use 1.30.x -p path');
    expect(other).not.toContain('$(npx kube-informer envtest use');
  });

  it('names a kube-apiserver of another release than kubernetesVersion, with where it came from and the fix', async () => {
    const dir = fakeBinaries(s.root, { version: '1.30.4' });
    const assets = resolveBinaryAssets({ env: { KUBEBUILDER_ASSETS: dir }, home: s.root });
    await expect(checkApiServerVersion(assets, '1.37')).rejects.toMatchObject({
      code: 'ENVTEST_WRONG_VERSION',
      message: expect.stringMatching(/kubernetesVersion 1\.37 was asked for, but .*kube-apiserver \(from KUBEBUILDER_ASSETS\) is v1\.30\.4\. Fix: .*npx kube-informer envtest use 1\.37 -p path/),
    });
    await expect(checkApiServerVersion(assets, undefined)).resolves.toBe('1.30.4');
  });

  it('pins the release the build recipe (test/apiserver/go.mod) builds', () => {
    const goMod = readFileSync(new URL('../../test/apiserver/go.mod', import.meta.url), 'utf8');
    expect(goMod).toMatch(new RegExp(`^\\s*(require )?k8s\\.io/kubernetes v${PINNED_KUBERNETES_VERSION.replaceAll(".", "\\.")}\\b`, "m"));
  });
});
