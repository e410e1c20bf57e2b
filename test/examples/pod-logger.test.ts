// pod-logger in-process and as a real process stopped with SIGINT; the examples' command-line handling.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeApiServer } from '../../src/testing/index.js';
import { connectCluster, parseExampleArgs } from '../../examples/lib/cluster.js';
import { runPodLogger } from '../../examples/pod-logger/main.js';
import { runExample, startExampleCluster, until } from './helpers.js';

describe('pod-logger', () => {
  let server: FakeApiServer;
  beforeEach(async () => {
    server = await startExampleCluster();
  });
  afterEach(async () => {
    await server.close();
  });

  it('logs the initial count, then adds, changes and deletes, and stops cleanly when its signal aborts', async () => {
    server.create('pods', { metadata: { name: 'web-1', namespace: 'default' }, status: { phase: 'Running' } });
    server.create('pods', { metadata: { name: 'web-2', namespace: 'other' }, status: { phase: 'Running' } });
    const lines: string[] = [];
    const stop = new AbortController();
    let settled: { error: unknown } | undefined;
    runPodLogger(server.kubeConfig, stop.signal, (line) => lines.push(line)).then(
      () => (settled = { error: undefined }),
      (error: unknown) => (settled = { error }),
    );
    await until(() => lines.length === 1, 'the sync line');
    expect(lines).toEqual(['synced: 2 pods in 2 namespaces; watching (Ctrl-C to stop)']);

    server.create('pods', { metadata: { name: 'job-1', namespace: 'batch' }, status: { phase: 'Pending' } });
    server.update('pods', { metadata: { name: 'job-1', namespace: 'batch' }, status: { phase: 'Running' } });
    server.delete('pods', 'job-1', 'batch');
    await until(() => lines.length === 4, 'three more lines');
    expect(lines.slice(1)).toEqual(['added    batch/job-1 (Pending)', 'updated  batch/job-1 (Running)', 'deleted  batch/job-1']);

    stop.abort();
    await until(() => settled !== undefined, 'runPodLogger to settle');
    expect(settled).toEqual({ error: undefined });
    expect(lines.at(-1)).toBe('stopped: watch closed');
    await until(() => server.openWatches() === 0, 'the server to see the watch closed');
  });

  it('runs as a program on the embedded fake cluster and exits 0 on SIGINT', async () => {
    let interrupted = false;
    const result = await runExample('examples/pod-logger/main.ts', ['--fake'], (stdout, child) => {
      if (!interrupted && stdout.includes('synced:')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    expect(result.exitedInTime).toBe(true);
    expect(result.stdout).toContain('pod-logger on embedded fake API server');
    expect(result.stdout).toContain('synced: 3 pods in 1 namespaces');
    expect(result.stdout).toContain('stopped: watch closed');
    expect(result.stderr).toContain('SIGINT: stopping');
    expect(result.stderr).not.toContain('forced exit');
    expect(result.code).toBe(0);
  });
});

describe('the examples command line', () => {
  it('parses the common flags', () => {
    expect(parseExampleArgs(['--seconds', '5', '--seed', '7', '--fake'])).toEqual({ kubeconfig: undefined, fake: true, seconds: 5, seed: 7, help: false });
    expect(parseExampleArgs(['--kubeconfig', '/tmp/kc'])).toMatchObject({ kubeconfig: '/tmp/kc', fake: false });
  });

  it('refuses unknown flags and bad numbers', () => {
    expect(() => parseExampleArgs(['--second', '5'])).toThrow(/second/);
    expect(() => parseExampleArgs(['--seconds', 'soon'])).toThrow('--seconds needs a number >= 0, got "soon"');
  });

  it('uses the embedded fake unless a kubeconfig is named, and --fake wins over KUBECONFIG', async () => {
    const fake = await connectCluster({ kubeconfig: undefined, fake: false }, {});
    expect(fake.fake).toBeDefined();
    expect(fake.description).toMatch(/^embedded fake API server at http:\/\/127\.0\.0\.1:\d+$/);
    await fake.close();
    const forced = await connectCluster({ kubeconfig: undefined, fake: true }, { KUBECONFIG: '/nonexistent' });
    expect(forced.fake).toBeDefined();
    await forced.close();
    await expect(connectCluster({ kubeconfig: '/nonexistent/kubeconfig', fake: false }, {})).rejects.toThrow();
  });
});
