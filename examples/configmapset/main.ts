// configmapset: an operator on the controller runtime — a CRD, owned ConfigMaps, status, a finalizer cleaning up an external registry — driven through a scenario.
//
// Run it (from the repository root, after `npm install`):
//   npx tsx examples/configmapset/main.ts                      embedded fake API server
//   npx tsx examples/configmapset/main.ts --kubeconfig PATH    a real cluster (or set KUBECONFIG)
//   npx tsx examples/configmapset/main.ts --leader-elect       the operator runs only while it holds a Lease
//   npx tsx examples/configmapset/main.ts --seconds 60         keep the operator running 60 s after the scenario
//   npx tsx examples/configmapset/main.ts --probe-port 8081    serve /livez (/healthz), /readyz and /metrics (Prometheus) on that port
//                                                               (on POD_IP when set, as in a pod; else loopback)
//   npx tsx examples/configmapset/main.ts --namespace NAME     use that namespace (default: `demo` on the
//                                                               fake, a new `configmapset-<hex>` on a real cluster)
//   npx tsx examples/configmapset/main.ts --webhooks           serve the validating and conversion webhooks under the
//                                                               operator's Manager (--webhook-port, default 9443; 0: any);
//                                                               on a real cluster register them at --webhook-url (default
//                                                               https://127.0.0.1:<port>: the API server must reach it),
//                                                               show a denial and a v2 round trip, and unregister them at the end
// It prints each step and what the operator did, then `consistency check: PASSED` (exit 0) or
// `FAILED` with the first difference (exit 1). On a real cluster it installs the CustomResourceDefinition
// `configmapsets.examples.kube-informer.dev` (and leaves it installed), creates its namespace and deletes
// it at the end. It needs RBAC to create CRDs and namespaces, to read and write configmapsets (and
// their status), ConfigMaps and — with --leader-elect — Leases in that namespace.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { newResourceClient, realClock, resources, sleep, type Logger } from '../../src/index.js';
import { LeaseLock } from '../../src/leaderelection/index.js';
import { shutdownSignal } from '../../src/operations/index.js';
import type { FakeApiServer } from '../../src/testing/index.js';
import { connectCluster, exitWhenIdle, isMain, parseExampleArgs } from '../lib/cluster.js';
import { configMapSets, installCrd } from './crd.js';
import { ConfigMapSetOperator, type ConfigMapSetOperatorStats } from './operator.js';
import { FileRegistry } from './registry.js';
import { runScenario, type ScenarioResult } from './scenario.js';
import { configMapSetWebhookServer, registerConfigMapSetWebhooks } from './webhooks.js';

/** Options of {@link runConfigMapSetExample}. */
export interface ConfigMapSetExampleOptions {
  /** The cluster. Required. */
  kubeConfig: KubeConfig;
  /** The embedded fake API server, when that is the cluster: the resource is declared on it instead of installing the CRD. */
  fake?: FakeApiServer;
  /** The namespace of the sets. Default: `demo` on the fake; on a real cluster a new `configmapset-<hex>`, deleted at the end. */
  namespace?: string;
  /** Run the operator under leader election on the Lease `configmapset-operator` in the namespace. Default false. */
  leaderElect?: boolean;
  /**
   * Serve `/livez` (`/healthz`), `/readyz` and `/metrics` on this port (`0`: any free one) while the operator
   * runs, on `POD_IP` when set (the downward API's `status.podIP`: the kubelet probes it), else loopback.
   * Default: no probe server.
   */
  probePort?: number;
  /** Print every action of the operator under its step. Default true. */
  verbose?: boolean;
  /** How long each step may take to converge, in ms. Default 10 000 (30 000 on a real cluster). */
  stepTimeoutMs?: number;
  /** Keep the operator running this long after the scenario, in s. Default 0. */
  lingerSeconds?: number;
  /** Where lines go. Default `console.log`. */
  log?: (line: string) => void;
  /** Stops everything early (the result is then not passed). */
  signal?: AbortSignal;
  /**
   * Serve the validating and conversion webhooks (webhooks.ts) under the operator's Manager on this
   * port (`0`: any free one). On a real cluster they are registered at `webhookUrl` for the run (a
   * ValidatingWebhookConfiguration, the CRD's conversion stanza: v2 served), two more steps show them
   * at work, and they are unregistered at the end. Default: no webhooks.
   */
  webhookPort?: number;
  /** The URL the API server calls the webhooks at. Default `https://127.0.0.1:<port>` (a control plane on this machine). */
  webhookUrl?: string;
}

