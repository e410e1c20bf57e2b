// The configmapset operator run as a pod of a ServiceAccount on the real kube-apiserver: its token in a kubelet-style mount, examples/configmapset/in-cluster.ts started as a kubelet would, its rotation and its stop.

import type { RealApiServer } from './harness.js';
import { runAsKubelet, ServiceAccountMount, type IssuedToken, type PodProcess, type ServiceAccountIdentity } from './service-account.js';

/** The operator's in-cluster entry point. */
export const IN_CLUSTER_SCRIPT = 'examples/configmapset/in-cluster.ts';

/** Options of {@link OperatorPod.start}. */
export interface OperatorPodOptions {
  /** The server. */
  server: RealApiServer;
  /** The ServiceAccount it runs as (its namespace is the pod's). */
  serviceAccount: ServiceAccountIdentity;
  /** The external registry's directory (`--registry`). */
  registryDir: string;
  /** More flags of in-cluster.ts (`--leader-elect`, …). Default none. */
  args?: string[];
  /** The script to run instead of in-cluster.ts (a test fixture around it). Default in-cluster.ts. */
  script?: string;
  /** More environment. Default none. */
  env?: Record<string, string>;
  /** The first token's lifetime, in s (≥ 600). Default 3600. */
  expirationSeconds?: number;
}

/** One replica of the operator in a "pod": a token, its mount, the process. */
export class OperatorPod {
  /** The process. */
  readonly process: PodProcess;
  /** The mount its service account is read from. */
  readonly mount: ServiceAccountMount;
  /** The token in the mount now. */
  token: IssuedToken;
  readonly #options: OperatorPodOptions;

  private constructor(options: OperatorPodOptions, mount: ServiceAccountMount, token: IssuedToken, process: PodProcess) {
    this.#options = options;
    this.mount = mount;
    this.token = token;
    this.process = process;
  }

  /** Issues a token bound to a new Secret, writes the mount, starts the process. */
  static async start(options: OperatorPodOptions): Promise<OperatorPod> {
    const { server, serviceAccount } = options;
    const mount = await ServiceAccountMount.create();
    const token = await serviceAccount.issueToken(options.expirationSeconds ?? 3600);
    await mount.write({ token: token.token, 'ca.crt': server.ca, namespace: serviceAccount.namespace });
    const process = runAsKubelet({
      script: options.script ?? IN_CLUSTER_SCRIPT,
      args: ['--registry', options.registryDir, ...(options.args ?? [])],
      server,
      mount,
      env: options.env,
    });
    return new OperatorPod(options, mount, token, process);
  }

  /** As kubelet rotates a projected token: a new token (bound to a new Secret) written over the mount. Resolves with the old one. */
  async rotate(expirationSeconds = 3600): Promise<IssuedToken> {
    const { server, serviceAccount } = this.#options;
    const old = this.token;
    this.token = await serviceAccount.issueToken(expirationSeconds);
    await this.mount.write({ token: this.token.token, 'ca.crt': server.ca, namespace: serviceAccount.namespace });
    return old;
  }

  /** Waits for the line saying the caches synced (or rejects with the output). */
  synced(timeoutMs = 20_000): Promise<string> {
    return this.process.waitFor(/caches synced/, timeoutMs);
  }

  /** SIGTERM, SIGKILL after `graceMs` (kubelet's terminationGracePeriodSeconds), then the mount removed. Resolves with how it ended. */
  async stop(graceMs = 5_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const started = Date.now();
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    try {
      const end = await this.process.exited;
      return { ...end, ms: Date.now() - started };
    } finally {
      clearTimeout(timer);
      await this.mount.dispose();
    }
  }
}
