// Real faults done to the real server while a writer runs (soak/real/faults.ts): kube-apiserver and etcd
// killed with SIGKILL and restarted, etcd compacted, with the watch cache on and off; a 429 storm; and
// Toxiproxy between informer and server (reset, latency, bandwidth cap, stall). After each fault the cache
// must catch up (the recovery time is printed), and at the end equal the server exactly, with every
// handler's history. `npm run soak -- --real` runs the same faults on seeded schedules.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRealRun } from '../../soak/real/report.js';
import { runFaults, type Fault } from '../../soak/real/faults.js';
import { startRealApiServer, type RealApiServer } from './harness.js';
import { proxyApiServer, type ApiServerProxy } from './toxiproxy.js';

async function exact(server: RealApiServer, faults: Fault[], label: string, proxy?: ApiServerProxy): Promise<void> {
  const result = await runFaults(server, faults, label, proxy);
  console.log(describeRealRun(result));
  expect({ cacheDiff: result.cacheDiff, handlerDiff: result.handlerDiff }).toEqual({ cacheDiff: [], handlerDiff: [] });
  expect(result.counters.regressions).toBe(0);
  expect(result.writes).toBeGreaterThan(50);
  if (faults.includes('storm')) expect(result.throttled).toBeGreaterThan(0);
}

describe('real faults with the watch cache on (the default)', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer({ private: true }); // killed, restarted and compacted: its own
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('kube-apiserver SIGKILL + restart, etcd SIGKILL + restart, etcd compaction: the cache catches up and ends exact', async () => {
    await exact(server, ['kube-apiserver', 'etcd', 'compaction', 'kube-apiserver'], 'watch cache on');
  }, 240_000);
});

describe('real faults with the watch cache off', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer({ apiServerArgs: ['--watch-cache=false'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('compaction then kube-apiserver SIGKILL + restart: every watch resumes from etcd, the cache ends exact', async () => {
    await exact(server, ['compaction', 'kube-apiserver', 'etcd'], 'watch cache off');
  }, 240_000);
});

describe('a 429 storm from API priority and fairness with a tiny concurrency budget', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer({ apiServerArgs: ['--max-requests-inflight=1', '--max-mutating-requests-inflight=1'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('writers are turned away with 429 while the informer keeps up and ends exact', async () => {
    await exact(server, ['storm', 'storm'], '429 storm');
  }, 240_000);
});

describe('faults between the informer and the server (Toxiproxy)', () => {
  let server: RealApiServer;
  let proxy: ApiServerProxy;
  beforeAll(async () => {
    server = await startRealApiServer();
    proxy = await proxyApiServer(server);
  });
  afterAll(async () => {
    await proxy?.stop();
    await server?.stop();
  });

  it('connection reset, latency, a bandwidth cap and a stall that ends in a close: the cache catches up and ends exact', async () => {
    await exact(server, ['reset', 'latency', 'bandwidth', 'stall', 'reset'], 'toxiproxy', proxy);
  }, 240_000);
});