/** The outcome of {@link runConfigMapSetExample}. */
export interface ConfigMapSetExampleResult extends ScenarioResult {
  /** The operator's counters at the end. */
  stats: ConfigMapSetOperatorStats;
  /** Why the operator stopped, when it failed. */
  operatorError?: unknown;
}

const statusCode = (err: unknown): number | undefined => (err as { statusCode?: number } | null)?.statusCode;

/**
 * Sets the cluster up (the resource on the fake, the CRD and a namespace on a real cluster), runs a
 * {@link ConfigMapSetOperator} with a temporary {@link FileRegistry}, drives the scenario, stops the
 * operator and cleans up. Resolves with what happened; rejects only when the setup fails.
 */
export async function runConfigMapSetExample(options: ConfigMapSetExampleOptions): Promise<ConfigMapSetExampleResult> {
  const log = options.log ?? console.log;
  const { kubeConfig, fake } = options;
  const signal = options.signal ?? new AbortController().signal;
  const ownNamespace = fake === undefined && options.namespace === undefined;
  const namespace = options.namespace ?? (fake !== undefined ? 'demo' : `configmapset-${randomBytes(3).toString('hex')}`);
  const namespaces = newResourceClient(kubeConfig, resources.namespaces, { fieldManager: 'configmapset-example' });
  if (fake !== undefined) {
    fake.resource({ ...configMapSets, generation: true }); // metadata.generation kept as for a CRD
  } else {
    log(`CustomResourceDefinition configmapsets.examples.kube-informer.dev: ${await installCrd(kubeConfig, signal)}, Established`);
    await namespaces.create({ metadata: { name: namespace } }, signal).catch((err: unknown) => {
      if (statusCode(err) !== 409) throw err;
    });
  }
  const registry = await FileRegistry.temporary();
  log(`namespace ${namespace}; external registry ${registry.path}`);
  const logger: Logger = {
    debug: () => undefined,
    info: (m) => log(`      operator: ${m}`),
    warn: (m) => log(`      operator warning: ${m}`),
    error: (m) => log(`      operator error: ${m}`),
  };
  const webhookServer = options.webhookPort === undefined ? undefined : configMapSetWebhookServer({ port: options.webhookPort, logger });
  const election = options.leaderElect
    ? {
        lock: new LeaseLock({
          client: kubeConfig.makeApiClient(CoordinationV1Api),
          namespace,
          name: 'configmapset-operator',
          identity: `${hostname()}-${process.pid}`,
        }),
        releaseOnCancel: true,
        logger,
      }
    : undefined;
  const operator = new ConfigMapSetOperator(kubeConfig, {
    registry,
    namespace,
    logger,
    onEvent: options.verbose === false ? undefined : (line) => log(`      operator: ${line}`),
    webhookServer,
    leaderElection: election,
    probes: options.probePort === undefined ? undefined : { port: options.probePort, host: process.env.POD_IP ?? '127.0.0.1' },
  });
  const stop = new AbortController();
  const stopAll = AbortSignal.any([signal, stop.signal]);
  let operatorError: { error: unknown } | undefined;
  const running = operator.run(stopAll).catch((error: unknown) => {
    operatorError = { error };
    stop.abort(); // the scenario stops waiting
  });
  let result: ScenarioResult = { passed: false, steps: [] };
  let unregister: ((signal: AbortSignal) => Promise<void>) | undefined;
  try {
    if (webhookServer !== undefined && (await webhookServer.whenReady(stopAll))) {
      const where = `https://127.0.0.1:${webhookServer.port()}`;
      if (fake !== undefined) log(`webhooks: serving on ${where} under the operator's Manager (the fake API server calls no webhooks; on a real cluster they are registered)`);
      else {
        unregister = await registerConfigMapSetWebhooks(kubeConfig, webhookServer, options.webhookUrl, stopAll);
        log(`webhooks: serving on ${where} under the operator's Manager; ValidatingWebhookConfiguration and CRD conversion registered at ${options.webhookUrl ?? where} (v2 served)`);
      }
    }
    const webhooks = unregister !== undefined;
    result = await runScenario({ kubeConfig, namespace, registry, log, signal: stopAll, webhooks, stepTimeoutMs: options.stepTimeoutMs ?? (fake ? 10_000 : 30_000) });
    if (options.lingerSeconds) {
      log(`scenario done; the operator keeps running for ${options.lingerSeconds} s (namespace ${namespace})`);
      await sleep(realClock, options.lingerSeconds * 1000, stopAll);
    }
  } finally {
    stop.abort();
    await running;
    if (unregister !== undefined) {
      await unregister(AbortSignal.timeout(30_000));
      log('webhooks: unregistered (the CRD serves v1 only again)');
    }
    await registry.dispose();
    if (ownNamespace) await namespaces.delete(namespace).catch(() => undefined);
    namespaces.close();
  }
  return { ...result, passed: result.passed && operatorError === undefined, stats: operator.stats(), operatorError: operatorError?.error };
}

