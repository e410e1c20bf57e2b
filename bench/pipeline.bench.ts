// The informer's per-event cost over the raw floor, in one process, without a server: a watch body of
// MODIFIED pod events read from memory by the raw loop and by SharedIndexInformer, alternately.
//
// Run: npm run build:bench && node .cache/bench-build/bench/pipeline.bench.js [events=50000] [pods=10000]
// (compiled, as users run it: bench/lib/build.ts says why). Not part of npm test.
//
// `npm run bench` measures the same path end to end over HTTP, where the server shares the machine's
// two cores with the client; this one leaves out the socket and the server, so the gap it shows is
// the library's own: reflector, DeltaFIFO, indexer, processor and listeners. The raw side splits the
// same chunks on "\n", parses each line and sets the object in a Map by namespace/name — what
// bench/contenders/raw.ts does with a socket. Prints the median over alternating repetitions of
// CPU µs per event (process.cpuUsage) and events per second, each side's ratio to raw, and the time
// in GC. The `-pre` sides read the same events already parsed: compare `ki-1-pre` with `raw-pre` for
// the informer's own cost per event (reflector, DeltaFIFO, indexer, processor, listener).
// `ki-noshare` is `ki-1` with the informer's `shareUnchanged: false`.
// The fifth argument picks sides: `node … pipeline.bench.js 50000 10000 7 raw-pre,ki-1-pre`. Flags: `--chunk event`
// (one event per chunk), `--chunk split` (each event in two chunks, as kube-apiserver's watch arrives over
// TLS), `--pod indep` (the independent phase's ~4.6 KB pods), `--paced` (one chunk per macrotask: a
// producer slower than the consumer, as a server generating events live), `--thrash MB` (with `--paced`:
// the caches emptied before each chunk, as the server's own processes empty them between two events on
// a real machine — the per-event code then runs cold, which is where the real-server gap comes from).

import { Readable } from 'node:stream';
import { GCProfiler } from 'node:v8';
import { SharedIndexInformer, stripManagedFields } from '../src/informer/index.js';
import { decodeWatchStream, type ListerWatcher, type WatchEvent } from '../src/listwatch/index.js';
import { READ_READY } from '../src/listwatch/types.js';
import type { KubeObject } from '../src/core/index.js';
import { indepPod, makePod } from './lib/pods.js';

const EVENTS = Number(process.argv[2] ?? 50_000);
const PODS = Number(process.argv[3] ?? 10_000);
const REPETITIONS = Number(process.argv[4] ?? 7);
/** Only these sides (comma-separated), e.g. to profile one under `node --cpu-prof`. */
const ONLY = process.argv[5]?.split(',');
/** Bytes per chunk of the watch body; `--chunk event` gives one event per chunk, as a slow writer's watch does. */
const CHUNK_ARG = process.argv.indexOf('--chunk');
const CHUNK_MODE = CHUNK_ARG > 0 ? process.argv[CHUNK_ARG + 1] : undefined;
const PER_EVENT = CHUNK_MODE === 'event' || CHUNK_MODE === 'split';
/** `--chunk split`: every event in two chunks, cut 40 % in — how kube-apiserver's watch arrives over TLS (its 4 KiB write buffer). */
const SPLIT = CHUNK_MODE === 'split';
if (CHUNK_ARG > 0 && CHUNK_MODE !== 'event' && CHUNK_MODE !== 'split') throw new Error(`--chunk takes event or split, got ${String(CHUNK_MODE)}`);
const CHUNK = 65_536;
/** `--pod indep`: the independent phase's ~4.6 KB pods (bench/lib/pods.ts `indepPod`) instead of `makePod`'s ~5 KB. */
const POD = process.argv.includes('--pod') && process.argv[process.argv.indexOf('--pod') + 1] === 'indep' ? indepPod : makePod;
/**
 * `--paced`: one chunk per macrotask (`setImmediate`), so everything downstream drains and waits before
 * the next chunk comes — a producer slower than the consumer, as a server generating events live is —
 * instead of the next chunk ready at once (a replayed burst the client cannot keep up with).
 */
const PACED = process.argv.includes('--paced');
/** `--thrash MB` (with `--paced`): before each chunk, write one byte per cache line of MB MiB, as the server's processes do to the caches between two events on a real machine; that CPU is not counted. */
const THRASH_MB = process.argv.includes('--thrash') ? Number(process.argv[process.argv.indexOf('--thrash') + 1]) : 0;
if (!(THRASH_MB >= 0)) throw new Error('--thrash takes a size in MiB, e.g. --thrash 16');
if (THRASH_MB > 0 && !PACED) throw new Error('--thrash empties the caches between paced chunks: add --paced');
const thrashBuf = new Uint8Array(THRASH_MB * 1048576);
let thrashUs = 0;
function thrash(): void {
  if (THRASH_MB === 0) return;
  const c0 = process.cpuUsage();
  for (let i = 0; i < thrashBuf.length; i += 64) thrashBuf[i]++;
  const d = process.cpuUsage(c0);
  thrashUs += d.user + d.system;
}

