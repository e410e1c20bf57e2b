// loadLeanKubeConfig: a kubeconfig (file or in-cluster) read without loading @kubernetes/client-node, for a process whose only client is kube-informer's.

import { readFileSync } from 'node:fs';
import type https from 'node:https';
import type { Cluster, User } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { validateOptions } from '../core/options.js';
import { KubeConfigError } from './errors.js';
import { inClusterParts, kubeConfigFiles, LOAD_SCHEMA, type LoadKubeConfigOptions } from './in-cluster.js';
import type { KubeConfigLike, ReloadableCredentials } from './transport.js';

/**
 * What {@link loadLeanKubeConfig} returns: the three methods kube-informer's clients use
 * (`KubeConfigLike`), the context's namespace, and — in a pod — the token file re-read after a 401.
 */
export interface LeanKubeConfig extends KubeConfigLike {
  /** The current context's namespace (in a pod: the pod's); `undefined` when the context names none. */
  readonly namespace: string | undefined;
  /** Where the configuration came from: the kubeconfig file, or `in-cluster`. */
  readonly source: string;
}

/** The user fields the lean loader understands; any other credential is refused, naming it. */
const USER_FIELDS = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data']);

type Named<T> = { name?: unknown } & T;
const listOf = (doc: Record<string, unknown>, key: string): Array<Named<Record<string, unknown>>> => (Array.isArray(doc[key]) ? (doc[key] as Array<Named<Record<string, unknown>>>) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function readBytes(file: string, what: string, source: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new KubeConfigError(`the kubeconfig ${source}: the ${what} file ${file} cannot be read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** A kubeconfig file's current (or `context`) cluster and user, as the three methods return them. */
function fromFile(file: string, context: string | undefined): LeanKubeConfig {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new KubeConfigError(`the kubeconfig file ${file} cannot be loaded: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (doc === null || typeof doc !== 'object') throw new KubeConfigError(`the kubeconfig file ${file} is not a kubeconfig (no mapping at the top)`);
  const root = doc as Record<string, unknown>;
  const contexts = listOf(root, 'contexts');
  const wanted = context ?? str(root['current-context']);
  if (wanted === undefined) throw new KubeConfigError(`the kubeconfig file ${file} has no current-context`);
  const ctx = contexts.find((c) => c.name === wanted);
  if (ctx === undefined) throw new KubeConfigError(`the kubeconfig file ${file} has no context ${JSON.stringify(wanted)} (it has: ${contexts.map((c) => String(c.name)).join(', ') || 'none'})`);
  const c = (ctx.context ?? {}) as Record<string, unknown>;
  const clusterEntry = listOf(root, 'clusters').find((x) => x.name === c.cluster);
  if (clusterEntry === undefined) throw new KubeConfigError(`the kubeconfig file ${file}: context ${JSON.stringify(wanted)} names cluster ${JSON.stringify(c.cluster)}, which it does not have`);
  const cl = (clusterEntry.cluster ?? {}) as Record<string, unknown>;
  const server = str(cl.server);
  if (server === undefined) throw new KubeConfigError(`the kubeconfig file ${file}: cluster ${JSON.stringify(clusterEntry.name)} has no server`);
  const cluster: Cluster = {
    name: String(clusterEntry.name),
    server,
    skipTLSVerify: cl['insecure-skip-tls-verify'] === true,
    caData: str(cl['certificate-authority-data']),
    caFile: str(cl['certificate-authority']),
    tlsServerName: str(cl['tls-server-name']),
  };
  const userEntry = c.user === undefined ? undefined : listOf(root, 'users').find((x) => x.name === c.user);
  if (c.user !== undefined && userEntry === undefined) throw new KubeConfigError(`the kubeconfig file ${file}: context ${JSON.stringify(wanted)} names user ${JSON.stringify(c.user)}, which it does not have`);
  const u = (userEntry?.user ?? {}) as Record<string, unknown>;
  const other = Object.keys(u).filter((k) => !USER_FIELDS.has(k));
  if (other.length > 0) {
    throw new KubeConfigError(`the kubeconfig file ${file}: user ${JSON.stringify(userEntry?.name)} has ${other.join(', ')}, which loadLeanKubeConfig does not handle (it reads token, tokenFile and client certificates); use loadKubeConfig, which loads @kubernetes/client-node for them`);
  }
  const user: User | null = userEntry === undefined ? null : { name: String(userEntry.name), token: str(u.token), certFile: str(u['client-certificate']), keyFile: str(u['client-key']), certData: str(u['client-certificate-data']), keyData: str(u['client-key-data']) };
  const tokenFile = str(u.tokenFile);
  const source = `file ${file}`;
  // Read at each request as client-node does for tokenFile (it may be rotated); certificates once.
  const ca = cluster.caData !== undefined ? Buffer.from(cluster.caData, 'base64') : cluster.caFile !== undefined ? readBytes(cluster.caFile, 'certificate-authority', source) : undefined;
  const cert = user?.certData !== undefined ? Buffer.from(user.certData, 'base64') : user?.certFile !== undefined ? readBytes(user.certFile, 'client-certificate', source) : undefined;
  const key = user?.keyData !== undefined ? Buffer.from(user.keyData, 'base64') : user?.keyFile !== undefined ? readBytes(user.keyFile, 'client-key', source) : undefined;
  return {
    namespace: str(c.namespace),
    source,
    getCurrentCluster: () => cluster,
    getCurrentUser: () => user,
    applyToHTTPSOptions: async (opts: https.RequestOptions) => {
      if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
      if (cluster.tlsServerName !== undefined) opts.servername = cluster.tlsServerName;
      if (ca !== undefined) opts.ca = ca;
      if (cert !== undefined) opts.cert = cert;
      if (key !== undefined) opts.key = key;
      const token = user?.token ?? (tokenFile === undefined ? undefined : readBytes(tokenFile, 'tokenFile', source).toString('utf8').trim());
      if (token !== undefined) opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    },
  };
}

/**
 * The same configuration {@link loadKubeConfig} finds — the `kubeconfig` file when given; else, in a
 * pod, the in-cluster one (its token file re-read when it changes, before it expires and after a 401);
 * else the first file of `KUBECONFIG`; else `~/.kube/config` — read without `@kubernetes/client-node`.
 * Loading client-node's `KubeConfig` loads all of client-node's generated API and model classes (about
 * 70 MiB of resident memory and 0.4 s in Node 20: docs/operations.md "Memory"); an operator whose
 * requests all go through kube-informer (informers, `ctx.client`, `newResourceClient`) needs none of it.
 * Pass the result wherever a `KubeConfigLike` goes (`new SharedInformerFactory(kc)`).
 *
 * What it reads: a cluster's `server`, `certificate-authority(-data)`, `insecure-skip-tls-verify`,
 * `tls-server-name`; a user's `token`, `tokenFile` (read at each request), `client-certificate(-data)`
 * and `client-key(-data)`. Throws `KubeConfigError` (code `KUBECONFIG`) naming the file and the field
 * for anything else — an `exec` or `auth-provider` user, or username and password: use
 * `loadKubeConfig` for those — and for `KUBECONFIG` naming several files (merged only by
 * `loadKubeConfig`); `InClusterConfigError` as `loadInClusterConfig`; `InvalidOptionError` for a bad option.
 *
 * @example
 * ```ts
 * import { loadLeanKubeConfig, SharedInformerFactory } from 'kube-informer';
 * const kc = loadLeanKubeConfig();
 * const factory = new SharedInformerFactory(kc, { namespace: kc.namespace ?? 'default' });
 * ```
 */
export function loadLeanKubeConfig(options: LoadKubeConfigOptions = {}): LeanKubeConfig {
  validateOptions('loadLeanKubeConfig', options, LOAD_SCHEMA);
  const { kubeconfig, context, ...inCluster } = options;
  const env = options.env ?? process.env;
  if (kubeconfig === undefined && (env.KUBERNETES_SERVICE_HOST ?? '') !== '') {
    if (context !== undefined) throw new KubeConfigError(`loadLeanKubeConfig: context ${JSON.stringify(context)} goes with a kubeconfig file; in a cluster (KUBERNETES_SERVICE_HOST is set) there is none`);
    const { server, caData, namespace, token } = inClusterParts('loadLeanKubeConfig', inCluster);
    const cluster: Cluster = { name: 'in-cluster', server, caData, skipTLSVerify: server.startsWith('http:') };
    const ca = Buffer.from(caData, 'base64');
    const user: User = { name: 'service-account' };
    const kc: LeanKubeConfig & ReloadableCredentials = {
      namespace,
      source: 'in-cluster',
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
    return kc;
  }
  const files = kubeConfigFiles(kubeconfig, env);
  if (files.length > 1) throw new KubeConfigError(`loadLeanKubeConfig: KUBECONFIG names ${files.length} files (${files.join(', ')}); merging them is loadKubeConfig's (with @kubernetes/client-node) — name one file`);
  return fromFile(files[0], context);
}
