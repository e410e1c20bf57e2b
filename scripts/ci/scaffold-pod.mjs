// Starts a generated project's built image the way the kubelet starts its pod — the image's CMD, as its
// USER, with the Deployment's environment — against the fake API server, then checks what the pod's
// probes and the cluster would see: /readyz turns 200, a custom resource gets its ConfigMap, /metrics
// serves, and SIGTERM ends the process with exit code 0 within the grace period, the Lease released.
// scripts/ci/scaffold-leg.sh copies it into the project (so kube-informer/testing resolves there):
//   node scaffold-pod.mjs <final stage JSON from dockerfile-run.mjs> <grace seconds>
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { startFakeApiServer } from 'kube-informer/testing';

const [stageFile, graceArg] = process.argv.slice(2);
const stage = JSON.parse(readFileSync(stageFile, 'utf8'));
const graceMs = Number(graceArg) * 1000;
const PROBES = 'http://127.0.0.1:8081';
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

/** Polls `check` every 100 ms until it returns a value, or fails saying `what` after `ms`. */
async function until(what, check, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    if (exited !== undefined) throw new Error(`the process exited (${exited.code ?? exited.signal}) while waiting for ${what}`);
    await sleep(100);
  }
}

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const server = await startFakeApiServer();
// Webhook configurations are not built into the fake (it calls no webhooks): declared, they are stored as applied.
for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
  server.resource({ group: 'admissionregistration.k8s.io', version: 'v1', resource: `${kind.toLowerCase()}s`, kind, namespaced: false });
}
// The CRD kubectl would apply from config/crd/; without one (self-managed certificates and a conversion webhook) the process installs it.
const files = existsSync('config/crd') ? readdirSync('config/crd').filter((f) => f.endsWith('.yaml')) : [];
for (const f of files) for (const doc of parseAllDocuments(readFileSync(join('config/crd', f), 'utf8'))) server.create(CRDS, doc.toJS());
const kubeconfig = join(stage.root, '..', 'kubeconfig');
writeFileSync(kubeconfig, server.kubeConfig.exportConfig());
chmodSync(kubeconfig, 0o644);

// The image's USER, by number; setpriv drops to it when this runs as root (a CI container), as the runtime would.
const [uid, gid] = (stage.user ?? '').split(':');
const asUser = process.getuid?.() === 0 && uid !== undefined ? ['setpriv', `--reuid=${uid}`, `--regid=${gid ?? uid}`, '--clear-groups'] : [];
const [command, ...args] = [...asUser, ...stage.cmd];
// The Deployment's environment: the Downward API's values, and no KUBERNETES_SERVICE_HOST (KUBECONFIG names the fake).
const env = { PATH: process.env.PATH, HOME: '/tmp', ...stage.env, KUBECONFIG: kubeconfig, POD_NAME: 'scaffold-0', POD_NAMESPACE: 'default', MEMORY_LIMIT_MIB: '256' };
console.log(`pod: ${[command, ...args].join(' ')} (in ${stage.workdir}${asUser.length > 0 ? `, as ${stage.user}` : ''})`);
const child = spawn(command, args, { cwd: join(stage.root, stage.workdir), env, stdio: ['ignore', 'pipe', 'inherit'] });
let exited;
const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exited = { code, signal, at: Date.now() }))));
let stdout = '';
child.stdout.on('data', (chunk) => (stdout += String(chunk)));
const logLines = () => stdout.split('\n').filter((l) => l.trim() !== '');

let failed = false;
try {
  await until('/readyz 200', async () => (await fetch(`${PROBES}/readyz`)).status === 200);
  console.log(`pod: /readyz 200 after ${elapsed()}`);
  const [crd] = server.list(CRDS);
  if (files.length === 0) console.log(`pod: the process installed the CRD ${crd?.metadata?.name} (conversion webhook: ${crd?.spec?.conversion?.strategy ?? 'none'})`);
  const registered = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'].flatMap((r) => server.list(`${r}.admissionregistration.k8s.io`));
  if (registered.length > 0) console.log(`pod: the process registered ${registered.map((c) => `${c.kind} ${c.metadata.name}`).join(', ')}, caBundle ${registered.every((c) => c.webhooks.every((w) => w.clientConfig.caBundle)) ? 'set' : 'MISSING'}`);
  const { group, names } = crd.spec;
  const version = crd.spec.versions.find((v) => v.storage).name;
  server.create(`${names.plural}.${group}`, { apiVersion: `${group}/${version}`, kind: names.kind, metadata: { name: 'sample', namespace: 'default' }, spec: { message: 'from the image' } });
  const configMap = await until('the ConfigMap of the custom resource', async () => server.get('configmaps', `sample-${names.singular}`, 'default'));
  console.log(`pod: ${names.kind} sample reconciled: ConfigMap ${configMap.metadata.name} = ${JSON.stringify(configMap.data)}`);
  const metrics = await fetch(`${PROBES}/metrics`);
  const body = await metrics.text();
  if (metrics.status !== 200 || !body.includes('controller_runtime_reconcile_total')) throw new Error(`/metrics answered ${metrics.status} without controller_runtime_reconcile_total`);
  console.log(`pod: /metrics 200 (${body.split('\n').length} lines)`);
  const term = Date.now();
  child.kill('SIGTERM');
  const result = await Promise.race([exit, sleep(graceMs).then(() => undefined)]);
  if (result === undefined) throw new Error(`SIGTERM: still running after the ${graceMs / 1000} s grace period (the kubelet would SIGKILL it)`);
  console.log(`pod: SIGTERM → exit ${result.code ?? result.signal} after ${((result.at - term) / 1000).toFixed(2)} s (grace ${graceMs / 1000} s)`);
  if (result.code !== 0) throw new Error(`SIGTERM: exit ${result.code ?? result.signal}, not 0`);
  // The Lease is named after the project (src/settings.ts NAME, the package's name).
  const lease = server.get('leases.coordination.k8s.io', JSON.parse(readFileSync('package.json', 'utf8')).name, 'default');
  if (lease?.spec?.holderIdentity) throw new Error(`the Lease ${lease.metadata.name} is still held by ${lease.spec.holderIdentity} after the stop`);
  console.log(`pod: Lease ${lease?.metadata?.name ?? '(none)'} released`);
  const lines = logLines();
  const notJson = lines.find((l) => {
    try {
      return typeof JSON.parse(l) !== 'object';
    } catch {
      return true;
    }
  });
  if (notJson !== undefined) throw new Error(`a log line on stdout is not a JSON object: ${notJson}`);
  console.log(`pod: ${lines.length} log lines on stdout, each a JSON object; the last: ${lines.at(-1)}`);
} catch (err) {
  failed = true;
  console.error(`pod: FAILED: ${err.message}`);
  child.kill('SIGKILL');
} finally {
  await server.close();
}
process.exit(failed ? 1 : 0);

