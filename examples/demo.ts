// The demo: a fake API server, a churn workload and the network-policy controller, ending in a consistency check;
// then the configmapset operator's scenario on an embedded fake, with its own check.
//
// Run it (from the repository root, after `npm install`):
//   npm run demo                                  20 s on the embedded fake API server
//   npm run demo -- --seconds 60 --seed 7         longer, another workload
//   npm run demo -- --kubeconfig ~/.kube/config   on a real cluster (or set KUBECONFIG; --fake forces the fake)
// (`npm run demo` is `tsx examples/demo.ts`; `npx tsx examples/demo.ts ...` works too.)
//
// It prints a progress line every second, then a summary and `consistency check: PASSED` (exit 0) or
// `consistency check: FAILED` with the first difference (exit 1). On a real cluster it works only in
// namespaces named `ki-demo-<run>-<n>` that carry the label `demo.kube-informer.dev/run=<run>`, reads
// only objects with that label, and deletes its namespaces at the end. It needs RBAC to create,
// patch, delete, list and watch namespaces, pods and networkpolicies.
//
// Then, always on an embedded fake API server of its own (it installs nothing on a real cluster), the
// configmapset operator (examples/configmapset) runs its scenario — sets created, edited, repaired,
// deleted through a finalizer — in well under a second, and prints `configmapset check: PASSED` or
// `FAILED`. The exit code is 0 only when both checks passed.

import { SharedInformerFactory, stripManagedFields, type InformerHealth } from '../src/index.js';
import { startFakeApiServer } from '../src/testing/index.js';
import { shutdownSignal } from '../src/operations/index.js';
import { runConfigMapSetExample, summarize } from './configmapset/main.js';
import { abortAfter, connectCluster, exitWhenIdle, parseExampleArgs, type Cluster } from './lib/cluster.js';
import { checkConsistency, type ConsistencyResult } from './network-policy/consistency.js';
import { NetworkPolicyController } from './network-policy/controller.js';
import { ChurnWorkload } from './network-policy/workload.js';

const USAGE = `usage: npm run demo -- [--seconds N] [--seed N] [--kubeconfig PATH | --fake]

  --seconds N        how long the workload runs (default 20)
  --seed N           the workload's random seed (default: random)
  --kubeconfig PATH  run against the cluster of PATH (KUBECONFIG set does the same)
  --fake             use the embedded fake API server even when KUBECONFIG is set`;

const pad = (n: number, width = 6): string => String(n).padStart(width);

function totals(health: Record<string, InformerHealth>): { lists: number; relists: number; errors: number; regressions: number; events: number } {
  const sum = { lists: 0, relists: 0, errors: 0, regressions: 0, events: 0 };
  for (const h of Object.values(health)) {
    sum.lists += h.counters.lists;
    sum.relists += h.counters.relists;
    sum.errors += h.counters.errors;
    sum.regressions += h.counters.regressions;
    sum.events += h.counters.events;
  }
  return sum;
}

