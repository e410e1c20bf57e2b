// The independent phase's server process: a loopback pod server in the shape of issue 29's outside harness, not the fake API server.
//
// Forked (compiled) by bench/lib/indep-phase.ts and driven over IPC (`IndepCommand`, bench/lib/rpc.ts). What it serves:
// - GET /api/v1/pods?limit=500[&continue=…]: pages of pods, items WITHOUT kind and apiVersion (as
//   kube-apiserver sends list items), the continue token an offset; without `limit` one whole list;
// - GET /api/v1/pods?watch=1…: an open watch. Nothing comes on it until the runner arms a burst
//   (`burst`, sent once the contender printed `synced`); the newest open watch then gets `events`
//   MODIFIED events GENERATED LIVE — each one a pod object modified and `JSON.stringify`d (with kind and
//   apiVersion, as a watch sends them) while the burst runs — written in 64 KiB chunks, one chunk in
//   flight (the next is written on `drain`).
// The pods are `indepPod(i)`: bench/lib/pods.ts's `makePod` less its tolerations and readiness probe,
// about 4.6 KB as served. Pages are serialised once at `load`, so the sync measures the client.
// `IndepShape` turns one variable at a time towards the fake-server phases' shape (issue 29, point 2).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { indepPod, makePod, type BenchPod } from './pods.js';
import { DEFAULT_SHAPE, type IndepShape } from './protocol.js';
import { serveRpc } from './rpc.js';

/** Commands of the runner. */
export type IndepCommand = { cmd: 'load'; pods: number; shape: IndepShape } | { cmd: 'burst'; events: number } | { cmd: 'reset' } | { cmd: 'exit' };

/** The answer to `load`. */
export interface IndepLoad {
  url: string;
  token: string;
  /** Bytes of one pod as a watch event's object (with kind and apiVersion), average over a sample. */
  podBytes: number;
}

/** The answer to `burst` (sent when the burst was written, or failed). */
export interface IndepBurst {
  events: number;
  /** Seconds from the first chunk to the last written. */
  seconds: number;
  chunks: number;
  /** The server's own CPU over the burst (generation and writes), ms. */
  cpuMs: number;
}

const TOKEN = 'indep-token';
const CHUNK = 65_536;
const LIST_RV = 1_000_000;

let shape: IndepShape = DEFAULT_SHAPE;
let population = 0;
/** Each pod's list-item JSON (no kind, no apiVersion), with resourceVersion. */
let items: string[] = [];
const watches: http.ServerResponse[] = [];
let armed: { events: number; reply: (r: IndepBurst) => void } | undefined;
let seq = 0;

function podOf(i: number): BenchPod {
  return shape.pod === 'indep' ? indepPod(i) : makePod(i);
}

function listItem(i: number): string {
  const { apiVersion: _a, kind: _k, ...rest } = podOf(i);
  return JSON.stringify({ ...rest, metadata: { ...rest.metadata, resourceVersion: String(LIST_RV) } });
}

