// A manual throughput probe of the fake API server (not part of the suite): `npx tsx test/testing/perf-probe.ts [pods] [events]`.
import http from 'node:http';
import { startFakeApiServer } from '../../src/testing/index.js';

const pods = Number(process.argv[2] ?? 100_000);
const events = Number(process.argv[3] ?? 200_000);
const payload = 'x'.repeat(3600);
const ms = (t: number): string => `${(performance.now() - t).toFixed(0)} ms`;

function countLines(url: string, want: number): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let n = 0;
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          for (let i = c.indexOf(10); i >= 0; i = c.indexOf(10, i + 1)) n++;
          if (n >= want) {
            res.destroy();
            resolve(bytes);
          }
        });
        res.on('error', () => {});
      })
      .on('error', reject);
  });
}

const server = await startFakeApiServer({ recordRequests: false });
let t = performance.now();
for (let i = 0; i < pods; i++) {
  server.create('pods', { metadata: { name: `pod-${i}`, namespace: `ns-${i % 50}`, labels: { app: `a${i % 7}` } }, spec: { payload } });
}
console.log(`create ${pods} pods (~4 KB): ${ms(t)}`);

t = performance.now();
const full = await (await fetch(`${server.url}/api/v1/pods`)).arrayBuffer();
console.log(`unpaginated LIST, ${(full.byteLength / 1e6).toFixed(0)} MB: ${ms(t)}`);

t = performance.now();
let pages = 0;
let cont = '';
do {
  const body = (await (await fetch(`${server.url}/api/v1/pods?limit=500${cont ? `&continue=${cont}` : ''}`)).json()) as {
    metadata: { continue?: string };
  };
  cont = body.metadata.continue ?? '';
  pages++;
} while (cont !== '');
console.log(`paginated LIST, ${pages} pages of 500: ${ms(t)}`);

const rv = server.resourceVersion();
const delivered = countLines(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}`, events);
await new Promise((r) => setTimeout(r, 100));
t = performance.now();
for (let i = 0; i < events; i++) {
  const n = i % pods;
  server.update('pods', { metadata: { name: `pod-${n}`, namespace: `ns-${n % 50}`, labels: { app: `a${i % 7}` } }, spec: { payload } });
}
const produced = ms(t);
const bytes = await delivered;
console.log(`${events} watch events (${(bytes / 1e6).toFixed(0)} MB): produced in ${produced}, delivered in ${ms(t)}`);
await server.close();
