// Write-to-reconcile latency at a steady write rate, through the fake API server over HTTP, for one side of the controller benchmark.
//
// `objects` ConfigMaps are created and every side's initial reconciles are let through; then the
// ConfigMaps are written round-robin at `rate` writes per second for `seconds` (in-process state
// writes: the server sends each as a watch event over HTTP to the informer). A write's latency is from
// just before the write to the start of the first reconcile that reads that version from the cache.
// With `objects / rate` seconds between two writes of one key, no two writes merge into one reconcile.

import { performance } from 'node:perf_hooks';
import { resources, type KubeObject } from '../../src/core/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import { handWrittenSide, quantile, runtimeSide, type SideName, type SideOptions } from './controller-sides.js';

/** Options of {@link measureSteadyLatency}. */
export interface SteadyLatencyOptions extends SideOptions {
  /** Writes per second. */
  rate: number;
  /** How long the writes go on, in seconds. */
  seconds: number;
  /** ConfigMaps written round-robin. */
  objects: number;
}

/** What one run measured, in milliseconds. */
export interface SteadyLatency {
  /** Writes made. */
  writes: number;
  /** Writes whose version reached a reconcile within 10 s after the last write. */
  reconciled: number;
  /** Latency quantiles (ms). */
  p50: number;
  p99: number;
  max: number;
  /** The write rate achieved (writes/s). */
  achievedRate: number;
}

const NS = 'bench';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const configMap = (i: number, v: number): KubeObject & { data: Record<string, string> } => ({ metadata: { name: `cm${i}`, namespace: NS }, data: { v: String(v) } });

/** Runs `side` against a fresh fake API server at a steady write rate. */
export async function measureSteadyLatency(sideName: SideName, options: SteadyLatencyOptions): Promise<SteadyLatency> {
  const server = await startFakeApiServer();
  for (let i = 0; i < options.objects; i++) server.create('configmaps', configMap(i, 0));
  const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, namespace: NS });
  const make = sideName === 'runtime' ? runtimeSide : handWrittenSide;
  const side = make(factory, resources.configmaps, options);
  const writtenAt = new Map<string, number>();
  const latencies: number[] = [];
  let reconciles = 0;
  const ac = new AbortController();
  try {
    factory.start(ac.signal);
    const running = side.run(ac.signal, (key, obj) => {
      reconciles++;
      const id = `${key}@${(obj as { data?: { v?: string } } | undefined)?.data?.v}`;
      const at = writtenAt.get(id);
      if (at !== undefined) {
        latencies.push(performance.now() - at);
        writtenAt.delete(id);
      }
    });
    await factory.waitForCacheSync(ac.signal);
    for (let waited = 0; reconciles < options.objects && waited < 30_000; waited += 10) await sleep(10);

    const total = Math.max(1, Math.round(options.rate * options.seconds));
    const period = 1000 / options.rate;
    const t0 = performance.now();
    for (let i = 0; i < total; ) {
      const due = t0 + i * period;
      const now = performance.now();
      if (now < due) {
        await sleep(due - now);
        continue;
      }
      const n = i % options.objects;
      writtenAt.set(`${NS}/cm${n}@${i + 1}`, performance.now());
      server.update('configmaps', configMap(n, i + 1));
      i++;
    }
    const achievedRate = total / ((performance.now() - t0) / 1000);
    for (let waited = 0; writtenAt.size > 0 && waited < 10_000; waited += 10) await sleep(10);
    ac.abort();
    await running;
    latencies.sort((a, b) => a - b);
    return { writes: total, reconciled: latencies.length, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) ?? Number.NaN, achievedRate };
  } finally {
    ac.abort();
    await factory.shutdown();
    await server.close();
  }
}
