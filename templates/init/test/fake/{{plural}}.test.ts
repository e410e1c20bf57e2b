// The {{Kind}} controller on the fake API server from kube-informer/testing: milliseconds, no binaries.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources, type KubeObject } from 'kube-informer';
import type { Permission } from 'kube-informer/operations';
import { flushPromises, startFakeApiServer, uncoveredUses, type FakeApiServer } from 'kube-informer/testing';
import { {{plural}}, type {{Kind}} } from '../../src/crd.js';
import { configMapName, FINALIZER, {{kindVar}}Controller } from '../../src/controller.js';

/** Lets I/O run, one turn at a time (no timer), until `cond()` holds. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 20_000; turn++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const sample: {{Kind}} = {
  apiVersion: '{{group}}/v1',
  kind: '{{Kind}}',
  metadata: { name: 'sample', namespace: 'default' },
  spec: { message: 'hello' },
};

describe('the {{Kind}} controller on the fake API server', () => {
  let server: FakeApiServer;
  let permissions: Permission[];
  let stop: AbortController;
  let running: Promise<void>;

  beforeEach(async () => {
    server = await startFakeApiServer();
    server.create('customresourcedefinitions.apiextensions.k8s.io', {{plural}}.crd); // {{Kind}}s are served, held to their schema
    // The controller has a token of its own, so its requests are told apart from the test's.
    const { factory, controller } = {{kindVar}}Controller(server.kubeConfigFor('controller'), { logger: false });
    permissions = controller.permissions();
    stop = new AbortController();
    factory.start(stop.signal);
    running = controller.run(stop.signal);
  });
  afterEach(async () => {
    stop.abort();
    await running;
    await server.close();
  });

  const current = (): {{Kind}} | undefined => server.get<{{Kind}} & KubeObject>({{plural}}.descriptor, 'sample', 'default');
  const configMap = (): ConfigMap | undefined => server.get<ConfigMap & KubeObject>(resources.configmaps, configMapName('sample'), 'default');

  it('writes the ConfigMap, reports Ready, and deletes the ConfigMap before the {{Kind}} goes', async () => {
    const client = newResourceClient(server.kubeConfig, {{plural}}.descriptor);
    await client.create(sample);

    await until(() => current()?.status?.conditions?.[0]?.status === 'True', 'Ready');
    expect(current()?.metadata?.finalizers).toEqual([FINALIZER]);
    expect(configMap()?.data).toEqual({ message: 'hello' });
    expect(configMap()?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: '{{Kind}}', name: 'sample', controller: true });

    await client.delete('sample', 'default');
    await until(() => current() === undefined, 'the {{Kind}} deleted');
    expect(configMap()).toBeUndefined();
    client.close();

    // Every request the controller made is one its rules allow: the rules `npm run manifests` writes
    // (config/rbac/role.yaml) come from the same declarations. A request outside them fails here first.
    expect(uncoveredUses(server.usedPermissions({ token: 'controller' }), permissions)).toEqual([]);
  });
});
