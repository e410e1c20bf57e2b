// The program the install leg (scripts/ci/install-leg.sh) runs in a fresh project, after installing the
// packed tarball the way docs/getting-started.md says: the getting-started program — a factory, one
// handler, a lister, a clean stop — against the fake API server from kube-informer/testing, with a pod
// created and deleted through client-node's own typed client (its HTTP stack runs too). Plain
// JavaScript, so it runs on any Node without a loader. Exits 0 when every step happened, 1 otherwise.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { SharedInformerFactory, deletionHandlingMetaNamespaceKeyFunc, resources, stripManagedFields } from 'kube-informer';
import { startFakeApiServer } from 'kube-informer/testing';

const deadline = setTimeout(() => {
  console.error('install-app: FAILED: still running after 30 s (a step hung, or a handle stayed open after the stop)');
  process.exit(1);
}, 30_000);

const server = await startFakeApiServer();
for (let i = 0; i < 2; i++) server.create('pods', { metadata: { name: `web-${i}`, namespace: 'default' }, status: { phase: 'Running' } });

// A user's KubeConfig, built the way a program would (here pointing at the fake server).
const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({
  clusters: [{ name: 'fake', server: server.url, skipTLSVerify: true }],
  users: [{ name: 'fake', token: 'fake-token' }],
  contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
  currentContext: 'fake',
});

const seen = [];
let onSeen = () => undefined;
const factory = new SharedInformerFactory(kubeConfig, { transform: stripManagedFields });
const pods = factory.forResource(resources.pods);
pods.addEventHandler({
  onAdd: (pod, isInInitialList) => {
    if (!isInInitialList) seen.push(`added ${pod.metadata?.name}`);
    onSeen();
  },
  onDelete: (obj) => {
    seen.push(`deleted ${deletionHandlingMetaNamespaceKeyFunc(obj)}`);
    onSeen();
  },
});
const until = (line) =>
  new Promise((resolve) => {
    onSeen = () => seen.includes(line) && resolve();
    onSeen();
  });

const stop = new AbortController();
const running = factory.run(stop.signal);
try {
  await pods.whenSynced(stop.signal);
  const synced = pods.lister().list().length;
  if (synced !== 2) throw new Error(`synced ${synced} pods, expected 2`);
  console.log(`synced: ${synced} pods`);

  const api = kubeConfig.makeApiClient(CoreV1Api);
  await api.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'job-1' }, spec: { containers: [{ name: 'c', image: 'pause' }] } } });
  await until('added job-1');
  await api.deleteNamespacedPod({ namespace: 'default', name: 'job-1' });
  await until('deleted default/job-1');
  console.log(seen.join('; '));
} catch (err) {
  stop.abort();
  await running.catch(() => undefined);
  await server.close();
  console.error('install-app: FAILED:', err);
  process.exit(1);
}
stop.abort();
await running;
await server.close();
console.log(`install-app: ok (node ${process.version})`);
deadline.unref(); // the process must now exit by itself: every watch, socket and timer released
