// Manual check that newListWatch lists a resourceVersion=0 answer larger than V8's maximum string length.
//
// Run: node --max-old-space-size=8192 --import tsx bench/large-list.ts [pods=120000]   (not part of npm test)
// Loads `pods` realistic pods (bench/lib/pods.ts) into the fake API server, whose watch cache answers a
// `resourceVersion=0` list whole whatever the `limit` (like kube-apiserver), then lists them once with
// newListWatch. Prints the body size (against buffer.constants.MAX_STRING_LENGTH), the item count, the
// time and the heap. Before item-by-item decoding, a body past the string limit threw ERR_STRING_TOO_LONG.

import { constants } from 'node:buffer';
import { newListWatch } from '../src/listwatch/index.js';
import { startFakeApiServer } from '../src/testing/index.js';
import { makePod } from './lib/pods.js';

const PODS = Number(process.argv[2] ?? 120_000);
const MiB = 1024 * 1024;
const mib = (n: number): string => `${(n / MiB).toFixed(0)} MiB`;

const server = await startFakeApiServer({ recordRequests: false });
try {
  let t = performance.now();
  for (let i = 0; i < PODS; i++) server.create('pods', makePod(i), { broadcast: false });
  console.log(`created ${PODS} pods in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // The body size, measured with a plain byte count of the same request.
  const raw = await fetch(`${server.url}/api/v1/pods?resourceVersion=0&limit=500`, {
    headers: { Authorization: 'Bearer fake-token' },
  });
  let bytes = 0;
  for await (const chunk of raw.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  console.log(`body: ${bytes} bytes (${mib(bytes)}); V8 string limit ${constants.MAX_STRING_LENGTH} (${mib(constants.MAX_STRING_LENGTH)}); over: ${bytes > constants.MAX_STRING_LENGTH}`);

  const lw = newListWatch(server.kubeConfig, { group: '', version: 'v1', resource: 'pods' });
  (globalThis as { gc?: () => void }).gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  t = performance.now();
  const list = await lw.list({ resourceVersion: '0', limit: 500 }, new AbortController().signal);
  const seconds = (performance.now() - t) / 1000;
  const mem = process.memoryUsage();
  console.log(
    `list: ${list.items.length} items, resourceVersion ${list.metadata.resourceVersion}, ${seconds.toFixed(1)} s; ` +
      `heapUsed ${mib(mem.heapUsed)} (+${mib(mem.heapUsed - heapBefore)}), rss ${mib(mem.rss)}`,
  );
  if (list.items.length !== PODS) throw new Error(`expected ${PODS} items, got ${list.items.length}`);
  const first = list.items[0] as { kind?: string; apiVersion?: string };
  console.log(`first item: ${first.apiVersion}/${first.kind}`);
  lw.close();
} finally {
  await server.close();
}
