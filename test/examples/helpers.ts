// Shared fixtures of the example tests: a fake cluster for the examples, and waits that never sleep on a timer.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { flushPromises } from '../../src/core/clock.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { declareExampleResources } from '../../examples/lib/cluster.js';
import type { ExternalRegistry, RegistryRecord } from '../../examples/configmapset/registry.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A fake API server that knows the kinds the examples use. */
export async function startExampleCluster(): Promise<FakeApiServer> {
  const server = await startFakeApiServer();
  declareExampleResources(server);
  return server;
}

/**
 * Lets I/O and promise chains run (setImmediate turns, never a timer) until `cond()` holds; throws
 * after `turns` rounds. HTTP round trips to the fake server take a few turns each.
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string, turns = 50_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (await cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** What a child process printed and how it ended. */
export interface ChildResult {
  /** Exit code (null when killed by a signal). */
  code: number | null;
  /** Everything written to stdout. */
  stdout: string;
  /** Everything written to stderr. */
  stderr: string;
  /** False when the safety bound had to kill it. */
  exitedInTime: boolean;
}

/**
 * Runs `tsx <script> ...args` from the repository root with `KUBECONFIG` unset. `onOutput` sees stdout
 * as it grows (e.g. to send SIGINT once a line appears). The child is killed after `boundMs` (a safety
 * bound against a hang, not a timing assertion).
 */
export function runExample(
  script: string,
  args: string[],
  onOutput?: (stdout: string, child: { kill(signal: NodeJS.Signals): void }) => void,
  boundMs = 60_000,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.KUBECONFIG;
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const bound = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, boundMs);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onOutput?.(stdout, child);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr, exitedInTime: !killed });
    });
  });
}

/** A registry whose `remove` blocks (until its signal aborts) while `blocked`: an external system that hangs mid-cleanup. */
export class HangingRegistry implements ExternalRegistry {
  blocked = true;
  removeCalls = 0;
  constructor(readonly inner: ExternalRegistry) {}
  get(key: string, signal?: AbortSignal): Promise<RegistryRecord | undefined> {
    return this.inner.get(key, signal);
  }
  put(key: string, record: RegistryRecord, signal?: AbortSignal): Promise<void> {
    return this.inner.put(key, record, signal);
  }
  async remove(key: string, signal?: AbortSignal): Promise<void> {
    this.removeCalls++;
    if (this.blocked) {
      await new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    }
    return this.inner.remove(key, signal);
  }
  all(signal?: AbortSignal): Promise<Record<string, RegistryRecord>> {
    return this.inner.all(signal);
  }
}
