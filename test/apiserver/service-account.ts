// A pod's identity on the real kube-apiserver without a kubelet: a ServiceAccount bound to given RBAC objects, tokens from the TokenRequest API, the mount kubelet writes, and a process run as kubelet runs a container.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:tls';
import { join } from 'node:path';
import type { KubeObject } from '../../src/core/index.js';
import { request } from '../../src/envtest/http.js';
import { newResourceClient, resources, type ResourceDescriptor } from '../../src/index.js';
import { EventRecorder, type RealApiServer } from './harness.js';
import { ROOT } from '../examples/helpers.js';

/** Where kubelet mounts a pod's service-account token, CA bundle and namespace. */
export const SERVICE_ACCOUNT_DIR = 'var/run/secrets/kubernetes.io/serviceaccount';

/**
 * Connects to the test server as an in-cluster process does (`https://127.0.0.1:<port>`, the mount's
 * `ca.crt`) and resolves with what its serving certificate says: verified against `server.ca`, and
 * valid for the IP 127.0.0.1 (a subject alternative name), with its subject and names.
 */
export async function servingCertificate(server: RealApiServer): Promise<{ authorized: boolean; authorizationError?: string; validFor127: boolean; subject: string; altNames: string }> {
  const url = new URL(server.server);
  const socket = connect({ host: '127.0.0.1', port: Number(url.port), ca: server.ca, rejectUnauthorized: false });
  try {
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    const cert = socket.getPeerX509Certificate();
    if (cert === undefined) throw new Error(`${server.server} sent no certificate`);
    const authorizationError = socket.authorizationError === null ? undefined : String(socket.authorizationError);
    return { authorized: socket.authorized, authorizationError, validFor127: cert.checkIP('127.0.0.1') !== undefined, subject: cert.subject, altNames: cert.subjectAltName ?? '' };
  } finally {
    socket.destroy();
  }
}

/** A token the TokenRequest API issued, bound to a Secret whose deletion revokes it. */
export interface IssuedToken {
  /** The JWT. */
  token: string;
  /** The Secret it is bound to (`boundObjectRef`), in the ServiceAccount's namespace. */
  secret: string;
  /** When the server says it expires. */
  expiration: string;
}

/** A ServiceAccount in a namespace of its own, and what the test did for it (bindings, tokens). */
export class ServiceAccountIdentity {
  readonly #server: RealApiServer;
  #tokens = 0;
  /** Its namespace (created for it). */
  readonly namespace: string;
  /** Its name. */
  readonly name: string;

  private constructor(server: RealApiServer, namespace: string, name: string) {
    this.#server = server;
    this.namespace = namespace;
    this.name = name;
  }