/** Writes `text` and waits for `drain` when the socket's buffer is full. */
function write(res: http.ServerResponse, text: string | Buffer): Promise<void> {
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function serveList(res: http.ServerResponse, query: URLSearchParams): Promise<void> {
  const limit = shape.list === 'paged' ? Number(query.get('limit') ?? 0) : 0;
  const from = Number(query.get('continue') ?? 0);
  const to = limit > 0 ? Math.min(population, from + limit) : population;
  const meta = to < population ? { resourceVersion: String(LIST_RV), continue: String(to), remainingItemCount: population - to } : { resourceVersion: String(LIST_RV) };
  res.writeHead(200, { 'Content-Type': 'application/json' });
  await write(res, `{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(meta)},"items":[`);
  for (let i = from; i < to; i += 500) await write(res, (i > from ? ',' : '') + items.slice(i, Math.min(to, i + 500)).join(','));
  res.end(']}');
}

/** Generates `events` MODIFIED events live into `res`, 64 KiB at a time. */
async function burst(res: http.ServerResponse, events: number): Promise<IndepBurst> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let chunks = 0;
  let pending = '';
  const replay = shape.events === 'replay' ? Array.from({ length: events }, () => eventLine()) : undefined;
  const perEvent = shape.chunk === 'event' ? 1 : CHUNK;
  for (let e = 0; e < events && !res.destroyed; e++) {
    pending += replay === undefined ? eventLine() : replay[e];
    if (perEvent === 1) {
      await write(res, pending);
      pending = '';
      chunks++;
    }
    while (pending.length >= CHUNK) {
      // ASCII only: string length is byte length.
      await write(res, pending.slice(0, CHUNK));
      pending = pending.slice(CHUNK);
      chunks++;
    }
  }
  if (pending.length > 0) {
    await write(res, pending);
    chunks++;
  }
  const used = process.cpuUsage(cpu0);
  return { events, seconds: (performance.now() - t0) / 1000, chunks, cpuMs: (used.user + used.system) / 1000 };
}

/** The next MODIFIED event, built and serialised now. */
function eventLine(): string {
  seq++;
  const pod = podOf(seq % population);
  pod.metadata.resourceVersion = String(LIST_RV + seq);
  (pod.metadata.annotations as Record<string, string>)['bench.kube-informer.dev/seq'] = String(seq);
  (pod.status.containerStatuses as Array<{ restartCount: number }>)[0].restartCount = seq % 1000;
  return `${JSON.stringify({ type: 'MODIFIED', object: pod })}\n`;
}

function startBurst(): void {
  const res = watches.at(-1);
  if (armed === undefined || res === undefined) return;
  const { events, reply } = armed;
  armed = undefined;
  void burst(res, events).then(reply);
}

const server = http.createServer((req, res) => {
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    res.writeHead(401).end();
    return;
  }
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname !== '/api/v1/pods') {
    res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"kind":"Status","status":"Failure","code":404}');
    return;
  }
  const watch = url.searchParams.get('watch');
  if ((watch === '1' || watch === 'true') && url.searchParams.has('sendInitialEvents')) {
    // No streaming lists here (kube-apiserver with the WatchList gate off answers so): a client pages.
    const message = 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled';
    res.writeHead(422, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Invalid', code: 422 }));
    return;
  }
  if (watch === '1' || watch === 'true') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    watches.push(res);
    res.on('close', () => {
      const at = watches.indexOf(res);
      if (at !== -1) watches.splice(at, 1);
    });
    startBurst();
    return;
  }
  void serveList(res, url.searchParams);
});

function load(pods: number, given: IndepShape): IndepLoad {
  shape = given;
  population = pods;
  seq = 0;
  items = Array.from({ length: pods }, (_, i) => listItem(i));
  (globalThis as { gc?: () => void }).gc?.();
  const sample = Array.from({ length: 200 }, (_, i) => JSON.stringify({ ...podOf(i), metadata: { ...podOf(i).metadata, resourceVersion: String(LIST_RV) } }).length);
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, token: TOKEN, podBytes: sample.reduce((a, b) => a + b, 0) / sample.length };
}

// Commands are served once the server listens; a burst answers when it was written, other commands meanwhile.
server.listen(0, '127.0.0.1', () =>
  serveRpc<IndepCommand>((msg) => {
    if (msg.cmd === 'load') return load(msg.pods, msg.shape);
    if (msg.cmd === 'reset') {
      // Between contenders: no watch of the last one left open, no burst left armed for the next one.
      armed = undefined;
      for (const res of [...watches]) res.destroy();
      return undefined;
    }
    if (msg.cmd === 'burst') {
      return new Promise<IndepBurst>((resolve) => {
        armed = { events: msg.events, reply: resolve };
        startBurst();
      });
    }
    for (const res of [...watches]) res.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  }),
);
