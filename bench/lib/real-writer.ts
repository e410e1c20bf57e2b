// The writer process of the real-apiserver phase: loads pods into the benchmark's namespace, patches them, cleans up.
//
// Forked by bench/lib/real-phase.ts (its own process, so its CPU never counts against a contender)
// and driven over IPC with `WriterCommand`s, one at a time (bench/lib/rpc.ts: a failed command comes back
// with its message and stack).
// Requests are plain HTTPS (bench/lib/real-http.ts) over one keep-alive pool of `concurrency`
// sockets, with at most `concurrency` requests in flight. A request that fails (network error, 429,
// 5xx) is retried up to 5 times; a create answered 409 AlreadyExists counts as done (the retry of a
// create whose response was lost).
//
// Pods are `makePod(i, namespace)` without the fields the server sets (uid, creationTimestamp), then
// their status written through `pods/status` as a kubelet would (a create drops the status), so they
// have the shape and size of the fake-server phases' pods. Without a scheduler or kubelet they stay
// as written. A patch is a JSON merge patch of one annotation (`bench.kube-informer.dev/seq`), each
// with a new value, so every patch is one MODIFIED event.

import https from 'node:https';
import { makePod } from './pods.js';
import { send, serverAccess, type Reply, type ServerAccess } from './real-http.js';
import { serveRpc } from './rpc.js';

/** What the runner asks of the writer. */
export type WriterCommand =
  | { cmd: 'init'; kubeconfig: string; namespace: string; concurrency: number }
  | { cmd: 'version' }
  | { cmd: 'setup' }
  | { cmd: 'load'; from: number; to: number; status: boolean }
  | { cmd: 'sample' }
  | { cmd: 'patch'; count: number; pods: number; rate?: number }
  | { cmd: 'cleanup' }
  | { cmd: 'terminated' }
  | { cmd: 'exit' };

/** The answer to `load` and `patch`. */
export interface WriteStats {
  /** Successful writes. */
  writes: number;
  /** From the first request sent to the last response. */
  seconds: number;
  /** Requests sent again after a failure. */
  retries: number;
  /** Writes that failed every attempt. */
  failures: number;
  /** Per-write latency (ms, last attempt), quantiles. */
  p50Ms: number;
  p99Ms: number;
  /** The first error message, if any write failed. */
  firstError?: string;
}

/** The answer to `sample`: the JSON size of one pod as served, full and metadata-only, over up to 200 pods. */
export interface SampleStats {
  podBytes: number;
  metaBytes: number;
  resourceVersion: string;
}

/** The answer to `cleanup`. */
export interface CleanupStats {
  seconds: number;
  /** Pods still listed when the writer gave up (0 = the namespace's pods are gone). */
  remaining: number;
  /** DELETE requests on the collection it took. */
  rounds: number;
  /** What the namespace's own DELETE answered (without kube-controller-manager it stays Terminating). */
  namespaceStatus: number;
}

let access: ServerAccess;
let agent: https.Agent;
let namespace = '';
let concurrency = 32;
let seq = 0;

const ANNOTATION = 'bench.kube-informer.dev/seq';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function failure(r: Reply): string {
  return `HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`;
}

/** Runs `write(i)` for i in [0, n) with at most `concurrency` in flight, retrying failures; `ok` says which replies succeeded. */
async function writeAll(n: number, write: (i: number) => Promise<Reply>, ok: (r: Reply) => boolean, rate = 0): Promise<WriteStats> {
  const latencies: number[] = [];
  let next = 0;
  let writes = 0;
  let retries = 0;
  let failures = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      // Paced: write i starts no earlier than i / rate seconds after the first.
      if (rate > 0) {
        const due = t0 + (i * 1000) / rate - performance.now();
        if (due > 0) await sleep(due);
      }
      for (let attempt = 0; ; attempt++) {
        const t = performance.now();
        let error: string | undefined;
        try {
          const r = await write(i);
          if (ok(r)) {
            latencies.push(performance.now() - t);
            writes++;
            break;
          }
          error = failure(r);
          // Only what a retry can fix is retried: throttling, server errors, timeouts.
          if (r.status !== 429 && r.status < 500) attempt = Infinity;
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
        if (attempt >= 5) {
          failures++;
          firstError ??= error;
          break;
        }
        retries++;
        await sleep(50 * 2 ** attempt);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { writes, seconds, retries, failures, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), firstError };
}

const podsPath = (): string => `/api/v1/namespaces/${namespace}/pods`;

/** The i-th pod as a client would create it: no uid, no creationTimestamp, no status. */
function podToCreate(i: number): Record<string, unknown> {
  const pod = makePod(i, namespace) as unknown as { metadata: Record<string, unknown>; status?: unknown };
  delete pod.metadata.uid;
  delete pod.metadata.creationTimestamp;
  delete pod.status;
  return pod;
}

async function setup(): Promise<void> {
  const created = await send(access, agent, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { 'app.kubernetes.io/created-by': 'kube-informer-bench' } } });
  if (created.status !== 201) throw new Error(`creating namespace ${namespace}: ${failure(created)}`);
  // The ServiceAccount admission plugin wants the pods' service account to exist; without
  // kube-controller-manager nobody creates `default`.
  const sa = await send(access, agent, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  if (sa.status !== 201 && sa.status !== 409) throw new Error(`creating serviceaccount default: ${failure(sa)}`);
}

