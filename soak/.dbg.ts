import dc from 'node:diagnostics_channel';
import { runSoak } from '/work/main/soak/soak.js';
import { kubeInformerContender } from '/work/main/soak/contenders/kube-informer.js';
const t0 = performance.now();
const t = () => ((performance.now() - t0) / 1000).toFixed(2);
for (const n of ['kube-informer:reflector:list', 'kube-informer:reflector:watch-start', 'kube-informer:reflector:watch-end', 'kube-informer:reflector:error']) {
  dc.subscribe(n, (m: any) => console.log(t(), n.split(':').pop(), m.resourceVersion ?? m.reason ?? '', m.error ? `${m.error.code} ${m.phase} ${m.action} ${m.error.message.slice(0,100)}` : '', m.items?.length ?? ''));
}
const kinds = (process.argv[2] ?? 'stall').split(',') as any;
const r = await runSoak({ seed: 1, events: Number(process.argv[3] ?? 3000), contender: kubeInformerContender, faults: kinds, log: (l) => console.log(t(), l) });
console.log(r.failures, r.handlerCalls, r.faults.map((f) => [f.kind, f.injectedAtMs|0, f.consumedAtMs|0, f.recoveredAtMs|0]));
