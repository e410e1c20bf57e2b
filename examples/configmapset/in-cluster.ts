// configmapset in a pod: the operator configured from the service-account mount, JSON logs on stdout, SIGTERM handled, leader election on a Lease in the pod's namespace.
//
// In a container (the image's entry point), or beside a test kube-apiserver run "as a kubelet would":
//   KUBERNETES_SERVICE_HOST=… KUBERNETES_SERVICE_PORT=… node --import tsx examples/configmapset/in-cluster.ts --registry DIR
//     --registry DIR           the external registry, a directory (shared by the replicas). Required.
//     --watch-namespace NS     reconcile the sets of NS only (a Role); default every namespace (a ClusterRole)
//     --leader-elect           reconcile only while holding the Lease `configmapset-operator` in the pod's namespace
//     --lease-duration-ms N    the Lease's duration (default 15 000); --lease-retry-ms N its retry period (default 2 000)
//     --probe-port N           serve /livez, /readyz and /metrics on POD_IP (else loopback) at port N
//     --cache-sync-warning-ms N   while a cache cannot sync (a 403), name it every N ms (default 30 000)
//     --grace-ms N             after SIGTERM, stop within N ms (default 25 000: under the pod's 30 s grace)
//     --token-check-ms N       look at the token file for a rewrite every N ms (default 10 000; a 401 re-reads it anyway)
// The service-account mount is read under KUBE_INFORMER_SERVICE_ACCOUNT_ROOT when set (a test's
// temporary root), else at /var/run/secrets/kubernetes.io/serviceaccount as in every pod.
// The RBAC rules it needs: `npx tsx src/cli/bin.ts rbac examples/configmapset/manager.ts` (manager.ts
// builds the same operator). Exit 0 after SIGTERM/SIGINT, 1 when the operator failed.

import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { CoordinationV1Api, type KubeConfig, Watch } from '@kubernetes/client-node';
import { loadInClusterConfig, type LoggerOption } from '../../src/index.js';
import { LeaseLock } from '../../src/leaderelection/index.js';
import { jsonLogger, shutdownSignal } from '../../src/operations/index.js';
import { exitWhenIdle, isMain } from '../lib/cluster.js';
import { ConfigMapSetOperator } from './operator.js';
import { DirectoryRegistry, type ExternalRegistry } from './registry.js';

/** How the in-cluster operator is set up: what its flags say. */
export interface InClusterSettings {
  /** The external registry. Required. */
  registry: ExternalRegistry;
  /** Reconcile only this namespace's sets. Default: every namespace. */
  watchNamespace?: string;
  /** The pod's namespace: where its Lease lives. Required with `leaderElect`. */
  podNamespace: string;
  /** Run under leader election on the Lease `configmapset-operator` in `podNamespace`. Default false. */
  leaderElect?: boolean;
  /** This replica's identity in the election. Default: the host name and the process id. */
  identity?: string;
  /** The Lease's duration, in ms (renew deadline: two thirds of it). Default 15 000. */
  leaseDurationMs?: number;
  /** The elector's retry period, in ms: how soon a standby sees a released Lease. Default 2 000. */
  leaseRetryMs?: number;
  /** The probe server's port and host. Default: none. */
  probes?: { port: number; host?: string };
  /** How often a cache that cannot sync is named in the log, in ms. Default 30 000. */
  cacheSyncWarningIntervalMs?: number;
  /**
   * How long the stop may take after SIGTERM before what still runs is abandoned, in ms: keep it under
   * the pod's `terminationGracePeriodSeconds` (30 s by default), after which kubelet sends SIGKILL. Default 25 000.
   */
  graceMs?: number;
  /** The logger. Default `console`. */
  logger?: LoggerOption;
}

/** The Lease the replicas compete for. */
export const LEASE_NAME = 'configmapset-operator';

/**
 * The operator as the in-cluster process runs it, on `kubeConfig` (the pod's, or a placeholder for
 * `kube-informer rbac`: nothing connects before `run`).
 */
