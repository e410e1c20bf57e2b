// `kube-informer-envtest use`: finds or builds etcd + kube-apiserver and prints where, as setup-envtest does.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { noBinariesMessage, kubeInformerCacheDir, parseKubernetesVersion, PINNED_KUBERNETES_VERSION, resolveBinaryAssets, setupEnvtestStoreDir, versionMatches, type BinaryAssets } from './assets.js';
import { TestEnvironmentError } from './errors.js';

/** The package root: `dist/envtest/` (or `src/envtest/`) is two levels down. */
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

const USAGE = `Usage: kube-informer-envtest use [version] [-p overview|path|env] [-i]

Finds etcd and kube-apiserver for envtest — in kube-informer's cache
(\${KUBE_INFORMER_CACHE:-~/.cache/kube-informer}/bin) or setup-envtest's store — or, when there are
none, builds them from the Go module proxy (Go >= 1.25, bash and flock on PATH; minutes, once per
machine), and prints where they are, as setup-envtest does:

  export KUBEBUILDER_ASSETS=$(npx kube-informer-envtest use ${PINNED_KUBERNETES_VERSION} -p path)

  version   the release, e.g. ${PINNED_KUBERNETES_VERSION} (the one this package can build) or 1.37; default ${PINNED_KUBERNETES_VERSION}
  -p        what to print: overview (default), path (the directory), env (an export line)
  -i        installed only: never build, fail when nothing is cached
`;

/** Where the command writes; the real process's streams by default. */
export interface CommandIo {
  /** The environment (`KUBE_INFORMER_CACHE`, `XDG_DATA_HOME`, `HOME`). */
  env: NodeJS.ProcessEnv;
  /** Standard output: only the result. */
  out: (text: string) => void;
  /** Standard error: progress and errors. */
  err: (text: string) => void;
  /** Runs the build recipe and resolves with the bin dir it printed (replaced in tests). */
  build?: () => Promise<string>;
}

/** Runs the command with `argv` (without `node` and the script) and resolves with the exit code. */
export async function runEnvtestCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = [...argv];
  if (args[0] !== 'use' || args.includes('-h') || args.includes('--help')) {
    (args[0] === undefined || args.includes('-h') || args.includes('--help') ? io.out : io.err)(USAGE);
    return args[0] === undefined || args.includes('-h') || args.includes('--help') ? 0 : 2;
  }
  let version: string | undefined;
  let print = 'overview';
  let installedOnly = false;
  for (let i = 1; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '-p' || a === '--print') print = args[++i] ?? '';
    else if (a.startsWith('--print=')) print = a.slice('--print='.length);
    else if (a === '-i' || a === '--installed-only') installedOnly = true;
    else if (version === undefined && parseKubernetesVersion(a) !== undefined && /^v?1\.\d+(\.\d+)?(\.x)?$/.test(a)) version = a.replace(/\.x$/, '');
    else {
      io.err(`kube-informer-envtest: unknown argument ${JSON.stringify(a)}\n\n${USAGE}`);
      return 2;
    }
  }
  if (!['overview', 'path', 'env'].includes(print)) {
    io.err(`kube-informer-envtest: -p must be overview, path or env, got ${JSON.stringify(print)}\n`);
    return 2;
  }
  const wanted = version ?? PINNED_KUBERNETES_VERSION;
  let assets: BinaryAssets;
  try {
    // The caches only: KUBEBUILDER_ASSETS is what this command is for setting, not an input.
    assets = resolveBinaryAssets({ kubernetesVersion: wanted, env: { ...io.env, KUBEBUILDER_ASSETS: '' }, home: io.env.HOME });
  } catch (err) {
    if (!(err instanceof TestEnvironmentError)) throw err;
    if (installedOnly || !versionMatches(PINNED_KUBERNETES_VERSION, wanted)) {
      io.err(`kube-informer-envtest: ${noBinariesMessage(wanted, [kubeInformerCacheDir(io.env, io.env.HOME), setupEnvtestStoreDir(io.env, io.env.HOME)]).replace(/^envtest: /, '')}\n`);
      return 1;
    }
    try {
      const dir = await (io.build ?? (() => runBuildRecipe(io)))();
      assets = resolveBinaryAssets({ binaryAssetsDir: dir });
    } catch (buildErr) {
      io.err(`kube-informer-envtest: the build failed: ${(buildErr as Error).message}\n`);
      return 1;
    }
  }
  const found = assets.versionFromName ?? wanted;
  if (print === 'path') io.out(`${assets.dir}\n`);
  else if (print === 'env') io.out(`export KUBEBUILDER_ASSETS='${assets.dir}'\n`);
  else io.out(`Version: ${found}\nOS/Arch: ${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}\nPath: ${assets.dir}\n`);
  return 0;
}

/**
 * Runs the build recipe shipped in the package (`scripts/apiserver/build.sh` over
 * `test/apiserver/go.mod`), its progress on stderr; resolves with the directory it printed.
 */
function runBuildRecipe(io: CommandIo): Promise<string> {
  const script = join(packageRoot, 'scripts', 'apiserver', 'build.sh');
  if (!existsSync(script) || !existsSync(join(packageRoot, 'test', 'apiserver', 'go.mod'))) {
    return Promise.reject(new Error(`the build recipe is missing from ${packageRoot} (scripts/apiserver/build.sh, test/apiserver/go.mod)`));
  }
  io.err(`kube-informer-envtest: no cached set; building kube-apiserver ${PINNED_KUBERNETES_VERSION} and etcd ${pinnedEtcd()} from the Go module proxy (first run on this machine only)\n`);
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
