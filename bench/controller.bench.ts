// Benchmark of the controller runtime against the hand-written loop it replaces: keys per second and event-to-reconcile latency.
//
// Run: npx tsx bench/controller.bench.ts [--keys 20000] [--reps 5] [--concurrency 4] [--deadline-ms 60000]   (not part of npm test)
// (`--deadline-ms 0` turns the runtime's per-reconcile deadline timer off, to see what it costs.)
//
// Both sides read the same kind of informer over an in-process FakeControllerSource (no HTTP: what is
// measured is the path from an informer event to a reconcile), with the same concurrency and a no-op
// reconcile:
//   runtime       Controller.for(factory, pods).build(noop, { concurrency })
//   hand-written  informer handler → RateLimitingQueue → `concurrency` workers (get, reconcile, forget, done),
//                 what examples/endpoints and examples/network-policy do by hand
// keys/s: K distinct pods added after both are running, from the first add to the last key reconciled.
// latency: K/10 modifications of cached pods, one per macrotask, from each write to the start of its
// reconcile (p50/p99). Repetitions alternate the two sides; medians are printed with their ratio.

import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { Action, Controller } from '../src/controller/index.js';
import { resources, type KubeObject } from '../src/core/index.js';
import { SharedInformerFactory } from '../src/informer/index.js';
import type { ListerWatcher } from '../src/listwatch/types.js';
import { FakeControllerSource } from '../src/testing/fake-controller-source.js';
import { RateLimitingQueue } from '../src/workqueue/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

const KEYS = arg('keys', 20_000);
const REPS = arg('reps', 5);
const CONCURRENCY = arg('concurrency', 4);
const DEADLINE_MS = arg('deadline-ms', 60_000);

const pod = (i: number, v = 0): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, namespace: `ns${i % 20}`, labels: { v: String(v) } } });

interface Side {
  /** Called with each key when its reconcile starts. */
  run(signal: AbortSignal, onReconcile: (key: string) => void): Promise<void>;
}

function setup(): { factory: SharedInformerFactory; source: FakeControllerSource<KubeObject> } {
  const source = new FakeControllerSource<KubeObject>();
  const factory = new SharedInformerFactory(undefined, { logger: false, listWatchFor: () => source as unknown as ListerWatcher<unknown> });
  return { factory, source };
}

function runtime(factory: SharedInformerFactory): Side {
  return {
    run: (signal, onReconcile) =>
      Controller.for(factory, resources.pods)
        .build(
          async (key) => {
            onReconcile(key);
            return Action.done();
          },
          { concurrency: CONCURRENCY, logger: false, reconcileTimeoutMs: DEADLINE_MS },
        )
        .run(signal),
  };
}

function handWritten(factory: SharedInformerFactory): Side {
  return {
    run: async (signal, onReconcile) => {
      const informer = factory.forResource(resources.pods);
      const queue = new RateLimitingQueue<string>();
      const key = (obj: unknown): string => {
        const m = (obj as KubeObject).metadata;
        return `${m?.namespace}/${m?.name}`;
      };
      const registration = informer.addEventHandler({
        onAdd: (obj) => queue.add(key(obj)),
        onUpdate: (_old, obj) => queue.add(key(obj)),
        onDelete: (obj) => queue.add(key(obj)),
      });
      signal.addEventListener('abort', () => queue.shutDown(), { once: true });
      await registration.whenSynced(signal).catch(() => undefined);
      const worker = async (): Promise<void> => {
        for (;;) {
          const { item, shutdown } = await queue.get();
          if (shutdown) return;
          try {
            informer.getIndexer().getByKey(item);
            onReconcile(item);
            await Promise.resolve(Action.done());
            queue.forget(item);
          } finally {
            queue.done(item);
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      informer.removeEventHandler(registration);
    },
  };
}

async function measure(make: (factory: SharedInformerFactory) => Side): Promise<{ keysPerSecond: number; p50: number; p99: number }> {
  const { factory, source } = setup();
  const ac = new AbortController();
  factory.start(ac.signal);
  let reconciled = 0;
  const wroteAt = new Map<string, number>();
  const latencies: number[] = [];
  let target = 0;
  let reached: () => void = () => {};
  const running = make(factory).run(ac.signal, (key) => {
    reconciled++;
    const at = wroteAt.get(key);
    if (at !== undefined) {
      latencies.push(performance.now() - at);
      wroteAt.delete(key);
    }
    if (reconciled === target) reached();
  });
  await factory.waitForCacheSync(ac.signal);
  await turn();
  // keys/s: a burst of K new keys.
  const burst = new Promise<void>((resolve) => (reached = resolve));
  target = KEYS;
  const t0 = performance.now();
  for (let i = 0; i < KEYS; i++) source.add(pod(i));
  await burst;
  const keysPerSecond = KEYS / ((performance.now() - t0) / 1000);
  // latency: one write per macrotask, each to a cached key, timed to the start of its reconcile.
  const writes = Math.max(1, Math.floor(KEYS / 10));
  const done = new Promise<void>((resolve) => (reached = resolve));
  target = reconciled + writes;
  for (let i = 0; i < writes; i++) {
    const n = (i * 7919) % KEYS;
    wroteAt.set(`ns${n % 20}/p${n}`, performance.now());
    source.modify(pod(n, i + 1));
    await turn();
  }
  await done;
  ac.abort();
  await running;
  await factory.shutdown();
  latencies.sort((a, b) => a - b);
  const q = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;
  return { keysPerSecond, p50: q(0.5), p99: q(0.99) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const results = { runtime: [] as Array<Awaited<ReturnType<typeof measure>>>, handWritten: [] as Array<Awaited<ReturnType<typeof measure>>> };
  await measure(runtime); // warm-up of both code paths
  await measure(handWritten);
  for (let rep = 0; rep < REPS; rep++) {
    const order = rep % 2 === 0 ? (['runtime', 'handWritten'] as const) : (['handWritten', 'runtime'] as const);
    for (const side of order) results[side].push(await measure(side === 'runtime' ? runtime : handWritten));
  }
  const summary = (rs: typeof results.runtime) => ({
    keysPerSecond: median(rs.map((r) => r.keysPerSecond)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
  });
  const rt = summary(results.runtime);
  const hw = summary(results.handWritten);
  const fmt = (s: typeof rt) => `${Math.round(s.keysPerSecond).toLocaleString('en')} keys/s, write→reconcile p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`;
  console.log(`controller runtime vs hand-written loop — ${KEYS} keys, concurrency ${CONCURRENCY}, medians of ${REPS} alternating repetitions, ${process.version}`);
  console.log(`  runtime       ${fmt(rt)}`);
  console.log(`  hand-written  ${fmt(hw)}`);
  console.log(`  ratio (runtime / hand-written keys/s): ${(rt.keysPerSecond / hw.keysPerSecond).toFixed(2)}×`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
