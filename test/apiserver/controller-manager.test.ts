// kube-controller-manager beside the real apiserver: its controllers act on what a test writes.
//
// One namespace with a Deployment (3 replicas) and a Service selecting its pods. The deployment
// controller makes a ReplicaSet, the replicaset controller makes 3 Pods (they stay Pending: there is no
// scheduler and no kubelet), the endpointslice controller makes a slice for the Service. Scaling to 1
// leaves 1 Pod. Deleting the namespace hands its contents to the namespace controller and the garbage
// collector, and then the namespace itself goes. Everything is observed through our own informers,
// and every wait is bounded and wakes on the informers' events, never on a timer.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Service } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import {
  ApiStatusError,
  NamespaceIndex,
  newResourceClient,
  resources,
  SharedInformerFactory,
  type ResourceClient,
  type SharedIndexInformer,
  type SharedInformerRegistration,
} from '../../src/index.js';
import { processRunning, startRealApiServer, type RealApiServer } from './harness.js';

const NS = 'kcm-smoke';
const APP = 'web';

const running = processRunning;

/** What {@link until} needs of an informer, whatever its object type. */
interface Notifier {
  addEventHandler(handler: { onAdd: () => void; onUpdate: () => void; onDelete: () => void }): SharedInformerRegistration;
  removeEventHandler(registration: SharedInformerRegistration): void;
}

/**
 * Resolves once `holds()` is true, re-checking it on every notification of the given informers (the
 * store is updated before its handlers run). Rejects after `timeoutMs` with `what` and `state()`.
 */
async function until(
  informers: readonly Notifier[],
  what: string,
  holds: () => boolean,
  state: () => unknown,
  timeoutMs = 90_000,
): Promise<void> {
  if (holds()) return;
  const registrations: Array<[Notifier, SharedInformerRegistration]> = [];
  let deadline: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (holds()) resolve();
      };
      for (const informer of informers) {
        registrations.push([informer, informer.addEventHandler({ onAdd: check, onUpdate: check, onDelete: check })]);
      }
      deadline = setTimeout(() => reject(new Error(`not true after ${timeoutMs} ms: ${what}; now ${JSON.stringify(state())}`)), timeoutMs);
      check();
    });
  } finally {
    clearTimeout(deadline);
    for (const [informer, registration] of registrations) informer.removeEventHandler(registration);
  }
}

function deployment(replicas: number): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: APP, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: APP } },
      template: { metadata: { labels: { app: APP } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } },
    },
  };
}

function service(): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: APP, namespace: NS }, spec: { selector: { app: APP }, ports: [{ port: 80 }] } };
}

