// The operator phase's kube-informer side: `Controller.for(benchSets, generationChanged).owns(configmaps)`, reads from the factory's caches, writes through `ctx.client`.
//
// The reconcile is the one of bench/controller-runtime/main.go (create/update each ConfigMap from the
// cache, then PUT the status when it changed); see bench/lib/operator-phase.ts for the method. The
// kubeconfig is read by `loadKubeConfig({ lean: true })`: nothing in this process loads @kubernetes/client-node.
// The storm phase (bench/lib/storm-phase.ts) adds `workMs` (a wait at each reconcile's start) and `fifo`
// (the Controller's `priority: false`).

import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { loadKubeConfig, type ResourceDescriptor, resources, SharedInformerFactory } from '../../src/index.js';
import { Action, Controller, predicates } from '../../src/controller.js';
import { KI_OWNS_OPTIONS } from '../lib/operator-args.js';
import { BENCH_GROUP, BENCH_PLURAL, BENCH_VERSION, controlledBy, ownerReference, runOperatorSide, sameData, STORM_ANNOTATION, type BenchSet } from '../lib/operator-side.js';

const benchSets: ResourceDescriptor<BenchSet> = { group: BENCH_GROUP, version: BENCH_VERSION, resource: BENCH_PLURAL, kind: 'BenchSet', namespaced: true };

runOperatorSide(async (cfg, probe) => {
  const workMs = cfg.workMs ?? 0;
  const factory = new SharedInformerFactory(loadKubeConfig({ kubeconfig: cfg.kubeconfig, lean: true }), { namespace: cfg.namespace, logger: false });
  const configMaps = factory.forResource(resources.configmaps, KI_OWNS_OPTIONS).getIndexer();
  const controller = Controller.for(factory, benchSets, { predicates: [predicates.generationChanged] })
    .owns(resources.configmaps, KI_OWNS_OPTIONS)
    .build(
      async (key, ctx) => {
        const cached = ctx.object as BenchSet | undefined;
        const created = (cached?.metadata.annotations as Record<string, string> | undefined)?.[STORM_ANNOTATION];
        const end = probe.start(key, cached?.metadata.generation ?? 0, created === undefined ? undefined : Number(created));
        try {
          if (workMs > 0) await new Promise((resolve) => setTimeout(resolve, workMs));
          if (cached === undefined) return (end(false), Action.done());
          const set = cached;
          let ready = 0;
          for (let i = 0; i < set.spec.children; i++) {
            const name = `${set.metadata.name}-${i}`;
            const cm = configMaps.getByKey(`${set.metadata.namespace}/${name}`) as ConfigMap | undefined;
            if (cm === undefined) {
              probe.write();
              await ctx.client(resources.configmaps).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: set.metadata.namespace, ownerReferences: [ownerReference(set)] }, data: { ...set.spec.data } });
            } else if (!sameData(cm.data, set.spec.data) || !controlledBy(cm.metadata?.ownerReferences, set)) {
              probe.write();
              const others = (cm.metadata?.ownerReferences ?? []).filter((r) => r.uid !== set.metadata.uid);
              await ctx.client(resources.configmaps).update({ ...cm, metadata: { ...cm.metadata, ownerReferences: [...others, ownerReference(set)] }, data: { ...set.spec.data } });
            }
            ready++;
          }
          if (set.status?.observedGeneration !== set.metadata.generation || set.status?.ready !== ready) {
            probe.write();
            await ctx.client(benchSets).updateStatus({ ...set, status: { observedGeneration: set.metadata.generation, ready } });
          }
          end(false);
          return Action.done();
        } catch (err) {
          end(true);
          throw err;
        }
      },
      { name: 'benchsets', concurrency: cfg.concurrency, logger: false, ...(cfg.fifo === true ? { priority: false as const } : {}) },
    );
  const ac = new AbortController();
  factory.start(ac.signal);
  await controller.run(ac.signal);
});
