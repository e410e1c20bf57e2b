// SharedIndexInformer over newListWatch against the real kube-apiserver: sync, add/update/delete, watch list.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { SharedIndexInformer, newListWatch, type KubeObject, type SharedIndexInformerOptions } from '../../src/index.js';
import { EventRecorder, startRealApiServer, type RealApiServer } from './harness.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };
/** What a handler saw: the callback, the object's name, its `data.v`, and `isInInitialList` for adds. */
type Seen = [kind: 'add' | 'update' | 'delete', name: string, v: string | undefined, initial?: boolean];

const configmaps = { group: '', version: 'v1', resource: 'configmaps' };

describe('SharedIndexInformer against the real kube-apiserver', () => {
  let server: RealApiServer;
  let core: CoreV1Api;

  beforeAll(async () => {
    server = await startRealApiServer();
    core = server.kubeConfig.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** A fresh namespace with the given configmaps (`data.v = '1'`). */
  async function namespaceWith(...names: string[]): Promise<string> {
    const namespace = `ki-inf-${randomBytes(3).toString('hex')}`;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    for (const name of names) await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v: '1' } } });
    return namespace;
  }

  /** Starts an informer on the namespace's configmaps with a recording handler; resolves once synced. */
  async function startInformer(namespace: string, options: SharedIndexInformerOptions<ConfigMap> = {}) {
    const informer = new SharedIndexInformer<ConfigMap>(
      newListWatch<ConfigMap>(server.kubeConfig, configmaps, { namespace }),
      { name: `configmaps/${namespace}`, ...options },
    );
    const seen = new EventRecorder<Seen>();
    const registration = informer.addEventHandler({
      onAdd: (cm, initial) => seen.record(['add', cm.metadata!.name!, cm.data?.v, initial]),
      onUpdate: (_old, cm) => seen.record(['update', cm.metadata!.name!, cm.data?.v]),
      onDelete: (cm) => seen.record(['delete', 'key' in cm ? cm.key : cm.metadata!.name!, undefined]),
    });
    const controller = new AbortController();
    const running = informer.run(controller.signal);
    await informer.whenSynced(controller.signal);
    const stop = async (): Promise<void> => {
      controller.abort();
      await running;
    };
    return { informer, registration, seen, stop };
  }

  it('fills its cache from the initial list and then delivers a create, an update and a delete in order', async () => {
    const namespace = await namespaceWith('before-1', 'before-2');
    const { informer, seen, stop } = await startInformer(namespace);
    try {
      await seen.until((events) => events.length >= 2);
      expect(seen.events.slice(0, 2).sort()).toEqual([
        ['add', 'before-1', '1', true],
        ['add', 'before-2', '1', true],
      ]);
      expect(informer.getStore().listKeys().sort()).toEqual([`${namespace}/before-1`, `${namespace}/before-2`]);
      expect(Number(informer.lastSyncResourceVersion())).toBeGreaterThan(0);

      const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'during' }, data: { v: '1' } } });
      await core.replaceNamespacedConfigMap({ name: 'during', namespace, body: { ...created, data: { v: '2' } } });
      await core.deleteNamespacedConfigMap({ name: 'during', namespace });
      await seen.until((events) => events.some(([kind]) => kind === 'delete'));

      expect(seen.events.slice(2)).toEqual([
        ['add', 'during', '1', false],
        ['update', 'during', '2'],
        ['delete', 'during', undefined],
      ]);
      expect(informer.getStore().getByKey(`${namespace}/during`)).toBeUndefined();
    } finally {
      await stop();
    }
    expect(informer.isStopped()).toBe(true);
  });

  it('syncs through a streaming list (sendInitialEvents) when the reflector is asked to use watch list', async () => {
    const namespace = await namespaceWith('streamed-1', 'streamed-2', 'streamed-3');
    const { informer, registration, seen, stop } = await startInformer(namespace, { reflector: { useWatchList: true } });
    try {
      await seen.until((events) => events.length >= 3);
      expect(seen.events.map(([kind, name, , initial]) => [kind, name, initial]).sort()).toEqual([
        ['add', 'streamed-1', true],
        ['add', 'streamed-2', true],
        ['add', 'streamed-3', true],
      ]);
      expect(registration.hasSynced()).toBe(true);

      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'after' }, data: { v: '1' } } });
      await seen.until((events) => events.some(([, name]) => name === 'after'));
      expect(seen.events.at(-1)).toEqual(['add', 'after', '1', false]);
      expect(informer.getStore().listKeys()).toHaveLength(4);
    } finally {
      await stop();
    }
  });

  it('keeps two informers on the same server independent: stopping one leaves the other delivering', async () => {
    const namespace = await namespaceWith('shared');
    const first = await startInformer(namespace);
    const second = await startInformer(namespace);
    try {
      await first.stop();
      const current = await core.readNamespacedConfigMap({ name: 'shared', namespace });
      await core.replaceNamespacedConfigMap({ name: 'shared', namespace, body: { ...current, data: { v: '2' } } });
      await second.seen.until((events) => events.some(([kind]) => kind === 'update'));
      expect(second.seen.events.at(-1)).toEqual(['update', 'shared', '2']);
      expect(first.seen.events.map(([kind]) => kind)).toEqual(['add']);
      expect((second.informer.getStore().getByKey(`${namespace}/shared`) as V1ConfigMap | undefined)?.data?.v).toBe('2');
    } finally {
      await second.stop();
    }
  });
});
