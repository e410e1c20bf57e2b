// Measures envtest's warm start and stop: `npx tsx test/apiserver/measure-envtest-start.ts [runs]` (binaries already cached).
import { loadavg } from 'node:os';
import { startTestEnvironment } from '../../src/envtest/index.js';

const runs = Number(process.argv[2] ?? 5);
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.measure.kube-informer.dev' },
  spec: {
    group: 'measure.kube-informer.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const starts: number[] = [];
const stops: number[] = [];
for (let i = 0; i < runs; i++) {
  const load = loadavg()[0]!.toFixed(1);
  const t0 = performance.now();
  const env = await startTestEnvironment({ crds: [crd] });
  const started = performance.now() - t0;
  const t1 = performance.now();
  await env.stop();
  const stopped = performance.now() - t1;
  starts.push(started);
  stops.push(stopped);
  console.log(`run ${i + 1}: start ${Math.round(started)} ms (etcd + kube-apiserver ${env.kubernetesVersion} + 1 CRD established), stop ${Math.round(stopped)} ms, load ${load}`);
}
console.log(`median of ${runs}: start ${Math.round(median(starts))} ms, stop ${Math.round(median(stops))} ms (min start ${Math.round(Math.min(...starts))} ms)`);