/** The chunks as a stream: consumer-driven, or paced (see {@link PACED}). */
function source(chunks: Buffer[]): Readable {
  if (!PACED) return Readable.from(chunks);
  let i = 0;
  const stream = new Readable({ read() {} });
  const push = (): void => {
    if (i < chunks.length) {
      thrash();
      stream.push(chunks[i++]);
      setImmediate(push);
    } else stream.push(null);
  };
  setImmediate(push);
  return stream;
}
const LIST_RV = 1000;


function makeChunks(): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const pod = POD(i % PODS);
    const object = { ...pod, metadata: { ...pod.metadata, resourceVersion: String(LIST_RV + 1 + i) } };
    parts.push(Buffer.from(`${JSON.stringify({ type: 'MODIFIED', object })}\n`));
  }
  if (SPLIT) return parts.flatMap((p) => [p.subarray(0, Math.floor(p.length * 0.4)), p.subarray(Math.floor(p.length * 0.4))]);
  if (PER_EVENT) return parts;
  const body = Buffer.concat(parts);
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += CHUNK) out.push(body.subarray(i, i + CHUNK));
  return out;
}

/** The list both sides start from (the informer's cache must hold the pods the events modify). */
function listBody(): string {
  const items = Array.from({ length: PODS }, (_, i) => POD(i));
  return JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(LIST_RV) }, items });
}

interface Sample {
  cpuUs: number;
  wallMs: number;
  /** Time in garbage collection during the window (v8.GCProfiler). */
  gcMs: number;
  /** Scavenges (young-generation collections) during the window: a measure of what was allocated. */
  scavenges: number;
}

let profiler: GCProfiler | undefined;

/** Starts a measurement window (and a GC profiler for it). */
function begin(): [NodeJS.CpuUsage, number] {
  profiler = new GCProfiler();
  profiler.start();
  thrashUs = 0;
  return [process.cpuUsage(), performance.now()];
}

/** The raw sides' cache, holding the listed pods, and their key. */
function primed(list: string): { cache: Map<string, KubeObject>; key: (o: KubeObject) => string } {
  const cache = new Map<string, KubeObject>();
  const key = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
  for (const item of (JSON.parse(list) as { items: KubeObject[] }).items) cache.set(key(item), item);
  return { cache, key };
}

async function raw(chunks: Buffer[], list: string): Promise<Sample> {
  const { cache, key } = primed(list);
  const [cpu, start] = begin();
  let seen = 0;
  let partial = '';
  const stream = source(chunks);
  stream.setEncoding('utf8');
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = partial + chunk;
    let from = 0;
    let nl = text.indexOf('\n');
    while (nl !== -1) {
      const ev = JSON.parse(text.slice(from, nl)) as { type: string; object: KubeObject };
      cache.set(key(ev.object), ev.object);
      if (ev.type === 'MODIFIED') seen++;
      from = nl + 1;
      nl = text.indexOf('\n', from);
    }
    partial = text.slice(from);
  }
  if (seen !== EVENTS) throw new Error(`raw saw ${seen} events`);
  return done(cpu, start);
}

/** The decoder alone, into a Map: separates the decoder's share of the gap from the informer's. */
async function decoderOnly(chunks: Buffer[], list: string): Promise<Sample> {
  const { cache, key } = primed(list);
  const [cpu, start] = begin();
  let seen = 0;
  for await (const ev of decodeWatchStream<KubeObject>(source(chunks))) {
    cache.set(key(ev.object), ev.object);
    if (ev.type === 'MODIFIED') seen++;
  }
  if (seen !== EVENTS) throw new Error(`the decoder saw ${seen} events`);
  return done(cpu, start);
}

function done(cpu: NodeJS.CpuUsage, start: number): Sample {
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - start;
  const gc = profiler?.stop();
  const gcMs = (gc?.statistics ?? []).reduce((sum, s) => sum + s.cost, 0) / 1000;
  const scavenges = (gc?.statistics ?? []).filter((s) => s.gcType === 'Scavenge').length;
  return { cpuUs: used.user + used.system - thrashUs, wallMs, gcMs, scavenges };
}

/**
 * The same events already parsed, handed out as the decoder hands them (a chunk's worth at a time
 * through READ_READY, then a promise): the `-pre` sides measure the informer's own cost per event,
 * without JSON.parse and the garbage of parsing.
 */
