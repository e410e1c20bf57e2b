// Benchmark of the controller runtime against the hand-written loop it replaces: keys per second, and write-to-reconcile latency at a steady write rate.
//
// Run: npx tsx bench/controller.bench.ts [--keys 20000] [--reps 5] [--concurrency 4] [--deadline-ms 60000]
//                                         [--rate 500] [--seconds 10] [--objects 2000] [--json]
// `npm run bench` runs it (compiled with tsc and run by plain node, as users run the package) as its
// controller phase; `--json` prints one JSON line for it instead of the summary. Not part of npm test.
// (`--deadline-ms 0` turns the runtime's per-reconcile deadline timer off, to see what it costs.)
//
// Both sides (bench/lib/controller-sides.ts) have the same concurrency and a no-op reconcile:
//   runtime       Controller.for(factory, resource).build(noop, { concurrency })
//   hand-written  informer handler → RateLimitingQueue → `concurrency` workers (get, reconcile, forget, done)
// keys/s: over an in-process FakeControllerSource (no HTTP: the path from an informer event to a
// reconcile is what is measured), K distinct pods added after both are running, from the first add to
// the last key reconciled. latency: through the fake API server over HTTP at a steady write rate
// (bench/lib/controller-latency.ts), from each write to the start of the reconcile that reads it.
// Repetitions alternate the two sides; medians are printed with their ratio. A third side,
// runtime-traced (keys/s only), is the runtime with a tracerProvider sampling every span
// (bench/lib/controller-tracing.ts): what tracing costs per reconcile.

import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { resources, type KubeObject } from '../src/core/index.js';
import { SharedInformerFactory } from '../src/informer/index.js';
import type { ListerWatcher } from '../src/listwatch/types.js';
import { FakeControllerSource } from '../src/testing/fake-controller-source.js';
import { measureSteadyLatency, type SteadyLatency } from './lib/controller-latency.js';
import { handWrittenSide, median, runtimeSide, type SideName, type SideOptions, type TracedSideName } from './lib/controller-sides.js';
import { discardingTracerProvider } from './lib/controller-tracing.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

const KEYS = arg('keys', 20_000);
const REPS = arg('reps', 5);
const OPTIONS: SideOptions = { concurrency: arg('concurrency', 4), deadlineMs: arg('deadline-ms', 60_000) };
const STEADY = { rate: arg('rate', 500), seconds: arg('seconds', 10), objects: arg('objects', 2000) };
const JSON_OUT = process.argv.includes('--json');

const pod = (i: number): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, namespace: `ns${i % 20}` } });

const tracing = discardingTracerProvider();

/** Keys per second through one side: a burst of `KEYS` new pods over an in-process source. */
async function keysPerSecond(sideName: SideName | TracedSideName): Promise<number> {
  const source = new FakeControllerSource<KubeObject>();
  const factory = new SharedInformerFactory(undefined, { logger: false, listWatchFor: () => source as unknown as ListerWatcher<unknown> });
  const side =
    sideName === 'runtime-traced'
      ? runtimeSide(factory, resources.pods, { ...OPTIONS, tracerProvider: tracing.provider })
      : (sideName === 'runtime' ? runtimeSide : handWrittenSide)(factory, resources.pods, OPTIONS);
  const ac = new AbortController();
  factory.start(ac.signal);
  let reconciled = 0;
  let reached: () => void = () => undefined;
  const burst = new Promise<void>((resolve) => (reached = resolve));
  const running = side.run(ac.signal, () => {
    if (++reconciled === KEYS) reached();
  });
  await factory.waitForCacheSync(ac.signal);
  await turn();
  const t0 = performance.now();
  for (let i = 0; i < KEYS; i++) source.add(pod(i));
  await burst;
  const perSecond = KEYS / ((performance.now() - t0) / 1000);
  ac.abort();
  await running;
  await factory.shutdown();
  return perSecond;
}

/** Everything one run of this benchmark measured (the `--json` line, and `npm run bench`'s controller section). */
export interface ControllerBenchResult {
  /** The parameters. */
  keys: number;
  reps: number;
  concurrency: number;
  deadlineMs: number;
  rate: number;
  seconds: number;
  objects: number;
  node: string;
  /** Per side, one entry per repetition. */
  keysPerSecond: Record<SideName, number[]>;
  latency: Record<SideName, SteadyLatency[]>;
  /** The runtime with tracing on (every span sampled, batched, dropped): keys/s per repetition, spans exported per key. Absent in results from before it. */
  traced?: { keysPerSecond: number[]; spansPerKey: number };
}

async function main(): Promise<void> {
  const sides: SideName[] = ['runtime', 'hand-written'];
  const result: ControllerBenchResult = {
    keys: KEYS,
    reps: REPS,
    ...OPTIONS,
    ...STEADY,
    node: process.version,
    keysPerSecond: { runtime: [], 'hand-written': [] },
    latency: { runtime: [], 'hand-written': [] },
    traced: { keysPerSecond: [], spansPerKey: 0 },
  };
  const traced = result.traced!;
  for (const side of sides) await keysPerSecond(side); // warm-up of every code path
  await tracing.traced(() => keysPerSecond('runtime-traced'));
  await tracing.provider.forceFlush();
  const before = tracing.spans();
  for (let rep = 0; rep < REPS; rep++) {
    const order = rep % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) result.keysPerSecond[side].push(await keysPerSecond(side));
    traced.keysPerSecond.push(await tracing.traced(() => keysPerSecond('runtime-traced')));
    for (const side of order) result.latency[side].push(await measureSteadyLatency(side, { ...OPTIONS, ...STEADY }));
  }
  await tracing.provider.forceFlush();
  traced.spansPerKey = (tracing.spans() - before) / (KEYS * REPS);
  if (JSON_OUT) {
    console.log(JSON.stringify(result));
    return;
  }
  const line = (side: SideName): string => {
    const l = result.latency[side];
    return `${Math.round(median(result.keysPerSecond[side])).toLocaleString('en')} keys/s; write→reconcile p50 ${median(l.map((x) => x.p50)).toFixed(2)} ms, p99 ${median(l.map((x) => x.p99)).toFixed(2)} ms (${l.reduce((n, x) => n + x.reconciled, 0)}/${l.reduce((n, x) => n + x.writes, 0)} writes seen)`;
  };
  console.log(`controller runtime vs hand-written loop — ${KEYS} keys, concurrency ${OPTIONS.concurrency}, ${STEADY.rate} writes/s for ${STEADY.seconds} s over HTTP; medians of ${REPS} alternating repetitions, ${process.version}`);
  console.log(`  runtime       ${line('runtime')}`);
  console.log(`  hand-written  ${line('hand-written')}`);
  console.log(`  ratio (runtime / hand-written keys/s): ${(median(result.keysPerSecond.runtime) / median(result.keysPerSecond['hand-written'])).toFixed(2)}×`);
  const cost = 1e6 / median(traced.keysPerSecond) - 1e6 / median(result.keysPerSecond.runtime);
  console.log(`  runtime-traced ${Math.round(median(traced.keysPerSecond)).toLocaleString('en')} keys/s (${traced.spansPerKey.toFixed(2)} spans per key): tracing costs ${cost.toFixed(1)} µs per reconcile`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
