// The endpoints controller: services and pods in, Endpoints written through the API, decisions read only from listers.
//
// Not run on its own: `npx tsx examples/endpoints/main.ts` runs it under leader election.

import { CoreV1Api, type KubeConfig, type V1EndpointAddress, type CoreV1EndpointPort, type V1Endpoints } from '@kubernetes/client-node';
import type { Endpoints, Pod, Service } from 'kubernetes-types/core/v1.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../../src/workqueue/index.js';
import {
  deletionHandlingMetaNamespaceKeyFunc,
  DeletedFinalStateUnknown,
  parseLabelSelector,
  resources,
  splitMetaNamespaceKey,
  type DeepReadonly,
  type LabelSelector,
  type SharedIndexInformer,
  type SharedInformerFactory,
} from '../../src/index.js';
import { runInformersAndWorkers } from '../lib/run-controller.js';

/**
 * The annotation naming a service's pods (a label selector, `app=web`). The example manages only
 * services that carry it, and those should have no `spec.selector`: then kube-controller-manager leaves
 * their Endpoints alone, and the example can run on a real cluster without fighting it.
 */
export const SELECTOR_ANNOTATION = 'examples.kube-informer.dev/selector';
/** The label on Endpoints this controller wrote; it deletes no Endpoints without it. */
export const MANAGED_BY_LABEL = 'endpoints.kube-informer.dev/managed-by';

/** Options of {@link EndpointsController}. */
export interface EndpointsControllerOptions {
  /** Concurrent reconcile workers. Default 2. */
  workers?: number;
  /** The value of {@link MANAGED_BY_LABEL} on Endpoints it writes. Default `'kube-informer-example'`. */
  managedBy?: string;
  /** Retries of a failing reconcile (rate-limited) before the key is dropped and `onError` told. Default 5. */
  maxRetries?: number;
  /** Told about each write, for logs. Default: none. */
  onWrite?: (verb: 'create' | 'update' | 'delete', key: string, addresses: number) => void;
  /** Told about a key given up after `maxRetries`. Default: `console.error`. */
  onError?: (key: string, err: unknown) => void;
}

/** Counters of an {@link EndpointsController}. */
export interface EndpointsControllerStats {
  /** Reconciles run (successful or not). */
  reconciles: number;
  /** Endpoints created, updated and deleted through the API. */
  writes: { create: number; update: number; delete: number };
  /** Reconciles that threw. */
  failures: number;
}

const unwrap = <T>(obj: T | DeletedFinalStateUnknown<T>): T => (obj instanceof DeletedFinalStateUnknown ? obj.obj : obj);
const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
};

/** The pod selector of a managed service, or `undefined` when the service is not one of ours (or the annotation is invalid). */
export function serviceSelector(service: DeepReadonly<Service>): LabelSelector | undefined {
  const text = service.metadata?.annotations?.[SELECTOR_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    return parseLabelSelector(text);
  } catch {
    return undefined;
  }
}

/**
 * The Endpoints a service should have: the IPs of its selected pods that have one and are not being
 * deleted (sorted), and its ports (the numeric `targetPort`, else the `port`). Pure: a function of its
 * inputs only. The inputs are the caches' JSON objects; the result is a body for client-node's
 * `CoreV1Api`, hence its model type (built here, it has no server-set `Date` fields to lie about).
 */
export function desiredEndpoints(service: DeepReadonly<Service>, pods: ReadonlyArray<DeepReadonly<Pod>>, managedBy: string): V1Endpoints {
  const addresses: V1EndpointAddress[] = pods
    .filter((p) => p.status?.podIP !== undefined && p.metadata?.deletionTimestamp === undefined)
    .map((p) => ({ ip: p.status!.podIP!, targetRef: { kind: 'Pod', namespace: p.metadata?.namespace, name: p.metadata?.name } }))
    .sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
  const ports: CoreV1EndpointPort[] = (service.spec?.ports ?? []).map((p) => ({
    name: p.name,
    port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
    protocol: p.protocol ?? 'TCP',
  }));
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: service.metadata?.name, namespace: service.metadata?.namespace, labels: { [MANAGED_BY_LABEL]: managedBy } },
    subsets: addresses.length === 0 ? [] : [{ addresses, ports }],
  };
}

/** The part of Endpoints the controller owns, as a string for comparison. */
const fingerprint = (e: DeepReadonly<Endpoints> | V1Endpoints | undefined): string =>
  JSON.stringify({
    managed: e?.metadata?.labels?.[MANAGED_BY_LABEL],
    subsets: (e?.subsets ?? []).map((s) => ({
      addresses: (s.addresses ?? []).map((a) => [a.ip, a.targetRef?.name]),
      ports: (s.ports ?? []).map((p) => [p.name, p.port, p.protocol]),
    })),
  });

/**
 * client-go's endpoints controller in miniature. Handlers only queue `namespace/name` keys of services;
 * a worker reads the service, its pods and the current Endpoints from the listers and writes the
 * difference through the API (create, update with the cached resourceVersion, or delete).
 *
 * It deletes Endpoints only when the services lister says the service is gone. With client-go, a
 * watch DELETE replayed with an older resourceVersion (kubernetes #58545) could remove a live service
 * from the cache and make such a controller delete live Endpoints. Here the reflector rejects any event
 * older than what it holds and relists, so the lister never loses a live service that way.
 */
