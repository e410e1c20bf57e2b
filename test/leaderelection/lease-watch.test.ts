// LeaseLock.watch: client-node's Watch on the one Lease (fake API server), its failures in words, its RBAC verb, nothing left open.

import { CoordinationV1Api, Watch } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLock, type LeaseWatch } from '../../src/leaderelection/lease-lock.js';
import type { LeaderElectionRecord } from '../../src/leaderelection/lock.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer({ logger: false });
});
afterEach(async () => {
  await server.close();
});

const spec = (holder: string) => ({ holderIdentity: holder, leaseDurationSeconds: 15, leaseTransitions: 0 });

describe('LeaseLock.watch', () => {
  it('reports the Lease now, each change, a deletion as no holder; only this Lease; closed when the signal aborts', async () => {
    const api = server.kubeConfig.makeApiClient(CoordinationV1Api);
    const lock = new LeaseLock({ client: api, namespace: 'ns', name: 'l', identity: 'me', watch: new Watch(server.kubeConfig) });
    await api.createNamespacedLease({ namespace: 'ns', body: { metadata: { name: 'l' }, spec: spec('a') } });
    const seen: LeaderElectionRecord[] = [];
    const stop = new AbortController();
    const watching = lock.watch!((r) => seen.push(r), stop.signal);
    await until(() => seen.length === 1, 'the current record');
    await api.createNamespacedLease({ namespace: 'ns', body: { metadata: { name: 'other' }, spec: spec('z') } });
    const lease = await api.readNamespacedLease({ name: 'l', namespace: 'ns' });
    await api.replaceNamespacedLease({ name: 'l', namespace: 'ns', body: { ...lease, spec: spec('') } });
    await until(() => seen.length === 2, 'the release');
    await api.deleteNamespacedLease({ name: 'l', namespace: 'ns' });
    await until(() => seen.length === 3, 'the deletion');
    expect(seen.map((r) => r.holderIdentity)).toEqual(['a', '', '']);
    const watchRequest = server.requests().find((r) => r.verb === 'watch');
    expect(watchRequest).toMatchObject({ path: '/apis/coordination.k8s.io/v1/namespaces/ns/leases', query: { fieldSelector: 'metadata.name=l', watch: 'true' } });
    expect(server.openWatches()).toBe(1);
    // Authorized as a watch of that one Lease, as kube-apiserver's RequestInfo names it: resourceNames grant it.
    expect(server.usedPermissions()).toContainEqual({ verb: 'watch', group: 'coordination.k8s.io', resource: 'leases', namespace: 'ns', name: 'l' });
    stop.abort();
    await watching;
    await until(() => server.openWatches() === 0, 'the watch closed');
  });

  it('a refused watch rejects naming the lock and the status; the ERROR event of the server too', async () => {
    const refused: LeaseWatch = {
      watch: async (_path, _query, _callback, done) => {
        done(Object.assign(new Error('Forbidden'), { statusCode: 403 }));
        return new AbortController();
      },
    };
    const lock = new LeaseLock({ client: server.kubeConfig.makeApiClient(CoordinationV1Api), namespace: 'ns', name: 'l', identity: 'me', watch: refused });
    await expect(lock.watch!(() => {}, new AbortController().signal)).rejects.toThrow('watch lease ns/l failed: HTTP 403');
    let aborted = 0;
    const gone: LeaseWatch = {
      watch: async (_path, _query, callback) => {
        const controller = new AbortController();
        controller.signal.addEventListener('abort', () => aborted++);
        queueMicrotask(() => callback('ERROR', { kind: 'Status', code: 410, message: 'too old resource version: 1 (5)' }));
        return controller;
      },
    };
    const lock2 = new LeaseLock({ client: server.kubeConfig.makeApiClient(CoordinationV1Api), namespace: 'ns', name: 'l', identity: 'me', watch: gone });
    await expect(lock2.watch!(() => {}, new AbortController().signal)).rejects.toThrow('watch lease ns/l: the server ended it: too old resource version: 1 (5)');
    expect(aborted).toBe(1);
  });

  it('an abort before the watch opened aborts it once it opens', async () => {
    let release!: (c: AbortController) => void;
    const controller = new AbortController();
    const slow: LeaseWatch = { watch: () => new Promise<AbortController>((resolve) => (release = resolve)) };
    const lock = new LeaseLock({ client: server.kubeConfig.makeApiClient(CoordinationV1Api), namespace: 'ns', name: 'l', identity: 'me', watch: slow });
    const stop = new AbortController();
    const watching = lock.watch!(() => {}, stop.signal);
    await until(() => release !== undefined, 'the watch requested');
    stop.abort();
    await watching;
    release(controller);
    await until(() => controller.signal.aborted, 'the late watch aborted');
  });

  it('needs watch of its Lease by name only when it watches; without the option it has no watch', () => {
    const client = server.kubeConfig.makeApiClient(CoordinationV1Api);
    const plain = new LeaseLock({ client, namespace: 'ns', name: 'l', identity: 'me' });
    expect(plain.watch).toBeUndefined();
    expect(plain.permissions()[0]).toMatchObject({ verbs: ['get', 'update'], resourceNames: ['l'] });
    const watching = new LeaseLock({ client, namespace: 'ns', name: 'l', identity: 'me', watch: new Watch(server.kubeConfig) });
    expect(watching.permissions()).toEqual([
      { group: 'coordination.k8s.io', resource: 'leases', namespace: 'ns', verbs: ['get', 'update', 'watch'], resourceNames: ['l'], reason: 'leader election lock ns/l' },
      { group: 'coordination.k8s.io', resource: 'leases', namespace: 'ns', verbs: ['create'], reason: 'leader election lock ns/l' },
    ]);
    expect(() => new LeaseLock({ client, namespace: 'ns', name: 'l', identity: 'me', watch: 'yes' as never })).toThrow(/LeaseLock: option watch/);
  });
});
