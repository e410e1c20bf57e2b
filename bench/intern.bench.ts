// Issue 29's memory experiment: heap per cached pod and CPU per watch event with and without sharing
// repeated string values (bench/lib/intern.ts), in one process, without a server.
//
// Run: npm run bench:intern -- [pods=10000] [events=20000] [reps=5] [--write] (= npm run build:bench, then
// node --expose-gc .cache/bench-build/bench/intern.bench.js …: compiled, as users run it, bench/lib/build.ts says why). `--write`
// writes bench/intern.md, which bench/lib/render.ts copies into docs/benchmarks.md. Not part of npm test.
//
// For each pod shape (`makePod`, `indepPod`, and the Deployment-replica population of
// bench/lib/intern-pods.ts) and each variant (no transform, `internStrings()`, `stripManagedFields`, both)
// one SharedIndexInformer lists the pods from memory (a ListerWatcher whose list is `JSON.parse` of one
// body, as pipeline.bench.ts does), then takes a burst of MODIFIED events decoded from 64 KiB chunks by
// the library's decoder. Heap per pod: `heapUsed` after two full GCs once synced (and again after the
// burst, when the cache holds the objects the watch decoded), minus the same before the informer was
// created, divided by the pods — the table of the transform included. CPU per event: `process.cpuUsage()`
// from the first event to the last handler call. Repetitions alternate the variants' order; medians.

import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { SharedIndexInformer, composeTransforms, stripManagedFields } from '../src/informer/index.js';
import { decodeWatchStream, type ListerWatcher, type WatchEvent } from '../src/listwatch/index.js';
import type { KubeObject } from '../src/core/index.js';
import { indepPod, makePod, type BenchPod } from './lib/pods.js';
import { REPLICAS, deploymentPod } from './lib/intern-pods.js';
import { POD_PATHS, POD_TOP_PATHS, internStrings, type InternTransform } from './lib/intern.js';
import { summarize } from './lib/stats.js';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const PODS = Number(args[0] ?? 10_000);
const EVENTS = Number(args[1] ?? 20_000);
const REPS = Number(args[2] ?? 5);
const WRITE = process.argv.includes('--write');
const LIST_RV = 1000;
const CHUNK = 65_536;
const QUIET = { debug() {}, info() {}, warn() {}, error() {} };
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const fmt = (x: number, digits = 0): string => (Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }).replace(/,/g, ' ') : '—');

/** Pod shapes: generator and label. */
const SHAPES: Array<[(i: number) => BenchPod, string]> = [
  [makePod, "`makePod` (bench's pods: each its own ReplicaSet)"],
  [indepPod, '`indepPod` (the independent phase’s pods)'],
  [deploymentPod, `Deployment replicas (${fmt(Math.ceil(PODS / REPLICAS))} × ${REPLICAS}, 50 namespaces, 200 nodes)`],
];

interface Variant {
  name: string;
  label: string;
  /** A fresh transform per informer (the table belongs to it), or none. */
  make: () => { transform?: (o: KubeObject) => KubeObject; table?: InternTransform };
}
const VARIANTS: Variant[] = [
  { name: 'plain', label: 'no transform', make: () => ({}) },
  { name: 'intern', label: '`internStrings()`', make: () => { const t = internStrings(); return { transform: t, table: t }; } },
  { name: 'intern-paths', label: '`internStrings({ paths: POD_PATHS })`', make: () => { const t = internStrings({ paths: POD_PATHS }); return { transform: t, table: t }; } },
  { name: 'intern-top', label: '`internStrings({ paths: POD_TOP_PATHS })`', make: () => { const t = internStrings({ paths: POD_TOP_PATHS }); return { transform: t, table: t }; } },
  { name: 'intern-v8', label: "`internStrings({ table: 'v8' })`", make: () => { const t = internStrings({ table: 'v8' }); return { transform: t, table: t }; } },
  { name: 'strip', label: '`stripManagedFields`', make: () => ({ transform: stripManagedFields }) },
  { name: 'strip+intern', label: '`stripManagedFields` then `internStrings()`', make: () => { const t = internStrings(); return { transform: composeTransforms<KubeObject>(stripManagedFields, t), table: t }; } },
];

interface Sample {
  syncHeap: number;
  watchHeap: number;
  syncCpuUs: number;
  eventCpuUs: number;
  tableSize: number;
  hitRate: number;
}

