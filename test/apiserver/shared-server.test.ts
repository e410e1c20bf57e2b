// The suite's shared kube-apiserver: startRealApiServer() with the default flags hands out the one the
// global setup started; stop() leaves it up for the next file and restart() refuses loudly.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newResourceClient, resources } from '../../src/index.js';
import { freshNamespace, processRunning, startRealApiServer, type RealApiServer } from './harness.js';

describe('the shared real kube-apiserver', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('startRealApiServer() with the default flags is a handle on the server the global setup started', async () => {
    const provided = inject('sharedRealApiServer');
    expect(provided).toBeDefined();
    expect(server.shared).toBe(true);
    expect({ server: server.server, pids: server.pids, dir: server.dir }).toEqual({ server: provided?.server, pids: provided?.pids, dir: provided?.dir });
    const again = await startRealApiServer({ apiServerArgs: [], controllerManager: false });
    expect(again.server).toBe(server.server);
    const namespace = await freshNamespace(again, 'ki-shared');
    const namespaces = newResourceClient(server.kubeConfig, resources.namespaces);
    try {
      expect((await namespaces.get(namespace)).metadata?.name).toBe(namespace);
    } finally {
      namespaces.close();
    }
  });

  it('stop() on a shared handle leaves the server running for the next file', async () => {
    const other = await startRealApiServer();
    expect(other.shared).toBe(true);
    await other.stop();
    expect([server.pids.apiServer, server.pids.etcd].map(processRunning)).toEqual([true, true]);
    const response = await fetch(`${server.etcdEndpoint}/health`);
    expect(response.ok).toBe(true);
  });

  it('restart() on a shared handle rejects with an error that says to start a private server, and restarts nothing', async () => {
    const before = server.pids.apiServer;
    await expect(server.restart('kube-apiserver')).rejects.toThrow(/shared server.*startRealApiServer\(\{ private: true \}\)/);
    await expect(server.restart('etcd')).rejects.toThrow(/restart\('etcd'\)/);
    expect(server.pids.apiServer).toBe(before);
    expect(processRunning(before)).toBe(true);
  });
});
