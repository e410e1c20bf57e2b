// Where envtest's etcd and kube-apiserver come from: an explicit dir, KUBEBUILDER_ASSETS, or a cache.

import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AbortedError } from '../core/errors.js';
import { TestEnvironmentError } from './errors.js';

/** The Kubernetes release this package's build recipe (`npx kube-informer envtest use`) is pinned to. */
export const PINNED_KUBERNETES_VERSION = '1.37.2';

/** Where a set of binaries was found. */
export type BinaryAssetsSource = 'option' | 'KUBEBUILDER_ASSETS' | 'kube-informer-cache' | 'setup-envtest-store';

/** A directory holding `etcd` and `kube-apiserver` (setup-envtest's layout), and where it was found. */
export interface BinaryAssets {
  /** The directory (what `KUBEBUILDER_ASSETS` would be set to). */
  readonly dir: string;
  /** How it was found: the `binaryAssetsDir` option, `KUBEBUILDER_ASSETS`, or one of the two caches. */
  readonly source: BinaryAssetsSource;
  /** `<dir>/etcd`. */
  readonly etcd: string;
  /** `<dir>/kube-apiserver`. */
  readonly kubeApiServer: string;
  /** The release the directory's name says (`1.37.2`), when it says one; the binary itself is the truth. */
  readonly versionFromName: string | undefined;
}

/** What {@link resolveBinaryAssets} looks at; every field defaults to the real process's. */
export interface ResolveAssetsInput {
  /** The `binaryAssetsDir` option. Default: none. */
  binaryAssetsDir?: string | undefined;
  /** The wanted release (`1.37`, `1.37.2`, `v1.37.2`); only filters the caches. Default: any, newest first. */
  kubernetesVersion?: string | undefined;
  /** The environment. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The home directory. Default: `os.homedir()`. */
  home?: string;
}

/** `1.37.2` from `v1.37.2`, `1.37` or `Kubernetes v1.37.2`; `undefined` when there is no version in it. */
export function parseKubernetesVersion(text: string): string | undefined {
  return /v?(1\.\d+(?:\.\d+)?)/.exec(text)?.[1];
}

/** True when `actual` (`1.37.2`) is the release `wanted` names (`1.37.2`, `v1.37.2`, or just `1.37`). */
export function versionMatches(actual: string, wanted: string): boolean {
  const w = parseKubernetesVersion(wanted);
  return w !== undefined && (actual === w || actual.startsWith(`${w}.`));
}

/** The kube-informer build cache: `${KUBE_INFORMER_CACHE:-~/.cache/kube-informer}/bin`. */
export function kubeInformerCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(env.KUBE_INFORMER_CACHE || join(home, '.cache', 'kube-informer'), 'bin');
}

/** setup-envtest's store of downloaded releases (`<store>/k8s/<version>-<os>-<arch>`). */
export function setupEnvtestStoreDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'io.kubebuilder.envtest', 'k8s');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'kubebuilder-envtest', 'k8s');
}

/**
 * Finds the binaries: the `binaryAssetsDir` option, else `KUBEBUILDER_ASSETS`, else the newest
 * matching set in kube-informer's build cache, else in setup-envtest's store. A directory that was
 * named (option or variable) but lacks a binary is an error of its own, never skipped. Throws
 * {@link TestEnvironmentError} `ENVTEST_NO_BINARIES` with the places searched and the commands that
 * fill them.
 */
export function resolveBinaryAssets(input: ResolveAssetsInput = {}): BinaryAssets {
  const env = input.env ?? process.env;
  const home = input.home ?? homedir();
  if (input.binaryAssetsDir !== undefined) return named(input.binaryAssetsDir, 'option', 'the binaryAssetsDir option');
  const fromEnv = env.KUBEBUILDER_ASSETS;
  if (fromEnv) return named(fromEnv, 'KUBEBUILDER_ASSETS', `KUBEBUILDER_ASSETS=${fromEnv}`);

  const wanted = input.kubernetesVersion;
  const caches: Array<[string, BinaryAssetsSource, RegExp]> = [
    [kubeInformerCacheDir(env, home), 'kube-informer-cache', /^k8s-v(1\.\d+\.\d+)-etcd-/],
    [setupEnvtestStoreDir(env, home), 'setup-envtest-store', /^(1\.\d+\.\d+)-/],
  ];
  for (const [root, source, pattern] of caches) {
    const found = candidates(root, pattern)
      .filter((c) => wanted === undefined || versionMatches(c.version, wanted))
      .filter((c) => complete(join(root, c.name)))
      .sort((a, b) => compareVersions(b.version, a.version) || b.mtime - a.mtime)[0];
    if (found !== undefined) return assetsIn(join(root, found.name), source, found.version);
  }
  throw new TestEnvironmentError('ENVTEST_NO_BINARIES', noBinariesMessage(wanted, caches.map(([root]) => root)));
}