function heapAfterGc(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

function bodies(pod: (i: number) => BenchPod): { list: string; chunks: Buffer[] } {
  const items = Array.from({ length: PODS }, (_, i) => pod(i));
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(LIST_RV) }, items });
  const parts: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const p = items[i % PODS];
    const object = { ...p, metadata: { ...p.metadata, resourceVersion: String(LIST_RV + 1 + i) } };
    parts.push(`${JSON.stringify({ type: 'MODIFIED', object })}\n`);
  }
  const body = Buffer.from(parts.join(''));
  const chunks: Buffer[] = [];
  for (let i = 0; i < body.length; i += CHUNK) chunks.push(body.subarray(i, i + CHUNK));
  return { list, chunks };
}

/**
 * Where the repeated bytes are, per path (arrays as `[]`, managedFields' field sets as one `fieldsV1.*`):
 * string values over 10 characters (shorter ones V8 already shares), the estimated heap of each string
 * (16-byte header plus its characters rounded up to 8: Node's V8 without pointer compression), and what
 * sharing equal values would save per pod. An estimate from the values, not a heap measurement.
 */
function repeatedBytes(pod: (i: number) => BenchPod): Array<{ path: string; perPod: number; distinct: number; bytes: number; saveable: number }> {
  const byPath = new Map<string, { count: number; bytes: number; distinct: Set<string> }>();
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'string') {
      if (v.length <= 10) return;
      const p = byPath.get(path) ?? { count: 0, bytes: 0, distinct: new Set<string>() };
      p.count++;
      p.bytes += 16 + Math.ceil(v.length / 8) * 8;
      p.distinct.add(v);
      byPath.set(path, p);
    } else if (Array.isArray(v)) for (const x of v) walk(x, `${path}[]`);
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) walk(x, path.includes('fieldsV1') ? path : `${path}.${k}`);
  };
  for (let i = 0; i < PODS; i++) walk(pod(i), '');
  return [...byPath].map(([path, p]) => ({ path: path.slice(1), perPod: p.count / PODS, distinct: p.distinct.size, bytes: p.bytes / PODS, saveable: (p.bytes * (1 - p.distinct.size / p.count)) / PODS })).sort((a, b) => b.saveable - a.saveable);
}

/**
 * CPU µs per pod of each variant's transform alone, on pods just parsed from their own JSON text (parsing
 * subtracted): the steadiest figure of the cost, free of the informer's and the GC's noise. Medians over
 * the repetitions, variants alternated.
 */
function transformCost(pod: (i: number) => BenchPod): Map<string, number> {
  const texts = Array.from({ length: PODS }, (_, i) => JSON.stringify(pod(i)));
  const sides: Array<[string, (o: KubeObject) => KubeObject]> = [['parse', (o) => o], ...VARIANTS.filter((v) => v.name !== 'plain').map((v): [string, (o: KubeObject) => KubeObject] => [v.name, v.make().transform!])];
  const samples = new Map<string, number[]>(sides.map(([n]) => [n, []]));
  for (let r = -1; r < REPS; r++) {
    for (const [name, fn] of r % 2 === 0 ? sides : [...sides].reverse()) {
      const start = process.cpuUsage();
      for (const text of texts) fn(JSON.parse(text) as KubeObject);
      const used = process.cpuUsage(start);
      if (r >= 0) samples.get(name)!.push((used.user + used.system) / PODS);
    }
  }
  const parse = summarize(samples.get('parse')!).median;
  return new Map([...samples].filter(([n]) => n !== 'parse').map(([n, xs]) => [n, summarize(xs).median - parse]));
}

/** The claim that the objects stay plain JSON: each transform's output serialises to the same text. */
function roundTrips(pod: (i: number) => BenchPod): void {
  for (const v of VARIANTS) {
    const { transform } = v.make();
    for (let i = 0; i < 200; i++) {
      const text = JSON.stringify(pod(i));
      const plain = JSON.stringify(stripManagedFields(JSON.parse(text) as KubeObject));
      const out = JSON.stringify(transform === undefined ? JSON.parse(text) : transform(JSON.parse(text) as KubeObject));
      if (out !== text && out !== plain) throw new Error(`${v.name} changed pod ${i}`);
    }
  }
}

