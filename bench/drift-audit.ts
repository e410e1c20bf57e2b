// What a drift audit costs: one audit of an informer over N realistic pods, against the relist it stands beside.
//
// Run: node --expose-gc --import tsx bench/drift-audit.ts [pods=100000] [reps=3]   (not part of npm test; docs/operations.md)
// Loads `pods` pods (bench/lib/pods.ts) into the fake API server, syncs a pods informer, then times
// `reps` audits (a consistent, paginated, metadata-only list of 500 a page, diffed against the cache)
// and as many relists of the same informer (full objects, what "resync and hope" would cost). Prints
// medians, the bytes an audit moves against a full list's, and the heap an audit adds. The fake API
// server runs in this process, so the times include its side of each request as well.

import { resources, SharedInformerFactory } from '../src/index.js';
import { DriftAudit } from '../src/operations/index.js';
import { startFakeApiServer } from '../src/testing/index.js';
import { makePod } from './lib/pods.js';

const PODS = Number(process.argv[2] ?? 100_000);
const REPS = Number(process.argv[3] ?? 3);
const MiB = 1024 * 1024;
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Bytes of every page of a list with `accept`, 500 a page, from "" (what the audit, or a relist, reads). */
async function listBytes(url: string, accept: string): Promise<number> {
  let bytes = 0;
  let token = '';
  do {
    const query = token === '' ? 'limit=500' : `limit=500&continue=${encodeURIComponent(token)}`;
    const res = await fetch(`${url}/api/v1/pods?${query}`, { headers: { Authorization: 'Bearer fake-token', Accept: accept } });
    const text = await res.text();
    bytes += Buffer.byteLength(text);
    token = (JSON.parse(text) as { metadata?: { continue?: string } }).metadata?.continue ?? '';
  } while (token !== '');
  return bytes;
}

const server = await startFakeApiServer({ recordRequests: false });
const stop = new AbortController();
try {
  for (let i = 0; i < PODS; i++) server.create('pods', makePod(i), { broadcast: false });
  const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
  const pods = factory.forResource(resources.pods);
  factory.start(stop.signal);
  await factory.waitForCacheSync(stop.signal);
  const audit = new DriftAudit(server.kubeConfig, pods, { resource: resources.pods, logger: false });

  const audits: number[] = [];
  const heap: number[] = [];
  const relists: number[] = [];
  for (let r = 0; r < REPS; r++) {
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
    let t = performance.now();
    const report = await audit.audit(stop.signal);
    audits.push(performance.now() - t);
    clearInterval(sampler);
    heap.push(Math.max(peak, process.memoryUsage().heapUsed) - before);
    if (report.divergent !== 0 || report.listed !== PODS) throw new Error(`audit ${r}: expected a clean audit of ${PODS}, got ${JSON.stringify({ ...report, divergences: undefined })}`);
    t = performance.now();
    await pods.relist(stop.signal);
    relists.push(performance.now() - t);
  }
  const metaBytes = await listBytes(server.url, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json');
  const fullBytes = await listBytes(server.url, 'application/json');
  console.log(`drift audit of ${PODS} pods (node ${process.version}, medians of ${REPS}):`);
  console.log(`  audit:  ${median(audits).toFixed(0)} ms; ${(metaBytes / MiB).toFixed(1)} MiB listed (metadata only, ${Math.ceil(PODS / 500)} pages); heap +${(median(heap) / MiB).toFixed(0)} MiB at peak`);
  console.log(`  relist: ${median(relists).toFixed(0)} ms; ${(fullBytes / MiB).toFixed(1)} MiB listed (full objects)`);
  console.log(`  audit / relist: ${(median(audits) / median(relists)).toFixed(2)}x the time, ${(metaBytes / fullBytes).toFixed(2)}x the bytes`);
} finally {
  stop.abort();
  await server.close();
}
