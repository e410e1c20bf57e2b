// DeltaFIFO add+pop throughput against a plain Map + array queue doing the same work (npx tsx bench/fifo.bench.ts).

import { metaNamespaceKeyFunc, type KubeObject } from '../src/core/index.js';
import { DeltaFIFO, type Delta } from '../src/fifo/index.js';

const N = Number(process.env.FIFO_BENCH_N ?? 200_000);
const REPS = Number(process.env.FIFO_BENCH_REPS ?? 5);

function makeObjects(n: number): KubeObject[] {
  const out: KubeObject[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${i}`, namespace: `ns-${i % 50}`, resourceVersion: String(i + 1) } });
  }
  return out;
}

/** The baseline: key → deltas in a Map, keys in an array with a head index; pop is synchronous. */
class PlainQueue {
  items = new Map<string, Delta<KubeObject>[]>();
  queue: string[] = [];
  head = 0;
  add(obj: KubeObject): void {
    const key = metaNamespaceKeyFunc(obj);
    const d = this.items.get(key);
    if (d === undefined) {
      this.items.set(key, [{ type: 'Added', object: obj }]);
      this.queue.push(key);
    } else d.push({ type: 'Added', object: obj });
  }
  pop(): Delta<KubeObject>[] {
    const key = this.queue[this.head++];
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    const d = this.items.get(key) as Delta<KubeObject>[];
    this.items.delete(key);
    return d;
  }
  /** The same pop behind an async function, to show the cost of an awaited pop alone. */
  async popAsync(): Promise<Delta<KubeObject>[]> {
    return this.pop();
  }
}

let sink = 0;
const noop = (d: readonly Delta<KubeObject>[]): void => {
  sink += d.length;
};

type Workload = (objs: KubeObject[]) => Promise<void>;

const workloads: Record<string, Record<string, Workload>> = {
  'batch (add all, then pop all)': {
    DeltaFIFO: async (objs) => {
      const f = new DeltaFIFO<KubeObject>();
      for (const o of objs) f.add(o);
      for (let i = 0; i < objs.length; i++) await f.pop(noop);
    },
    'Map+array (sync pop)': async (objs) => {
      const q = new PlainQueue();
      for (const o of objs) q.add(o);
      for (let i = 0; i < objs.length; i++) noop(q.pop());
    },
    'Map+array (awaited pop)': async (objs) => {
      const q = new PlainQueue();
      for (const o of objs) q.add(o);
      for (let i = 0; i < objs.length; i++) noop(await q.popAsync());
    },
  },
  'interleaved (add one, pop one)': {
    DeltaFIFO: async (objs) => {
      const f = new DeltaFIFO<KubeObject>();
      for (const o of objs) {
        f.add(o);
        await f.pop(noop);
      }
    },
    'Map+array (sync pop)': async (objs) => {
      const q = new PlainQueue();
      for (const o of objs) {
        q.add(o);
        noop(q.pop());
      }
    },
    'Map+array (awaited pop)': async (objs) => {
      const q = new PlainQueue();
      for (const o of objs) {
        q.add(o);
        noop(await q.popAsync());
      }
    },
  },
};

function stats(xs: number[]): { min: number; median: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
}

const fmt = (n: number): string => `${(n / 1e6).toFixed(2)}M`;

async function main(): Promise<void> {
  const objs = makeObjects(N);
  console.log(`DeltaFIFO bench: ${N} objects, ${REPS} reps, node ${process.version}; ops/s = add+pop pairs per second`);
  for (const [workloadName, impls] of Object.entries(workloads)) {
    const rates: Record<string, number[]> = {};
    for (const name of Object.keys(impls)) rates[name] = [];
    for (const impl of Object.values(impls)) await impl(objs.slice(0, 20_000)); // warm-up
    for (let rep = 0; rep < REPS; rep++) {
      for (const [name, impl] of Object.entries(impls)) {
        const t0 = performance.now();
        await impl(objs);
        rates[name].push(N / ((performance.now() - t0) / 1000));
      }
    }
    console.log(`\n${workloadName}`);
    const fifo = stats(rates.DeltaFIFO);
    for (const [name, xs] of Object.entries(rates)) {
      const s = stats(xs);
      const ratio = name === 'DeltaFIFO' ? '' : `   DeltaFIFO/this (median) = ${(fifo.median / s.median).toFixed(2)}x`;
      console.log(`  ${name.padEnd(24)} min ${fmt(s.min)}  median ${fmt(s.median)}  max ${fmt(s.max)} ops/s${ratio}`);
    }
  }
  if (sink < 0) console.log(sink);
}

await main();
