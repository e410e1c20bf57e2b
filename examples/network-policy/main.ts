// network-policy: runs the network-policy controller alone and prints each namespace's rules as they change.
//
// Run it (from the repository root, after `npm install`):
//   npx tsx examples/network-policy/main.ts                   embedded fake cluster, with a slow churn workload
//   npx tsx examples/network-policy/main.ts --kubeconfig PATH  a real cluster (or set KUBECONFIG): watches
//                                                              every namespace, pod and policy; writes nothing
//   npx tsx examples/network-policy/main.ts --seconds 30      stop by itself after 30 s
// Stop it with Ctrl-C. `npm run demo` is the same controller under a fast workload, with a final check.

import { SharedInformerFactory, stripManagedFields } from '../../src/index.js';
import { abortAfter, connectCluster, exitWhenIdle, isMain, parseExampleArgs } from '../lib/cluster.js';
import { shutdownSignal } from '../../src/operations/index.js';
import { NetworkPolicyController } from './controller.js';
import type { Rule } from './rules.js';
import { ChurnWorkload } from './workload.js';

const show = (rules: readonly Rule[]): string =>
  rules.map((r) => `\n    ${r.policy}: ${r.targets.length} pods isolated, ${r.allowedPeers.length} peers allowed`).join('') || ' (none)';

async function main(): Promise<void> {
  const args = parseExampleArgs(process.argv.slice(2));
  if (args.help) {
    console.log('usage: npx tsx examples/network-policy/main.ts [--kubeconfig PATH | --fake] [--seconds N] [--seed N]');
    return;
  }
  const cluster = await connectCluster(args);
  console.log(`network-policy controller on ${cluster.description}`);
  const stop = new AbortController();
  const shutdown = shutdownSignal(); // SIGINT or SIGTERM stops in order; a second one exits at once
  shutdown.addEventListener('abort', () => stop.abort(), { once: true });
  abortAfter(stop, args.seconds);

  const factory = new SharedInformerFactory(cluster.kubeConfig, { transform: stripManagedFields });
  const printed = new Map<string, string>();
  const controller = new NetworkPolicyController(factory, {
    onReconcile: (namespace, rules) => {
      // Reconciles are frequent and idempotent: print only what changed.
      const text = show(rules);
      if (printed.get(namespace) === text || (printed.get(namespace) === undefined && rules.length === 0)) return;
      printed.set(namespace, text);
      console.log(`rules of ${namespace}:${text}`);
    },
  });
  const workload = cluster.fake === undefined ? undefined : new ChurnWorkload({ kubeConfig: cluster.kubeConfig, seed: args.seed, pauseMs: 300 });
  try {
    const running = controller.run(stop.signal).finally(() => stop.abort()); // a failure stops the workload too
    const writing = workload?.run(stop.signal);
    await Promise.all([running, writing]);
    console.log(`stopped after ${controller.stats().reconciles} reconciles`);
    exitWhenIdle(0);
  } catch (err) {
    console.error('network-policy controller failed:', err);
    exitWhenIdle(1);
  } finally {
    shutdown.dispose();
    await cluster.close();
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`network-policy: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