function preparsed(events: Array<WatchEvent<KubeObject>>): AsyncIterable<WatchEvent<KubeObject>> {
  const perChunk = PER_EVENT ? 1 : Math.max(1, Math.round(CHUNK / 5_100));
  let i = 0;
  const iterator = {
    [READ_READY]: (): WatchEvent<KubeObject> | undefined => (i < events.length && i % perChunk !== 0 ? events[i++] : undefined),
    next: (): Promise<IteratorResult<WatchEvent<KubeObject>>> =>
      i < events.length ? Promise.resolve({ value: events[i++], done: false }) : new Promise<never>(() => {}),
    return: (): Promise<IteratorResult<WatchEvent<KubeObject>>> => Promise.resolve({ value: undefined, done: true }),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

async function rawPreparsed(events: Array<WatchEvent<KubeObject>>, list: string): Promise<Sample> {
  const { cache, key } = primed(list);
  const [cpu, start] = begin();
  const it = preparsed(events)[Symbol.asyncIterator]() as AsyncIterator<WatchEvent<KubeObject>> & { [READ_READY](): WatchEvent<KubeObject> | undefined };
  for (let seen = 0; seen < events.length; seen++) {
    const ev = it[READ_READY]() ?? ((await it.next()).value as WatchEvent<KubeObject>);
    cache.set(key(ev.object), ev.object);
  }
  return done(cpu, start);
}

async function informer(chunks: Buffer[], list: string, handlers: number, strip: boolean, events?: Array<WatchEvent<KubeObject>>, shareUnchanged = true): Promise<Sample> {
  let opened = 0;
  let cpu: NodeJS.CpuUsage = process.cpuUsage();
  let start = 0;
  let synced: Promise<unknown> = Promise.resolve();
  const lw: ListerWatcher<KubeObject> = {
    list: () => Promise.resolve(JSON.parse(list)),
    // The burst starts once every handler had its initial adds: only the watch is measured.
    watch: async (_options, signal) => {
      if (opened++ > 0) return new Promise<never>(() => {}); // one burst; a later watch never opens
      await synced;
      [cpu, start] = begin();
      if (events !== undefined) return preparsed(events);
      return decodeWatchStream<KubeObject>(source(chunks), { signal }) as AsyncIterable<WatchEvent<KubeObject>>;
    },
  };
  const inf = new SharedIndexInformer<KubeObject>(lw, { name: 'pipeline', transform: strip ? stripManagedFields : undefined, logger: QUIET, shareUnchanged });
  const stop = new AbortController();
  let finished: ((s: Sample) => void) | undefined;
  const result = new Promise<Sample>((resolve) => (finished = resolve));
  const counts = new Array<number>(handlers).fill(0);
  let complete = 0;
  const registrations = [];
  for (let h = 0; h < handlers; h++) {
    registrations.push(inf.addEventHandler({
      onUpdate: () => {
        if (++counts[h] === EVENTS && ++complete === handlers) finished!(done(cpu, start));
      },
    }));
  }
  synced = Promise.all([inf.whenSynced(), ...registrations.map((r) => r.whenSynced())]);
  const running = inf.run(stop.signal);
  const sample = await result;
  stop.abort();
  await running;
  return sample;
}

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const chunks = makeChunks();
  const list = listBody();
  const events = chunks.length === 0 ? [] : (Buffer.concat(chunks).toString('utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as WatchEvent<KubeObject>));
  const sides: Array<[string, () => Promise<Sample>]> = [
    ['raw', () => raw(chunks, list)],
    ['decoder', () => decoderOnly(chunks, list)],
    ['ki-1', () => informer(chunks, list, 1, false)],
    ['ki-noshare', () => informer(chunks, list, 1, false, undefined, false)],
    ['ki-3', () => informer(chunks, list, 3, false)],
    ['ki-strip', () => informer(chunks, list, 1, true)],
    ['raw-pre', () => rawPreparsed(events, list)],
    ['ki-1-pre', () => informer(chunks, list, 1, false, events)],
    ['ki-3-pre', () => informer(chunks, list, 3, false, events)],
  ];
  if (ONLY !== undefined) sides.splice(0, sides.length, ...sides.filter(([name]) => ONLY.includes(name)));
  const samples = new Map<string, Sample[]>(sides.map(([name]) => [name, []]));
  for (let r = -1; r < REPETITIONS; r++) {
    for (const [name, run] of r % 2 === 0 ? sides : [...sides].reverse()) {
      gc?.();
      const s = await run();
      if (r >= 0) samples.get(name)!.push(s); // r = -1 warms up
    }
  }
  const medians = (name: string): { cpu: number; wall: number } => {
    const xs = samples.get(name) ?? [];
    return { cpu: median(xs.map((s) => s.cpuUs)), wall: median(xs.map((s) => s.wallMs)) };
  };
  console.log(`${EVENTS} MODIFIED events over ${PODS} pods, ${REPETITIONS} repetitions (medians; the -pre sides against raw-pre)`);
  for (const [name, xs] of samples) {
    const base = medians(name.endsWith('-pre') ? 'raw-pre' : 'raw');
    const cpu = median(xs.map((s) => s.cpuUs));
    const wall = median(xs.map((s) => s.wallMs));
    const gc = median(xs.map((s) => s.gcMs));
    const scavenges = median(xs.map((s) => s.scavenges));
    const extra = ((cpu - base.cpu) / EVENTS).toFixed(2);
    console.log(`${name.padEnd(9)} ${(cpu / EVENTS).toFixed(2).padStart(6)} µs CPU/event (+${extra}; base ÷ it ${(base.cpu / cpu).toFixed(3)})  ${Math.round((EVENTS / wall) * 1000).toLocaleString('en-US').padStart(7)} events/s (÷ base ${(base.wall / wall).toFixed(3)})  GC ${((gc * 1000) / EVENTS).toFixed(2)} µs/event in ${scavenges} scavenges`);
  }
}

await main();
