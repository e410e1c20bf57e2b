// envtest's bad input with stand-in binaries: each failure names the cause and the fix, and leaves no
// process and no directory behind — also when the test process itself is killed mid-start.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { startTestEnvironment } from '../../src/envtest/index.js';
import { freePorts } from '../../src/envtest/http.js';
import { alive, fakeBinaries, scratch } from './fake-binaries.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
let s: ReturnType<typeof scratch>;
let savedTmp: string | undefined;
beforeEach(() => {
  s = scratch();
  savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = s.tmp; // envtest's mkdtemp lands here, so the test sees what is left
});
afterEach(() => {
  process.env.TMPDIR = savedTmp;
  if (savedTmp === undefined) delete process.env.TMPDIR;
  rmSync(s.root, { recursive: true, force: true });
});

function pidOf(name: string): number {
  return Number(readFileSync(join(s.pids, `${name}.pid`), 'utf8'));
}

describe('startTestEnvironment bad input', () => {
  it('etcd that fails to start: ENVTEST_PROCESS_FAILED with its log, no directory left', async () => {
    const dir = fakeBinaries(s.root, { etcd: 'fail' });
    const err = await startTestEnvironment({ binaryAssetsDir: dir }).then(() => new Error('started'), (e: unknown) => e as Error);
    expect(err).toMatchObject({ code: 'ENVTEST_PROCESS_FAILED' });
    expect(err.message).toContain('envtest: etcd exited with code 1 during start-up.');
    expect(err.message).toContain('etcd: cannot access data directory: permission denied');
    expect(readdirSync(s.tmp)).toEqual([]);
  });

  it('a kube-apiserver that exits: its log in the error, etcd stopped, no directory left', async () => {
    const dir = fakeBinaries(s.root, { apiServer: 'fail', pidDir: s.pids });
    const err = await startTestEnvironment({ binaryAssetsDir: dir }).then(() => new Error('started'), (e: unknown) => e as Error);
    expect(err).toMatchObject({ code: 'ENVTEST_PROCESS_FAILED' });
    expect(err.message).toMatch(/kube-apiserver exited with code 1 during start-up\.[\s\S]*unknown flag: --bogus/);
    expect(alive(pidOf('etcd'))).toBe(false);
    expect(readdirSync(s.tmp)).toEqual([]);
  });

  it('a port in use: ENVTEST_PORT_IN_USE naming the port and the option, before anything starts', async () => {
    const dir = fakeBinaries(s.root, { pidDir: s.pids });
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const err = await startTestEnvironment({ binaryAssetsDir: dir, apiServerPort: port }).then(() => new Error('started'), (e: unknown) => e as Error);
      expect(err).toMatchObject({ code: 'ENVTEST_PORT_IN_USE' });
      expect(err.message).toContain(`port ${port} (the apiServerPort option) is in use by another process on 127.0.0.1. Fix: leave apiServerPort out`);
    } finally {
      holder.close();
    }
    expect(existsSync(join(s.pids, 'etcd.pid'))).toBe(false);
    expect(readdirSync(s.tmp)).toEqual([]);
  });

  it('a wrong version: ENVTEST_WRONG_VERSION before anything starts', async () => {
    const dir = fakeBinaries(s.root, { version: '1.30.4', pidDir: s.pids });
    await expect(startTestEnvironment({ binaryAssetsDir: dir, kubernetesVersion: '1.37.2' })).rejects.toMatchObject({ code: 'ENVTEST_WRONG_VERSION' });
    expect(existsSync(join(s.pids, 'etcd.pid'))).toBe(false);
    expect(readdirSync(s.tmp)).toEqual([]);
  });

  it('a picked port taken before the server binds it: a fresh port, for etcd and for kube-apiserver', async () => {
    const dir = fakeBinaries(s.root, { etcd: 'clash-once', apiServer: 'clash-once', pidDir: s.pids });
    const controller = new AbortController();
    const starting = startTestEnvironment({ binaryAssetsDir: dir, signal: controller.signal });
    await expect.poll(() => existsSync(join(s.pids, 'kube-apiserver.pid')), { timeout: 20_000 }).toBe(true);
    controller.abort();
    await expect(starting).rejects.toMatchObject({ code: 'ABORTED' });
    for (const name of ['etcd', 'kube-apiserver']) {
      const ports = readFileSync(join(s.pids, `${name}.ports`), 'utf8').trim().split('\n');
      expect(ports).toHaveLength(2);
      expect(ports[0]).not.toBe(ports[1]);
    }
    expect(readdirSync(s.tmp)).toEqual([]);
  });

  it('a port given in the options and taken at bind time: no retry, the error says the port is taken', async () => {
    const dir = fakeBinaries(s.root, { etcd: 'clash-once', pidDir: s.pids });
    const [etcdPort] = await freePorts(1);
    const err = await startTestEnvironment({ binaryAssetsDir: dir, etcdPort }).then(() => new Error('started'), (e: unknown) => e as Error);
    expect(err).toMatchObject({ code: 'ENVTEST_PROCESS_FAILED' });
    expect(err.message).toContain('etcd exited with code 1 during start-up. Its port is taken by another process');
    expect(readdirSync(s.tmp)).toEqual([]);
  });

  it('an aborted start stops what it started and rejects ABORTED', async () => {
    const dir = fakeBinaries(s.root, { pidDir: s.pids });
    const controller = new AbortController();
    const starting = startTestEnvironment({ binaryAssetsDir: dir, signal: controller.signal });
    await expect.poll(() => existsSync(join(s.pids, 'kube-apiserver.pid')), { timeout: 20_000 }).toBe(true);
    controller.abort();
    await expect(starting).rejects.toMatchObject({ code: 'ABORTED' });
    expect([alive(pidOf('etcd')), alive(pidOf('kube-apiserver'))]).toEqual([false, false]);
    expect(readdirSync(s.tmp)).toEqual([]);
  });

  it('the test process killed mid-start (SIGKILL): the reaper stops both servers and removes the directory', async () => {
    const dir = fakeBinaries(s.root, { pidDir: s.pids });
    const script = [
      `import { startTestEnvironment } from ${JSON.stringify(join(repo, 'src/envtest/index.ts'))};`,
      `await startTestEnvironment({ binaryAssetsDir: ${JSON.stringify(dir)}, startTimeoutMs: 600000, stopTimeoutMs: 2000 });`,
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repo,
      env: { ...process.env, TMPDIR: s.tmp },
      stdio: 'ignore',
    });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    await expect.poll(() => existsSync(join(s.pids, 'kube-apiserver.pid')), { timeout: 30_000 }).toBe(true);
    // tsx keeps its own cache in TMPDIR too: only envtest's directories count.
    const envtestDirs = (): string[] => readdirSync(s.tmp).filter((f) => f.startsWith('kube-informer-envtest-'));
    expect(envtestDirs()).toHaveLength(1);
    const servers = [pidOf('etcd'), pidOf('kube-apiserver')];
    child.kill('SIGKILL');
    await expect.poll(() => servers.map(alive), { timeout: 20_000 }).toEqual([false, false]);
    await expect.poll(envtestDirs, { timeout: 10_000 }).toEqual([]);
  });
});