export class EndpointsController {
  /** The work queue of service keys. */
  readonly queue: RateLimitingQueue<string>;
  /** The services informer. */
  readonly services: SharedIndexInformer<Service>;
  /** The pods informer. */
  readonly pods: SharedIndexInformer<Pod>;
  /** The endpoints informer. */
  readonly endpoints: SharedIndexInformer<Endpoints>;
  readonly #factory: SharedInformerFactory;
  readonly #api: CoreV1Api;
  readonly #options: EndpointsControllerOptions;
  readonly #managedBy: string;
  readonly #stats: EndpointsControllerStats = { reconciles: 0, writes: { create: 0, update: 0, delete: 0 }, failures: 0 };
  #running = false;

  /** Registers the informers on `factory`; writes go through `kubeConfig`. */
  constructor(factory: SharedInformerFactory, kubeConfig: KubeConfig, options: EndpointsControllerOptions = {}) {
    this.#factory = factory;
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
    this.#options = options;
    this.#managedBy = options.managedBy ?? 'kube-informer-example';
    this.queue = new RateLimitingQueue<string>({ rateLimiter: defaultControllerRateLimiter<string>(), name: 'endpoints' });
    this.services = factory.forResource(resources.services);
    this.pods = factory.forResource(resources.pods);
    this.endpoints = factory.forResource(resources.endpoints);

    const enqueue = (obj: unknown): void => this.queue.add(deletionHandlingMetaNamespaceKeyFunc(obj));
    this.services.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n), onDelete: enqueue }, { name: 'endpoints' });
    // A pod matters to the services selecting it, before or after the change.
    const enqueueServicesOf = (...pods: Array<DeepReadonly<Pod> | DeletedFinalStateUnknown<DeepReadonly<Pod>>>): void => {
      for (const pod of pods.map(unwrap)) {
        const ns = pod.metadata?.namespace ?? '';
        for (const svc of this.services.lister().namespace(ns).list()) {
          if (serviceSelector(svc)?.matches(pod.metadata?.labels ?? {})) enqueue(svc);
        }
      }
    };
    this.pods.addEventHandler(
      { onAdd: (p) => enqueueServicesOf(p), onUpdate: (o, n) => enqueueServicesOf(o, n), onDelete: (p) => enqueueServicesOf(p) },
      { name: 'endpoints' },
    );
    // Someone else created, changed or deleted our Endpoints: put them right. onAdd matters too: an
    // Endpoints written while its Service's delete was still in flight appears in the cache after that
    // delete was handled, and only this enqueue gets it looked at again (found on a real kube-apiserver,
    // which deletes a Service's Endpoints itself).
    this.endpoints.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n), onDelete: enqueue }, { name: 'endpoints' });
  }

  /** Counters so far. */
  stats(): EndpointsControllerStats {
    return { ...this.#stats, writes: { ...this.#stats.writes } };
  }

  /**
   * Starts the informers, waits for their caches, runs the workers until `signal` aborts, and resolves
   * after a clean stop; rejects with the informers' first failure. Runs once.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error('EndpointsController.run was already called');
    this.#running = true;
    await runInformersAndWorkers(this.#factory, this.queue, this.#options.workers ?? 2, () => this.#worker(), signal);
  }

  async #worker(): Promise<void> {
    for (;;) {
      const { item: key, shutdown } = await this.queue.get();
      if (shutdown) return;
      try {
        await this.#reconcile(key);
        this.queue.forget(key);
      } catch (err) {
        this.#stats.failures++;
        if (this.queue.numRequeues(key) < (this.#options.maxRetries ?? 5)) {
          this.queue.addRateLimited(key);
        } else {
          this.queue.forget(key);
          (this.#options.onError ?? ((k, e) => console.error(`endpoints: giving up on ${k}:`, e)))(key, err);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }

  async #reconcile(key: string): Promise<void> {
    this.#stats.reconciles++;
    const { namespace, name } = splitMetaNamespaceKey(key);
    const service = this.services.lister().namespace(namespace).get(name);
    const current = this.endpoints.lister().namespace(namespace).get(name);
    const selector = service === undefined ? undefined : serviceSelector(service);
    if (service === undefined || selector === undefined) {
      // Not (or no longer) a managed service: remove Endpoints we wrote, leave anyone else's alone.
      if (current?.metadata?.labels?.[MANAGED_BY_LABEL] !== this.#managedBy) return;
      try {
        await this.#api.deleteNamespacedEndpoints({ name, namespace });
      } catch (err) {
        if (statusOf(err) !== 404) throw err;
      }
      this.#wrote('delete', key, 0);
      return;
    }
    const pods = this.pods.lister().namespace(namespace).list(selector);
    const desired = desiredEndpoints(service, pods, this.#managedBy);
    if (fingerprint(desired) === fingerprint(current)) return;
    const addresses = desired.subsets?.[0]?.addresses?.length ?? 0;
    if (current === undefined) {
      await this.#api.createNamespacedEndpoints({ namespace, body: desired });
      this.#wrote('create', key, addresses);
    } else {
      // The cached resourceVersion makes a concurrent change fail with 409; the retry reads the newer cache.
      const body: V1Endpoints = { ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion } };
      await this.#api.replaceNamespacedEndpoints({ name, namespace, body });
      this.#wrote('update', key, addresses);
    }
  }

  #wrote(verb: 'create' | 'update' | 'delete', key: string, addresses: number): void {
    this.#stats.writes[verb]++;
    this.#options.onWrite?.(verb, key, addresses);
  }
}
