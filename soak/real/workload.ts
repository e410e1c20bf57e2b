// The writers of the real-fault runs: a steady writer of ConfigMaps, a storm of them, and the throttled account a storm runs as.

import { CoreV1Api, FlowcontrolApiserverV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { KubeObject } from '../../src/core/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { resources, type ResourceClient } from '../../src/index.js';
import type { RealApiServer } from '../../test/apiserver/harness.js';
import { Prng } from '../prng.js';

/** Creates, updates and deletes ConfigMaps until stopped; failures (the server is down) are counted and the next op goes on. */
export class Writer {
  readonly #client: ResourceClient<KubeObject>;
  readonly #namespace: string;
  readonly #rng: Prng;
  #stopped = false;
  #done: Promise<void> = Promise.resolve();
  readonly names: string[] = [];
  ops = 0;
  failures = 0;
  /** Failures answered 429 (API priority and fairness turned the request away). */
  throttled = 0;

  constructor(client: ResourceClient<KubeObject>, namespace: string, seed: number) {
    this.#client = client;
    this.#namespace = namespace;
    this.#rng = new Prng(seed);
  }

  start(): void {
    this.#done = (async () => {
      for (let i = 0; !this.#stopped; i++) {
        try {
          await this.#one(i);
          this.ops++;
        } catch (err) {
          this.failures++;
          if ((err as { statusCode?: number }).statusCode === 429) this.throttled++;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#done;
  }

  async #one(i: number): Promise<void> {
    const roll = this.#rng.next();
    if (this.names.length < 10 || roll < 0.4) {
      const name = `w-${i}`;
      await this.#client.create({ metadata: { name, namespace: this.#namespace }, data: { i: String(i) } } as KubeObject, AbortSignal.timeout(5_000));
      this.names.push(name);
    } else if (roll < 0.8) {
      const name = this.#rng.pick(this.names);
      await this.#client.patch(name, this.#namespace, { data: { i: String(i) } }, 'merge', AbortSignal.timeout(5_000));
    } else {
      const name = this.names.splice(this.#rng.int(0, this.names.length - 1), 1)[0];
      await this.#client.delete(name, this.#namespace, {}, AbortSignal.timeout(5_000)).catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 404) throw err;
      });
    }
  }
}

/**
 * A kubeconfig of a ServiceAccount allowed to edit `namespace`, whose requests API priority and
 * fairness puts in a priority level of one seat that rejects what it cannot serve at once (the
 * harness's own user is in system:masters, which APF exempts): a 429 storm on demand.
 */
export async function throttledKubeConfig(server: RealApiServer, namespace: string): Promise<KubeConfig> {
  const core = server.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'storm' } } });
  // Its own Role: the aggregated `edit` ClusterRole is empty without kube-controller-manager's aggregation controller.
  const rbac = server.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'storm' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }] } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: { name: 'storm' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'storm' }, subjects: [{ kind: 'ServiceAccount', name: 'storm', namespace }] },
  });
  const flow = server.kubeConfig.makeApiClient(FlowcontrolApiserverV1Api);
  await flow.createPriorityLevelConfiguration({
    body: { metadata: { name: `storm-${namespace}` }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, limitResponse: { type: 'Reject' } } } },
  });
  await flow.createFlowSchema({
    body: {
      metadata: { name: `storm-${namespace}` },
      spec: {
        priorityLevelConfiguration: { name: `storm-${namespace}` },
        matchingPrecedence: 100,
        rules: [{ subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: 'storm', namespace } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }],
      },
    },
  });
  const token = await core.createNamespacedServiceAccountToken({ name: 'storm', namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'real', server: server.server, caData: Buffer.from(server.ca).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'storm', token: token.status?.token }],
    contexts: [{ name: 'storm', cluster: 'real', user: 'storm' }],
    currentContext: 'storm',
  });
  // The RoleBinding reaches the authorizer's cache a moment later: wait until the account may list.
  const lw = newListWatch(kc, resources.configmaps, { namespace });
  try {
    for (let i = 0; ; i++) {
      try {
        await lw.list({ limit: 1 }, AbortSignal.timeout(5_000));
        break;
      } catch (err) {
        if (i > 50) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    lw.close();
  }
  return kc;
}

/** A burst of 16 writers at once for 3 s, as a workload's ServiceAccount; they stop before it resolves. */
export async function storm(client: ResourceClient<KubeObject>, namespace: string, writers: Writer[]): Promise<void> {
  const burst = Array.from({ length: 16 }, (_, k) => new Writer(client, namespace, 100 + writers.length + k));
  writers.push(...burst);
  for (const w of burst) w.start();
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  await Promise.all(burst.map((w) => w.stop()));
}

