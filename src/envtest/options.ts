// The options of startTestEnvironment, their defaults and their one check.

import type { Clock } from '../core/clock.js';
import { describeValue, InvalidOptionError, validateOptions } from '../core/options.js';
import type { TestEnvironmentCrd } from './crds.js';

/** Options of {@link startTestEnvironment}; every one is optional. */
export interface TestEnvironmentOptions {
  /**
   * CustomResourceDefinitions to install before `startTestEnvironment` resolves: definitions from
   * `defineCustomResource`, CRD objects (plain data), or paths of `.yaml`/`.yml`/`.json` files or of
   * directories of them (not recursive; other files ignored), read as kubectl reads them (see
   * `readCustomResourceDefinitionFiles` in `kube-informer/crd`: a document that is not a CRD is
   * refused, naming the file and the document). Each is installed by server-side apply and awaited
   * until `Established` and served. Default: none.
   */
  crds?: readonly TestEnvironmentCrd[];
  /**
   * The Kubernetes release wanted: `1.37.2`, `v1.37.2`, or a minor such as `1.37`. Picks among cached
   * sets, and the start fails with `ENVTEST_WRONG_VERSION` when the kube-apiserver found is another
   * release. Default: any (the newest cached set, or whatever `KUBEBUILDER_ASSETS` holds).
   */
  kubernetesVersion?: string;
  /**
   * A directory holding `etcd` and `kube-apiserver` (setup-envtest's layout). Default: the
   * `KUBEBUILDER_ASSETS` environment variable, else the newest set in kube-informer's build cache
   * (`~/.cache/kube-informer/bin`, filled by `npx kube-informer envtest use`), else setup-envtest's
   * store (`~/.local/share/kubebuilder-envtest/k8s`).
   */
  binaryAssetsDir?: string;
  /**
   * Extra kube-apiserver flags. A `--name=value` flag replaces envtest's own flag of that name (e.g.
   * `--service-cluster-ip-range=10.1.0.0/16`); `--name=` with nothing after `=` removes it. Default: none.
   */
  apiServerArgs?: readonly string[];
  /** Extra etcd flags, merged the same way. Default: none. */
  etcdArgs?: readonly string[];
  /**
   * Also run kube-controller-manager (its default `*` controllers: namespace deletion, garbage
   * collection, deployments, service accounts, …) from the same directory, with extra flags if given.
   * setup-envtest's sets do not hold it; `npx kube-informer envtest use` builds it. Default: not run
   * (like controller-runtime's envtest: nothing deletes namespaces or collects garbage).
   */
  controllerManager?:
    | boolean
    | {
        /** Extra kube-controller-manager flags, merged like `apiServerArgs`. Default: none. */
        args?: readonly string[];
      };
  /** The kube-apiserver's secure port on 127.0.0.1. Default: a free port. */
  apiServerPort?: number;
  /** etcd's client port on 127.0.0.1. Default: a free port. */
  etcdPort?: number;
  /**
   * Milliseconds for the whole start: etcd healthy, kube-apiserver `/readyz` ok and every CRD
   * established. Default: 90 000 (a cold start on a loaded 2-core machine takes ~15 s).
   */
  startTimeoutMs?: number;
  /** Milliseconds `stop()` waits after SIGTERM before it sends SIGKILL, per process. Default: 10 000. */
  stopTimeoutMs?: number;
  /** Cancels the start: what was started is stopped, the directory removed, and the start rejects `ABORTED`. Default: none. */
  signal?: AbortSignal;
  /** The clock for the waits (readiness polls, the stop grace). Default: the real clock. */
  clock?: Clock;
}

/** Checks the options with the one validator, plus what its rules cannot say (arrays, port range, version form). */
export function validateTestEnvironmentOptions(options: TestEnvironmentOptions | undefined): void {
  const owner = 'startTestEnvironment';
  validateOptions(owner, options, {
    crds: 'any', // checked below
    apiServerArgs: 'any', // checked below
    etcdArgs: 'any', // checked below
    controllerManager: 'any', // checked below
    signal: 'any', // checked below
    kubernetesVersion: 'string',
    binaryAssetsDir: 'string',
    apiServerPort: 'positiveCount',
    etcdPort: 'positiveCount',
    startTimeoutMs: 'positiveDuration',
    stopTimeoutMs: 'duration',
    clock: 'clock',
  });
  if (options === undefined) return;
  const fail = (option: string, expected: string, value: unknown): never => {
    throw new InvalidOptionError(`${owner}: option ${option} must be ${expected}, got ${describeValue(value)}`);
  };
  for (const name of ['apiServerPort', 'etcdPort'] as const) {
    const port = options[name];
    if (port !== undefined && port > 65_535) fail(name, 'a TCP port (1–65535)', port);
  }
  if (options.kubernetesVersion !== undefined && !/^v?1\.\d+(\.\d+)?$/.test(options.kubernetesVersion)) {
    fail('kubernetesVersion', "a release such as '1.37.2', 'v1.37.2' or '1.37'", options.kubernetesVersion);
  }
  if (options.crds !== undefined) {
    if (!Array.isArray(options.crds)) fail('crds', 'an array of CRD objects or file/directory paths', options.crds);
    options.crds.forEach((crd: unknown, i) => {
      if (typeof crd !== 'string' && (crd === null || typeof crd !== 'object' || Array.isArray(crd))) {
        fail(`crds[${i}]`, 'a CRD object or a file/directory path', crd);
      }
    });
  }
  for (const name of ['apiServerArgs', 'etcdArgs'] as const) {
    const args: unknown = options[name];
    if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string' || !a.startsWith('--')))) {
      fail(name, "an array of '--flag=value' strings", args);
    }
  }
  const kcm: unknown = options.controllerManager;
  if (kcm !== undefined && typeof kcm !== 'boolean') {
    const args: unknown = kcm === null || typeof kcm !== 'object' ? undefined : (kcm as { args?: unknown }).args;
    if (kcm === null || typeof kcm !== 'object' || (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string')))) {
      fail('controllerManager', "a boolean or { args: ['--flag=value', …] }", kcm);
    }
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) fail('signal', 'an AbortSignal', options.signal);
}

/**
 * envtest's flags with the user's merged in: a user `--name=value` replaces the default of that name,
 * `--name=` drops it, anything else is appended.
 */
export function mergeFlags(defaults: readonly string[], extra: readonly string[] = []): string[] {
  const nameOf = (flag: string): string => flag.split('=', 1)[0] ?? flag;
  const overridden = new Set(extra.map(nameOf));
  return [...defaults.filter((f) => !overridden.has(nameOf(f))), ...extra.filter((f) => !f.endsWith('='))];
}
