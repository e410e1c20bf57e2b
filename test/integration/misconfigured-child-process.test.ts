// Silence is a bug (the kubelet PLEG incident): a misconfigured program, written as the README shows,
// must print a useful line within 10 s and its sync wait must reject with the reason. Real child
// processes and a real closed port; the only real time here is the bound on each of those.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { refusedPort } from '../listwatch/helpers.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/misconfigured.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIRST_LINE_BOUND_MS = 10_000;
const EXIT_BOUND_MS = 40_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from spawn to the first stderr output. */
  firstStderrMs: number | undefined;
  exitedInTime: boolean;
}

function runChild(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let firstStderrMs: number | undefined;
    let killed = false;
    const deadline = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, EXIT_BOUND_MS);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      firstStderrMs ??= performance.now() - started;
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr, firstStderrMs, exitedInTime: !killed });
    });
  });
}

describe('a misconfigured program speaks (silence is a bug)', () => {
  it('warns on stderr within 10 s when the API server port is closed, and its sync wait rejects with the reason', async () => {
    const port = await refusedPort();
    const r = await runChild(['closed-port', String(port)]);
    expect(r.exitedInTime, r.stderr).toBe(true);
    expect(r.firstStderrMs, r.stderr).toBeLessThan(FIRST_LINE_BOUND_MS);
    // The first line is the informer's own warning, before any wait gave up.
    // (The streaming list is tried first, then the paged list it falls back to.)
    expect(r.stderr.split('\n')[0]).toMatch(/informer v1\/pods: watch-list failed, falling back to a paged list: .*ECONNREFUSED/);
    expect(r.stderr).toMatch(/informer v1\/pods: list failed, will list again: .*ECONNREFUSED/);
    expect(r.stderr).toMatch(/informer v1\/pods cannot sync: the API server has been unreachable for 10 s \(ECONNREFUSED\)/);
    expect(r.stderr).toMatch(/FAILED NETWORK: informer v1\/pods cannot sync/);
    expect(r.stdout).not.toContain('SYNCED');
    expect(r.code).toBe(1);
  }, 60_000);

  it('rejects a label selector that does not parse at once, naming the option, position and reason', async () => {
    const port = await refusedPort();
    const r = await runChild(['bad-selector', String(port)]);
    expect(r.exitedInTime, r.stderr).toBe(true);
    expect(r.firstStderrMs, r.stderr).toBeLessThan(FIRST_LINE_BOUND_MS);
    expect(r.stderr).toMatch(/FAILED INVALID_SELECTOR: invalid label selector "app in \(web" at position \d+: .*SharedInformerFactory option labelSelector/);
    expect(r.stdout).not.toContain('STARTED');
    expect(r.code).toBe(1);
  }, 60_000);
});
