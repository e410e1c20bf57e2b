// pod-stream: pod-logger written as a `for await` loop over `informer.events()` — the same informer,
// cache and guarantees as a handler, in the order a handler gets them, with a clean stop on Ctrl-C.
//
// Run it (from the repository root, after `npm install`):
//   npx tsx examples/pod-stream/main.ts                        embedded fake cluster; a few pods come and go
//   npx tsx examples/pod-stream/main.ts --kubeconfig ~/.kube/config   a real cluster (or set KUBECONFIG)
// In your own project, import from 'kube-informer' instead of '../../src/index.js'.

import type { KubeConfig } from '@kubernetes/client-node';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { SharedInformerFactory, deletionHandlingMetaNamespaceKeyFunc, resources, stripManagedFields, type DeepReadonly } from '../../src/index.js';
import { abortAfter, connectCluster, exitWhenIdle, isMain, parseExampleArgs } from '../lib/cluster.js';
import { shutdownSignal } from '../../src/operations/index.js';
import { simulatePods } from '../pod-logger/main.js';

/**
 * Logs every pod added, moved to another phase or deleted, until `signal` aborts. Resolves once the
 * informer has stopped; rejects if it failed (the failure is thrown into the loop, and `run` rejects).
 */
export async function runPodStream(kubeConfig: KubeConfig, signal: AbortSignal, log: (line: string) => void = console.log): Promise<void> {
  const factory = new SharedInformerFactory(kubeConfig, { transform: stripManagedFields });
  const pods = factory.forResource(resources.pods);
  const describe = (pod: DeepReadonly<Pod>): string => `${pod.metadata?.namespace}/${pod.metadata?.name} (${pod.status?.phase ?? 'no phase'})`;
  // The stream is a handler registration made now: nothing between here and the loop is missed.
  const events = pods.events(signal);
  const running = factory.run(signal);
  void events.registration.whenSynced(signal).then(
    () => log(`synced: ${pods.lister().list().length} pods; watching (Ctrl-C to stop)`),
    () => {}, // stopped (or failed) first: `running` says which
  );
  try {
    for await (const e of events) {
      if (e.type === 'add' && !e.isInInitialList) log(`added    ${describe(e.object)}`);
      else if (e.type === 'update' && e.oldObject.status?.phase !== e.object.status?.phase) log(`phase    ${describe(e.object)}`);
      else if (e.type === 'delete') log(`deleted  ${deletionHandlingMetaNamespaceKeyFunc(e.object)}`);
    }
  } finally {
    await running; // the loop ended with the signal (or the informer's stop): wait for the watch to close
  }
  log('stopped: watch closed');
}

async function main(): Promise<void> {
  const args = parseExampleArgs(process.argv.slice(2));
  if (args.help) {
    console.log('usage: npx tsx examples/pod-stream/main.ts [--kubeconfig PATH | --fake] [--seconds N]');
    return;
  }
  const cluster = await connectCluster(args);
  console.log(`pod-stream on ${cluster.description}`);
  const stop = new AbortController();
  const shutdown = shutdownSignal(); // SIGINT or SIGTERM stops in order; a second one exits at once
  shutdown.addEventListener('abort', () => stop.abort(), { once: true });
  abortAfter(stop, args.seconds);
  if (cluster.fake !== undefined) simulatePods(cluster.fake, stop.signal);
  try {
    await runPodStream(cluster.kubeConfig, stop.signal);
    exitWhenIdle(0);
  } catch (err) {
    console.error('pod-stream failed:', err);
    exitWhenIdle(1);
  } finally {
    shutdown.dispose();
    await cluster.close();
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`pod-stream: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
