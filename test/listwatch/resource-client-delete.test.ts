// ResourceClient.delete answers honestly: "gone" with the server's Status, or the object still held by finalizers.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newResourceClient, resources, type ResourceClient } from '../../src/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/core/types.js';

let server: FakeApiServer;
let client: ResourceClient<KubeObject>;
beforeEach(async () => {
  server = await startFakeApiServer({ now: () => new Date('2026-11-24T10:00:00.123Z') });
  client = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'test' });
});
afterEach(async () => {
  client.close();
  await server.close();
});

describe('ResourceClient.delete', () => {
  it('resolves { gone: true, status } when the server answers a Status (no finalizers), as kube-apiserver does', async () => {
    const created = server.create('configmaps', { metadata: { name: 'c', namespace: 'default' } });
    const result = await client.delete('c', 'default');
    expect(result.gone).toBe(true);
    if (!result.gone) throw new Error('unreachable');
    expect(result.status).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'c', kind: 'configmaps', uid: (created.metadata as { uid?: string }).uid } });
    expect(result.object).toBeUndefined();
    expect(server.get('configmaps', 'c', 'default')).toBeUndefined();
  });

  it('resolves { gone: false, object } with the deletionTimestamp when finalizers hold the object', async () => {
    server.create('configmaps', { metadata: { name: 'c', namespace: 'default', finalizers: ['example.com/a'] } });
    const result = await client.delete('c', 'default');
    expect(result.gone).toBe(false);
    if (result.gone) throw new Error('unreachable');
    expect(result.object.metadata).toMatchObject({ name: 'c', deletionTimestamp: '2026-11-24T10:00:00Z', finalizers: ['example.com/a'] });
  });

  it('resolves { gone: true, object } when the server answers the final state (pods, ReturnDeletedObject)', async () => {
    const pods = newResourceClient<KubeObject>(server.kubeConfig, resources.pods);
    server.create('pods', { metadata: { name: 'p', namespace: 'default' } });
    const result = await pods.delete('p', 'default');
    pods.close();
    expect(result).toMatchObject({ gone: true, object: { metadata: { name: 'p' } } });
  });

  it('sends preconditions and the propagation policy, and rejects a failed precondition with 409', async () => {
    server.create('configmaps', { metadata: { name: 'c', namespace: 'default' } });
    await expect(client.delete('c', 'default', { preconditions: { uid: 'other' } })).rejects.toMatchObject({ statusCode: 409, reason: 'Conflict' });
    // The fake runs no garbage collector: Foreground is refused with a 501 naming it, which shows it was sent.
    await expect(client.delete('c', 'default', { propagationPolicy: 'Foreground' })).rejects.toMatchObject({ statusCode: 501, message: expect.stringMatching(/propagationPolicy Foreground/) });
    await expect(client.delete('c', 'default', { propagationPolicy: 'Background' })).resolves.toMatchObject({ gone: true });
    await expect(client.delete('c', 'default')).rejects.toMatchObject({ statusCode: 404 });
  });

  it('refuses a wrong delete option before sending', async () => {
    server.create('configmaps', { metadata: { name: 'c', namespace: 'default' } });
    await expect(client.delete('c', 'default', { propagationPolicy: 'Sideways' } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    expect(server.get('configmaps', 'c', 'default')).toBeDefined();
  });
});
