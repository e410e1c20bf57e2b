// The network-policy controller: three informers, one work queue, rules computed only from listers.
//
// Not run on its own: `npm run demo` (examples/demo.ts) or `npx tsx examples/network-policy/main.ts`.

import { RateLimitingQueue, defaultControllerRateLimiter } from '../../src/workqueue/index.js';
import {
  DeletedFinalStateUnknown,
  resources,
  type KubeObject,
  type DeepReadonly,
  type SharedIndexInformer,
  type SharedInformerFactory,
} from '../../src/index.js';
import { computeNamespaceRules, selectsPeerNamespace, type ClusterView, type Namespace, type NetworkPolicy, type Pod, type Rule } from './rules.js';
import { runInformersAndWorkers } from '../lib/run-controller.js';

/** Options of {@link NetworkPolicyController}. */
export interface NetworkPolicyControllerOptions {
  /** Concurrent reconcile workers. Default 2. */
  workers?: number;
  /** Retries of a failing reconcile (rate-limited) before the namespace is dropped and `onError` told. Default 5. */
  maxRetries?: number;
  /** Called after each successful reconcile of a namespace; must not throw. Default: none. */
  onReconcile?: (namespace: string, rules: readonly Rule[]) => void;
  /** Told about a reconcile that failed `maxRetries` times. Default: `console.error`. */
  onError?: (namespace: string, err: unknown) => void;
}

/** The three resources the controller watches. */
export const NETWORK_POLICY_RESOURCES = {
  namespaces: resources.namespaces,
  pods: resources.pods,
  policies: resources.networkpolicies,
} as const;

/** Index of the policies informer: policies whose peers may live in other namespaces. */
export const CROSS_NAMESPACE_INDEX = 'crossNamespace';

/** Counters of a {@link NetworkPolicyController}, for progress lines and summaries. */
export interface NetworkPolicyControllerStats {
  /** Handler notifications received, per informer. */
  events: { namespaces: number; pods: number; policies: number };
  /** Reconciles that completed. */
  reconciles: number;
  /** Reconciles that threw (each retried, up to `maxRetries`). */
  failures: number;
  /** Namespaces waiting in the queue now. */
  queueDepth: number;
  /** The deepest the queue has been. */
  maxQueueDepth: number;
  /** Rules computed now, over all namespaces. */
  rules: number;
}

const unwrap = <T>(obj: T | DeletedFinalStateUnknown<T>): T => (obj instanceof DeletedFinalStateUnknown ? obj.obj : obj);
const namespaceOf = (obj: unknown): string => (unwrap(obj) as KubeObject | undefined)?.metadata?.namespace ?? '';
const nameOf = (obj: unknown): string => (unwrap(obj) as KubeObject | undefined)?.metadata?.name ?? '';

/**
 * Keeps {@link NetworkPolicyController.rules} equal to what the cluster's namespaces, pods and network
 * policies imply. Event handlers only put namespace *names* in the queue; a worker recomputes a
 * namespace's rules from the listers alone (level-triggered). So a missed, merged or reordered event
 * never leaves stale state, and nothing holds an object past its delete: the weave-npc crash (a
 * namespace pointer used after the namespace's delete handler ran) cannot happen, because there is no
 * such pointer — a namespace that is gone from the lister simply has no rules.
 */
export class NetworkPolicyController {
  /** The work queue of namespace names. */
  readonly queue: RateLimitingQueue<string>;
  /** The namespaces informer (shared through the factory). */
  readonly namespaces: SharedIndexInformer<Namespace>;
  /** The pods informer (shared through the factory). */
  readonly pods: SharedIndexInformer<Pod>;
  /** The network policies informer (shared through the factory). */
  readonly policies: SharedIndexInformer<NetworkPolicy>;
  readonly #factory: SharedInformerFactory;
  readonly #options: NetworkPolicyControllerOptions;
  readonly #rules = new Map<string, readonly Rule[]>();
  readonly #events = { namespaces: 0, pods: 0, policies: 0 };
  #reconciles = 0;
  #failures = 0;
  #maxQueueDepth = 0;
  #running = false;

