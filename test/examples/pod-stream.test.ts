// pod-stream in-process (on the fake or envtest: KUBE_INFORMER_TEST_SERVER) and as a real process stopped with SIGINT.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resources } from '../../src/index.js';
import { runPodStream } from '../../examples/pod-stream/main.js';
import { CLUSTER_TIMEOUT_MS, eventually, startTestCluster, TEST_SERVER, type ExampleCluster } from './cluster.js';
import { runExample } from './helpers.js';

describe(`pod-stream (on ${TEST_SERVER})`, { timeout: CLUSTER_TIMEOUT_MS }, () => {
  let cluster: ExampleCluster;
  beforeEach(async () => {
    cluster = await startTestCluster();
  }, CLUSTER_TIMEOUT_MS);
  afterEach(async () => {
    await cluster.close();
  }, CLUSTER_TIMEOUT_MS);

  it('logs the sync, then adds, phase changes and deletes from its for-await loop, and stops cleanly when its signal aborts', async () => {
    await cluster.create(resources.pods, { metadata: { name: 'web-1', namespace: 'default' }, status: { phase: 'Running' } });
    const lines: string[] = [];
    const stop = new AbortController();
    let settled: { error: unknown } | undefined;
    runPodStream(cluster.kubeConfig, stop.signal, (line) => lines.push(line)).then(
      () => (settled = { error: undefined }),
      (error: unknown) => (settled = { error }),
    );
    await eventually(() => lines.length === 1, 'the sync line');
    expect(lines).toEqual(['synced: 1 pods; watching (Ctrl-C to stop)']);
    await cluster.create(resources.pods, { metadata: { name: 'job-1', namespace: 'batch' }, status: { phase: 'Pending' } });
    await cluster.update(resources.pods, { metadata: { name: 'job-1', namespace: 'batch' }, status: { phase: 'Running' } });
    await cluster.delete(resources.pods, 'job-1', 'batch');
    await eventually(() => lines.at(-1) === 'deleted  batch/job-1', () => `the delete line; saw ${JSON.stringify(lines)}`);
    // On kube-apiserver a graceful delete's MODIFIED (deletionTimestamp) keeps the phase: no line for it.
    expect(lines.slice(1)).toEqual(['added    batch/job-1 (Pending)', 'phase    batch/job-1 (Running)', 'deleted  batch/job-1']);
    stop.abort();
    await eventually(() => settled !== undefined, 'runPodStream to settle');
    expect(settled).toEqual({ error: undefined });
    expect(lines.at(-1)).toBe('stopped: watch closed');
    const fake = cluster.fake;
    if (fake) await eventually(() => fake.openWatches() === 0, 'the server to see the watch closed');
  });
});

describe('pod-stream as a program', () => {
  it('runs as a program on the embedded fake cluster and exits 0 on SIGINT', async () => {
    let interrupted = false;
    const result = await runExample('examples/pod-stream/main.ts', ['--fake'], (stdout, child) => {
      if (!interrupted && stdout.includes('synced:')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    expect(result.exitedInTime).toBe(true);
    expect(result.stdout).toContain('pod-stream on embedded fake API server');
    expect(result.code).toBe(0);
  });
});
