// What a review costs under load: 200 concurrent AdmissionReviews against the webhook server, p50/p99 latency.
//
// Run: npm run bench:webhook -- [concurrency=200] [rounds=10]   (= npx tsx bench/webhook.ts; not part of npm test; docs/benchmarks.md, "Webhooks")
// Prints one JSON line, then the row of docs/benchmarks.md's "Webhooks" table for this run.
// Starts a WebhookServer (self-signed CA, 127.0.0.1, a free port) with a validating webhook (denies one
// object in ten, with a field error) and a mutating webhook (adds a label: a JSON Patch per review), then
// sends `rounds` waves of `concurrency` reviews at once (half to each) over keep-alive HTTPS connections,
// after one warm-up wave (its TLS handshakes are not counted). Latency is measured by the client, from
// sending the request to the end of the response; client and server share this process (and its event
// loop), so the numbers include the client's side too — the API server's own overhead is not included.

import { Agent, request } from 'node:https';
import { WebhookServer, allow, deny, mutatingWebhook, validatingWebhook } from '../src/webhook/index.js';

const CONCURRENCY = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 10);

type ConfigMap = { metadata: { name: string; labels?: Record<string, string> }; data?: Record<string, string> };

function review(i: number): string {
  const data: Record<string, string> = {};
  for (let k = 0; k < 20; k++) data[`key-${k}`] = `value-${i}-${k}`.repeat(4);
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${i}`,
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      name: `cm-${i}`,
      namespace: 'bench',
      operation: 'CREATE',
      userInfo: { username: 'bench', groups: ['system:authenticated'] },
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'bench', labels: { app: 'bench' } }, data },
      dryRun: false,
    },
  });
}

async function main(): Promise<void> {
  const server = new WebhookServer({ tls: { selfSigned: { hosts: ['127.0.0.1'] } }, host: '127.0.0.1', port: 0, logger: false });
  server.register(
    '/validate',
    validatingWebhook<ConfigMap>({ name: 'v.bench' }, (req) =>
      req.object!.metadata.name.endsWith('0') ? deny('name ends in 0', { fieldErrors: [{ field: 'metadata.name', type: 'FieldValueInvalid', message: 'must not end in 0' }] }) : allow(),
    ),
  );
  server.register(
    '/mutate',
    mutatingWebhook<ConfigMap>({ name: 'm.bench' }, (req) => {
      req.object!.metadata.labels = { ...req.object!.metadata.labels, defaulted: 'true' };
    }),
  );
  const stop = new AbortController();
  const running = server.run(stop.signal);
  while (!server.ready()) await Promise.race([running, new Promise((r) => setImmediate(r))]);
  const ca = Buffer.from(server.caBundle()!, 'base64').toString();
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca });
  const port = server.port()!;

  const one = (i: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = review(i);
      const started = performance.now();
      const req = request({ host: '127.0.0.1', port, path: i % 2 ? '/validate' : '/mutate', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  const wave = (round: number): Promise<number[]> => Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => one(round * CONCURRENCY + k)));

  await wave(-1); // warm-up: TLS handshakes, JIT
  const latencies: number[] = [];
  const waveTimes: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    latencies.push(...(await wave(r)));
    waveTimes.push(performance.now() - t);
  }
  latencies.sort((a, b) => a - b);
  const q = (p: number): string => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(1);
  const totalMs = waveTimes.reduce((a, b) => a + b, 0);
  console.log(
    JSON.stringify({
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      reviews: latencies.length,
      p50ms: Number(q(0.5)),
      p90ms: Number(q(0.9)),
      p99ms: Number(q(0.99)),
      maxms: Number(latencies.at(-1)!.toFixed(1)),
      reviewsPerSecond: Math.round(latencies.length / (totalMs / 1000)),
      node: process.version,
    }),
  );
  const thousands = (n: number): string => n.toLocaleString('en-US').replace(/,/g, ' ');
  console.log(`| ${CONCURRENCY} at once × ${ROUNDS} | ${thousands(latencies.length)} | ${q(0.5)} | ${q(0.9)} | ${q(0.99)} | ${latencies.at(-1)!.toFixed(1)} | ${thousands(Math.round(latencies.length / (totalMs / 1000)))} |`);
  agent.destroy();
  stop.abort();
  await running;
}

await main();