  /** Registers the three informers on `factory` (they start with the controller's {@link run}). */
  constructor(factory: SharedInformerFactory, options: NetworkPolicyControllerOptions = {}) {
    this.#factory = factory;
    this.#options = options;
    this.queue = new RateLimitingQueue<string>({ rateLimiter: defaultControllerRateLimiter<string>(), name: 'network-policy' });
    this.namespaces = factory.forResource(NETWORK_POLICY_RESOURCES.namespaces);
    this.pods = factory.forResource(NETWORK_POLICY_RESOURCES.pods);
    this.policies = factory.forResource(NETWORK_POLICY_RESOURCES.policies);
    this.policies.addIndexers({
      [CROSS_NAMESPACE_INDEX]: (p) => (p.spec?.ingress?.some((i) => i.from?.some((f) => f.namespaceSelector !== undefined)) ? ['yes'] : []),
    });

    // A namespace change (its labels, or its existence) may change the peers of every policy that
    // selects peers by namespace labels. A pod change affects its own namespace, and the namespaces of
    // those policies whose namespaceSelector matches the pod's namespace now. (If the labels change
    // too, the namespace's own event queues them: whichever of the two comes second sees both.)
    const crossNamespacePolicies = (): ReadonlyArray<DeepReadonly<NetworkPolicy>> => this.policies.getIndexer().byIndex(CROSS_NAMESPACE_INDEX, 'yes');
    const namespaceChanged = (namespace: string): void => {
      this.#enqueue(namespace);
      for (const p of crossNamespacePolicies()) this.#enqueue(p.metadata?.namespace ?? '');
    };
    const podChanged = (namespace: string): void => {
      this.#enqueue(namespace);
      const ns = this.namespaces.lister().get(namespace);
      if (ns === undefined) return; // gone: its pods are nobody's peers any more (its delete queued those)
      for (const p of crossNamespacePolicies()) if (selectsPeerNamespace(p, ns.metadata?.labels)) this.#enqueue(p.metadata?.namespace ?? '');
    };
    this.namespaces.addEventHandler(
      {
        onAdd: (o) => this.#count('namespaces', () => namespaceChanged(nameOf(o))),
        onUpdate: (_o, n) => this.#count('namespaces', () => namespaceChanged(nameOf(n))),
        onDelete: (o) => this.#count('namespaces', () => namespaceChanged(nameOf(o))),
      },
      { name: 'network-policy' },
    );
    this.pods.addEventHandler(
      {
        onAdd: (o) => this.#count('pods', () => podChanged(namespaceOf(o))),
        onUpdate: (_o, n) => this.#count('pods', () => podChanged(namespaceOf(n))),
        onDelete: (o) => this.#count('pods', () => podChanged(namespaceOf(o))),
      },
      { name: 'network-policy' },
    );
    this.policies.addEventHandler(
      {
        onAdd: (o) => this.#count('policies', () => this.#enqueue(namespaceOf(o))),
        onUpdate: (_o, n) => this.#count('policies', () => this.#enqueue(namespaceOf(n))),
        onDelete: (o) => this.#count('policies', () => this.#enqueue(namespaceOf(o))),
      },
      { name: 'network-policy' },
    );
  }

  /** The computed rules by namespace (namespaces without policies are absent). A live view: do not modify. */
  get rules(): ReadonlyMap<string, readonly Rule[]> {
    return this.#rules;
  }

  /** The cluster as the informers' caches see it. */
  view(): ClusterView {
    return {
      namespaces: () => this.namespaces.lister().list(),
      pods: (ns) => this.pods.lister().namespace(ns).list(),
      policies: (ns) => this.policies.lister().namespace(ns).list(),
    };
  }

  /** Counters for progress lines and summaries. */
  stats(): NetworkPolicyControllerStats {
    let rules = 0;
    for (const r of this.#rules.values()) rules += r.length;
    return {
      events: { ...this.#events },
      reconciles: this.#reconciles,
      failures: this.#failures,
      queueDepth: this.queue.len(),
      maxQueueDepth: this.#maxQueueDepth,
      rules,
    };
  }

  /**
   * Resolves once the controller has caught up with what its informers received: every handler's
   * backlog is empty and the queue is idle (nothing queued, in flight or waiting for a retry). Checks
   * between event-loop turns; new events may of course arrive right after.
   */
  async idle(): Promise<void> {
    const handlersIdle = (): boolean =>
      [this.namespaces, this.pods, this.policies].every((i) =>
        i.health().handlers.every((h) => h.backlog === 0 && h.inFlightMs === undefined),
      );
    for (;;) {
      await this.queue.onIdle();
      if (handlersIdle() && this.queue.len() === 0) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Starts the informers, waits for their caches, then runs the workers until `signal` aborts.
   * Resolves after a clean stop (informers stopped, workers finished); rejects with the informers'
   * first failure (a handler error stops everything, by design). Runs once.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error('NetworkPolicyController.run was already called');
    this.#running = true;
    await runInformersAndWorkers(this.#factory, this.queue, this.#options.workers ?? 2, () => this.#worker(), signal);
  }

  #count(kind: 'namespaces' | 'pods' | 'policies', enqueue: () => void): void {
    this.#events[kind]++;
    enqueue();
  }

  #enqueue(namespace: string): void {
    if (namespace === '') return;
    this.queue.add(namespace);
    const depth = this.queue.len();
    if (depth > this.#maxQueueDepth) this.#maxQueueDepth = depth;
  }

  async #worker(): Promise<void> {
    for (;;) {
      const { item: ns, shutdown } = await this.queue.get();
      if (shutdown) return;
      try {
        this.#reconcile(ns);
        this.queue.forget(ns);
      } catch (err) {
        this.#failures++;
        if (this.queue.numRequeues(ns) < (this.#options.maxRetries ?? 5)) {
          this.queue.addRateLimited(ns);
        } else {
          this.queue.forget(ns);
          (this.#options.onError ?? ((n, e) => console.error(`network-policy: giving up on ${n}:`, e)))(ns, err);
        }
      } finally {
        this.queue.done(ns);
      }
    }
  }

  #reconcile(namespace: string): void {
    const rules = computeNamespaceRules(this.view(), namespace);
    if (rules.length > 0) this.#rules.set(namespace, rules);
    else this.#rules.delete(namespace);
    this.#reconciles++;
    this.#options.onReconcile?.(namespace, rules);
  }
}
