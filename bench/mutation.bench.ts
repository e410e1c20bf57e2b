// Cost of the cache-mutation detector: one full comparison over 10 000 realistic pods, and the heap its copies take.
//
// Run: npx tsx bench/mutation.bench.ts   (not part of npm test)
// Env: MUTATION_BENCH_N (objects, default 10 000), MUTATION_BENCH_REPS (timed comparisons, default 15),
// MUTATION_BENCH_STRIP=1 (drop managedFields first, as the `stripManagedFields` transform does:
// ~3.9 KB pods instead of ~5 KB).
// Prints the JSON size of the pods, the time to copy them (addObject), min/median/max ms of one
// compareObjects() over all of them, that median as the share of one core at the 1 s default period
// (and at the old 10 s one), and the retained heap of the copies. The comparison runs on the event
// loop, so the median is also how long each period blocks the loop.

import v8 from 'node:v8';
import vm from 'node:vm';
import { FakeClock } from '../src/core/index.js';
import { CacheMutationDetector } from '../src/mutation/index.js';
import { stripManagedFields } from '../src/informer/index.js';
import { makePod } from './lib/pods.js';
import { fmt, summarize } from './lib/stats.js';

const OBJECTS = Number(process.env.MUTATION_BENCH_N ?? 10_000);
const REPETITIONS = Number(process.env.MUTATION_BENCH_REPS ?? 15);
const STRIP = process.env.MUTATION_BENCH_STRIP === '1';
const WARMUP = 3;
const PERIOD_MS = 1000; // the detector's default period (client-go's)
const OLD_PERIOD_MS = 10_000; // the default before it was 1 s

// gc() is exposed at run time so the command stays `npx tsx ...`.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

// Objects as a watch decoder hands them out: parsed from JSON, so no structure is shared between pods.
const json = Array.from({ length: OBJECTS }, (_, i) => JSON.stringify(STRIP ? stripManagedFields(makePod(i)) : makePod(i)));
const pods = json.map((s) => JSON.parse(s) as ReturnType<typeof makePod>);
const bytes = json.map((s) => Buffer.byteLength(s));
json.length = 0;
const keyOf = (p: ReturnType<typeof makePod>): string => `${p.metadata.namespace}/${p.metadata.name}`;

// A FakeClock that never moves: no copy expires while we measure. The retention is irrelevant then.
const clock = new FakeClock();
const found: unknown[] = [];
const detector = new CacheMutationDetector({ clock, onMutation: (e) => found.push(e) });

const heapBefore = heapAfterGc();
const addStart = process.hrtime.bigint();
for (const p of pods) detector.addObject(keyOf(p), p);
const addMs = ms(addStart);
const heapAfter = heapAfterGc();
if (detector.size !== OBJECTS) throw new Error(`expected ${OBJECTS} copies, got ${detector.size}`);

for (let r = 0; r < WARMUP; r++) detector.compareObjects();
const times: number[] = [];
for (let r = 0; r < REPETITIONS; r++) {
  const start = process.hrtime.bigint();
  const result = detector.compareObjects();
  times.push(ms(start));
  if (result.length !== 0) throw new Error('found a mutation nobody made');
}

// The same comparison with one pod mutated: the report path (diff + fresh copy) for one object.
pods[OBJECTS >> 1].metadata.labels.team = 'mutated';
const mutatedStart = process.hrtime.bigint();
const reported = detector.compareObjects();
const mutatedMs = ms(mutatedStart);
if (reported.length !== 1 || found.length !== 1) throw new Error('the mutation was not reported once');

const size = summarize(bytes);
const t = summarize(times);
const copiesBytes = heapAfter - heapBefore;
console.log(`cache-mutation detector over ${fmt(OBJECTS)} pods (makePod${STRIP ? ' without managedFields' : ''}: JSON ${fmt(size.min)}–${fmt(size.max)} bytes, median ${fmt(size.median)})`);
console.log(`  addObject (deep copy) of all       ${fmt(addMs, 1)} ms  (${fmt((addMs * 1000) / OBJECTS, 1)} µs per pod)`);
console.log(`  compareObjects(), ${REPETITIONS} runs      min ${fmt(t.min, 1)}  median ${fmt(t.median, 1)}  max ${fmt(t.max, 1)} ms per comparison`);
console.log(`  compareObjects() with 1 mutated    ${fmt(mutatedMs, 1)} ms (one run)`);
console.log(`  share of one core, period 1 s      ${fmt((100 * t.median) / PERIOD_MS, 1)} %  (${fmt(t.median, 1)} ms of event-loop time per ${fmt(PERIOD_MS)} ms)`);
console.log(`  share of one core, period 10 s     ${fmt((100 * t.median) / OLD_PERIOD_MS, 2)} %`);
console.log(`  heap of the copies                 ${fmt(copiesBytes / 2 ** 20, 1)} MiB  (${fmt(copiesBytes / OBJECTS)} bytes per pod)`);
console.log(`  node ${process.version}, ${process.arch}`);
