// The KubeConfig of a process in a pod (the service-account mount, a rotating token) and loadKubeConfig, which picks it or a kubeconfig file.

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import type https from 'node:https';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { realClock, type Clock } from '../core/clock.js';
import { resolveLogger, type LoggerOption } from '../core/log.js';
import { validateOptions, type OptionSchemaFor } from '../core/options.js';
import { InClusterConfigError, KubeConfigError } from './errors.js';
import { TokenFile } from './token-file.js';
import { leanFromFile, type LeanKubeConfig } from './lean-kubeconfig.js';
import type { ReloadableCredentials } from './transport.js';

/** Where the kubelet mounts a pod's service-account token, CA bundle and namespace (below `root`). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Options of {@link loadInClusterConfig}. */
export interface InClusterConfigOptions {
  /**
   * A path prefix put before `/var/run/secrets/kubernetes.io/serviceaccount` (a test's temporary
   * folder, or a process run beside a pod the way the kubelet would run it). Default `''`.
   */
  root?: string;
  /**
   * The environment `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT` and `POD_NAMESPACE` are read
   * from. Default `process.env`.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** The clock the token's re-reads are timed by (and its `exp` compared with). Default `realClock`. */
  clock?: Clock;
  /** Where token re-reads and failures to re-read are reported; `false` for none. Default `console`. */
  logger?: LoggerOption;
  /**
   * The token file is looked at (one `stat`, before a request) at most this often, and read again when
   * it changed. Whatever this is, the token is also re-read at 80 % of its life and after a 401.
   * Default 10 000 (10 s).
   */
  tokenCheckIntervalMs?: number;
  /**
   * `'https'`, as in every pod; `'http'` only for a test server that speaks plain HTTP (the
   * `ca.crt` is still required and read). Default `'https'`.
   */
  scheme?: 'https' | 'http';
}

const IN_CLUSTER_SCHEMA = {
  root: 'string',
  env: 'object',
  clock: 'clock',
  logger: 'logger',
  tokenCheckIntervalMs: 'positiveDuration',
  scheme: ['https', 'http'],
} as const satisfies OptionSchemaFor<InClusterConfigOptions>;

/** The name of the auth provider whose token {@link InClusterKubeConfig} supplies. */
const AUTH_PROVIDER = 'kube-informer-service-account';

const requireHere = createRequire(import.meta.url);
let kubeConfigClass: typeof KubeConfig | undefined;

/**
 * client-node's `KubeConfig` class, loaded on the first call (synchronously: `require` of an ES module,
 * Node ≥ 20.19). Not at the top of this module: client-node's index loads every generated API and model
 * class (21 MB of JavaScript, some 70 MiB of resident memory in Node 20 — docs/operations.md "Memory"),
 * and the package root re-exports this module; an operator that passes its own `KubeConfigLike` never
 * pays for them.
 */
function clientNodeKubeConfig(): typeof KubeConfig {
  return (kubeConfigClass ??= (requireHere('@kubernetes/client-node') as { KubeConfig: typeof KubeConfig }).KubeConfig);
}

/**
 * A client-node `KubeConfig` for the pod the process runs in (what {@link loadInClusterConfig}
 * returns): the cluster `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT` verified with the
 * mounted `ca.crt`, and a bearer token from the mounted `token` file that is re-read when the kubelet
 * rewrites it, before it expires, and after a 401 (see {@link InClusterKubeConfig.reloadCredentials}).
 * It works wherever a `KubeConfig` does: `kc.makeApiClient(...)` requests get the current token too.
 */
export interface InClusterKubeConfig extends KubeConfig, ReloadableCredentials {
  /**
   * The pod's namespace: `POD_NAMESPACE` when set (the downward API), else the mounted `namespace`
   * file, else `'default'` — client-go's order. Also the context's namespace.
   */
  readonly namespace: string;
  /** The token file's path. */
  readonly tokenFile: string;
  /**
   * Reads the token file again (the transport calls it once after a 401, then retries the request
   * once if the token changed) and returns where the credentials come from, for the error message.
   * Rejects with `InClusterConfigError` when the file is missing, unreadable or empty.
   */
  reloadCredentials(): Promise<string>;
}

type InClusterKubeConfigClass = new (server: string, caData: string, namespace: string, token: TokenFile) => InClusterKubeConfig;
let inClusterClass: InClusterKubeConfigClass | undefined;

