// Informers beyond configmaps on the real kube-apiserver: a CRD the suite creates, and pods.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { SharedIndexInformer, newListWatch, type DeepReadonly, type KubeObject } from '../../src/index.js';
import { runInformer, startRealApiServer, watchUntil, type RealApiServer } from './harness.js';

/** The suite's custom resource: `Widget` in a group of its own, namespaced, one served version. */
const group = 'kitest.kube-informer.dev';
const version = 'v1';
const plural = 'widgets';
const crdName = `${plural}.${group}`;

type Widget = KubeObject & { spec?: { size?: number } };

describe('informers on a CRD and on pods against the real kube-apiserver', () => {
  let server: RealApiServer;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  const namespace = `ki-res-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    server = await startRealApiServer();
    core = server.kubeConfig.makeApiClient(CoreV1Api);
    custom = server.kubeConfig.makeApiClient(CustomObjectsApi);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Creates a widget with `spec.size`; resolves with the server's copy. */
  const createWidget = (name: string, size: number): Promise<Widget> =>
    custom.createNamespacedCustomObject({ group, version, namespace, plural, body: { apiVersion: `${group}/${version}`, kind: 'Widget', metadata: { name }, spec: { size } } });

  it('creates a CustomResourceDefinition, waits for Established, and informs on its objects through a named group', async () => {
    const extensions = server.kubeConfig.makeApiClient(ApiextensionsV1Api);
    await extensions.createCustomResourceDefinition({
      body: {
        metadata: { name: crdName },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural, singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: version,
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                },
              },
            },
          ],
        },
      },
    });
    // Established: the apiextensions controllers accepted the names and the resource is being served.
    const established = (e: { object: Record<string, unknown> }): boolean =>
      ((e.object.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
        (c) => c.type === 'Established' && c.status === 'True',
      );
    await watchUntil(server.kubeConfig, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { fieldSelector: `metadata.name=${crdName}` }, established);

    await createWidget('before', 1);
    const informer = new SharedIndexInformer<Widget>(newListWatch<Widget>(server.kubeConfig, { group, version, resource: plural }, { namespace }), {
      name: 'widgets',
    });
    const { seen, initial, stop } = await runInformer(informer, (w) => `size=${w.spec?.size}`);
    try {
      expect(initial).toEqual(['before size=1']);
      const cached = informer.getStore().getByKey(`${namespace}/before`);
      // List items come without apiVersion/kind from the server; newListWatch fills them from the list.
      expect(cached).toMatchObject({ apiVersion: `${group}/${version}`, kind: 'Widget', spec: { size: 1 } });

      const created = await createWidget('during', 2);
      await custom.replaceNamespacedCustomObject({ group, version, namespace, plural, name: 'during', body: { ...created, spec: { size: 3 } } });
      await custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name: 'during' });
      await seen.until((events) => events.includes('delete during'));
      expect(seen.events).toEqual(['add before size=1', 'add during size=2', 'update during size=3', 'delete during']);
      expect(informer.getStore().listKeys()).toEqual([`${namespace}/before`]);
      expect(Number(informer.lastSyncResourceVersion())).toBeGreaterThanOrEqual(Number(created.metadata!.resourceVersion));
    } finally {
      await stop();
    }
  });

  it('informs on pods once the namespace has the default ServiceAccount that admission requires', async () => {
    // No controller-manager runs, so nobody creates `default`; without it the ServiceAccount admission
    // plugin refuses every pod ("error looking up service account"). Creating it is all admission needs:
    // the token is a projected volume, no Secret involved.
    const podBody = (name: string, labels: Record<string, string>): V1Pod => ({
      metadata: { name, labels },
      spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
    });
    const refused = await core.createNamespacedPod({ namespace, body: podBody('too-early', {}) }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 403 });
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    await core.createNamespacedPod({ namespace, body: podBody('web-1', { app: 'web' }) });
    await core.createNamespacedPod({ namespace, body: podBody('db-1', { app: 'db' }) });

    const all = new SharedIndexInformer<Pod>(newListWatch<Pod>(server.kubeConfig, { group: '', version: 'v1', resource: 'pods' }, { namespace }), { name: 'pods' });
    const web = new SharedIndexInformer<Pod>(
      newListWatch<Pod>(server.kubeConfig, { group: '', version: 'v1', resource: 'pods' }, { namespace, labelSelector: 'app=web' }),
      { name: 'pods app=web' },
    );
    const summary = (p: DeepReadonly<Pod>): string =>
      `app=${p.metadata?.labels?.app ?? '-'} ${p.status?.phase ?? '?'}${p.metadata?.deletionTimestamp ? ' terminating' : ''}`;
    const allRun = await runInformer(all, summary);
    const webRun = await runInformer(web, summary);
    try {
      // Nothing schedules them, so they stay Pending; admission gave them the default ServiceAccount.
      expect(allRun.initial.sort()).toEqual(['db-1 app=db Pending', 'web-1 app=web Pending']);
      expect(webRun.initial).toEqual(['web-1 app=web Pending']);
      expect(all.getStore().getByKey(`${namespace}/web-1`)?.spec?.serviceAccountName).toBe('default');

      await core.createNamespacedPod({ namespace, body: podBody('web-2', { app: 'web' }) });
      const pod = await core.readNamespacedPod({ name: 'web-1', namespace });
      // Relabelled out of `app=web`: the selector's watch reports that as DELETED.
      await core.replaceNamespacedPod({ name: 'web-1', namespace, body: { ...pod, metadata: { ...pod.metadata, labels: { app: 'api' } } } });
      // An unscheduled pod is deleted at once, whatever its grace period (no kubelet has to confirm); the
      // registry still writes the deletionTimestamp first, so watchers see a MODIFIED before the DELETED.
      await core.deleteNamespacedPod({ name: 'db-1', namespace });

      await allRun.seen.until((events) => events.includes('delete db-1'));
      await webRun.seen.until((events) => events.includes('delete web-1'));
      expect(allRun.seen.events.slice(2)).toEqual([
        'add web-2 app=web Pending',
        'update web-1 app=api Pending',
        'update db-1 app=db Pending terminating',
        'delete db-1',
      ]);
      expect(webRun.seen.events.slice(1)).toEqual(['add web-2 app=web Pending', 'delete web-1']);
      expect(all.getStore().listKeys().sort()).toEqual([`${namespace}/web-1`, `${namespace}/web-2`]);
      expect(web.getStore().listKeys()).toEqual([`${namespace}/web-2`]);
    } finally {
      await webRun.stop();
      await allRun.stop();
    }
  });
});
