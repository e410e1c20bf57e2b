// The work behind `kube-informer envtest use` (the command itself is src/cli/envtest.ts): finds or builds etcd + kube-apiserver and prints where, as setup-envtest does.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { noBinariesMessage, kubeInformerCacheDir, parseKubernetesVersion, PINNED_KUBERNETES_VERSION, resolveBinaryAssets, setupEnvtestStoreDir, versionMatches, type BinaryAssets } from './assets.js';
import { TestEnvironmentError } from './errors.js';

/** The package root: `dist/envtest/` (or `src/envtest/`) is two levels down. */
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

/** What `kube-informer envtest use` was asked for. */
export interface EnvtestUseRequest {
  /** The release (`1.37.2`, `v1.37`, `1.37.x`). Default: the pinned release. */
  version?: string;
  /** What to print: an overview, the directory, or an export line. */
  print: 'overview' | 'path' | 'env';
  /** Never build: fail when nothing is cached. */
  installedOnly: boolean;
}

/** Where `use` writes and what it reads. */
export interface EnvtestUseIo {
  /** The environment (`KUBE_INFORMER_CACHE`, `XDG_DATA_HOME`, `HOME`). */
  env: NodeJS.ProcessEnv;
  /** Standard output: only the result. */
  stdout: (text: string) => void;
  /** Standard error: progress. */
  stderr: (text: string) => void;
  /** Runs the build recipe and resolves with the bin dir it printed (replaced in tests). */
  build?: () => Promise<string>;
}

/** The release a `use` argument names (`1.37.2`, `v1.37`, `1.37.x` → `1.37`), or undefined when it names none. */
export function useVersion(text: string): string | undefined {
  return parseKubernetesVersion(text) !== undefined && /^v?1\.\d+(\.\d+)?(\.x)?$/.test(text) ? text.replace(/\.x$/, '') : undefined;
}

/** The pinned release, for the command's help. */
export { PINNED_KUBERNETES_VERSION };

/**
 * `kube-informer envtest use`: finds the cached etcd + kube-apiserver set of the release (kube-informer's
 * cache or setup-envtest's store), builds the pinned release when none is cached, and prints where it
 * is; throws with what to run when there is none.
 */
export async function envtestUse(request: EnvtestUseRequest, io: EnvtestUseIo): Promise<void> {
  const wanted = request.version ?? PINNED_KUBERNETES_VERSION;
  let assets: BinaryAssets;
  try {
    // The caches only: KUBEBUILDER_ASSETS is what this command is for setting, not an input.
    assets = resolveBinaryAssets({ kubernetesVersion: wanted, env: { ...io.env, KUBEBUILDER_ASSETS: '' }, home: io.env.HOME });
  } catch (err) {
    if (!(err instanceof TestEnvironmentError)) throw err;
    if (request.installedOnly || !versionMatches(PINNED_KUBERNETES_VERSION, wanted)) {
      throw new Error(noBinariesMessage(wanted, [kubeInformerCacheDir(io.env, io.env.HOME), setupEnvtestStoreDir(io.env, io.env.HOME)]).replace(/^envtest: /, ''));
    }
    let dir: string;
    try {
      dir = await (io.build ?? (() => runBuildRecipe(io)))();
    } catch (buildErr) {
      throw new Error(`the build failed: ${(buildErr as Error).message}`, { cause: buildErr });
    }
    assets = resolveBinaryAssets({ binaryAssetsDir: dir });
  }
  const found = assets.versionFromName ?? wanted;
  if (request.print === 'path') io.stdout(`${assets.dir}\n`);
  else if (request.print === 'env') io.stdout(`export KUBEBUILDER_ASSETS='${assets.dir}'\n`);
  else io.stdout(`Version: ${found}\nOS/Arch: ${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}\nPath: ${assets.dir}\n`);
}

/**
 * Runs the build recipe shipped in the package (`scripts/apiserver/build.sh` over
 * `test/apiserver/go.mod`), its progress on stderr; resolves with the directory it printed.
 */
function runBuildRecipe(io: EnvtestUseIo): Promise<string> {
  const script = join(packageRoot, 'scripts', 'apiserver', 'build.sh');
  if (!existsSync(script) || !existsSync(join(packageRoot, 'test', 'apiserver', 'go.mod'))) {
    return Promise.reject(new Error(`the build recipe is missing from ${packageRoot} (scripts/apiserver/build.sh, test/apiserver/go.mod)`));
  }
  io.stderr(`kube-informer envtest use: no cached set; building kube-apiserver ${PINNED_KUBERNETES_VERSION} and etcd ${pinnedEtcd()} from the Go module proxy (first run on this machine only)\n`);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], env: io.env });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const dir = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && dir !== '') resolve(dir);
      else reject(new Error(`scripts/apiserver/build.sh exited with code ${code} (its output is above)`));
    });
  });
}

function pinnedEtcd(): string {
  try {
    return /go\.etcd\.io\/etcd\/server\/v3 (v[^\s]+)/.exec(readFileSync(join(packageRoot, 'test', 'apiserver', 'go.mod'), 'utf8'))?.[1] ?? '';
  } catch {
    return '';
  }
}
