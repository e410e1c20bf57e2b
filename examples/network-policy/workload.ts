// The churn workload of the demo: namespaces with pods and network policies created, relabelled and deleted in a loop, over HTTP.
//
// Not run on its own: `npm run demo` drives it. It only uses the Kubernetes API (client-node's CoreV1Api
// and NetworkingV1Api), so the same workload runs against the embedded fake or a real cluster.

import {
  CoreV1Api,
  NetworkingV1Api,
  type KubeConfig,
  type V1Namespace,
  type V1NetworkPolicy,
  type V1NetworkPolicyIngressRule,
  type V1Pod,
} from '@kubernetes/client-node';
import { realClock, sleep, type Clock } from '../../src/index.js';
import { seededRandom as prng } from '../../src/testing/index.js';
import type { ApiLabelSelector } from './rules.js';

/** The label on everything the workload creates; its value is the run id. */
export const RUN_LABEL = 'demo.kube-informer.dev/run';

/** Options of {@link ChurnWorkload}. */
export interface ChurnWorkloadOptions {
  /** Where to write. Required. */
  kubeConfig: KubeConfig;
  /** Identifies this run in names and in the {@link RUN_LABEL} label. Default: 6 random hex digits. */
  runId?: string;
  /** Namespace name prefix: namespaces are `<prefix>-<runId>-<n>`. Default `'ki-demo'`. */
  prefix?: string;
  /** Seed of the operation sequence: same seed, same operations. Default 1. */
  seed?: number;
  /** Most namespaces alive at once. Default 6. */
  maxNamespaces?: number;
  /** Most pods per namespace. Default 6. */
  maxPodsPerNamespace?: number;
  /** Most policies per namespace. Default 3. */
  maxPoliciesPerNamespace?: number;
  /**
   * How a namespace goes away. `'client'` (default): the workload deletes the namespace, *then* its
   * pods and policies — the events arrive in the order that crashed weave-npc, and it stands in for
   * the namespace controller a fake server lacks. `'server'`: only the namespace is deleted; a real
   * cluster's namespace controller removes the rest.
   */
  cascade?: 'client' | 'server';
  /**
   * Create the `default` ServiceAccount in each new namespace (ignoring "already exists"). Pod creation
   * needs it, and a control plane without kube-controller-manager (`scripts/apiserver/start.sh`) never
   * makes it. Default false.
   */
  createServiceAccount?: boolean;
  /** Image of the pods (they must be able to run on a real cluster). Default `registry.k8s.io/pause:3.10`. */
  podImage?: string;
  /**
   * Concurrent writers in {@link ChurnWorkload.run}, each issuing one request at a time. With more than
   * one, the sequence of operations depends on response timing, not only on the seed. Default 1.
   */
  writers?: number;
  /** Pause of each writer between operations in {@link ChurnWorkload.run}, in ms. Default 0. */
  pauseMs?: number;
  /** The clock of the pauses. Default `realClock`. */
  clock?: Clock;
}

/** Counters of a {@link ChurnWorkload}. */
export interface ChurnWorkloadStats {
  /** Operations attempted. */
  operations: number;
  /** Objects created. */
  creates: number;
  /** Objects patched (relabelled). */
  updates: number;
  /** Objects deleted. */
  deletes: number;
  /** Requests the server refused (a real cluster may: a namespace still terminating, say). */
  failures: number;
  /** Namespaces of this run alive now (as far as the workload knows). */
  namespaces: number;
  /** The last refusal, as `<status> <message>`, when there was one. */
  lastFailure: string | undefined;
}

interface NamespaceModel {
  pods: Set<string>;
  policies: Set<string>;
}

const APPS = ['web', 'db', 'cache'];
const TIERS = ['frontend', 'backend'];
const TEAMS = ['red', 'blue', 'green'];


const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
};

/** `<status> <message>` of a client-node ApiException (its body is the server's Status), else the error's message. */
function describeFailure(err: unknown): string {
  const body = (err as { body?: unknown } | null)?.body;
  let message = err instanceof Error ? err.message : String(err);
  if (typeof body === 'string') {
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? message;
    } catch {
      // Not a Status: keep the error's own message.
    }
  }
  const status = statusOf(err);
  return status === undefined ? message : `${status} ${message}`;
}

/**
 * Creates, relabels and deletes namespaces, pods and network policies at random (seeded), through the
 * API server, keeping a model of what it created so every operation makes sense. Everything it creates
 * carries `RUN_LABEL=<runId>`; {@link ChurnWorkload.cleanup} deletes it all.
 */
