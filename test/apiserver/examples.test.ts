// The example controllers on the real kube-apiserver: network-policy and endpoints converge under churn.
//
// Each controller runs against the server with a seeded churn workload; after the workload stops and
// the controller is idle, its output must equal what the server's own state implies (listed over HTTP,
// no cache). Nothing else runs on this control plane: pods get no node and no IP unless the test
// writes one through the status subresource, as a kubelet would; namespaces never finish terminating.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinationV1Api, CoreV1Api, VersionApi, type V1Endpoints, type V1Pod, type V1Service } from '@kubernetes/client-node';
// client-node's ObjectSerializer (not a root export in 1.4 or 2.0): its model objects back to wire JSON.
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import type { Pod, Service } from 'kubernetes-types/core/v1.js';
import {
  SharedInformerFactory,
  newListWatch,
  parseLabelSelector,
  stripManagedFields,
  type KubeObject,
  type ListOptions,
  type ListerWatcher,
  type ObjectList,
  type WatchEvent,
} from '../../src/index.js';
import { seededRandom } from '../../src/testing/index.js';
import { checkConsistency } from '../../examples/network-policy/consistency.js';
import { NetworkPolicyController } from '../../examples/network-policy/controller.js';
import { ChurnWorkload } from '../../examples/network-policy/workload.js';
import { EndpointsController, MANAGED_BY_LABEL, SELECTOR_ANNOTATION, desiredEndpoints } from '../../examples/endpoints/controller.js';
import { runLeaderElectedEndpoints } from '../../examples/endpoints/main.js';
import { EventRecorder, startRealApiServer, type RealApiServer } from './harness.js';

/** The part of Endpoints a controller decides, comparable as a string. */
const endpointsText = (e: V1Endpoints | undefined): string =>
  JSON.stringify(
    (e?.subsets ?? []).map((s) => ({
      addresses: (s.addresses ?? []).map((a) => `${a.ip}=${a.targetRef?.name}`),
      ports: (s.ports ?? []).map((p) => `${p.name}:${p.port}/${p.protocol}`),
    })),
  );

/**
 * Repeats `check` (after `idle()`) until it reports no difference or `timeoutMs` passed; resolves with
 * the last difference (`undefined` = converged). A watch delivers a write a moment after it happened,
 * so only a difference that persists counts.
 */
async function converge(idle: () => Promise<void>, check: () => Promise<string | undefined>, timeoutMs = 20_000): Promise<string | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    await idle();
    const difference = await check();
    if (difference === undefined || performance.now() > deadline) return difference;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A real ListerWatcher whose watch events the test can hold back: while `hold(predicate)` is in force,
 * the first event matching it (and everything after it on that stream) waits until `release()`.
 * `delivered` records `<TYPE> <name>` once the consumer has taken an event and asked for the next.
 */
class HeldWatch<T extends KubeObject> implements ListerWatcher<T> {
  readonly delivered = new EventRecorder<string>();
  readonly #inner: ListerWatcher<T>;
  #holds: (event: WatchEvent<T>) => boolean = () => false;
  #gate: Promise<void> = Promise.resolve();
  #open: () => void = () => undefined;

  constructor(inner: ListerWatcher<T>) {
    this.#inner = inner;
  }

  hold(predicate: (event: WatchEvent<T>) => boolean): void {
    this.#holds = predicate;
    this.#gate = new Promise((resolve) => (this.#open = resolve));
  }

  release(): void {
    this.#holds = () => false;
    this.#open();
  }

  list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    return this.#inner.list(options, signal);
  }

  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    const inner = await this.#inner.watch(options, signal);
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) {
          if (self.#holds(event)) await self.#gate;
          yield event;
          self.delivered.record(`${event.type} ${event.object.metadata?.name ?? ''}`);
        }
      },
    };
  }
}

/**
 * The leader-elected endpoints controller under a seeded churn of pods and services: at the end every
 * managed Endpoints equals desiredEndpoints of the server's pods, none outlives its Service, and the
 * unmanaged one is untouched. Run on a bare apiserver and on one with kube-controller-manager.
 */