async function demo(cluster: Cluster, seconds: number, seed: number, interrupt: AbortSignal): Promise<boolean> {
  const fake = cluster.fake !== undefined;
  const workload = new ChurnWorkload({
    kubeConfig: cluster.kubeConfig,
    seed,
    cascade: fake ? 'client' : 'server',
    maxNamespaces: fake ? 12 : 6,
    maxPodsPerNamespace: fake ? 10 : 5,
    writers: fake ? 4 : 2,
    createServiceAccount: !fake, // for control planes without kube-controller-manager
    pauseMs: fake ? 0 : 100,
  });
  // Every informer sees only this run's objects, on the fake and on a real cluster alike.
  const factory = new SharedInformerFactory(cluster.kubeConfig, { labelSelector: workload.labelSelector, transform: stripManagedFields });
  const controller = new NetworkPolicyController(factory);
  const stopController = new AbortController();
  let controllerError: unknown;
  const running = controller.run(stopController.signal).catch((err: unknown) => {
    controllerError = err;
  });

  console.log(`workload: run ${workload.runId}, seed ${seed}, ${seconds} s (${workload.labelSelector})`);
  const started = performance.now();
  const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(1)}s`;
  const progress = setInterval(() => {
    const s = controller.stats();
    const w = workload.stats();
    const cache = `${controller.namespaces.lister().list().length} ns, ${controller.pods.lister().list().length} pods, ${controller.policies.lister().list().length} policies`;
    const events = s.events.namespaces + s.events.pods + s.events.policies;
    console.log(`[${elapsed().padStart(6)}] ops ${pad(w.operations)} | events ${pad(events)} | queue ${pad(s.queueDepth, 3)} (max ${pad(s.maxQueueDepth, 3)}) | reconciles ${pad(s.reconciles)} | cache: ${cache}`);
  }, 1000);

  // The workload runs for `seconds`, or until Ctrl-C; the controller runs on until the check is done.
  const stopWorkload = new AbortController();
  abortAfter(stopWorkload, seconds);
  const onInterrupt = (): void => stopWorkload.abort();
  interrupt.addEventListener('abort', onInterrupt, { once: true });
  // Start writing once the caches are filled, so the first events are live ones.
  await Promise.race([factory.waitForCacheSync(stopWorkload.signal), running]);
  await workload.run(stopWorkload.signal);
  interrupt.removeEventListener('abort', onInterrupt);
  console.log(`[${elapsed().padStart(6)}] workload stopped; waiting for the controller to catch up, then comparing with the server`);

  let result: ConsistencyResult | undefined;
  let readError: unknown;
  if (controllerError === undefined) {
    try {
      result = await Promise.race([
        checkConsistency({
          kubeConfig: cluster.kubeConfig,
          labelSelector: workload.labelSelector,
          rules: () => controller.rules,
          idle: () => controller.idle(),
          timeoutMs: fake ? 5_000 : 30_000,
        }),
        running.then(() => undefined),
      ]);
    } catch (err) {
      readError = err; // e.g. no permission to list: reported below
    }
  }
  clearInterval(progress);
  stopController.abort();
  await running;
  if (!fake) {
    console.log(`cleaning up: deleting the ${workload.stats().namespaces} namespaces of run ${workload.runId}`);
    await workload.cleanup();
  }

  const w = workload.stats();
  const s = controller.stats();
  const inf = totals(factory.health());
  let namespacesWithRules = 0;
  for (const rules of controller.rules.values()) if (rules.length > 0) namespacesWithRules++;
  console.log(`\nsummary after ${elapsed()} on ${cluster.description}`);
  console.log(`  workload    ${w.operations} operations: ${w.creates} creates, ${w.updates} relabels, ${w.deletes} deletes, ${w.failures} refused`);
  if (w.lastFailure !== undefined) console.log(`              last refusal: ${w.lastFailure}`);
  console.log(`  informers   ${inf.events} watch events, ${inf.lists} lists (${inf.relists} relists), ${inf.errors} list/watch errors, ${inf.regressions} regressed events rejected`);
  console.log(`  handlers    ${s.events.namespaces} namespace, ${s.events.pods} pod, ${s.events.policies} policy notifications`);
  console.log(`  controller  ${s.reconciles} reconciles, ${s.failures} failures, max queue depth ${s.maxQueueDepth}, ${s.rules} rules in ${namespacesWithRules} namespaces`);
  for (const h of Object.values(factory.health())) {
    // The informers have stopped by now (a stopped informer no longer reports synced): a resource
    // version says whether it ever synced.
    const everSynced = h.lastSyncResourceVersion !== '';
    if (!everSynced || h.watch.lastError !== undefined) {
      console.log(`  informer ${h.name}: ${everSynced ? 'synced' : 'NEVER synced'}; last list/watch error: ${h.watch.lastError?.message ?? 'none'}`);
    }
  }
  if (controllerError !== undefined) {
    console.log(`consistency check: FAILED — the controller stopped: ${controllerError instanceof Error ? controllerError.message : String(controllerError)}`);
    return false;
  }
  if (readError !== undefined) {
    console.log(`consistency check: FAILED — could not read the server's state: ${readError instanceof Error ? readError.message : String(readError)}`);
    return false;
  }
  if (result === undefined) {
    console.log('consistency check: FAILED — the controller stopped before the check finished');
    return false;
  }
  if (result.passed) {
    console.log(`consistency check: PASSED — the controller's ${s.rules} rules equal computeAllRules(server state) (${result.attempts} comparison${result.attempts === 1 ? '' : 's'})`);
    return true;
  }
  console.log(`consistency check: FAILED — first difference: ${result.difference}`);
  return false;
}

/** The configmapset operator's scenario on an embedded fake API server of its own; true when its check passed. */
async function configMapSetDemo(interrupt: AbortSignal): Promise<boolean> {
  const server = await startFakeApiServer();
  console.log(`\nconfigmapset operator (examples/configmapset) on its own embedded fake API server at ${server.url}`);
  try {
    const result = await runConfigMapSetExample({ kubeConfig: server.kubeConfig, fake: server, verbose: false, signal: interrupt });
    for (const line of summarize(result, 'configmapset check')) console.log(line);
    return result.passed;
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseExampleArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const cluster = await connectCluster(args);
  console.log(`kube-informer demo on ${cluster.description}`);
  const interrupt = shutdownSignal(); // Ctrl-C stops in order; a second one exits at once
  let ok = false;
  try {
    ok = await demo(cluster, args.seconds ?? 20, args.seed ?? Math.floor(Math.random() * 1_000_000), interrupt);
    if (!interrupt.aborted) ok = (await configMapSetDemo(interrupt)) && ok;
  } finally {
    interrupt.dispose();
    await cluster.close();
  }
  exitWhenIdle(ok ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error('demo failed:', err);
  exitWhenIdle(1);
});
