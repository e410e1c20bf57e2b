// Faults done to a real kube-apiserver while a writer runs and an informer watches; the cache must catch up after each and end exact.

import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../../src/core/index.js';
import { newListWatch } from '../../src/listwatch/index.js';
import { newResourceClient, resources, SharedInformerFactory, type ResourceClient } from '../../src/index.js';
import { compactEtcd, etcdRevision, type RealApiServer } from '../../test/apiserver/harness.js';
import type { ApiServerProxy, Toxic } from '../../test/apiserver/toxiproxy.js';
import { checkExact, HandlerHistory } from './exact.js';
import { storm, throttledKubeConfig, Writer } from './workload.js';

/** A fault the real runs can do. */
export type Fault = 'kube-apiserver' | 'etcd' | 'compaction' | 'storm' | ProxyFault;
/** The faults done by Toxiproxy between the informer and the server. */
export type ProxyFault = 'reset' | 'latency' | 'bandwidth' | 'stall';
export const isProxyFault = (f: Fault): f is ProxyFault => f === 'reset' || f === 'latency' || f === 'bandwidth' || f === 'stall';

/** Toxiproxy toxics for the faults between client and server, and how long each lasts. */
export const TOXICS: Record<ProxyFault, { toxic: Toxic; ms: number }> = {
  reset: { toxic: { type: 'reset_peer', attributes: { timeout: 0 } }, ms: 1_000 }, // every connection reset (RST)
  latency: { toxic: { type: 'latency', attributes: { latency: 800, jitter: 200 } }, ms: 3_000 },
  bandwidth: { toxic: { type: 'bandwidth', attributes: { rate: 16 } }, ms: 3_000 }, // 16 KB/s
  stall: { toxic: { type: 'timeout', attributes: { timeout: 3_000 } }, ms: 4_000 }, // nothing gets through, then the connection closes
};


/** `user`'s credentials, sent to `via`'s cluster (the throttled account through the proxy). */
function sameUserVia(via: KubeConfig, user: KubeConfig): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: via.clusters, users: user.users, contexts: [{ name: 'c', cluster: via.clusters[0].name, user: user.users[0].name }], currentContext: 'c' });
  return kc;
}

/** What one {@link runFaults} found. */
export interface RealFaultResult {
  label: string;
  /** Writes of the steady writer, and those that failed (the server was down). */
  writes: number;
  failedWrites: number;
  /** Storm writes answered 429. */
  throttled: number;
  objects: number;
  resourceVersion: string;
  /** Per fault: how long until a write made after it was in the cache (proxy faults: after the toxic was removed). */
  recoveries: Array<{ fault: Fault; ms: number }>;
  counters: { lists: number; relists: number; watches: number; errors: number; regressions: number };
  /** Cache vs a list at its resource version, and handler history vs the cache: both empty when exact. */
  cacheDiff: string[];
  handlerDiff: string[];
}

/**
 * Runs `faults` in order against `server` while a writer creates, patches and deletes ConfigMaps in a
 * fresh namespace and an informer (through `proxy` when given) watches them; after each fault, waits
 * until a write made after it is in the cache; then compares the cache with the server exactly.
 */
export async function runFaults(server: RealApiServer, faults: readonly Fault[], label: string, proxy?: ApiServerProxy, seed = 7): Promise<RealFaultResult> {
  const namespace = `faults-${randomBytes(3).toString('hex')}`;
  const namespaces = newResourceClient<KubeObject>(server.kubeConfig, resources.namespaces);
  await namespaces.create({ metadata: { name: namespace } });
  namespaces.close();
  const client = newResourceClient<KubeObject>(server.kubeConfig, resources.configmaps, { fieldManager: 'faults' });
  const stop = new AbortController();
  // In a storm the informer is a throttled workload too: its relist meets the 429s.
  const throttled = faults.includes('storm') ? await throttledKubeConfig(server, namespace) : undefined;
  const informerConfig = throttled !== undefined && proxy !== undefined ? sameUserVia(proxy.kubeConfig, throttled) : (throttled ?? proxy?.kubeConfig ?? server.kubeConfig);
  const factory = new SharedInformerFactory(informerConfig, { namespace, logger: false });
  const informer = factory.forResource<KubeObject>(resources.configmaps);
  const history = new HandlerHistory();
  informer.addEventHandler(history.handler);
  const running = factory.run(stop.signal);
  const writer = new Writer(client, namespace, seed);
  const recoveries: Array<{ fault: Fault; ms: number }> = [];
  const writers: Writer[] = [];
  let stormClient: ResourceClient<KubeObject> | undefined;
  try {
    await factory.waitForCacheSync(stop.signal);
    writer.start();
    for (const [i, fault] of faults.entries()) {
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // writes before each fault
      let started = Date.now();
      if (isProxyFault(fault)) {
        // Between the informer and the server (the writer goes straight to the server); timed from its end.
        const { toxic, ms } = TOXICS[fault];
        const name = await proxy!.add(toxic);
        await new Promise((resolve) => setTimeout(resolve, ms));
        await proxy!.remove(name);
        started = Date.now();
      } else if (fault === 'compaction') await compactEtcd(server.etcdEndpoint, await etcdRevision(server.etcdEndpoint));
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
    const c = informer.health().counters;
    return {
      label,
      writes: writer.ops,
      failedWrites: writer.failures,
      throttled: rejected,
      objects: result.objects,
      resourceVersion: result.resourceVersion,
      recoveries,
      counters: { lists: c.lists, relists: c.relists, watches: c.watches, errors: c.errors, regressions: c.regressions },
      cacheDiff: result.cacheDiff,
      handlerDiff: result.handlerDiff,
    };
  } finally {
    await writer.stop();
    stop.abort();
    await running;
    client.close();
    stormClient?.close();
  }
}