/** The class of {@link InClusterKubeConfig}, made on first use (it extends client-node's `KubeConfig`, loaded then). */
function inClusterKubeConfigClass(): InClusterKubeConfigClass {
  return (inClusterClass ??= class extends clientNodeKubeConfig() implements InClusterKubeConfig {
    readonly namespace: string;
    readonly tokenFile: string;
    #token: TokenFile;

    constructor(server: string, caData: string, namespace: string, token: TokenFile) {
      super();
      this.namespace = namespace;
      this.tokenFile = token.path;
      this.#token = token;
      this.addAuthenticator({
        isAuthProvider: (user: User) => (user.authProvider as { name?: unknown } | undefined)?.name === AUTH_PROVIDER,
        applyAuthentication: async (_user, opts) => {
          const value = `Bearer ${await token.token()}`;
          const target = opts as { headers?: Record<string, unknown> };
          target.headers = { ...target.headers, Authorization: value };
        },
      });
      this.loadFromOptions({
        clusters: [{ name: 'in-cluster', server, caData, skipTLSVerify: server.startsWith('http:') }],
        users: [{ name: 'service-account', authProvider: { name: AUTH_PROVIDER, config: { file: token.path } } }],
        contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'service-account', namespace }],
        currentContext: 'in-cluster',
      });
    }

    async reloadCredentials(): Promise<string> {
      await this.#token.reload();
      return `the service-account token file ${this.tokenFile}`;
    }
  });
}

function readMounted(path: string, what: string): string {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read: ${err instanceof Error ? err.message : String(err)}`;
    throw new InClusterConfigError(`the service-account ${what} ${path} ${why}`, { cause: err });
  }
  if (content.trim() === '') throw new InClusterConfigError(`the service-account ${what} ${path} is empty`);
  return content;
}

/**
 * The configuration of a process running in a pod, as client-go's `rest.InClusterConfig` builds it:
 * the API server at `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT` (an IPv6 address in
 * brackets), its certificate verified with `<root>/var/run/secrets/kubernetes.io/serviceaccount/ca.crt`
 * (read once), the bearer token of `…/token`, and the namespace (`POD_NAMESPACE`, else `…/namespace`,
 * else `default`). Unlike client-node's `loadFromCluster` (which re-reads the token every 60 s with
 * synchronous I/O, whatever its expiry), the token file is watched with one `stat` every
 * `tokenCheckIntervalMs` and re-read when it changed, always re-read at 80 % of the token's life, and
 * re-read after a 401, the request then sent once more (see `InClusterKubeConfig.reloadCredentials`).
 *
 * Throws `InClusterConfigError` (code `IN_CLUSTER_CONFIG`) naming the variable or file: the two
 * variables unset, the token missing, unreadable or empty, the `ca.crt` missing or empty; and
 * `InvalidOptionError` for a bad option.
 *
 * Recovery: a token file that cannot be re-read later keeps the last token (a warning is logged)
 * until it expires; from then on requests reject with `InClusterConfigError`.
 *
 * Warning: the token reaches the requests of `kc.makeApiClient(...)` clients too (the Lease of leader
 * election), but only kube-informer's own requests (informers, `ResourceClient`) are retried after a
 * 401; a client-node request that gets one fails, and the token is re-read before its next try.
 *
 * @example
 * ```ts
 * import { loadInClusterConfig, SharedInformerFactory } from 'kube-informer';
 * const kc = loadInClusterConfig();
 * const factory = new SharedInformerFactory(kc, { namespace: kc.namespace });
 * ```
 */
export function loadInClusterConfig(options: InClusterConfigOptions = {}): InClusterKubeConfig {
  const { server, caData, namespace, token } = inClusterParts('loadInClusterConfig', options);
  return new (inClusterKubeConfigClass())(server, caData, namespace, token);
}

/** What a pod's configuration is made of (`loadInClusterConfig`'s rules); `caller` names the function in errors. */
function inClusterParts(caller: string, options: InClusterConfigOptions): { server: string; caData: string; namespace: string; token: TokenFile } {
  validateOptions(caller, options, IN_CLUSTER_SCHEMA);
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '') {
    const unset = [host === '' ? 'KUBERNETES_SERVICE_HOST' : undefined, port === '' ? 'KUBERNETES_SERVICE_PORT' : undefined].filter((v) => v !== undefined);
    throw new InClusterConfigError(`not in a cluster: ${unset.join(' and ')} ${unset.length === 1 ? 'is' : 'are'} not set (the kubelet sets both in every container)`);
  }
  const dir = `${options.root ?? ''}${SERVICE_ACCOUNT_DIR}`;
  const clock = options.clock ?? realClock;
  const token = new TokenFile({ path: `${dir}/token`, clock, logger: resolveLogger(options.logger), checkIntervalMs: options.tokenCheckIntervalMs ?? 10_000 });
  const ca = readMounted(`${dir}/ca.crt`, 'CA bundle');
  let namespace = env.POD_NAMESPACE ?? '';
  if (namespace === '' && existsSync(`${dir}/namespace`)) namespace = readMounted(`${dir}/namespace`, 'namespace file').trim();
  const server = `${options.scheme ?? 'https'}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  return { server, caData: Buffer.from(ca).toString('base64'), namespace: namespace === '' ? 'default' : namespace, token };
}

