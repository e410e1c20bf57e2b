// pod-logger in-process (on the fake or envtest: KUBE_INFORMER_TEST_SERVER) and as a real process stopped with SIGINT; the examples' command-line handling.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resources } from '../../src/index.js';
import { connectCluster, parseExampleArgs } from '../../examples/lib/cluster.js';
import { runPodLogger } from '../../examples/pod-logger/main.js';
import { CLUSTER_TIMEOUT_MS, eventually, ON_ENVTEST, startTestCluster, TEST_SERVER, type ExampleCluster } from './cluster.js';
import { runExample } from './helpers.js';

describe(`pod-logger (on ${TEST_SERVER})`, { timeout: CLUSTER_TIMEOUT_MS }, () => {
  let cluster: ExampleCluster;
  beforeEach(async () => {
    cluster = await startTestCluster();
  }, CLUSTER_TIMEOUT_MS);
  afterEach(async () => {
    await cluster.close();
  }, CLUSTER_TIMEOUT_MS);

  it('logs the initial count, then adds, changes and deletes, and stops cleanly when its signal aborts', async () => {
    await cluster.create(resources.pods, { metadata: { name: 'web-1', namespace: 'default' }, status: { phase: 'Running' } });
    await cluster.create(resources.pods, { metadata: { name: 'web-2', namespace: 'other' }, status: { phase: 'Running' } });
    const lines: string[] = [];
    const stop = new AbortController();
    let settled: { error: unknown } | undefined;
    runPodLogger(cluster.kubeConfig, stop.signal, (line) => lines.push(line)).then(
      () => (settled = { error: undefined }),
      (error: unknown) => (settled = { error }),
    );
    await eventually(() => lines.length === 1, 'the sync line');
    expect(lines).toEqual(['synced: 2 pods in 2 namespaces; watching (Ctrl-C to stop)']);

    await cluster.create(resources.pods, { metadata: { name: 'job-1', namespace: 'batch' }, status: { phase: 'Pending' } });
    await cluster.update(resources.pods, { metadata: { name: 'job-1', namespace: 'batch' }, status: { phase: 'Running' } });
    await cluster.delete(resources.pods, 'job-1', 'batch');
    await eventually(() => lines.at(-1) === 'deleted  batch/job-1', () => `the delete line; saw ${JSON.stringify(lines)}`);
    // kube-apiserver deletes a Pod gracefully, even one never scheduled: a MODIFIED that sets
    // deletionTimestamp comes before the DELETED. The fake deletes at once (docs/testing.md).
    const deleting = ON_ENVTEST ? ['updated  batch/job-1 (Running)'] : [];
    expect(lines.slice(1)).toEqual(['added    batch/job-1 (Pending)', 'updated  batch/job-1 (Running)', ...deleting, 'deleted  batch/job-1']);

    stop.abort();
    await eventually(() => settled !== undefined, 'runPodLogger to settle');
    expect(settled).toEqual({ error: undefined });
    expect(lines.at(-1)).toBe('stopped: watch closed');
    const fake = cluster.fake;
    if (fake) await eventually(() => fake.openWatches() === 0, 'the server to see the watch closed');
  });
});

describe('pod-logger as a program', () => {
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
    expect(result.stdout).toContain('received SIGINT: stopping in order'); // shutdownSignal's line (the default logger: console.info)
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