export class ChurnWorkload {
  /** This run's id. */
  readonly runId: string;
  /** Selects exactly the objects of this run: `demo.kube-informer.dev/run=<runId>`. */
  readonly labelSelector: string;
  readonly #core: CoreV1Api;
  readonly #net: NetworkingV1Api;
  readonly #o: Required<Omit<ChurnWorkloadOptions, 'kubeConfig' | 'runId'>>;
  readonly #random: () => number;
  readonly #model = new Map<string, NamespaceModel>();
  readonly #created = new Set<string>();
  readonly #stats = { operations: 0, creates: 0, updates: 0, deletes: 0, failures: 0 };
  #lastFailure: string | undefined;
  #next = 0;

  /** See {@link ChurnWorkloadOptions}. */
  constructor(options: ChurnWorkloadOptions) {
    this.runId = options.runId ?? Math.floor(Math.random() * 0xffffff).toString(16).padStart(6, '0');
    this.labelSelector = `${RUN_LABEL}=${this.runId}`;
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#net = options.kubeConfig.makeApiClient(NetworkingV1Api);
    this.#o = {
      prefix: options.prefix ?? 'ki-demo',
      seed: options.seed ?? 1,
      maxNamespaces: options.maxNamespaces ?? 6,
      maxPodsPerNamespace: options.maxPodsPerNamespace ?? 6,
      maxPoliciesPerNamespace: options.maxPoliciesPerNamespace ?? 3,
      cascade: options.cascade ?? 'client',
      createServiceAccount: options.createServiceAccount ?? false,
      podImage: options.podImage ?? 'registry.k8s.io/pause:3.10',
      writers: Math.max(1, options.writers ?? 1),
      pauseMs: options.pauseMs ?? 0,
      clock: options.clock ?? realClock,
    };
    this.#random = prng(this.#o.seed);
  }

  /** Counters so far. */
  stats(): ChurnWorkloadStats {
    return { ...this.#stats, namespaces: this.#model.size, lastFailure: this.#lastFailure };
  }

  /**
   * Runs operations with `writers` concurrent writers until `signal` aborts or `maxOperations`
   * (default: no limit) have started; resolves once every writer has finished its last request.
   */
  async run(signal: AbortSignal, maxOperations = Number.POSITIVE_INFINITY): Promise<void> {
    let started = 0;
    const writer = async (): Promise<void> => {
      while (started < maxOperations && !signal.aborted) {
        started++;
        await this.step();
        if (this.#o.pauseMs > 0 && !(await sleep(this.#o.clock, this.#o.pauseMs, signal))) return;
      }
    };
    await Promise.all(Array.from({ length: this.#o.writers }, writer));
  }

  /** One random operation, chosen among those that make sense now. Never rejects for a refused request. */
  async step(): Promise<void> {
    this.#stats.operations++;
    const o = this.#o;
    const namespaces = [...this.#model.keys()];
    const withPods = namespaces.filter((n) => this.#model.get(n)!.pods.size > 0);
    const withPolicies = namespaces.filter((n) => this.#model.get(n)!.policies.size > 0);
    const roomForPods = namespaces.filter((n) => this.#model.get(n)!.pods.size < o.maxPodsPerNamespace);
    const roomForPolicies = namespaces.filter((n) => this.#model.get(n)!.policies.size < o.maxPoliciesPerNamespace);
    const choices: Array<[number, () => Promise<void>]> = [
      [namespaces.length < o.maxNamespaces ? (namespaces.length < 2 ? 6 : 2) : 0, () => this.#createNamespace()],
      [namespaces.length >= 2 ? 1 : 0, () => this.#deleteNamespace(this.#pick(namespaces))],
      [namespaces.length > 0 ? 1 : 0, () => this.#relabelNamespace(this.#pick(namespaces))],
      [roomForPods.length > 0 ? 6 : 0, () => this.#createPod(this.#pick(roomForPods))],
      [withPods.length > 0 ? 3 : 0, () => this.#deletePod(this.#pick(withPods))],
      [withPods.length > 0 ? 2 : 0, () => this.#relabelPod(this.#pick(withPods))],
      [roomForPolicies.length > 0 ? 2 : 0, () => this.#createPolicy(this.#pick(roomForPolicies))],
      [withPolicies.length > 0 ? 1 : 0, () => this.#deletePolicy(this.#pick(withPolicies))],
    ];
    const total = choices.reduce((s, [w]) => s + w, 0);
    let r = this.#random() * total;
    for (const [weight, op] of choices) {
      if (weight === 0) continue;
      r -= weight;
      if (r < 0) return op();
    }
  }

  /**
   * Deletes every namespace this run created (and, with `cascade: 'client'`, their pods and policies).
   * On a real cluster the namespaces then terminate in the background.
   */
  async cleanup(): Promise<void> {
    for (const ns of [...this.#created]) await this.#deleteNamespace(ns);
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)]!;
  }

  #labels(extra: Record<string, string>): Record<string, string> {
    return { ...extra, [RUN_LABEL]: this.runId };
  }

  async #write(kind: 'creates' | 'updates' | 'deletes', request: () => Promise<unknown>): Promise<boolean> {
    try {
      await request();
      this.#stats[kind]++;
      return true;
    } catch (err) {
      if (kind === 'deletes' && statusOf(err) === 404) return true; // already gone: that is the goal
      this.#stats.failures++;
      this.#lastFailure = describeFailure(err);
      return false;
    }
  }

  async #createNamespace(): Promise<void> {
    const name = `${this.#o.prefix}-${this.runId}-${this.#next++}`;
    const body: V1Namespace = { metadata: { name, labels: this.#labels({ team: this.#pick(TEAMS) }) } };
    if (!(await this.#write('creates', () => this.#core.createNamespace({ body })))) return;
    this.#created.add(name);
    if (this.#o.createServiceAccount) {
      try {
        await this.#core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
      } catch (err) {
        if (statusOf(err) !== 409) this.#lastFailure = describeFailure(err);
      }
    }
    this.#model.set(name, { pods: new Set(), policies: new Set() });
  }

  async #deleteNamespace(namespace: string): Promise<void> {
    const model = this.#model.get(namespace);
    this.#model.delete(namespace);
    this.#created.delete(namespace);
    await this.#write('deletes', () => this.#core.deleteNamespace({ name: namespace }));
    if (this.#o.cascade !== 'client' || model === undefined) return;
    for (const pod of model.pods) {
      await this.#write('deletes', () => this.#core.deleteNamespacedPod({ name: pod, namespace, gracePeriodSeconds: 0 }));
    }
    for (const policy of model.policies) {
      await this.#write('deletes', () => this.#net.deleteNamespacedNetworkPolicy({ name: policy, namespace }));
    }
  }

  async #relabelNamespace(namespace: string): Promise<void> {
    const body = [{ op: 'add', path: '/metadata/labels/team', value: this.#pick(TEAMS) }];
    await this.#write('updates', () => this.#core.patchNamespace({ name: namespace, body }));
  }

  async #createPod(namespace: string): Promise<void> {
    const name = `pod-${this.#next++}`;
    const body: V1Pod = {
      metadata: { name, namespace, labels: this.#labels({ app: this.#pick(APPS), tier: this.#pick(TIERS) }) },
      spec: { containers: [{ name: 'pause', image: this.#o.podImage }], terminationGracePeriodSeconds: 0 },
    };
    if (await this.#write('creates', () => this.#core.createNamespacedPod({ namespace, body }))) {
      this.#model.get(namespace)?.pods.add(name);
    }
  }

  async #deletePod(namespace: string): Promise<void> {
    const pods = this.#model.get(namespace)!.pods;
    const name = this.#pick([...pods]);
    pods.delete(name);
    await this.#write('deletes', () => this.#core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }));
  }

  async #relabelPod(namespace: string): Promise<void> {
    const name = this.#pick([...this.#model.get(namespace)!.pods]);
    const body = [{ op: 'add', path: '/metadata/labels/app', value: this.#pick(APPS) }];
    await this.#write('updates', () => this.#core.patchNamespacedPod({ name, namespace, body }));
  }

  async #createPolicy(namespace: string): Promise<void> {
    const name = `policy-${this.#next++}`;
    const peer = (): { podSelector?: ApiLabelSelector; namespaceSelector?: ApiLabelSelector } => {
      switch (Math.floor(this.#random() * 4)) {
        case 0:
          return { podSelector: { matchLabels: { app: this.#pick(APPS) } } };
        case 1:
          return { namespaceSelector: { matchLabels: { team: this.#pick(TEAMS) } } };
        case 2:
          return { namespaceSelector: { matchLabels: { team: this.#pick(TEAMS) } }, podSelector: { matchLabels: { tier: this.#pick(TIERS) } } };
        default:
          return { podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: [this.#pick(APPS), this.#pick(APPS)] }] } };
      }
    };
    const podSelector: ApiLabelSelector = this.#random() < 0.25 ? {} : { matchLabels: { app: this.#pick(APPS) } };
    // client-node's typed models name this field `_from` (`from` on the wire): its serializer drops a plain `from`.
    const ingress: V1NetworkPolicyIngressRule[] = Array.from({ length: 1 + Math.floor(this.#random() * 2) }, () => ({
      _from: Array.from({ length: 1 + Math.floor(this.#random() * 2) }, peer),
    }));
    const body: V1NetworkPolicy = { metadata: { name, namespace, labels: this.#labels({}) }, spec: { podSelector, policyTypes: ['Ingress'], ingress } };
    if (await this.#write('creates', () => this.#net.createNamespacedNetworkPolicy({ namespace, body }))) {
      this.#model.get(namespace)?.policies.add(name);
    }
  }

  async #deletePolicy(namespace: string): Promise<void> {
    const policies = this.#model.get(namespace)!.policies;
    const name = this.#pick([...policies]);
    policies.delete(name);
    await this.#write('deletes', () => this.#net.deleteNamespacedNetworkPolicy({ name, namespace }));
  }
}