async function load(from: number, to: number, status: boolean): Promise<WriteStats> {
  const created = await writeAll(to - from, (k) => send(access, agent, 'POST', podsPath(), podToCreate(from + k)), (r) => r.status === 201 || r.status === 409);
  if (created.failures > 0) throw new Error(`${created.failures} of ${to - from} creates failed: ${created.firstError}`);
  if (!status) return created;
  const statuses = await writeAll(
    to - from,
    (k) => {
      const pod = makePod(from + k, namespace);
      return send(access, agent, 'PATCH', `${podsPath()}/${pod.metadata.name}/status`, { status: pod.status }, 'application/merge-patch+json');
    },
    (r) => r.status === 200,
  );
  if (statuses.failures > 0) throw new Error(`${statuses.failures} of ${to - from} status writes failed: ${statuses.firstError}`);
  return { ...created, writes: created.writes + statuses.writes, seconds: created.seconds + statuses.seconds, retries: created.retries + statuses.retries };
}

async function sample(): Promise<SampleStats> {
  const r = await send(access, agent, 'GET', `${podsPath()}?limit=200`);
  if (r.status !== 200) throw new Error(`sample list: ${failure(r)}`);
  const list = JSON.parse(r.body.toString('utf8')) as { metadata: { resourceVersion: string }; items: Array<{ metadata: unknown }> };
  const n = Math.max(1, list.items.length);
  const podBytes = list.items.reduce((sum, p) => sum + JSON.stringify(p).length, 0) / n;
  const metaBytes = list.items.reduce((sum, p) => sum + JSON.stringify({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: p.metadata }).length, 0) / n;
  return { podBytes, metaBytes, resourceVersion: list.metadata.resourceVersion };
}

/** `rate` > 0 paces the patches at that many per second (the server's own pace when it accepts fewer); 0 writes as fast as accepted. */
async function patch(count: number, pods: number, rate = 0): Promise<WriteStats> {
  const names = Array.from({ length: Math.min(count, pods) }, (_, i) => makePod(i, namespace).metadata.name);
  return writeAll(
    count,
    (k) => send(access, agent, 'PATCH', `${podsPath()}/${names[k % names.length]}`, { metadata: { annotations: { [ANNOTATION]: String(++seq) } } }, 'application/merge-patch+json'),
    (r) => r.status === 200,
    rate,
  );
}

/** Deletes every pod of the namespace (DELETE on the collection, no grace period: no kubelet will confirm), then the namespace. */
async function cleanup(): Promise<CleanupStats> {
  const t0 = performance.now();
  let rounds = 0;
  let remaining = Number.NaN;
  while (rounds < 20) {
    const left = await send(access, agent, 'GET', `${podsPath()}?limit=1`);
    if (left.status === 404) {
      remaining = 0;
      break;
    }
    const list = JSON.parse(left.body.toString('utf8')) as { items: unknown[]; metadata: { remainingItemCount?: number } };
    remaining = list.items.length + (list.metadata.remainingItemCount ?? 0);
    if (remaining === 0) break;
    rounds++;
    // A collection delete of tens of thousands of pods can outlast the request timeout (the server
    // goes on deleting); the loop re-checks and sends it again until the list is empty.
    await send(access, agent, 'DELETE', `${podsPath()}?gracePeriodSeconds=0`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }).catch(() => undefined);
  }
  const ns = await send(access, agent, 'DELETE', `/api/v1/namespaces/${namespace}`);
  return { seconds: (performance.now() - t0) / 1000, remaining, rounds, namespaceStatus: ns.status };
}

/**
 * kube-apiserver's count of pod watchers its watch cache closed because they did not take their events
 * in time (`apiserver_terminated_watchers_total{resource="pods"}`, from `/metrics`); `undefined` when the
 * server does not serve the metric to this user.
 */
async function terminated(): Promise<number | undefined> {
  const r = await send(access, agent, 'GET', '/metrics', undefined, 'application/json', 'text/plain');
  if (r.status !== 200) return undefined;
  let total: number | undefined;
  for (const line of r.body.toString('utf8').split('\n')) {
    if (line.startsWith('apiserver_terminated_watchers_total{') && line.includes('resource="pods"')) total = (total ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total ?? 0;
}

async function handle(msg: WriterCommand): Promise<unknown> {
  switch (msg.cmd) {
    case 'init':
      access = await serverAccess(msg.kubeconfig);
      namespace = msg.namespace;
      concurrency = msg.concurrency;
      agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
      return undefined;
    case 'version': {
      const r = await send(access, agent, 'GET', '/version');
      if (r.status !== 200) throw new Error(`GET /version: ${failure(r)}`);
      return (JSON.parse(r.body.toString('utf8')) as { gitVersion: string }).gitVersion;
    }
    case 'setup':
      return setup();
    case 'load':
      return load(msg.from, msg.to, msg.status);
    case 'sample':
      return sample();
    case 'patch':
      return patch(msg.count, msg.pods, msg.rate);
    case 'cleanup':
      return cleanup();
    case 'terminated':
      return terminated();
    case 'exit':
      agent?.destroy();
      return undefined;
  }
}

serveRpc<WriterCommand>(handle, { onDisconnect: () => agent?.destroy() });