/** Options of {@link loadKubeConfig}: where a kubeconfig file is, and the in-cluster options. */
export interface LoadKubeConfigOptions extends InClusterConfigOptions {
  /**
   * A kubeconfig file (what a `--kubeconfig` flag names). When given it is used, in a pod too.
   * Default: none (in a pod, the in-cluster configuration; else `KUBECONFIG`, else `~/.kube/config`).
   */
  kubeconfig?: string;
  /** The context of the kubeconfig file to use (not for the in-cluster configuration). Default: its `current-context`. */
  context?: string;
  /**
   * Read the configuration without loading `@kubernetes/client-node` wherever that can be done, and
   * return a `LeanKubeConfig` (what kube-informer's clients take) instead of client-node's
   * `KubeConfig`. Loading client-node's `KubeConfig` loads all of its generated API and model classes:
   * some 70 MiB of resident memory and 0.4 s in Node 20 (docs/operations.md "Memory"), for a process
   * whose requests all go through kube-informer (informers, `ctx.client`, `newResourceClient`). Read
   * lean: the in-cluster configuration, and a kubeconfig file's `server`, `certificate-authority(-data)`,
   * `insecure-skip-tls-verify`, `tls-server-name`, and a user's `token`, `client-certificate(-data)`,
   * `client-key(-data)`, each as client-node reads it. Anything else — an `exec`, `auth-provider` or
   * token-file user, several `KUBECONFIG` files to merge — is read by client-node (loaded then) behind
   * the same `LeanKubeConfig`, so the option never changes what a kubeconfig means. Default `false` (client-node's `KubeConfig`, loaded on the call).
   */
  lean?: boolean;
}

const LOAD_SCHEMA = { ...IN_CLUSTER_SCHEMA, kubeconfig: 'string', context: 'string', lean: 'boolean' } as const satisfies OptionSchemaFor<LoadKubeConfigOptions>;