/** What to run to get binaries: the message of `ENVTEST_NO_BINARIES`. */
export function noBinariesMessage(wanted: string | undefined, searched: readonly string[]): string {
  const version = parseKubernetesVersion(wanted ?? '') ?? PINNED_KUBERNETES_VERSION;
  const buildable = versionMatches(PINNED_KUBERNETES_VERSION, version);
  const exact = version.split('.').length === 3 ? version : `${version}.x`;
  return [
    `envtest: no etcd and kube-apiserver${wanted === undefined ? '' : ` ${wanted}`} found.`,
    `Looked at: the binaryAssetsDir option (not given), KUBEBUILDER_ASSETS (not set), ${searched.join(', ')}.`,
    'Get them with one of:',
    ...(buildable
      ? [`  export KUBEBUILDER_ASSETS=$(npx kube-informer envtest use ${PINNED_KUBERNETES_VERSION} -p path)   # builds from the Go module proxy (Go >= 1.25, bash, flock; minutes, once per machine)`]
      : [`  (npx kube-informer envtest use builds only ${PINNED_KUBERNETES_VERSION}, the release this package pins)`]),
    `  export KUBEBUILDER_ASSETS=$(go run sigs.k8s.io/controller-runtime/tools/setup-envtest@latest use ${exact} -p path)   # downloads a prebuilt set`,
    'or pass binaryAssetsDir: a directory holding etcd and kube-apiserver.',
  ].join('\n');
}

/**
 * Runs `kube-apiserver --version` and returns the release (`1.37.2`). Throws
 * `ENVTEST_WRONG_VERSION` when it is not `wanted`, naming where the binary came from and the fix.
 */
export async function checkApiServerVersion(assets: BinaryAssets, wanted: string | undefined, signal?: AbortSignal): Promise<string> {
  let text: string;
  try {
    text = await new Promise<string>((resolve, reject) => {
      execFile(assets.kubeApiServer, ['--version'], { signal, encoding: 'utf8' }, (err, stdout) => (err ? reject(new Error(err.message, { cause: err })) : resolve(stdout)));
    });
  } catch (err) {
    if (signal?.aborted) throw new AbortedError('envtest: the start was aborted', { cause: signal.reason });
    throw new TestEnvironmentError(
      'ENVTEST_NO_BINARIES',
      `envtest: ${assets.kubeApiServer} --version failed (${(err as Error).message}): it is not a kube-apiserver that runs on this machine. Fix: point ${describeSource(assets)} at a directory that setup-envtest or npx kube-informer envtest use prints on this OS and architecture.`,
      { cause: err },
    );
  }
  const actual = parseKubernetesVersion(text);
  if (actual === undefined) {
    throw new TestEnvironmentError('ENVTEST_WRONG_VERSION', `envtest: ${assets.kubeApiServer} --version printed ${JSON.stringify(text.trim())}, not "Kubernetes v1.x.y".`);
  }
  if (wanted !== undefined && !versionMatches(actual, wanted)) {
    throw new TestEnvironmentError(
      'ENVTEST_WRONG_VERSION',
      `envtest: kubernetesVersion ${wanted} was asked for, but ${assets.kubeApiServer} (from ${describeSource(assets)}) is v${actual}. ` +
        `Fix: point it at a ${wanted} set (\`npx kube-informer envtest use ${wanted} -p path\` prints one), or leave kubernetesVersion out to take v${actual}.`,
    );
  }
  return actual;
}

function describeSource(assets: BinaryAssets): string {
  switch (assets.source) {
    case 'option':
      return 'the binaryAssetsDir option';
    case 'KUBEBUILDER_ASSETS':
      return 'KUBEBUILDER_ASSETS';
    case 'kube-informer-cache':
      return `the kube-informer cache (${assets.dir})`;
    case 'setup-envtest-store':
      return `the setup-envtest store (${assets.dir})`;
  }
}

function named(dir: string, source: BinaryAssetsSource, what: string): BinaryAssets {
  const missing = ['etcd', 'kube-apiserver'].filter((b) => !executable(join(dir, b)));
  if (missing.length > 0) {
    throw new TestEnvironmentError(
      'ENVTEST_NO_BINARIES',
      `envtest: ${what} names a directory without an executable ${missing.join(' or ')} (setup-envtest's layout: etcd, kube-apiserver, kubectl in one directory). ` +
        `Fix: point it at the path \`npx kube-informer envtest use ${PINNED_KUBERNETES_VERSION} -p path\` or \`setup-envtest use -p path\` prints.`,
    );
  }
  return assetsIn(dir, source, parseKubernetesVersion(dir.split('/').at(-1) ?? ''));
}

function assetsIn(dir: string, source: BinaryAssetsSource, versionFromName: string | undefined): BinaryAssets {
  return { dir, source, etcd: join(dir, 'etcd'), kubeApiServer: join(dir, 'kube-apiserver'), versionFromName };
}

function complete(dir: string): boolean {
  return executable(join(dir, 'etcd')) && executable(join(dir, 'kube-apiserver'));
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function candidates(root: string, pattern: RegExp): Array<{ name: string; version: string; mtime: number }> {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: Array<{ name: string; version: string; mtime: number }> = [];
  for (const name of names) {
    const version = pattern.exec(name)?.[1];
    if (version === undefined) continue;
    try {
      out.push({ name, version, mtime: statSync(join(root, name)).mtimeMs });
    } catch {
      // Vanished between readdir and stat: not a candidate.
    }
  }
  return out;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}