async function measure(list: string, chunks: Buffer[], variant: Variant): Promise<Sample> {
  const before = heapAfterGc();
  const { transform, table } = variant.make();
  let release!: () => void;
  const armed = new Promise<void>((resolve) => (release = resolve));
  let cpu = process.cpuUsage();
  let opened = 0;
  const lw: ListerWatcher<KubeObject> = {
    list: () => Promise.resolve(JSON.parse(list)),
    watch: async (_options, signal) => {
      if (opened++ > 0) return new Promise<never>(() => {}); // one burst; a later watch never opens
      await armed;
      cpu = process.cpuUsage();
      return decodeWatchStream<KubeObject>(Readable.from(chunks), { signal }) as AsyncIterable<WatchEvent<KubeObject>>;
    },
  };
  const syncStart = process.cpuUsage();
  const inf = new SharedIndexInformer<KubeObject>(lw, { name: 'intern', transform, logger: QUIET });
  let seen = 0;
  let finished!: (cpuUs: number) => void;
  const burst = new Promise<number>((resolve) => (finished = resolve));
  const reg = inf.addEventHandler({
    onUpdate: () => {
      if (++seen === EVENTS) {
        const used = process.cpuUsage(cpu);
        finished(used.user + used.system);
      }
    },
  });
  const stop = new AbortController();
  const running = inf.run(stop.signal);
  await Promise.all([inf.whenSynced(), reg.whenSynced()]);
  const syncUsed = process.cpuUsage(syncStart);
  const syncHeap = (heapAfterGc() - before) / PODS;
  release();
  const eventCpuUs = (await burst) / EVENTS;
  const watchHeap = (heapAfterGc() - before) / PODS;
  const stats = table?.stats();
  const sample: Sample = {
    syncHeap,
    watchHeap,
    syncCpuUs: (syncUsed.user + syncUsed.system) / PODS,
    eventCpuUs,
    tableSize: table?.size() ?? 0,
    hitRate: stats === undefined || stats.lookups === 0 ? Number.NaN : stats.hits / stats.lookups,
  };
  if (inf.lister().list().length !== PODS) throw new Error(`${variant.name}: cache holds ${inf.lister().list().length} pods`);
  stop.abort();
  await running;
  return sample;
}

const range = (xs: number[], digits = 0): string => {
  const s = summarize(xs);
  return s.n === 1 ? fmt(s.median, digits) : `${fmt(s.min, digits)} / **${fmt(s.median, digits)}** / ${fmt(s.max, digits)}`;
};