describe('kube-controller-manager beside the real apiserver', () => {
  let server: RealApiServer;
  let factory: SharedInformerFactory;
  const stop = new AbortController();
  let factoryRun: Promise<void> | undefined;
  let namespaces: ResourceClient<unknown>;
  let deployments: ResourceClient<Deployment>;
  let services: ResourceClient<Service>;

  beforeAll(async () => {
    server = await startRealApiServer({ controllerManager: true });
    factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    for (const r of [resources.namespaces, resources.deployments, resources.replicasets, resources.pods, resources.endpointslices]) {
      factory.forResource<unknown>(r);
    }
    factoryRun = factory.run(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    namespaces = newResourceClient<unknown>(server.kubeConfig, resources.namespaces);
    deployments = newResourceClient(server.kubeConfig, resources.deployments, { fieldManager: 'kcm-test' });
    services = newResourceClient(server.kubeConfig, resources.services, { fieldManager: 'kcm-test' });
  });

  afterAll(async () => {
    stop.abort();
    await factoryRun;
    namespaces?.close();
    deployments?.close();
    services?.close();
    if (!server) return;
    const { pids, dir } = server;
    await server.stop();
    // The controller manager stops with the rest, and nothing of the run is left behind.
    expect([pids.controllerManager, pids.apiServer, pids.etcd, pids.script].map(running)).toEqual([false, false, false, false]);
    expect(existsSync(dir)).toBe(false);
  });

  /** On a failure, the controller manager's log says what its controllers did (or could not do). */
  function printLogOnFailure(): void {
    onTestFailed(() => {
      const log = join(server.dir, 'kube-controller-manager.log');
      if (existsSync(log)) console.error(`--- last lines of ${log}:\n${readFileSync(log, 'utf8').split('\n').slice(-80).join('\n')}`);
    });
  }

  /** The cached objects of one resource in the test's namespace. */
  function inNamespace<T>(informer: SharedIndexInformer<T>): T[] {
    return informer.getIndexer().byIndex(NamespaceIndex, NS) as T[];
  }

  it('runs as its own process, healthy, beside etcd and kube-apiserver', () => {
    expect(server.pids.controllerManager).toBeGreaterThan(0);
    expect(running(server.pids.controllerManager)).toBe(true);
  });

  it('a Deployment of 3 becomes a ReplicaSet and 3 Pods, a Service gets an EndpointSlice, scaling to 1 leaves 1 Pod', async () => {
    printLogOnFailure();
    const rsInformer = factory.forResource(resources.replicasets);
    const podInformer = factory.forResource(resources.pods);
    const sliceInformer = factory.forResource(resources.endpointslices);

    await namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const created = await deployments.create(deployment(3));
    await services.create(service());

    // The deployment controller: one ReplicaSet owned by the Deployment, asking for 3.
    const ownedBy = (refs: ReadonlyArray<{ uid?: string; controller?: boolean }> | undefined, uid: string | undefined): boolean =>
      (refs ?? []).some((ref) => ref.uid === uid && ref.controller === true);
    const replicaSets = () => inNamespace(rsInformer).filter((rs) => ownedBy(rs.metadata?.ownerReferences, created.metadata?.uid));
    const pods = () => inNamespace(podInformer);
    const summary = () => ({
      replicaSets: replicaSets().map((rs) => `${rs.metadata?.name} spec=${rs.spec?.replicas} status=${rs.status?.replicas}`),
      pods: pods().map((p) => `${p.metadata?.name} ${p.status?.phase ?? '-'}${p.metadata?.deletionTimestamp ? ' deleting' : ''}`),
      slices: inNamespace(sliceInformer).map((s) => s.metadata?.name),
    });
    await until([rsInformer], 'a ReplicaSet owned by the Deployment, for 3 replicas', () => replicaSets().length === 1 && replicaSets()[0]!.spec?.replicas === 3, summary);
    const rs = replicaSets()[0]!;

    // The replicaset controller: 3 Pods owned by that ReplicaSet, Pending with no scheduler or kubelet.
    await until([podInformer], '3 Pods owned by the ReplicaSet', () => pods().filter((p) => ownedBy(p.metadata?.ownerReferences, rs.metadata?.uid)).length === 3, summary);
    for (const pod of pods()) {
      expect(pod.metadata?.labels?.app).toBe(APP);
      expect(pod.spec?.nodeName ?? '').toBe('');
      expect(pod.status?.phase).toBe('Pending');
    }
    await until([rsInformer], 'the ReplicaSet reporting 3 replicas', () => replicaSets()[0]?.status?.replicas === 3, summary);

    // The endpointslice controller: a slice labelled with the Service's name (no endpoints: no pod has an IP).
    const slices = () => inNamespace(sliceInformer).filter((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === APP);
    await until([sliceInformer], 'an EndpointSlice for the Service', () => slices().length >= 1, summary);
    expect(slices()[0]!.metadata?.labels?.['endpointslice.kubernetes.io/managed-by']).toBe('endpointslice-controller.k8s.io');

    // Scale to 1: the replicaset controller deletes two Pods (unscheduled pods go at once, no grace period).
    await deployments.patch(APP, NS, { spec: { replicas: 1 } }, 'merge');
    await until([rsInformer], 'the ReplicaSet scaled to 1', () => replicaSets()[0]?.spec?.replicas === 1, summary);
    await until([podInformer], '1 Pod left', () => pods().length === 1, summary);
    expect(replicaSets()).toHaveLength(1); // a scale is not a rollout: still the same ReplicaSet
    expect(replicaSets()[0]!.metadata?.uid).toBe(rs.metadata?.uid);
  }, 180_000);

  it('deleting the namespace removes everything in it, then the namespace', async () => {
    printLogOnFailure();
    const informers = [resources.namespaces, resources.deployments, resources.replicasets, resources.pods, resources.endpointslices].map((r) =>
      factory.forResource<unknown>(r),
    );
    const nsInformer = factory.forResource(resources.namespaces);
    const left = () => ({
      namespace: nsInformer.getIndexer().getByKey(NS)?.status?.phase ?? 'gone',
      deployments: inNamespace(factory.forResource(resources.deployments)).length,
      replicaSets: inNamespace(factory.forResource(resources.replicasets)).length,
      pods: inNamespace(factory.forResource(resources.pods)).length,
      slices: inNamespace(factory.forResource(resources.endpointslices)).length,
    });
    expect(left().namespace).toBe('Active');
    expect(left().deployments).toBe(1);

    await namespaces.delete(NS);
    await until(informers, 'the namespace and everything in it gone', () => JSON.stringify(left()) === JSON.stringify({ namespace: 'gone', deployments: 0, replicaSets: 0, pods: 0, slices: 0 }), left);

    // The server agrees with the caches: the namespace is really gone.
    const err: unknown = await namespaces.get(NS).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiStatusError);
    expect((err as ApiStatusError).statusCode).toBe(404);
  }, 180_000);
});
