// The kubeconfig file read without @kubernetes/client-node (loadKubeConfig({ lean: true })): token, client certificates, CA.

import { readFileSync } from 'node:fs';
import type https from 'node:https';
import type { Cluster, User } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { KubeConfigError } from './errors.js';
import type { KubeConfigLike } from './transport.js';

/**
 * What `loadKubeConfig({ lean: true })` returns: the three methods kube-informer's clients use
 * (`KubeConfigLike`) and the context's namespace. In a pod it also re-reads its token file after a 401
 * (`ReloadableCredentials`).
 */
export interface LeanKubeConfig extends KubeConfigLike {
  /** The current context's namespace (in a pod: the pod's); `undefined` when the context names none. */
  readonly namespace: string | undefined;
}

/**
 * The user fields read here, as client-node reads them; a user with any other (`exec`, `auth-provider`,
 * `token-file`, `tokenFile` — which client-node 1.4 does not read —, username and password) is read by
 * client-node, so that `lean` never changes what a kubeconfig means.
 */
const USER_FIELDS = new Set(['token', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data']);

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

/** Where a kubeconfig's text came from, for its errors: `file /path` or `secret ns/name`. */
const named = (source: string): string => `the kubeconfig ${source}`;

/**
 * A kubeconfig file's current (or `context`) cluster and user, as the three methods return them;
 * `undefined` when its user has credentials only client-node handles (`exec`, `auth-provider`, a
 * username and password): the caller loads client-node then.
 */
export function leanFromFile(file: string, context: string | undefined): LeanKubeConfig | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KubeConfigError(`the kubeconfig file ${file} cannot be loaded: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return leanFromText(text, `file ${file}`, context, false);
}

/**
 * A kubeconfig held in memory (a Secret's data), read as {@link leanFromFile} reads a file: the current
 * (or `context`) cluster and user. `source` names it in errors (`secret ns/name`). Inline: a kubeconfig
 * that did not come from this host may not name files of this host (`certificate-authority`,
 * `client-certificate`, `client-key`) nor credentials that run or load code here (`exec`,
 * `auth-provider`, …): each is a `KubeConfigError` naming the field, never read.
 */
export function leanKubeConfigFromText(text: string, source: string, context?: string): LeanKubeConfig {
  return leanFromText(text, source, context, true) as LeanKubeConfig;
}

function leanFromText(text: string, source: string, context: string | undefined, inline: boolean): LeanKubeConfig | undefined {
  const file = source.startsWith('file ') ? source.slice(5) : source;
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new KubeConfigError(`${named(source)} cannot be loaded: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new KubeConfigError(`${named(source)} is not a kubeconfig (no mapping at the top)`);
  const root = doc as Record<string, unknown>;
  const contexts = listOf(root, 'contexts');
  const wanted = context ?? str(root['current-context']);
  if (wanted === undefined) throw new KubeConfigError(`${named(source)} has no current-context`);
  const ctx = contexts.find((c) => c.name === wanted);
  if (ctx === undefined) throw new KubeConfigError(`the kubeconfig ${file} has no context ${JSON.stringify(wanted)} (it has: ${contexts.map((c) => String(c.name)).join(', ') || 'none'})`);
  const c = (ctx.context ?? {}) as Record<string, unknown>;
  const clusterEntry = listOf(root, 'clusters').find((x) => x.name === c.cluster);
  if (clusterEntry === undefined) throw new KubeConfigError(`${named(source)}: context ${JSON.stringify(wanted)} names cluster ${JSON.stringify(c.cluster)}, which it does not have`);
  const cl = (clusterEntry.cluster ?? {}) as Record<string, unknown>;
  const server = str(cl.server);
  if (server === undefined) throw new KubeConfigError(`${named(source)}: cluster ${JSON.stringify(clusterEntry.name)} has no server`);
  if (inline && cl['certificate-authority'] !== undefined) throw new KubeConfigError(`${named(source)}: cluster ${JSON.stringify(clusterEntry.name)} names a file (certificate-authority), which a kubeconfig not read from this host may not: use certificate-authority-data`);
  const cluster: Cluster = {
    name: String(clusterEntry.name),
    server,
    skipTLSVerify: cl['insecure-skip-tls-verify'] === true,
    caData: str(cl['certificate-authority-data']),
    caFile: str(cl['certificate-authority']),
    tlsServerName: str(cl['tls-server-name']),
  };
  const userEntry = c.user === undefined ? undefined : listOf(root, 'users').find((x) => x.name === c.user);
  if (c.user !== undefined && userEntry === undefined) throw new KubeConfigError(`${named(source)}: context ${JSON.stringify(wanted)} names user ${JSON.stringify(c.user)}, which it does not have`);
  const u = (userEntry?.user ?? {}) as Record<string, unknown>;
  const other = Object.keys(u).filter((k) => !USER_FIELDS.has(k) || (inline && (k === 'client-certificate' || k === 'client-key')));
  if (other.length > 0 && inline) {
    throw new KubeConfigError(`${named(source)}: user ${JSON.stringify(userEntry?.name)} has ${other.join(', ')}, which a kubeconfig not read from this host may not have (a file or a command of this host): use token or client-certificate-data and client-key-data`);
  }
  if (other.length > 0) return undefined;
  const user: User | null = userEntry === undefined ? null : { name: String(userEntry.name), token: str(u.token), certFile: str(u['client-certificate']), keyFile: str(u['client-key']), certData: str(u['client-certificate-data']), keyData: str(u['client-key-data']) };
  // Read once, as client-node reads them.
  const ca = cluster.caData !== undefined ? Buffer.from(cluster.caData, 'base64') : cluster.caFile !== undefined ? readBytes(cluster.caFile, 'certificate-authority', source) : undefined;
  const cert = user?.certData !== undefined ? Buffer.from(user.certData, 'base64') : user?.certFile !== undefined ? readBytes(user.certFile, 'client-certificate', source) : undefined;
  const key = user?.keyData !== undefined ? Buffer.from(user.keyData, 'base64') : user?.keyFile !== undefined ? readBytes(user.keyFile, 'client-key', source) : undefined;
  return {
    namespace: str(c.namespace),
    getCurrentCluster: () => cluster,
    getCurrentUser: () => user,
    applyToHTTPSOptions: async (opts: https.RequestOptions) => {
      if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
      if (cluster.tlsServerName !== undefined) opts.servername = cluster.tlsServerName;
      if (ca !== undefined) opts.ca = ca;
      if (cert !== undefined) opts.cert = cert;
      if (key !== undefined) opts.key = key;
      const token = user?.token;
      if (token !== undefined) opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    },
  };
}
