// endpoints: the endpoints controller under leader election — only the replica holding the Lease writes Endpoints.
//
// Run it (from the repository root, after `npm install`):
//   npx tsx examples/endpoints/main.ts                       embedded fake cluster: a service, pods coming and going
//   npx tsx examples/endpoints/main.ts --kubeconfig PATH     a real cluster (or set KUBECONFIG)
//   npx tsx examples/endpoints/main.ts --seconds 20          stop by itself after 20 s
// Start two copies against the same real cluster: one leads, the other waits; stop the leader (Ctrl-C
// releases the Lease) and the other takes over at once. On a real cluster it manages only services
// annotated `examples.kube-informer.dev/selector: <label selector>` (and without spec.selector), e.g.
//   kubectl create service clusterip web --tcp=80:8080 && kubectl patch svc web --type=json \
//     -p '[{"op":"remove","path":"/spec/selector"}]' && kubectl annotate svc web examples.kube-informer.dev/selector=app=web
// It needs RBAC to list/watch services, pods and endpoints, write endpoints, and get/create/update the
// Lease `kube-informer-endpoints-example` in the namespace `default`.

import { hostname } from 'node:os';
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { LeaderElector, LeaseLock, type LeaderElectorOptions } from '../../src/leaderelection/index.js';
import { SharedInformerFactory, stripManagedFields } from '../../src/index.js';
import type { FakeApiServer } from '../../src/testing/index.js';
import { abortAfter, connectCluster, exitWhenIdle, isMain, parseExampleArgs } from '../lib/cluster.js';
import { shutdownSignal } from '../../src/operations/index.js';
import { EndpointsController, SELECTOR_ANNOTATION } from './controller.js';

/** Options of {@link runLeaderElectedEndpoints}. */
export interface LeaderElectedEndpointsOptions {
  /** The cluster. Required. */
  kubeConfig: KubeConfig;
  /** This replica's identity. Default: `POD_NAME`, else `<hostname>-<pid>`. */
  identity?: string;
  /** Namespace of the Lease. Default `'default'`. */
  leaseNamespace?: string;
  /** Name of the Lease. Default `'kube-informer-endpoints-example'`. */
  leaseName?: string;
  /** Timing and clock of the elector (durations in ms). Default: the elector's (15 s lease). */
  election?: Pick<LeaderElectorOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'clock'>;
  /** Log lines. Default `console.log`. */
  log?: (line: string) => void;
  /** Told about each controller as it starts (one per term). Default: none. */
  onController?: (controller: EndpointsController) => void;
}

/**
 * Competes for the Lease until `signal` aborts; while leading, runs an {@link EndpointsController} with
 * its own informers (started when the term starts, stopped when it ends). Resolves after the Lease was
 * released; rejects if a term's controller failed.
 */
export async function runLeaderElectedEndpoints(signal: AbortSignal, options: LeaderElectedEndpointsOptions): Promise<void> {
  const { kubeConfig } = options;
  const log = options.log ?? console.log;
  const identity = options.identity ?? process.env.POD_NAME ?? `${hostname()}-${process.pid}`;
  const elector = new LeaderElector({
    ...options.election,
    lock: new LeaseLock({
      client: kubeConfig.makeApiClient(CoordinationV1Api),
      namespace: options.leaseNamespace ?? 'default',
      name: options.leaseName ?? 'kube-informer-endpoints-example',
      identity,
    }),
    releaseOnCancel: true,
    onStartedLeading: async (term) => {
      log(`${identity} is leading: starting the endpoints controller`);
      const factory = new SharedInformerFactory(kubeConfig, { transform: stripManagedFields });
      const controller = new EndpointsController(factory, kubeConfig, {
        onWrite: (verb, key, addresses) => log(`${verb} endpoints ${key}${verb === 'delete' ? '' : ` (${addresses} addresses)`}`),
      });
      options.onController?.(controller);
      await controller.run(term);
      log(`${identity}: term over, controller stopped`);
    },
    onNewLeader: (leader) => {
      if (leader !== identity) log(`the leader is ${leader}; waiting`);
    },
  });
  await elector.run(signal);
}

/** On the fake cluster: a managed service and a "kubelet" that starts and stops its pods. */
function simulateWorkload(server: FakeApiServer, signal: AbortSignal): void {
  server.create('services', {
    metadata: { name: 'web', namespace: 'shop', annotations: { [SELECTOR_ANNOTATION]: 'app=web' } },
    spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  let n = 0;
  const live: string[] = [];
  const timer = setInterval(() => {
    try {
      if (live.length < 3 || (live.length < 6 && n % 3 !== 0)) {
        const name = `web-${n}`;
        live.push(name);
        server.create('pods', { metadata: { name, namespace: 'shop', labels: { app: 'web' } }, status: { phase: 'Running', podIP: `10.0.0.${(n % 250) + 1}` } });
      } else {
        server.delete('pods', live.shift()!, 'shop');
      }
      n++;
    } catch {
      // The fake server closed meanwhile.
    }
  }, 700);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}

async function main(): Promise<void> {
  const args = parseExampleArgs(process.argv.slice(2));
  if (args.help) {
    console.log('usage: npx tsx examples/endpoints/main.ts [--kubeconfig PATH | --fake] [--seconds N]');
    return;
  }
  const cluster = await connectCluster(args);
  console.log(`endpoints controller on ${cluster.description}`);
  const stop = new AbortController();
  const shutdown = shutdownSignal(); // SIGINT or SIGTERM stops in order; a second one exits at once
  shutdown.addEventListener('abort', () => stop.abort(), { once: true });
  abortAfter(stop, args.seconds);
  if (cluster.fake !== undefined) simulateWorkload(cluster.fake, stop.signal);
  try {
    await runLeaderElectedEndpoints(stop.signal, { kubeConfig: cluster.kubeConfig });
    console.log('stopped; Lease released');
    exitWhenIdle(0);
  } catch (err) {
    console.error('endpoints controller failed:', err);
    exitWhenIdle(1);
  } finally {
    stop.abort();
    shutdown.dispose();
    await cluster.close();
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`endpoints: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
