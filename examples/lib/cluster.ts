// Shared plumbing of the examples: command-line flags, the cluster to talk to (embedded fake or real), Ctrl-C, exit.
//
// Not run on its own: every example's main file imports it. See examples/README.md.

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { resources } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

/** The flags every example understands. */
export interface ExampleArgs {
  /** `--kubeconfig PATH`: talk to the cluster of that kubeconfig. Default: `KUBECONFIG`, else the fake. */
  kubeconfig: string | undefined;
  /** `--fake`: use the embedded fake cluster even when `KUBECONFIG` is set. Default false. */
  fake: boolean;
  /** `--seconds N`: stop after N seconds. Default: the example's own (often: run until Ctrl-C). */
  seconds: number | undefined;
  /** `--seed N`: seed of the random workload. Default: the example's own. */
  seed: number | undefined;
  /** `--help`. */
  help: boolean;
}

/** Parses the common flags; throws a `TypeError` with a readable message on an unknown flag or a bad number. */
export function parseExampleArgs(argv: readonly string[]): ExampleArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      kubeconfig: { type: 'string' },
      fake: { type: 'boolean', default: false },
      seconds: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const num = (name: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new TypeError(`--${name} needs a number >= 0, got "${v}"`);
    return n;
  };
  return {
    kubeconfig: values.kubeconfig,
    fake: values.fake ?? false,
    seconds: num('seconds', values.seconds),
    seed: num('seed', values.seed),
    help: values.help ?? false,
  };
}

/** Where an example runs: the kube config to use, and the embedded server when there is one. */
export interface Cluster {
  /** A client-node KubeConfig for the cluster (the fake's, or the one loaded from disk). */
  readonly kubeConfig: KubeConfig;
  /** The embedded fake API server, or `undefined` on a real cluster. */
  readonly fake: FakeApiServer | undefined;
  /** One line saying which cluster this is, for the banner. */
  readonly description: string;
  /** Stops the fake server (no-op on a real cluster). */
  close(): Promise<void>;
}

/**
 * Resources the examples use that the fake server does not serve by default. Like a real API server,
 * it answers 404 for a resource nobody declared, so a typo in a GVR fails instead of syncing nothing.
 * A resource descriptor is also the fake server's resource definition.
 */
export function declareExampleResources(server: FakeApiServer): void {
  server.resource(resources.networkpolicies);
}

/**
 * The cluster chosen by the flags and environment: `--fake` → the embedded fake; `--kubeconfig PATH` →
 * that file; `KUBECONFIG` set → client-node's default loading; otherwise the embedded fake API server
 * (`startFakeApiServer` from `kube-informer/testing`, on a random loopback port).
 */
export async function connectCluster(args: Pick<ExampleArgs, 'kubeconfig' | 'fake'>, env: NodeJS.ProcessEnv = process.env): Promise<Cluster> {
  const real = !args.fake && (args.kubeconfig !== undefined || (env.KUBECONFIG ?? '') !== '');
  if (!real) {
    const server = await startFakeApiServer();
    declareExampleResources(server);
    return {
      kubeConfig: server.kubeConfig,
      fake: server,
      description: `embedded fake API server at ${server.url}`,
      close: () => server.close(),
    };
  }
  const kubeConfig = new KubeConfig();
  if (args.kubeconfig !== undefined) kubeConfig.loadFromFile(args.kubeconfig);
  else kubeConfig.loadFromDefault();
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster (set a current-context)');
  return {
    kubeConfig,
    fake: undefined,
    description: `real cluster "${cluster.name}" at ${cluster.server} (context ${kubeConfig.getCurrentContext()})`,
    close: async () => undefined,
  };
}

/**
 * Ends the process with `code` once everything has closed. A clean teardown leaves nothing open, so the
 * process exits by itself; should a handle linger (a keep-alive socket of an HTTP agent, say), an
 * unref'd timer forces the exit after `graceMs` (default 2000) and names what was still open.
 */
export function exitWhenIdle(code: number, graceMs = 2000): void {
  process.exitCode = code;
  const timer = setTimeout(() => {
    const open = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap' && r !== 'Timeout');
    console.error(`note: forced exit; still open: ${open.join(', ') || 'nothing'}`);
    process.exit(code);
  }, graceMs);
  timer.unref();
}

/** Aborts `signal`'s controller after `seconds` (an unref'd timer, cleared on abort); no-op for `undefined`. */
export function abortAfter(controller: AbortController, seconds: number | undefined): void {
  if (seconds === undefined) return;
  const timer = setTimeout(() => controller.abort(), seconds * 1000);
  controller.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
}

/** True when `moduleUrl` (`import.meta.url`) is the file Node was asked to run. */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  const strip = (p: string): string => p.replace(/\.[cm]?[jt]s$/, '');
  return strip(fileURLToPath(moduleUrl)) === strip(resolve(entry));
}
