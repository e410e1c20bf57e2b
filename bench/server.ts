// The benchmark's server process: the fake API server, loaded with pods and recorded MODIFIED events.
//
// Started by bench/run.ts with `forkRpc` (lib/rpc.ts: its own process, so its CPU and heap are never counted
// against a contender) and driven over IPC with the commands of `ServerCommand` in lib/protocol.ts:
// - `load`: a fresh server with `pods` pods, then `events` MODIFIED events recorded in its history but
//   sent to nobody (no watch is open yet). A contender that lists at exactly `loadedRv` and then watches
//   from there gets the whole burst replayed as fast as the socket drains: throughput is the client's.
// - `steady`: MODIFIED events at a low, steady rate to every open watch, until `stop-steady`.

import { startFakeApiServer, type FakeApiServer } from '../src/testing/index.js';
import type { LoadResult, ServerCommand } from './lib/protocol.js';
import { makePod } from './lib/pods.js';
import { serveRpc } from './lib/rpc.js';

const TOKEN = 'bench-token';
let server: FakeApiServer | undefined;
let podCount = 0;
let seq = 0;
let steadyTimer: NodeJS.Timeout | undefined;

/** The i-th pod with a changed annotation and restart count: one MODIFIED event's worth of change. */
function modified(i: number): ReturnType<typeof makePod> {
  const pod = makePod(i % podCount);
  seq++;
  (pod.metadata as unknown as { annotations: Record<string, string> }).annotations['bench.kube-informer.dev/seq'] = String(seq);
  const statuses = (pod.status as { containerStatuses: Array<{ restartCount: number }> }).containerStatuses;
  statuses[0].restartCount = seq % 1000;
  return pod;
}

async function load(pods: number, events: number): Promise<LoadResult> {
  await server?.close();
  server = undefined;
  (globalThis as { gc?: () => void }).gc?.();
  server = await startFakeApiServer({
    token: TOKEN,
    recordRequests: false,
    historyLimit: Math.max(1000, events + 1000),
  });
  podCount = pods;
  let t = performance.now();
  for (let i = 0; i < pods; i++) server.create('pods', makePod(i), { broadcast: false });
  const loadSeconds = (performance.now() - t) / 1000;
  const loadedRv = server.resourceVersion();
  t = performance.now();
  for (let e = 0; e < events; e++) server.update('pods', modified(e), { broadcast: false });
  const eventSeconds = (performance.now() - t) / 1000;
  const sample = server.list('pods').slice(0, 200);
  const podBytes = sample.reduce((n, p) => n + JSON.stringify(p).length, 0) / Math.max(1, sample.length);
  const metaBytes =
    sample.reduce((n, p) => n + JSON.stringify({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: p.metadata }).length, 0) /
    Math.max(1, sample.length);
  // Settle the load's garbage now, and warm up list serving, so the first contender is not penalised.
  (globalThis as { gc?: () => void }).gc?.();
  const warm = await fetch(`${server.url}/api/v1/pods?resourceVersion=0&limit=500`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  await warm.arrayBuffer();
  (globalThis as { gc?: () => void }).gc?.();
  return { url: server.url, token: TOKEN, loadedRv, finalRv: server.resourceVersion(), loadSeconds, eventSeconds, podBytes, metaBytes };
}

async function shutdown(): Promise<void> {
  clearInterval(steadyTimer);
  const closing = server;
  server = undefined;
  await closing?.close();
}

function steady(ratePerSecond: number): void {
  clearInterval(steadyTimer);
  const tickMs = 100;
  let carry = 0;
  steadyTimer = setInterval(() => {
    carry += (ratePerSecond * tickMs) / 1000;
    for (; carry >= 1; carry--) server?.update('pods', modified(seq));
  }, tickMs);
}

serveRpc<ServerCommand>(
  async (msg) => {
    switch (msg.cmd) {
      case 'load':
        return load(msg.pods, msg.events);
      case 'steady':
        steady(msg.ratePerSecond);
        return undefined;
      case 'stop-steady':
        clearInterval(steadyTimer);
        return undefined;
      case 'exit':
        await shutdown();
        return undefined;
    }
  },
  { onDisconnect: shutdown },
);
