// The built-in resource descriptors at run time: right group, version, plural, kind and scope; served by the fake API server; typed informers that hold JSON.

import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { SharedInformerFactory, deepCopy, resources, type DeepReadonly, type ResourceDescriptor } from '../../src/index.js';
import { BUILT_IN_RESOURCES } from '../../src/testing/fake-api-server/registry.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

/**
 * Descriptors of resources the fake API server does not serve unless declared. Kept exact, so adding
 * one to the fake's built-ins fails this test until it is removed from here.
 */
const NOT_BUILT_INTO_THE_FAKE: string[] = [];

const all = Object.entries(resources) as Array<[string, ResourceDescriptor]>;
const listPath = (d: ResourceDescriptor): string => (d.group === '' ? `/api/${d.version}/${d.resource}` : `/apis/${d.group}/${d.version}/${d.resource}`);

let server: FakeApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('resources', () => {
  it('keys every descriptor by its plural resource name', () => {
    for (const [key, d] of all) expect(d.resource).toBe(key);
  });

  it('has the common built-in resources', () => {
    expect(Object.keys(resources)).toEqual(
      expect.arrayContaining([
        'pods', 'services', 'endpoints', 'configmaps', 'secrets', 'namespaces', 'nodes', 'events', 'serviceaccounts',
        'persistentvolumeclaims', 'persistentvolumes', 'deployments', 'replicasets', 'statefulsets', 'daemonsets',
        'jobs', 'cronjobs', 'endpointslices', 'ingresses', 'networkpolicies', 'leases',
      ]),
    );
  });

  it('describes pods, deployments and leases with the group, version, kind and scope of the Kubernetes API', () => {
    expect(resources.pods).toEqual({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true });
    expect(resources.nodes).toEqual({ group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false });
    expect(resources.deployments).toEqual({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true });
    expect(resources.leases).toEqual({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true });
    expect(resources.networkpolicies).toEqual({
      group: 'networking.k8s.io',
      version: 'v1',
      resource: 'networkpolicies',
      kind: 'NetworkPolicy',
      namespaced: true,
    });
  });

  it('agrees with the fake API server on the group, version, kind and scope of every resource both know', () => {
    const fake = new Map(BUILT_IN_RESOURCES.map(([group, version, resource, kind, namespaced]) => [`${group}/${version}/${resource}`, { kind, namespaced }]));
    const unknownToFake: string[] = [];
    for (const [key, d] of all) {
      const known = fake.get(`${d.group}/${d.version}/${d.resource}`);
      if (known === undefined) unknownToFake.push(key);
      else expect({ key, kind: d.kind, namespaced: d.namespaced }).toEqual({ key, ...known });
    }
    expect(unknownToFake).toEqual(NOT_BUILT_INTO_THE_FAKE);
  });

  it('freezes the descriptors and the table, so no caller can change them for everyone', () => {
    expect(Object.isFrozen(resources)).toBe(true);
    for (const [, d] of all) expect(Object.isFrozen(d)).toBe(true);
  });

  it('is listed with 200 by the fake API server for every descriptor (declared through the descriptor where not built in)', async () => {
    server = await startFakeApiServer();
    for (const key of NOT_BUILT_INTO_THE_FAKE) server.resource(resources[key as keyof typeof resources]);
    for (const [key, d] of all) {
      const res = await fetch(`${server.url}${listPath(d)}`);
      const body = (await res.json()) as { kind?: string; apiVersion?: string };
      expect({ key, status: res.status, kind: body.kind, apiVersion: body.apiVersion }).toEqual({
        key,
        status: 200,
        kind: `${d.kind}List`,
        apiVersion: d.group === '' ? d.version : `${d.group}/${d.version}`,
      });
    }
  });

  it('gives a typed informer whose objects are the JSON the server sent: timestamps are strings', async () => {
    server = await startFakeApiServer();
    server.create('pods', { metadata: { name: 'web-0', namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const pods = factory.forResource(resources.pods);
    expectTypeOf(pods.lister().get).returns.toEqualTypeOf<DeepReadonly<Pod> | undefined>();
    const added: Array<DeepReadonly<Pod>> = [];
    pods.addEventHandler({ onAdd: (pod) => void added.push(pod) });
    const ac = new AbortController();
    const running = factory.run(ac.signal);
    try {
      await pods.whenSynced(ac.signal);
      const cached = pods.lister().namespace('default').get('web-0');
      expect(typeof cached?.metadata?.creationTimestamp).toBe('string');
      expect(Number.isNaN(Date.parse(cached!.metadata!.creationTimestamp!))).toBe(false);
      expect(added).toHaveLength(1);
      expect(added[0]).toBe(cached); // handlers and listers see the same cached object
    } finally {
      ac.abort();
      await running;
    }
  });
});

describe('deepCopy', () => {
  it('returns an equal object that shares nothing with the original', () => {
    const original: DeepReadonly<Pod> = {
      metadata: { name: 'web-0', labels: { app: 'web' }, creationTimestamp: '2024-01-02T03:04:05Z' },
      spec: { containers: [{ name: 'c', image: 'nginx', args: ['-v'] }] },
    };
    const copy = deepCopy<Pod>(original);
    expect(copy).toEqual(original);
    expect(copy).not.toBe(original);
    copy.metadata!.labels!.app = 'changed';
    copy.spec!.containers[0]!.args!.push('-q');
    expect(original.metadata?.labels?.app).toBe('web');
    expect(original.spec?.containers[0]?.args).toEqual(['-v']);
  });
});
