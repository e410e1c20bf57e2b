// The real-apiserver harness itself: auth, TLS, a create seen by a watch, and a clean stop.

import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { processRunning, startRealApiServer, watchUntil, type RealApiServer } from './harness.js';

const running = processRunning;

describe('the real kube-apiserver harness', () => {
  let server: RealApiServer;
  let core: CoreV1Api;
  const namespace = `ki-smoke-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    // Its own server: the last test stops it and checks that no process is left.
    server = await startRealApiServer({ private: true });
    core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lists the namespaces the apiserver bootstraps through CoreV1Api and the written kubeconfig', async () => {
    const list = await core.listNamespace();
    const names = list.items.map((ns) => ns.metadata?.name);
    expect(names).toEqual(expect.arrayContaining(['default', 'kube-system', namespace]));
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThan(0);
  });

  it('serves TLS with the generated CA and rejects a request without the bearer token', async () => {
    expect(server.kubeConfig.getCurrentCluster()?.server).toBe(server.server);
    expect(server.ca).toContain('BEGIN CERTIFICATE');
    const { status } = await fetchWithCa(server, '/api/v1/namespaces', undefined);
    expect(status).toBe(401);
    const authorized = await fetchWithCa(server, '/api/v1/namespaces', server.token);
    expect(authorized.status).toBe(200);
  });

  it('delivers a configmap created through CoreV1Api as an ADDED event to a watch from the list resourceVersion', async () => {
    const list = await core.listNamespacedConfigMap({ namespace });
    const watching = watchUntil(
      server.kubeConfig,
      `/api/v1/namespaces/${namespace}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion },
      (event) => event.object.metadata?.name === 'smoke',
    );
    const created = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'smoke' }, data: { hello: 'world' } },
    });
    const events = await watching;
    expect(events.at(-1)).toMatchObject({
      type: 'ADDED',
      object: { metadata: { name: 'smoke', resourceVersion: created.metadata?.resourceVersion } },
    });
  });

  it('stops etcd, the apiserver and the script, and removes the temp dir', async () => {
    const { pids } = server;
    const dir = server.kubeConfigPath.replace(/\/kubeconfig$/, '');
    expect([pids.apiServer, pids.etcd, pids.script].map(running)).toEqual([true, true, true]);
    expect(existsSync(dir)).toBe(true);
    await server.stop();
    expect([pids.apiServer, pids.etcd, pids.script].map(running)).toEqual([false, false, false]);
    expect(existsSync(dir)).toBe(false);
  });
});

/** A GET over node:https trusting only the harness CA, with or without the bearer token. */
async function fetchWithCa(server: RealApiServer, path: string, token: string | undefined): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL(path, server.server),
      { ca: server.ca, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}