export function inClusterOperator(kubeConfig: KubeConfig, settings: InClusterSettings): ConfigMapSetOperator {
  const leaseDurationMs = settings.leaseDurationMs ?? 15_000;
  const leaderElection = settings.leaderElect
    ? {
        lock: new LeaseLock({
          client: kubeConfig.makeApiClient(CoordinationV1Api),
          namespace: settings.podNamespace,
          name: LEASE_NAME,
          identity: settings.identity ?? `${hostname()}-${process.pid}`,
          // A standby watches the Lease: it takes it the moment the leader releases it, not at its next retry.
          watch: new Watch(kubeConfig),
        }),
        leaseDurationMs,
        renewDeadlineMs: Math.round((leaseDurationMs * 2) / 3),
        retryPeriodMs: settings.leaseRetryMs ?? 2_000,
        // The Manager releases the Lease at the stop (its default): the watching standby leads at once.
      }
    : undefined;
  return new ConfigMapSetOperator(kubeConfig, {
    registry: settings.registry,
    namespace: settings.watchNamespace,
    logger: settings.logger,
    leaderElection,
    probes: settings.probes,
    manager: { cacheSyncWarningIntervalMs: settings.cacheSyncWarningIntervalMs, gracefulShutdownTimeoutMs: settings.graceMs },
  });
}

/** The flags of the in-cluster process: the operator's settings (the registry as a directory) and the token file's check interval. */
export function parseInClusterArgs(argv: readonly string[], logger?: LoggerOption): Omit<InClusterSettings, 'podNamespace'> & { tokenCheckIntervalMs?: number } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      registry: { type: 'string' },
      'watch-namespace': { type: 'string' },
      'leader-elect': { type: 'boolean' },
      'lease-duration-ms': { type: 'string' },
      'lease-retry-ms': { type: 'string' },
      'probe-port': { type: 'string' },
      'cache-sync-warning-ms': { type: 'string' },
      'grace-ms': { type: 'string' },
      'token-check-ms': { type: 'string' },
    },
    strict: true,
  });
  if (values.registry === undefined) throw new TypeError('--registry DIR is required: the directory of the external registry');
  const num = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new TypeError(`--${flag} needs a whole number >= 0, got "${v}"`);
    return n;
  };
  const port = num('probe-port', values['probe-port']);
  return {
    registry: new DirectoryRegistry(values.registry),
    watchNamespace: values['watch-namespace'] || undefined,
    leaderElect: values['leader-elect'] ?? false,
    leaseDurationMs: num('lease-duration-ms', values['lease-duration-ms']),
    leaseRetryMs: num('lease-retry-ms', values['lease-retry-ms']),
    probes: port === undefined ? undefined : { port, host: process.env.POD_IP ?? '127.0.0.1' },
    cacheSyncWarningIntervalMs: num('cache-sync-warning-ms', values['cache-sync-warning-ms']),
    graceMs: num('grace-ms', values['grace-ms']) ?? 25_000,
    tokenCheckIntervalMs: num('token-check-ms', values['token-check-ms']),
    logger,
  };
}

/**
 * The process: the KubeConfig from the service-account mount, the flags, JSON logs, the operator run
 * until SIGTERM/SIGINT. `wrapRegistry` lets a test put something around the registry (one that hangs).
 */
export async function main(argv: readonly string[] = process.argv.slice(2), wrapRegistry: (registry: ExternalRegistry) => ExternalRegistry = (r) => r): Promise<void> {
  const logger = jsonLogger();
  const { tokenCheckIntervalMs, ...settings } = parseInClusterArgs(argv, logger);
  const kubeConfig = loadInClusterConfig({ root: process.env.KUBE_INFORMER_SERVICE_ACCOUNT_ROOT ?? '', logger, tokenCheckIntervalMs });
  const operator = inClusterOperator(kubeConfig, { ...settings, podNamespace: kubeConfig.namespace, registry: wrapRegistry(settings.registry) });
  const signal = shutdownSignal({ logger });
  const where = settings.watchNamespace === undefined ? 'every namespace' : `namespace ${settings.watchNamespace}`;
  logger.info(`configmapset operator in cluster: ${kubeConfig.getCurrentCluster()?.server ?? '?'}, ${where}${settings.leaderElect ? `, leader election on ${kubeConfig.namespace}/${LEASE_NAME}` : ''}`);
  await operator.run(signal);
}

if (isMain(import.meta.url)) {
  main().then(
    () => exitWhenIdle(0),
    (err: unknown) => {
      console.error(JSON.stringify({ level: 'error', msg: `configmapset: ${err instanceof Error ? err.message : String(err)}` }));
      exitWhenIdle(1);
    },
  );
}