async function endpointsChurn(server: RealApiServer, core: CoreV1Api): Promise<void> {
  const seed = 77;
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const namespace = `ki-ep-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } }).catch((err: unknown) => {
    if ((err as { code?: number }).code !== 409) throw err; // kube-controller-manager made it already
  });
  // Endpoints nobody manages (no selector annotation on their service): the controller must leave them.
  await core.createNamespacedService({ namespace, body: { metadata: { name: 'legacy' }, spec: { ports: [{ port: 80 }] } } });
  await core.createNamespacedEndpoints({ namespace, body: { metadata: { name: 'legacy' }, subsets: [{ addresses: [{ ip: '192.168.0.1' }], ports: [{ port: 80 }] }] } });

  const apps = ['web', 'api', 'db'];
  const service = (name: string, app: string): V1Service => ({
    metadata: { name, annotations: { [SELECTOR_ANNOTATION]: `app=${app}` } },
    spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  await core.createNamespacedService({ namespace, body: service('web', 'web') });

  const controllers: EndpointsController[] = [];
  let leading!: (controller: EndpointsController) => void;
  const firstTerm = new Promise<EndpointsController>((resolve) => (leading = resolve));
  const log: string[] = [];
  const stop = new AbortController();
  const running = runLeaderElectedEndpoints(stop.signal, {
    kubeConfig: server.kubeConfig,
    identity: 'replica-1',
    leaseNamespace: namespace,
    election: { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 400 },
    log: (line) => log.push(line),
    onController: (c) => {
      controllers.push(c);
      leading(c);
    },
  });

  // The churn: pods come up (created, then given an IP through the status subresource, like a kubelet
  // would), get relabelled and deleted; services are created, retargeted and deleted. Note that
  // kube-apiserver itself deletes a Service's Endpoints when the Service is deleted (the fake server
  // does not): the controller sees that DELETE on its endpoints watch, possibly before the Service's
  // own DELETE reaches its services lister.
  const pods = new Set<string>();
  const services = new Set<string>(['web']);
  let next = 0;
  const ip = (): string => `10.1.${Math.floor(next / 250)}.${(next % 250) + 1}`;
  const operations: Array<[number, () => Promise<unknown>]> = [
    [6, async () => {
      const name = `pod-${next++}`;
      const podIP = ip();
      await core.createNamespacedPod({ namespace, body: { metadata: { name, labels: { app: pick(apps) } }, spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } } as V1Pod });
      pods.add(name);
      await core.patchNamespacedPodStatus({
        name,
        namespace,
        body: [
          { op: 'add', path: '/status/phase', value: 'Running' },
          { op: 'add', path: '/status/podIP', value: podIP },
          { op: 'add', path: '/status/podIPs', value: [{ ip: podIP }] },
        ],
      });
    }],
    [3, async () => {
      if (pods.size === 0) return;
      const name = pick([...pods]);
      pods.delete(name);
      await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    }],
    [3, async () => {
      if (pods.size === 0) return;
      await core.patchNamespacedPod({ name: pick([...pods]), namespace, body: [{ op: 'add', path: '/metadata/labels/app', value: pick(apps) }] });
    }],
    [1, async () => {
      const name = `svc-${next++}`;
      await core.createNamespacedService({ namespace, body: service(name, pick(apps)) });
      services.add(name);
    }],
    [1, async () => {
      if (services.size === 0) return;
      const name = pick([...services]);
      await core.patchNamespacedService({ name, namespace, body: [{ op: 'add', path: `/metadata/annotations/${SELECTOR_ANNOTATION.replace('/', '~1')}`, value: `app=${pick(apps)}` }] });
    }],
    [1, async () => {
      if (services.size <= 1) return;
      const name = pick([...services]);
      services.delete(name);
      log.push(`test: deleting service ${namespace}/${name}`);
      await core.deleteNamespacedService({ name, namespace });
    }],
  ];
  const total = operations.reduce((sum, [weight]) => sum + weight, 0);

  try {
    const controller = await firstTerm;
    for (let i = 0; i < 80; i++) {
      let r = random() * total;
      for (const [weight, op] of operations) {
        r -= weight;
        if (r < 0) {
          await op();
          break;
        }
      }
    }

    // The server's own state: every managed service's Endpoints must be desiredEndpoints of the
    // server's pods; no managed Endpoints may outlive their service; the legacy ones are untouched.
    const difference = await converge(
      () => controller.queue.onIdle(),
      async () => {
        const [svcList, podList, epList] = await Promise.all([
          core.listNamespacedService({ namespace }),
          core.listNamespacedPod({ namespace }),
          core.listNamespacedEndpoints({ namespace }),
        ]);
        const endpoints = new Map(epList.items.map((e) => [e.metadata!.name!, e]));
        for (const svc of svcList.items) {
          const selectorText = svc.metadata?.annotations?.[SELECTOR_ANNOTATION];
          const current = endpoints.get(svc.metadata!.name!);
          endpoints.delete(svc.metadata!.name!);
          if (selectorText === undefined) continue;
          const selector = parseLabelSelector(selectorText);
          const selected = podList.items.filter((p) => selector.matches(p.metadata?.labels ?? {}));
          // client-node's typed lists hold its model classes (Date timestamps): back to the JSON the controller reads.
          const wireService: Service = ObjectSerializer.serialize(svc, 'V1Service');
          const wirePods: Pod[] = selected.map((p) => ObjectSerializer.serialize(p, 'V1Pod'));
          const want = endpointsText(desiredEndpoints(wireService, wirePods, 'kube-informer-example'));
          const got = current === undefined ? 'none' : endpointsText(current);
          if (want !== got) return `service ${svc.metadata!.name} (${selectorText}): expected ${want}, server has ${got}`;
        }
        const orphans = [...endpoints.keys()];
        if (orphans.length > 0) return `Endpoints without a service: ${orphans.join(', ')}`;
        return undefined;
      },
    );
    // On failure, the controller's writes for the first service named in the difference.
    const culprit = difference?.match(/(?:service:? )([\w-]+)/)?.[1];
    const history = log.filter((line) => culprit !== undefined && (line.endsWith(`/${culprit}`) || line.includes(`/${culprit} `)));
    expect(difference, `seed ${seed}; writes for ${culprit}: ${history.join('; ')}`).toBeUndefined();

    const legacy = await core.readNamespacedEndpoints({ name: 'legacy', namespace });
    expect(legacy.metadata?.labels?.[MANAGED_BY_LABEL]).toBeUndefined();
    expect(legacy.subsets?.flatMap((sub) => sub.addresses?.map((a) => a.ip))).toEqual(['192.168.0.1']);
    const writes = controller.stats().writes;
    expect(writes.create).toBeGreaterThan(0);
    expect(writes.update).toBeGreaterThan(0);
    expect(controllers).toHaveLength(1);
  } finally {
    stop.abort();
    await running;
  }
  // Stopping released the Lease for the next replica.
  const lease = await server.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'kube-informer-endpoints-example', namespace });
  expect(lease.spec?.holderIdentity ?? '').toBe('');
  expect(log[0]).toBe('replica-1 is leading: starting the endpoints controller');
}

describe('the example controllers against the real kube-apiserver', () => {
  let server: RealApiServer;
  let core: CoreV1Api;

  beforeAll(async () => {
    server = await startRealApiServer();
    core = server.kubeConfig.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('keeps the network-policy rules equal to the rules of the server state through a churn of namespaces, pods and policies', async () => {
    const seed = 20_260_135;
    const workload = new ChurnWorkload({
      kubeConfig: server.kubeConfig,
      runId: randomBytes(3).toString('hex'),
      prefix: 'ki-np',
      seed,
      maxNamespaces: 4,
      maxPodsPerNamespace: 5,
      // One writer: the operations are then a function of the seed alone. (With two, one may create a
      // policy in a namespace the other is deleting, which a real server refuses as "being terminated".)
      writers: 1,
      // The workload deletes each namespace's pods and policies itself: no namespace controller here.
      cascade: 'client',
      // No controller-manager either, so nobody else creates the ServiceAccount pods need.
      createServiceAccount: true,
    });
    const factory = new SharedInformerFactory(server.kubeConfig, { labelSelector: workload.labelSelector, transform: stripManagedFields });
    const controller = new NetworkPolicyController(factory);
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    try {
      await factory.waitForCacheSync(stop.signal);
      let mostRules = 0;
      for (let round = 1; round <= 5; round++) {
        await workload.run(stop.signal, 30);
        const result = await checkConsistency({
          kubeConfig: server.kubeConfig,
          labelSelector: workload.labelSelector,
          rules: () => controller.rules,
          idle: () => controller.idle(),
          timeoutMs: 20_000,
        });
        expect(result.difference, `seed ${seed}, after round ${round}`).toBeUndefined();
        expect(result.passed).toBe(true);
        mostRules = Math.max(mostRules, result.rules);
      }
      const stats = workload.stats();
      expect(stats.failures, `seed ${seed}: ${stats.lastFailure}`).toBe(0);
      expect(stats.operations).toBe(150);
      expect(mostRules).toBeGreaterThan(0);
      for (const health of Object.values(factory.health())) {
        expect(health.counters.relists, health.name).toBe(0);
        expect(health.counters.regressions, health.name).toBe(0);
      }
    } finally {
      stop.abort();
      await running;
    }
  });

  it('keeps managed Endpoints equal to the selected pods on the server, under leader election on a real Lease', async () => {
    await endpointsChurn(server, core);
  });
  it('leaves no Endpoints behind when the apiserver deletes them with their Service before the Service delete reaches the controller', async () => {
    // The ordering the churn above can hit by chance, made deterministic: kube-apiserver deletes a
    // Service's Endpoints itself; the controller sees that DELETE while its services lister still has
    // the Service, so it writes the Endpoints again; the Service's DELETE then arrives before the new
    // Endpoints' ADDED. Converging needs the ADDED to trigger a reconcile that removes them.
    const namespace = `ki-ep-race-${randomBytes(3).toString('hex')}`;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    await core.createNamespacedService({
      namespace,
      body: { metadata: { name: 'doomed', annotations: { [SELECTOR_ANNOTATION]: 'app=web' } }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    });
    await core.createNamespacedPod({ namespace, body: { metadata: { name: 'web-1', labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } } });
    await core.patchNamespacedPodStatus({ name: 'web-1', namespace, body: [{ op: 'add', path: '/status/podIP', value: '10.2.0.1' }, { op: 'add', path: '/status/podIPs', value: [{ ip: '10.2.0.1' }] }] });

    const services = new HeldWatch<KubeObject>(newListWatch(server.kubeConfig, { group: '', version: 'v1', resource: 'services' }, { namespace }));
    const endpoints = new HeldWatch<KubeObject>(newListWatch(server.kubeConfig, { group: '', version: 'v1', resource: 'endpoints' }, { namespace }));
    const factory = new SharedInformerFactory(server.kubeConfig, {
      namespace,
      listWatchFor: (gvr) =>
        gvr.resource === 'services' ? services : gvr.resource === 'endpoints' ? endpoints : newListWatch(server.kubeConfig, gvr, { namespace }),
    });
    const writes = new EventRecorder<string>();
    const controller = new EndpointsController(factory, server.kubeConfig, { onWrite: (verb, key) => writes.record(`${verb} ${key}`) });
    /** Every handler has delivered its backlog and the queue is idle. */
    const settled = async (): Promise<void> => {
      for (;;) {
        await controller.queue.onIdle();
        const informers = [controller.services, controller.pods, controller.endpoints];
        if (informers.every((i) => i.health().handlers.every((h) => h.backlog === 0 && h.inFlightMs === undefined)) && controller.queue.len() === 0) return;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    };
    const key = `${namespace}/doomed`;
    const creates = (log: string[]): number => log.filter((w) => w === `create ${key}`).length;
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    try {
      await writes.until((log) => creates(log) === 1);
      await endpoints.delivered.until((log) => log.includes('ADDED doomed'));

      // kube-apiserver before 1.36 deleted a Service's Endpoints with it (the service storage's
      // AfterDelete); 1.36 dropped that, and then the controller's own delete is all there is.
      const minor = Number.parseInt((await server.kubeConfig.makeApiClient(VersionApi).getCode()).minor, 10);
      services.hold((e) => e.type === 'DELETED');
      endpoints.hold((e) => e.type === 'ADDED');
      await core.deleteNamespacedService({ name: 'doomed', namespace });
      if (minor < 36) {
        // The apiserver removed the Endpoints; with the Service still cached, the controller re-creates them.
        await endpoints.delivered.until((log) => log.includes('DELETED doomed'));
        await writes.until((log) => creates(log) === 2);
      }
      services.release();
      await services.delivered.until((log) => log.includes('DELETED doomed'));
      await settled();
      endpoints.release();
      if (minor < 36) await endpoints.delivered.until((log) => log.filter((e) => e === 'ADDED doomed').length === 2);

      const leftover = await converge(settled, async () => {
        const list = await core.listNamespacedEndpoints({ namespace });
        const names = list.items.map((e) => e.metadata?.name);
        return names.length === 0 ? undefined : `Endpoints still on the server: ${names.join(', ')}`;
      }, 10_000);
      expect(leftover, `controller writes: ${writes.events.join('; ')}`).toBeUndefined();
    } finally {
      stop.abort();
      await running;
    }
  });
});

describe('the endpoints example on a cluster with kube-controller-manager', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer({ controllerManager: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('keeps managed Endpoints equal to the selected pods while the real controllers run beside it', async () => {
    await endpointsChurn(server, server.kubeConfig.makeApiClient(CoreV1Api));
  });
});
