// The operator phase's hand-written side: @kubernetes/client-node informers, a deduplicating queue, workers writing with client-node's API objects — what a Node author writes without kube-informer.
//
// The reconcile is the one of bench/controller-runtime/main.go (create/update each ConfigMap from the
// informer's cache, then PUT the status when it changed); see bench/lib/operator-phase.ts for the method.
// The queue keeps client-go's workqueue rules (a key is queued once; a key being reconciled is not
// handed to a second worker, it is queued again when that reconcile ends) and retries a failed key
// after 5 ms, doubling per failure in a row (controller-runtime's and kube-informer's default).

import { CoreV1Api, KubeConfig, CustomObjectsApi, makeInformer, type KubernetesListObject, type V1ConfigMap } from '@kubernetes/client-node';
import { BENCH_GROUP, BENCH_PLURAL, BENCH_VERSION, controlledBy, ownerReference, runOperatorSide, sameData, type BenchSet } from '../lib/operator-side.js';

runOperatorSide(async (cfg, probe) => {
  const kc = new KubeConfig();
  kc.loadFromFile(cfg.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const ns = cfg.namespace;
  const crd = { group: BENCH_GROUP, version: BENCH_VERSION, plural: BENCH_PLURAL, namespace: ns };
  const sets = makeInformer<BenchSet & { apiVersion?: string; kind?: string }>(kc, `/apis/${BENCH_GROUP}/${BENCH_VERSION}/namespaces/${ns}/${BENCH_PLURAL}`, () => custom.listNamespacedCustomObject(crd) as Promise<KubernetesListObject<BenchSet>>);
  const configMaps = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${ns}/configmaps`, () => core.listNamespacedConfigMap({ namespace: ns }));

  // The queue: FIFO of distinct keys; `processing` keys wait in `dirty` until their reconcile ends.
  const queue: string[] = [];
  const queued = new Set<string>();
  const processing = new Set<string>();
  const dirty = new Set<string>();
  const failures = new Map<string, number>();
  const waiting: Array<() => void> = [];
  const add = (key: string): void => {
    if (processing.has(key)) return void dirty.add(key);
    if (queued.has(key)) return;
    queued.add(key);
    queue.push(key);
    waiting.shift()?.();
  };
  const next = async (): Promise<string> => {
    while (queue.length === 0) await new Promise<void>((resolve) => waiting.push(resolve));
    const key = queue.shift()!;
    queued.delete(key);
    processing.add(key);
    return key;
  };
  const done = (key: string): void => {
    processing.delete(key);
    if (dirty.delete(key)) add(key);
  };

  // Primaries: adds, deletes and spec changes (a generation map stands in for old-vs-new: client-node's update handler gets the new object only).
  const generations = new Map<string, number>();
  const setKey = (o: BenchSet): string => `${o.metadata.namespace}/${o.metadata.name}`;
  sets.on('add', (o) => (generations.set(setKey(o), o.metadata.generation), add(setKey(o))));
  sets.on('update', (o) => {
    if (generations.get(setKey(o)) === o.metadata.generation) return;
    generations.set(setKey(o), o.metadata.generation);
    add(setKey(o));
  });
  sets.on('delete', (o) => (generations.delete(setKey(o)), add(setKey(o))));
  // Children: any change queues the controlling BenchSet.
  const owner = (cm: V1ConfigMap): void => {
    const ref = cm.metadata?.ownerReferences?.find((r) => r.controller === true && r.kind === 'BenchSet' && r.apiVersion === `${BENCH_GROUP}/${BENCH_VERSION}`);
    if (ref !== undefined) add(`${cm.metadata?.namespace}/${ref.name}`);
  };
  for (const event of ['add', 'update', 'delete'] as const) configMaps.on(event, owner);
  for (const informer of [sets, configMaps]) informer.on('error', (err) => process.stderr.write(`client-node side: informer error ${String(err)}\n`));

  const reconcile = async (key: string): Promise<void> => {
    const [namespace, name] = key.split('/');
    const set = sets.get(name, namespace);
    const end = probe.start(key, set?.metadata.generation ?? 0);
    try {
      if (set === undefined) return end(false);
      let ready = 0;
      for (let i = 0; i < set.spec.children; i++) {
        const child = `${name}-${i}`;
        const cm = configMaps.get(child, namespace);
        if (cm === undefined) {
          probe.write();
          await core.createNamespacedConfigMap({ namespace, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: child, namespace, ownerReferences: [ownerReference(set)] }, data: { ...set.spec.data } } });
        } else if (!sameData(cm.data, set.spec.data) || !controlledBy(cm.metadata?.ownerReferences, set)) {
          probe.write();
          const others = (cm.metadata?.ownerReferences ?? []).filter((r) => r.uid !== set.metadata.uid);
          await core.replaceNamespacedConfigMap({ name: child, namespace, body: { ...cm, metadata: { ...cm.metadata, ownerReferences: [...others, ownerReference(set)] }, data: { ...set.spec.data } } });
        }
        ready++;
      }
      if (set.status?.observedGeneration !== set.metadata.generation || set.status?.ready !== ready) {
        probe.write();
        await custom.replaceNamespacedCustomObjectStatus({ ...crd, namespace, name, body: { ...set, status: { observedGeneration: set.metadata.generation, ready } } });
      }
      end(false);
    } catch (err) {
      end(true);
      throw err;
    }
  };

  await Promise.all([sets.start(), configMaps.start()]);
  const worker = async (): Promise<never> => {
    for (;;) {
      const key = await next();
      try {
        await reconcile(key);
        failures.delete(key);
      } catch {
        const n = (failures.get(key) ?? 0) + 1;
        failures.set(key, n);
        setTimeout(() => add(key), Math.min(1000_000, 5 * 2 ** (n - 1)));
      } finally {
        done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: cfg.concurrency }, worker));
});
