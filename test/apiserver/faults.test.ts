// Real faults done to the real server while a writer runs: kube-apiserver and etcd killed with SIGKILL and
// restarted, etcd compacted, with the watch cache on and off. After each, the cache must catch up (the
// recovery time is printed), and at the end it must equal the server exactly, with every handler's history.

import { randomBytes } from 'node:crypto';
import { CoreV1Api, FlowcontrolApiserverV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, SharedInformerFactory, type ResourceClient } from '../../src/index.js';
import { Prng } from '../../soak/prng.js';
import { checkExact, HandlerHistory } from './exact.js';
import { compactEtcd, etcdRevision, startRealApiServer, type RealApiServer } from './harness.js';

type Fault = 'kube-apiserver' | 'etcd' | 'compaction' | 'storm';

/** Creates, updates and deletes ConfigMaps until stopped; failures (the server is down) are counted and the next op goes on. */
class Writer {
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
async function throttledKubeConfig(server: RealApiServer, namespace: string): Promise<KubeConfig> {
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
async function storm(client: ResourceClient<KubeObject>, namespace: string, writers: Writer[]): Promise<void> {
  const burst = Array.from({ length: 16 }, (_, k) => new Writer(client, namespace, 100 + writers.length + k));
  writers.push(...burst);
  for (const w of burst) w.start();
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  await Promise.all(burst.map((w) => w.stop()));
}

const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function runFaults(server: RealApiServer, faults: Fault[], label: string): Promise<void> {
  const namespace = `faults-${randomBytes(3).toString('hex')}`;
  const namespaces = newResourceClient<KubeObject>(server.kubeConfig, resources.namespaces);
  await namespaces.create({ metadata: { name: namespace } });
  namespaces.close();
  const client = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'faults' });
  const stop = new AbortController();
  // In a storm the informer is a throttled workload too: its relist meets the 429s.
  const throttled = faults.includes('storm') ? await throttledKubeConfig(server, namespace) : undefined;
  const factory = new SharedInformerFactory(throttled ?? server.kubeConfig, { namespace, logger: false });
  const informer = factory.forResource<KubeObject>(resources.configmaps);
  const history = new HandlerHistory();
  informer.addEventHandler(history.handler);
  const running = factory.run(stop.signal);
  const writer = new Writer(client, namespace, 7);
  const recoveries: Array<{ fault: Fault; ms: number }> = [];
  const writers: Writer[] = [];
  let stormClient: ResourceClient<KubeObject> | undefined;
  try {
    await factory.waitForCacheSync(stop.signal);
    writer.start();
    for (const [i, fault] of faults.entries()) {
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // writes before each fault
      const started = Date.now();
      if (fault === 'compaction') await compactEtcd(server.etcdEndpoint, await etcdRevision(server.etcdEndpoint));
      else if (fault === 'storm') {
        // 16 writers of the throttled ServiceAccount, and the informer relisting in the middle of them.
        stormClient ??= newResourceClient<KubeObject>(throttled ?? server.kubeConfig, resources.configmaps, { fieldManager: 'storm' });
        const burst = storm(stormClient, namespace, writers);
        await new Promise((resolve) => setTimeout(resolve, 500));
        await informer.relist(AbortSignal.timeout(60_000));
        await burst;
      }
      else await server.restart(fault);
      // Recovered: a write made after the fault is in the cache.
      for (;;) {
        try {
          const marker = await client.create({ metadata: { name: `marker-${i}`, namespace } }, AbortSignal.timeout(5_000));
          await informer.awaitObserved(marker, AbortSignal.timeout(60_000));
          break;
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode === 409) throw err;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      recoveries.push({ fault, ms: Date.now() - started });
    }
    await writer.stop();
    const rejected = writers.reduce((n, w) => n + w.throttled, 0);
    const lw = newListWatch<unknown>(server.kubeConfig, resources.configmaps, { namespace, metadataOnly: true });
    const result = await checkExact(informer as never, history, lw, AbortSignal.timeout(60_000));
    lw.close();
    const health = informer.health();
    const ms = recoveries.map((r) => r.ms);
    console.log(
      `${label}: ${writer.ops} writes (${writer.failures} failed while down)${writers.length > 0 ? `, storm writes answered 429: ${rejected}` : ''}, ${result.objects} objects at ${result.resourceVersion}; ` +
        `recovery ${recoveries.map((r) => `${r.fault} ${r.ms} ms`).join(', ')} (p50 ${percentile(ms, 50)} ms, max ${Math.max(...ms)} ms); ` +
        `lists ${health.counters.lists}, relists ${health.counters.relists}, watches ${health.counters.watches}, errors ${health.counters.errors}, regressions ${health.counters.regressions}`,
    );
    expect({ cacheDiff: result.cacheDiff, handlerDiff: result.handlerDiff }).toEqual({ cacheDiff: [], handlerDiff: [] });
    expect(health.counters.regressions).toBe(0);
    expect(writer.ops).toBeGreaterThan(50);
    if (faults.includes('storm')) expect(rejected).toBeGreaterThan(0);
  } finally {
    await writer.stop();
    stop.abort();
    await running;
    client.close();
    stormClient?.close();
  }
}

describe('real faults with the watch cache on (the default)', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('kube-apiserver SIGKILL + restart, etcd SIGKILL + restart, etcd compaction: the cache catches up and ends exact', async () => {
    await runFaults(server, ['kube-apiserver', 'etcd', 'compaction', 'kube-apiserver'], 'watch cache on');
  }, 240_000);
});

describe('real faults with the watch cache off', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer({ apiServerArgs: ['--watch-cache=false'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('compaction then kube-apiserver SIGKILL + restart: every watch resumes from etcd, the cache ends exact', async () => {
    await runFaults(server, ['compaction', 'kube-apiserver', 'etcd'], 'watch cache off');
  }, 240_000);
});

describe('a 429 storm from API priority and fairness with a tiny concurrency budget', () => {
  let server: RealApiServer;
  beforeAll(async () => {
    server = await startRealApiServer({ apiServerArgs: ['--max-requests-inflight=1', '--max-mutating-requests-inflight=1'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('writers are turned away with 429 while the informer keeps up and ends exact', async () => {
    await runFaults(server, ['storm', 'storm'], '429 storm');
  }, 240_000);
});