function loadFile(kc: KubeConfig, file: string): void {
  if (!existsSync(file)) throw new KubeConfigError(`the kubeconfig file ${file} does not exist`);
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new KubeConfigError(`the kubeconfig file ${file} cannot be loaded: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/**
 * The kubeconfig files to read, in order (outside a pod): `kubeconfig` when given (it must exist), else
 * those of `KUBECONFIG` that exist (as kubectl, a missing one is skipped; none existing is an error),
 * else `~/.kube/config` (it must exist).
 */
function kubeConfigFiles(kubeconfig: string | undefined, env: Readonly<Record<string, string | undefined>>): string[] {
  const files =
    kubeconfig !== undefined
      ? [kubeconfig]
      : (env.KUBECONFIG ?? '') !== ''
        ? env.KUBECONFIG!.split(delimiter).filter((f) => f !== '')
        : [join(env.HOME ?? homedir(), '.kube', 'config')];
  const present = kubeconfig === undefined && files.length > 1 ? files.filter((f) => existsSync(f)) : files;
  if (present.length === 0) throw new KubeConfigError(`none of the kubeconfig files of KUBECONFIG exists: ${files.join(', ')}`);
  if (!existsSync(present[0])) throw new KubeConfigError(`the kubeconfig file ${present[0]} does not exist`);
  return present;
}

/**
 * The configuration wherever the process runs: the `kubeconfig` file when one is given; else, when
 * `KUBERNETES_SERVICE_HOST` is set (in a pod), {@link loadInClusterConfig}; else the files of
 * `KUBECONFIG` (separated by `:`, `;` on Windows; the first file's `current-context`, later files
 * merged in as kubectl does); else `~/.kube/config`. A file that is missing or does not parse is a
 * `KubeConfigError` (code `KUBECONFIG`) naming it — there is no silent fallback to `localhost:8080`
 * as client-node's `loadFromDefault` has. `context` picks a context of the file (refused when it has
 * none of that name). Throws `InClusterConfigError` as `loadInClusterConfig` does. With `lean: true` the
 * same configuration comes back as a `LeanKubeConfig`, read without `@kubernetes/client-node` where the
 * kubeconfig allows (see the option): what an operator whose only client is kube-informer passes to
 * `SharedInformerFactory`.
 *
 * @example
 * ```ts
 * import { loadKubeConfig } from 'kube-informer';
 * const kc = loadKubeConfig({ kubeconfig: process.env.MY_KUBECONFIG });
 * console.log(kc.getCurrentCluster()?.server);
 * // No client-node in the process (70 MiB less resident memory):
 * const lean = loadKubeConfig({ lean: true });
 * console.log(lean.namespace);
 * ```
 */
export function loadKubeConfig(options: LoadKubeConfigOptions & { lean: true }): LeanKubeConfig;
export function loadKubeConfig(options?: LoadKubeConfigOptions & { lean?: false }): KubeConfig;
export function loadKubeConfig(options?: LoadKubeConfigOptions): KubeConfig | LeanKubeConfig;
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig | LeanKubeConfig {
  validateOptions('loadKubeConfig', options, LOAD_SCHEMA);
  const { kubeconfig, context, lean = false, ...inCluster } = options;
  const env = options.env ?? process.env;
  if (kubeconfig === undefined && (env.KUBERNETES_SERVICE_HOST ?? '') !== '') {
    if (context !== undefined) throw new KubeConfigError(`loadKubeConfig: context ${JSON.stringify(context)} goes with a kubeconfig file; in a cluster (KUBERNETES_SERVICE_HOST is set) there is none`);
    return lean ? leanInCluster(inCluster) : loadInClusterConfig(inCluster);
  }
  const present = kubeConfigFiles(kubeconfig, env);
  if (lean) {
    const read = present.length === 1 ? leanFromFile(present[0], context) : undefined;
    return read ?? asLean(clientNodeKubeConfigOf(present, context));
  }
  return clientNodeKubeConfigOf(present, context);
}

/** The pod's configuration without client-node: the mounted CA, and the token file as `loadInClusterConfig` reads it. */
function leanInCluster(options: InClusterConfigOptions): LeanKubeConfig & ReloadableCredentials {
  const { server, caData, namespace, token } = inClusterParts('loadKubeConfig', options);
  const cluster: Cluster = { name: 'in-cluster', server, caData, skipTLSVerify: server.startsWith('http:') };
  const ca = Buffer.from(caData, 'base64');
  const user: User = { name: 'service-account' };
  return {
    namespace,
    getCurrentCluster: () => cluster,
    getCurrentUser: () => user,
    applyToHTTPSOptions: async (opts: https.RequestOptions) => {
      if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
      else opts.ca = ca;
      opts.headers = { ...opts.headers, Authorization: `Bearer ${await token.token()}` };
    },
    reloadCredentials: async () => {
      await token.reload();
      return `the service-account token file ${token.path}`;
    },
  };
}

/** client-node's `KubeConfig` behind a `LeanKubeConfig` (the three methods, and its context's namespace). */
function asLean(kc: KubeConfig): LeanKubeConfig {
  return {
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace,
    getCurrentCluster: () => kc.getCurrentCluster(),
    getCurrentUser: () => kc.getCurrentUser(),
    applyToHTTPSOptions: (opts) => kc.applyToHTTPSOptions(opts),
  };
}

/** client-node's `KubeConfig` of the files `present` (later ones merged into the first, as kubectl), at `context` when given. */
function clientNodeKubeConfigOf(present: string[], context: string | undefined): KubeConfig {
  const KubeConfigClass = clientNodeKubeConfig();
  const kc = new KubeConfigClass();
  loadFile(kc, present[0]);
  for (const file of present.slice(1)) {
    const more = new KubeConfigClass();
    loadFile(more, file);
    try {
      kc.mergeConfig(more, true);
    } catch (err) {
      throw new KubeConfigError(`the kubeconfig file ${file} cannot be merged into ${present[0]}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
  if (context !== undefined) {
    if (kc.getContextObject(context) === null) {
      throw new KubeConfigError(`the kubeconfig ${present.join(delimiter)} has no context ${JSON.stringify(context)} (it has: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(context);
  }
  return kc;
}
