// Benchmark of indexed-store updates (three indexers, 100 000 objects) against a plain Map, plus heap per object.
//
// Run: npx tsx bench/store.bench.ts   (not part of npm test)
// Prints operations/second for each, their ratio (same run), min/median/max over the repetitions, and
// the retained heap per cached object of an indexer relative to a plain Map of the same objects.

import v8 from 'node:v8';
import vm from 'node:vm';
import { deletionHandlingMetaNamespaceKeyFunc, type KubeObject } from '../src/core/index.js';
import { NamespaceIndex, metaNamespaceIndexFunc, newIndexer, type Indexers } from '../src/store/index.js';

const OBJECTS = 100_000;
const UPDATES = 300_000;
const REPETITIONS = 5;

interface Pod extends KubeObject {
  spec: { nodeName: string; containers: { name: string; image: string }[] };
  status: { phase: string; podIP: string };
}

let rv = 1;
function pod(i: number, generation: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `pod-${i}`,
      namespace: `ns-${i % 50}`,
      uid: `0000-${i}`,
      resourceVersion: String(rv++),
      labels: { app: `app-${i % 200}`, tier: i % 3 === 0 ? 'web' : 'db', 'pod-template-hash': `h${i % 977}` },
      annotations: { 'example.com/generation': String(generation) },
    },
    spec: {
      // One pod in ten moves to another node on each generation, so index buckets change.
      nodeName: `node-${(i + (i % 10 === 0 ? generation : 0)) % 500}`,
      containers: [{ name: 'main', image: `registry.example.com/app:${generation}` }],
    },
    status: { phase: 'Running', podIP: `10.0.${(i >> 8) & 255}.${i & 255}` },
  };
}

const indexers: Indexers<Pod> = {
  [NamespaceIndex]: metaNamespaceIndexFunc,
  byNode: (p) => [p.spec.nodeName],
  byApp: (p) => [p.metadata?.labels?.app ?? ''],
};

const initial = Array.from({ length: OBJECTS }, (_, i) => pod(i, 0));
const updates = Array.from({ length: UPDATES }, (_, j) => pod(j % OBJECTS, 1 + Math.floor(j / OBJECTS)));

function timeIndexer(): number {
  const store = newIndexer<Pod>(deletionHandlingMetaNamespaceKeyFunc, indexers);
  for (const p of initial) store.add(p);
  const start = process.hrtime.bigint();
  for (let j = 0; j < UPDATES; j++) store.update(updates[j]);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function timeMap(): number {
  const map = new Map<string, Pod>();
  for (const p of initial) map.set(deletionHandlingMetaNamespaceKeyFunc(p), p);
  const start = process.hrtime.bigint();
  for (let j = 0; j < UPDATES; j++) {
    const p = updates[j];
    map.set(deletionHandlingMetaNamespaceKeyFunc(p), p);
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function stats(values: number[]): { min: number; median: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

// Warm-up, then alternate so both see the same machine state.
timeIndexer();
timeMap();
const indexerOps: number[] = [];
const mapOps: number[] = [];
const ratios: number[] = [];
for (let r = 0; r < REPETITIONS; r++) {
  const a = UPDATES / timeIndexer();
  const b = UPDATES / timeMap();
  indexerOps.push(a);
  mapOps.push(b);
  ratios.push(a / b);
}

console.log(`store.update with 3 indexers over ${fmt(OBJECTS)} objects, ${fmt(UPDATES)} updates per run, ${REPETITIONS} runs`);
for (const [label, values] of [['indexer (3 indexers)', indexerOps], ['plain Map (key + set)', mapOps]] as const) {
  const s = stats(values);
  console.log(`  ${label.padEnd(24)} ops/s  min ${fmt(s.min)}  median ${fmt(s.median)}  max ${fmt(s.max)}`);
}
const rs = stats(ratios);
console.log(`  ratio indexer/Map (same run)  min ${rs.min.toFixed(2)}  median ${rs.median.toFixed(2)}  max ${rs.max.toFixed(2)}`);

// Retained heap per cached object. gc() is exposed at run time so the command stays `npx tsx ...`.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Heap retained by what `build` makes from already-existing objects, per object (the objects excluded). */
function retained(build: (objs: Pod[]) => unknown): number {
  const objs = Array.from({ length: OBJECTS }, (_, i) => pod(i, 0));
  const before = heapAfterGc();
  const holder = build(objs);
  const after = heapAfterGc();
  if (holder === undefined || objs.length !== OBJECTS) throw new Error('unreachable');
  return (after - before) / OBJECTS;
}

const objectBytes = retained((objs) => objs.map((p) => structuredClone(p)));
const mapBytes = retained((objs) => {
  const m = new Map<string, Pod>();
  for (const p of objs) m.set(deletionHandlingMetaNamespaceKeyFunc(p), p);
  return m;
});
const oneIndexBytes = retained((objs) => {
  const s = newIndexer<Pod>(deletionHandlingMetaNamespaceKeyFunc, { [NamespaceIndex]: metaNamespaceIndexFunc });
  for (const p of objs) s.add(p);
  return s;
});
const threeIndexBytes = retained((objs) => {
  const s = newIndexer<Pod>(deletionHandlingMetaNamespaceKeyFunc, indexers);
  for (const p of objs) s.add(p);
  return s;
});
const mapTotal = objectBytes + mapBytes;
const line = (label: string, bytes: number): string =>
  `  ${label.padEnd(26)}${fmt(objectBytes + bytes)} bytes (structure ${fmt(bytes)})  x${((objectBytes + bytes) / mapTotal).toFixed(3)} of the Map`;
console.log(`heap per cached object: ${fmt(OBJECTS)} pod-like objects of ~${fmt(objectBytes)} bytes each (cloned array included)`);
console.log(line('plain Map', mapBytes));
console.log(line('indexer, namespace index', oneIndexBytes));
console.log(line('indexer, 3 indexers', threeIndexBytes));
