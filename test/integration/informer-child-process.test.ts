// Regression for kubernetes #93641: a throwing handler must end the process, not leave it running
// with a dead loop. Real child processes; the only real time here is the 5 s bound on the child's exit.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/informer-handler-throws.ts', import.meta.url));
const FACTORY_FIXTURE = fileURLToPath(new URL('../fixtures/factory-start-crash.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXIT_BOUND_MS = 5_000;

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  exitedInTime: boolean;
}

/** Runs the fixture; `onReady` fires at READY, and from then on the child has 5 s to exit. */
function runChild(args: string[], env: Record<string, string> = {}, onReady?: () => void, fixture = FIXTURE): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let deadline: NodeJS.Timeout | undefined;
    let killed = false;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (deadline === undefined && stdout.includes('READY')) {
        deadline = setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, EXIT_BOUND_MS);
        onReady?.();
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (deadline !== undefined) clearTimeout(deadline);
      resolve({ code, signal, stdout, stderr, exitedInTime: !killed });
    });
  });
}

describe('a throwing handler ends a process that follows the README pattern', () => {
  let server: FakeApiServer | undefined;
  let feeder: NodeJS.Timeout | undefined;
  afterEach(async () => {
    if (feeder !== undefined) clearInterval(feeder);
    feeder = undefined;
    await server?.close();
    server = undefined;
  });

  for (const kind of ['controller', 'shared']) {
    it(`exits non-zero within 5 s with a ${kind} over a fake source whose watch keeps sending events`, async () => {
      const r = await runChild([kind, 'source']);
      expect(r.exitedInTime, r.stderr).toBe(true);
      expect(r.code).not.toBe(0);
      expect(r.stdout).not.toContain('RESOLVED');
      expect(r.stderr).toMatch(/handler exploded on boom/);
    }, 60_000);

    it(`exits non-zero within 5 s, leaving nothing open, with a ${kind} watching the fake API server`, async () => {
      server = await startFakeApiServer();
      const s = server;
      s.create('pods', { metadata: { name: 'first', namespace: 'default' } });
      const r = await runChild([kind, 'apiserver'], { KUBE_URL: s.url }, () => {
        let n = 0;
        feeder = setInterval(() => s.create('pods', { metadata: { name: `p${n++}`, namespace: 'default' } }), 10);
        setTimeout(() => s.create('pods', { metadata: { name: 'boom', namespace: 'default' } }), 50);
      });
      expect(r.exitedInTime, r.stderr).toBe(true);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/FAILED HANDLER_FAILED: .*handler exploded on boom; cause: handler exploded on boom/);
      expect(r.stderr).toMatch(/ACTIVE \[\]/);
    }, 60_000);
  }

  it('exits non-zero within 5 s when a factory informer started without onError fails', async () => {
    const r = await runChild([], {}, undefined, FACTORY_FIXTURE);
    expect(r.exitedInTime, r.stderr).toBe(true);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/factory handler exploded/);
  }, 60_000);
});