async function main(): Promise<void> {
  const load = [loadavg()[0]];
  const started = new Date();
  const rows: string[][] = [];
  const verdicts: string[] = [];
  const failed = new Set<string>();
  const paths: string[] = [];
  for (const [pod, shapeLabel] of SHAPES) {
    const { list, chunks } = bodies(pod);
    roundTrips(pod);
    const rb = repeatedBytes(pod);
    const total = rb.reduce((sum, r) => sum + r.bytes, 0);
    const saveable = rb.reduce((sum, r) => sum + r.saveable, 0);
    const top = rb.slice(0, 8).map((r) => `\`${r.path}\` ${fmt(r.saveable)}`).join(', ');
    const unique = rb.filter((r) => r.saveable < 1).map((r) => `\`${r.path}\``).join(', ');
    paths.push(`- ${shapeLabel}: strings over 10 characters ≈ ${fmt(total)} B/pod, of which ≈ ${fmt(saveable)} B/pod repeat. Most: ${top}. Unique per pod: ${unique === '' ? 'none' : unique}.`);
    const alone = transformCost(pod);
    const samples = new Map<string, Sample[]>(VARIANTS.map((v) => [v.name, []]));
    for (let r = -1; r < REPS; r++) {
      for (const v of r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
        const s = await measure(list, chunks, v);
        if (r >= 0) samples.get(v.name)!.push(s); // r = -1 warms up
      }
    }
    const med = (name: string, f: (s: Sample) => number): number => summarize(samples.get(name)!.map(f)).median;
    for (const v of VARIANTS) {
      const xs = samples.get(v.name)!;
      const base = v.name.startsWith('strip') ? 'strip' : 'plain';
      const heapRatio = med(v.name, (s) => s.syncHeap) / med(base, (s) => s.syncHeap);
      const cpuRatio = med(v.name, (s) => s.eventCpuUs) / med(base, (s) => s.eventCpuUs);
      const row = [
        shapeLabel,
        v.label,
        range(xs.map((s) => s.syncHeap)),
        range(xs.map((s) => s.watchHeap)),
        v.name === base ? '—' : `${fmt((1 - heapRatio) * 100, 1)} %`,
        range(xs.map((s) => s.syncCpuUs), 1),
        range(xs.map((s) => s.eventCpuUs), 2),
        v.name === base ? '—' : `${fmt((cpuRatio - 1) * 100, 1)} %`,
        v.name === 'plain' ? '—' : `${fmt(alone.get(v.name)!, 1)}${v.name === base ? '' : ` (${fmt((alone.get(v.name)! - (alone.get(base) ?? 0)) / med(base, (s) => s.eventCpuUs) * 100, 0)} %)`}`,
        xs[0].tableSize === 0 || v.name === 'intern-v8' ? '—' : `${fmt(xs[0].tableSize)} (${fmt(xs[0].hitRate * 100, 0)} % hits)`,
      ];
      rows.push(row);
      console.log(row.join(' | '));
      if (v.name.startsWith('intern')) {
        const pass = heapRatio <= 0.85 && cpuRatio <= 1.05;
        if (!pass) failed.add(v.name);
        verdicts.push(`${shapeLabel}, ${v.label}: ${fmt((1 - heapRatio) * 100, 1)} % heap per pod at ${cpuRatio >= 1 ? '+' : ''}${fmt((cpuRatio - 1) * 100, 1)} % CPU per event, the transform alone ${fmt(alone.get(v.name)!, 1)} µs per pod (${pass ? 'passes' : 'fails'})`);
      }
    }
  }
  load.push(loadavg()[0]);
  const command = `npm run bench:intern -- ${PODS} ${EVENTS} ${REPS}${WRITE ? ' --write' : ''}`;
  const md = [
    '## Memory: sharing repeated string values (issue 29)',
    '',
    `Measured on ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC with \`${command}\` (Node ${process.version}, load average ${fmt(load[0], 1)} at the start and ${fmt(load[1], 1)} at the end, on 2 cores). One process, no server: ${fmt(PODS)} pods listed from memory into a \`SharedIndexInformer\` with one handler, then ${fmt(EVENTS)} MODIFIED events decoded from 64 KiB chunks (bench/intern.bench.ts). Heap per pod: \`heapUsed\` after two full GCs once synced (and after the burst: the objects the watch decoded), minus the same before the informer was created, the transform's table included. CPU per event over the burst. ${REPS} repetitions, variants alternated; min / **median** / max; savings and CPU against the same shape without \`internStrings\` (with \`stripManagedFields\` for the combined rows). *Transform alone*: CPU of the transform applied to each pod just parsed from its own JSON, parsing subtracted (medians of ${REPS} alternated passes over the ${fmt(PODS)} pods) — the steadiest figure of its cost — and its share of the informer's CPU per event without it. The table: strings it holds after the run, and the share of its lookups that found an equal string.`,
    '',
    `The transform under test is \`internStrings()\` of bench/lib/intern.ts (not shipped): it walks each object as it enters the cache and replaces string values of 11 to 128 characters, except under \`uid\`, \`resourceVersion\`, \`containerID\` and \`fieldsV1\`, by the equal string of a two-generation table of at most 2 × 16 384 strings (V8's JSON.parse already shares property names, and string values of 10 characters or fewer). \`paths: POD_PATHS\` looks up only the ${POD_PATHS.length} paths of a pod whose values can repeat instead of walking everything; \`paths: POD_TOP_PATHS\` only the ${POD_TOP_PATHS.length} that hold most of the repeated bytes (node name, images, image digests, conditions); \`table: 'v8'\` walks like the first but keeps no table: it stores each value as a key of a scratch object and deletes it, which makes V8 internalize the string in place (V8's string table is weak).`,
    '',
    '| pod shape | transform | heap B/pod, synced | heap B/pod, after the burst | heap saved | sync CPU µs/pod | CPU µs/event | CPU per event | transform alone, µs/pod (÷ CPU/event) | table (hits) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
    'Where the repeated bytes are (estimated from the values: string heap = 16-byte header + characters rounded up to 8; B/pod that sharing equal values would save, by path):',
    '',
    ...paths,
    '',
    `Rule (issue 29): adopt only if it saves ≥ 15 % heap per full pod (no \`stripManagedFields\`) at ≤ 5 % CPU per event. ${verdicts.join('; ')}. ${failed.size < 2 ? 'One variant passes on every shape.' : 'No variant passes on every shape: by the rule, not adopted.'}`,
    '',
  ].join('\n');
  console.log(md);
  if (WRITE) writeFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'intern.md'), md);
}

await main();