  /** Creates `namespace` (when it does not exist yet) and the ServiceAccount `name` in it. */
  static async create(server: RealApiServer, namespace: string, name: string): Promise<ServiceAccountIdentity> {
    const namespaces = newResourceClient(server.kubeConfig, resources.namespaces);
    const accounts = newResourceClient(server.kubeConfig, resources.serviceaccounts);
    try {
      await namespaces.create({ metadata: { name: namespace } }).catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 409) throw err;
      });
      await accounts.create({ metadata: { name, namespace } });
    } finally {
      namespaces.close();
      accounts.close();
    }
    return new ServiceAccountIdentity(server, namespace, name);
  }

  /** `system:serviceaccount:<namespace>:<name>`, the user RBAC and the audit log see. */
  get username(): string {
    return `system:serviceaccount:${this.namespace}:${this.name}`;
  }

  /**
   * Creates the objects (Roles, RoleBindings, ClusterRoles, …) as the admin, by server-side apply
   * (`dryRun` sends `dryRun=All`: validated and admitted, nothing stored). Resolves with the kinds
   * the server does not serve (e.g. cert-manager's `Certificate` without its CRD), skipped, as `Kind apiVersion name`.
   */
  async apply(objects: readonly KubeObject[], options: { dryRun?: boolean } = {}): Promise<string[]> {
    return applyObjects(this.#server, objects, options);
  }

  /** Deletes the objects (as the admin); already gone is fine. */
  async remove(objects: readonly KubeObject[]): Promise<void> {
    for (const obj of objects) {
      const client = newResourceClient(this.#server.kubeConfig, (await descriptorOf(this.#server, obj))!);
      try {
        await client.delete(obj.metadata?.name ?? '', obj.metadata?.namespace).catch((err: unknown) => {
          if ((err as { statusCode?: number }).statusCode !== 404) throw err;
        });
      } finally {
        client.close();
      }
    }
  }

  /**
   * Issues a token with the TokenRequest API (`serviceaccounts/<name>/token`), bound to a new Secret
   * (`boundObjectRef`, its uid): deleting the Secret revokes the token. `expirationSeconds` ≥ 600 (the
   * server's minimum). Default 3600.
   */
  async issueToken(expirationSeconds = 3600): Promise<IssuedToken> {
    const secrets = newResourceClient(this.#server.kubeConfig, resources.secrets);
    const secretName = `${this.name}-binding-${++this.#tokens}`;
    try {
      const secret = await secrets.create({ metadata: { name: secretName, namespace: this.namespace }, type: 'Opaque' });
      const path = `/api/v1/namespaces/${this.namespace}/serviceaccounts/${this.name}/token`;
      const body = {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds, boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: secretName, uid: secret.metadata?.uid } },
      };
      const answer = await request(this.#server.server + path, { method: 'POST', body, endpoint: this.#server });
      if (answer.status !== 201) throw new Error(`TokenRequest for ${this.username} answered ${answer.status}: ${answer.body}`);
      const status = (JSON.parse(answer.body) as { status: { token: string; expirationTimestamp: string } }).status;
      return { token: status.token, secret: secretName, expiration: status.expirationTimestamp };
    } finally {
      secrets.close();
    }
  }

  /** Deletes the Secret a token is bound to: the server refuses the token from then on (after its ~10 s success cache). */
  async revoke(token: IssuedToken): Promise<void> {
    const secrets = newResourceClient(this.#server.kubeConfig, resources.secrets);
    try {
      await secrets.delete(token.secret, this.namespace);
    } finally {
      secrets.close();
    }
  }

  /** Whether the server authenticates `token` now (a SelfSubjectReview: 201 yes, 401 no). */
  async accepts(token: string): Promise<boolean> {
    const answer = await request(`${this.#server.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: 'POST',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      endpoint: { ...this.#server, token },
    });
    if (answer.status === 201) return true;
    if (answer.status === 401) return false;
    throw new Error(`SelfSubjectReview answered ${answer.status}: ${answer.body}`);
  }
}

/** The server-side apply of {@link ServiceAccountIdentity.apply}: as the admin, each object in turn. */
export async function applyObjects(server: RealApiServer, objects: readonly KubeObject[], options: { dryRun?: boolean } = {}): Promise<string[]> {
  const missing: string[] = [];
  for (const obj of objects) {
    const descriptor = await descriptorOf(server, obj);
    if (descriptor === undefined) {
      missing.push(`${obj.kind} ${obj.apiVersion} ${obj.metadata?.name ?? ''}`);
      continue;
    }
    const client = newResourceClient(server.kubeConfig, descriptor, { fieldManager: 'kube-informer-proof' });
    try {
      await client.apply(obj as never, { force: true, dryRun: options.dryRun });
    } catch (err) {
      throw new Error(`server-side apply${options.dryRun ? ' (dry run)' : ''} of ${obj.kind} ${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''} refused: ${(err as Error).message}`, { cause: err });
    } finally {
      client.close();
    }
  }
  return missing;
}

/** The resource of an object's apiVersion and kind, from the server's discovery; undefined when the server does not serve the kind. */
async function descriptorOf(server: RealApiServer, obj: KubeObject): Promise<ResourceDescriptor<KubeObject> | undefined> {
  const apiVersion = obj.apiVersion ?? '';
  const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
  const answer = await request(`${server.server}${group === '' ? '/api' : '/apis/' + group}/${version}`, { endpoint: server });
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) throw new Error(`discovery of ${apiVersion} answered ${answer.status}: ${answer.body}`);
  const list = JSON.parse(answer.body) as { resources: Array<{ name: string; kind: string; namespaced: boolean }> };
  const found = list.resources.find((r) => r.kind === obj.kind && !r.name.includes('/'));
  if (found === undefined) return undefined;
  return { group, version, resource: found.name, kind: found.kind, namespaced: found.namespaced } as ResourceDescriptor<KubeObject>;
}

/** The files of a service-account mount. */
export interface MountFiles {
  /** The bearer token. */
  token: string;
  /** The CA bundle of the API server's serving certificate. */
  'ca.crt': string;
  /** The pod's namespace. */
  namespace: string;
}

/**
 * A service-account mount under a temporary root, written as kubelet's atomic writer writes a
 * projected volume: the files go into a new `..<timestamp>` directory, a `..data_tmp` symlink to it is
 * renamed over `..data` (one atomic step), and `token`, `ca.crt`, `namespace` are symlinks into `..data`.
 * A reader sees the old set of files or the new one, never a mix or a half-written file.
 */
export class ServiceAccountMount {
  /** The path prefix to give the in-cluster loader (`loadInClusterConfig({ root })`). */
  readonly root: string;
  /** `<root>/var/run/secrets/kubernetes.io/serviceaccount`. */
  readonly dir: string;
  #writes = 0;

  private constructor(root: string) {
    this.root = root;
    this.dir = join(root, SERVICE_ACCOUNT_DIR);
  }

  /** A new, empty root in the temp dir. */
  static async create(): Promise<ServiceAccountMount> {
    const mount = new ServiceAccountMount(await mkdtemp(join(tmpdir(), 'ki-pod-')));
    await mkdir(mount.dir, { recursive: true });
    return mount;
  }

  /** Writes (or rewrites) the files, atomically. */
  async write(files: MountFiles): Promise<void> {
    const stamp = `..${new Date().toISOString().replace(/[-:.TZ]/g, '_')}${++this.#writes}`;
    await mkdir(join(this.dir, stamp), { mode: 0o755 });
    for (const [name, content] of Object.entries(files)) await writeFile(join(this.dir, stamp, name), content, { mode: 0o644 });
    const previous = await readlink(join(this.dir, '..data')).catch(() => undefined);
    await symlink(stamp, join(this.dir, '..data_tmp'));
    await rename(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    for (const name of Object.keys(files)) await symlink(join('..data', name), join(this.dir, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    if (previous !== undefined) await rm(join(this.dir, previous), { recursive: true, force: true });
  }

  /** Removes the root. */
  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/** How {@link runAsKubelet} starts a container's process. */
export interface KubeletRunOptions {
  /** The script, relative to the repository root, run with `node --import tsx`. */
  script: string;
  /** Its arguments. Default none. */
  args?: string[];
  /** The API server: its port becomes `KUBERNETES_SERVICE_PORT`. */
  server: RealApiServer;
  /** The service-account mount: its root is passed in `KUBE_INFORMER_SERVICE_ACCOUNT_ROOT`. */
  mount: ServiceAccountMount;
  /** More environment variables. Default none. */
  env?: Record<string, string>;
}

/** A process run as kubelet would run it: its output as it comes, its end, and the signals kubelet sends. */
export class PodProcess {
  /** Every line it wrote to stdout or stderr, in order (stderr lines prefixed `stderr: `). */
  readonly lines = new EventRecorder<string>();
  /** Resolves when it exited, with its code (null after a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcess;

  constructor(child: ChildProcess) {
    this.#child = child;
    const split = (prefix: string) => {
      let rest = '';
      return (chunk: Buffer): void => {
        const parts = (rest + chunk.toString('utf8')).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) this.lines.record(prefix + line);
      };
    };
    child.stdout?.on('data', split(''));
    child.stderr?.on('data', split('stderr: '));
    this.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  }

  /** The process id. */
  get pid(): number {
    return this.#child.pid ?? 0;
  }

  /** Everything it wrote so far, one line each. */
  output(): string {
    return this.lines.events.join('\n');
  }

  /** Resolves with the first line matching `pattern` (at once if one was written); rejects after `timeoutMs` or when the process exits first. */
  async waitFor(pattern: RegExp, timeoutMs: number): Promise<string> {
    const found = (): string | undefined => this.lines.events.find((l) => pattern.test(l));
    let timer: NodeJS.Timeout | undefined;
    const exited = this.exited.then(() => undefined);
    try {
      await Promise.race([
        this.lines.until(() => found() !== undefined),
        exited.then(() => (found() === undefined ? Promise.reject(new Error(`the process exited before writing ${pattern}:\n${this.output()}`)) : undefined)),
        new Promise((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${this.output()}`)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
    return found()!;
  }

  /** Sends a signal (kubelet: SIGTERM, then SIGKILL after the grace period). */
  kill(signal: NodeJS.Signals): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill(signal);
  }

  /** SIGKILL and wait for the end: a test's cleanup. */
  async stop(): Promise<void> {
    this.kill('SIGKILL');
    await this.exited;
  }
}

/**
 * Starts `node --import tsx <script>` from the repository root as kubelet would start a container in a
 * pod: `KUBERNETES_SERVICE_HOST=127.0.0.1`, `KUBERNETES_SERVICE_PORT=<the server's port>`, the mount's
 * root in `KUBE_INFORMER_SERVICE_ACCOUNT_ROOT`, no `KUBECONFIG` and a `HOME` with no `.kube/config`.
 */
export function runAsKubelet(options: KubeletRunOptions): PodProcess {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('KUBE') && k !== 'VITEST_WORKER_ID') env[k] = v;
  Object.assign(env, {
    HOME: options.mount.root,
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: new URL(options.server.server).port,
    KUBE_INFORMER_SERVICE_ACCOUNT_ROOT: options.mount.root,
    ...options.env,
  });
  const child = spawn(process.execPath, ['--import', 'tsx', options.script, ...(options.args ?? [])], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new PodProcess(child);
}