/** The summary lines of a run, for main and the demo; the verdict line starts with `label` (default `consistency check`). */
export function summarize(result: ConfigMapSetExampleResult, label = 'consistency check'): string[] {
  const s = result.stats;
  const converged = result.steps.filter((step) => step.converged).length;
  const lines = [
    `  operator    ${s.succeeded} reconciles, ${s.failed} failures; ConfigMaps ${s.configMaps.created} created, ${s.configMaps.updated} updated, ${s.configMaps.deleted} deleted; ${s.statusWrites} status writes`,
    `              finalizers ${s.finalizers.added} added, ${s.finalizers.removed} removed; ${s.cleanups} cleanups; registry ${s.registry.written} writes, ${s.registry.removed} removals`,
    `  scenario    ${converged}/${result.steps.length} steps converged (slowest ${Math.max(0, ...result.steps.map((step) => step.ms))} ms)`,
  ];
  const failed = result.steps.find((step) => !step.converged);
  if (result.operatorError !== undefined) {
    const why = result.operatorError instanceof Error ? result.operatorError.message : String(result.operatorError);
    lines.push(`${label}: FAILED — the operator stopped: ${why}`);
  } else if (failed !== undefined) lines.push(`${label}: FAILED — "${failed.name}": ${failed.difference}`);
  else if (!result.passed) lines.push(`${label}: FAILED — interrupted`);
  else lines.push(`${label}: PASSED — after every step the sets, their ConfigMaps, statuses and the registry agreed; nothing orphaned`);
  return lines;
}

function probePort(value: string | boolean | undefined, flag = '--probe-port'): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`${flag} needs a port number (0–65535), got ${String(value)}`);
  return port;
}

const USAGE = `usage: npx tsx examples/configmapset/main.ts [--kubeconfig PATH | --fake] [--leader-elect] [--namespace NAME] [--probe-port N] [--webhooks] [--webhook-port N] [--webhook-url URL] [--seconds N]`;

async function main(): Promise<void> {
  // Our own flags first; the rest are the examples' common ones.
  const { values, tokens } = parseArgs({
    args: process.argv.slice(2),
    options: {
      'leader-elect': { type: 'boolean' },
      namespace: { type: 'string' },
      'probe-port': { type: 'string' },
      webhooks: { type: 'boolean' },
      'webhook-port': { type: 'string' },
      'webhook-url': { type: 'string' },
    },
    strict: false,
    tokens: true,
  });
  const rest = tokens
    .filter((t) => !(t.kind === 'option' && ['leader-elect', 'namespace', 'probe-port', 'webhooks', 'webhook-port', 'webhook-url'].includes(t.name)))
    .flatMap((t) => {
      if (t.kind === 'positional') return [t.value];
      if (t.kind !== 'option') return [];
      if (t.value === undefined) return [t.rawName];
      return t.inlineValue ? [`${t.rawName}=${t.value}`] : [t.rawName, t.value];
    });
  const args = parseExampleArgs(rest);
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const cluster = await connectCluster(args);
  console.log(`configmapset operator on ${cluster.description}${values['leader-elect'] ? ', under leader election' : ''}`);
  const interrupt = shutdownSignal(); // Ctrl-C stops in order; a second one exits at once
  let ok = false;
  try {
    const result = await runConfigMapSetExample({
      kubeConfig: cluster.kubeConfig,
      fake: cluster.fake,
      namespace: typeof values.namespace === 'string' ? values.namespace : undefined,
      leaderElect: values['leader-elect'] === true,
      probePort: probePort(values['probe-port']),
      webhookPort: values.webhooks === true || values['webhook-port'] !== undefined ? (probePort(values['webhook-port'], '--webhook-port') ?? 9443) : undefined,
      webhookUrl: typeof values['webhook-url'] === 'string' ? values['webhook-url'] : undefined,
      lingerSeconds: args.seconds,
      signal: interrupt,
    });
    console.log('\nsummary');
    for (const line of summarize(result)) console.log(line);
    ok = result.passed;
  } finally {
    interrupt.dispose();
    await cluster.close();
  }
  exitWhenIdle(ok ? 0 : 1);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`configmapset: ${err instanceof Error ? err.message : String(err)}`);
    exitWhenIdle(1);
  });
}
