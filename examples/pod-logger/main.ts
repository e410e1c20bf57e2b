// pod-logger: the smallest complete kube-informer program — a factory, one handler, a lister, and a clean stop on Ctrl-C.
//
// Run it (from the repository root, after `npm install`):
//   npx tsx examples/pod-logger/main.ts                        embedded fake cluster; a few pods come and go
//   npx tsx examples/pod-logger/main.ts --kubeconfig ~/.kube/config   a real cluster (or set KUBECONFIG)
//   npx tsx examples/pod-logger/main.ts --seconds 10           stop by itself after 10 s
// Stop it with Ctrl-C: the informer closes its watch, and the process exits 0.
// In your own project, import from 'kube-informer' instead of '../../src/index.js'.

import type { KubeConfig } from '@kubernetes/client-node';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { SharedInformerFactory, deletionHandlingMetaNamespaceKeyFunc, resources, stripManagedFields, type DeepReadonly } from '../../src/index.js';
import type { FakeApiServer } from '../../src/testing/index.js';
import { abortAfter, connectCluster, exitWhenIdle, isMain, parseExampleArgs } from '../lib/cluster.js';
import { shutdownSignal } from '../../src/operations/index.js';

/**
 * Logs every pod added, changed or deleted in the cluster, until `signal` aborts. Resolves once the
 * informer has stopped and closed its watch; rejects if the informer failed (for example, a handler threw).
 */
export async function runPodLogger(kubeConfig: KubeConfig, signal: AbortSignal, log: (line: string) => void = console.log): Promise<void> {
  // 1. A factory hands out one shared informer per resource. stripManagedFields keeps the cache lean.
  //    watchCoalesceMs: while pods keep changing, the watch's reads are gathered for up to 20 ms (a
  //    logger can wait that long), which can save CPU on a busy cluster: measure yours first
  //    (docs/operations.md, "Tuning CPU").
  //    The descriptor types it: a SharedIndexInformer<Pod>, Pod being the JSON the server sends.
  const factory = new SharedInformerFactory(kubeConfig, { transform: stripManagedFields, watchCoalesceMs: 20 });
  const pods = factory.forResource(resources.pods);

  // 2. A handler. It gets the cache's own objects, typed read-only: read them, never change them
  //    (deepCopy one to get a copy you may change). A helper that only reads takes DeepReadonly<Pod>.
  const describe = (pod: DeepReadonly<Pod>): string => `${pod.metadata?.namespace}/${pod.metadata?.name} (${pod.status?.phase ?? 'no phase'})`;
  pods.addEventHandler({
    onAdd: (pod, isInInitialList) => {
      if (!isInInitialList) log(`added    ${describe(pod)}`);
    },
    onUpdate: (oldPod, pod) => {
      // A resync or relist re-delivers unchanged objects: skip those. (The parts an update did not
      // change are the old object's own — the informer's shareUnchanged, on by default — so
      // `oldPod.spec === pod.spec` is a cheap "spec unchanged".)
      if (oldPod.metadata?.resourceVersion !== pod.metadata?.resourceVersion) log(`updated  ${describe(pod)}`);
    },
    onDelete: (obj) => log(`deleted  ${deletionHandlingMetaNamespaceKeyFunc(obj)}`),
  });

  // 3. Start; `running` settles when every informer has stopped (and rejects on a failure).
  const running = factory.run(signal);
  try {
    await pods.whenSynced(signal);
    // 4. The lister reads the cache: no request to the API server.
    const all = pods.lister().list();
    const namespaces = new Set(all.map((p) => p.metadata?.namespace));
    log(`synced: ${all.length} pods in ${namespaces.size} namespaces; watching (Ctrl-C to stop)`);
  } catch {
    // Stopped (or failed) before the first sync: `running` says which.
  }
  await running;
  log('stopped: watch closed');
}

/** On the fake cluster, something to log: a pod created, moved to Running, and deleted now and then. */
export function simulatePods(server: FakeApiServer, signal: AbortSignal): void {
  for (let i = 0; i < 3; i++) {
    server.create('pods', { metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web' } }, status: { phase: 'Running' } });
  }
  let n = 3;
  const later = (ms: number, write: () => void): void => {
    setTimeout(() => {
      if (signal.aborted) return;
      try {
        write();
      } catch {
        // The fake server closed meanwhile: nothing left to simulate.
      }
    }, ms).unref();
  };
  const tick = (): void => {
    const name = `job-${n++}`;
    server.create('pods', { metadata: { name, namespace: 'batch' }, status: { phase: 'Pending' } });
    later(400, () => server.update('pods', { metadata: { name, namespace: 'batch' }, status: { phase: 'Running' } }));
    later(1500, () => server.delete('pods', name, 'batch'));
  };
  const timer = setInterval(tick, 2000);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}

async function main(): Promise<void> {
  const args = parseExampleArgs(process.argv.slice(2));
  if (args.help) {
    console.log('usage: npx tsx examples/pod-logger/main.ts [--kubeconfig PATH | --fake] [--seconds N]');
    return;
  }
  const cluster = await connectCluster(args);
  console.log(`pod-logger on ${cluster.description}`);
  const stop = new AbortController();
  const shutdown = shutdownSignal(); // SIGINT or SIGTERM stops in order; a second one exits at once
  shutdown.addEventListener('abort', () => stop.abort(), { once: true });
  abortAfter(stop, args.seconds);
  if (cluster.fake !== undefined) simulatePods(cluster.fake, stop.signal);
  try {
    await runPodLogger(cluster.kubeConfig, stop.signal);
    exitWhenIdle(0);
  } catch (err) {
    console.error('pod-logger failed:', err);
    exitWhenIdle(1);
  } finally {
    shutdown.dispose();
    await cluster.close();
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`pod-logger: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
