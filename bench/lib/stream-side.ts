// One side of the stream phase (bench/lib/stream-phase.ts), in a process of its own: informers that sync a
// real kube-apiserver's namespace of pods by streaming lists or by paged lists, measured from inside.
//
// Commands (one per process, then `exit`):
// - `sync`: `informers` SharedIndexInformers over the namespace's pods, started at once, each with its own
//   newListWatch; answers the time until all synced, the process's peak RSS (VmHWM, read from /proc), its
//   RSS before and the heap after GC, and what the servers' requests were (streamed or not).
// - `relist`: one informer synced; its heap after two GCs is the steady heap; then its watch is ended and the
//   next watch is refused 410 (too old resource version), which makes the reflector relist at once, as after
//   a compaction; heapUsed is sampled every 2 ms until the relisted items are processed; answers the steady heap, the peak and the process's peak RSS during the relist.

import { readFileSync, writeFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiStatusError } from '../../src/core/errors.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { newListWatch, type KubeListWatch } from '../../src/listwatch/index.js';
import type { ListerWatcher, ListOptions, ObjectList, WatchEvent } from '../../src/listwatch/types.js';
import { serveRpc } from './rpc.js';

/** What the runner asks of a side. */
export type StreamSideCommand =
  | { cmd: 'sync'; kubeconfig: string; namespace: string; informers: number; watchList: boolean; pods: number }
  | { cmd: 'relist'; kubeconfig: string; namespace: string; watchList: boolean; pods: number };

/** The answer to `sync`. */
export interface SyncAnswer {
  syncMs: number;
  /** VmHWM of this process at the end, bytes. */
  peakRss: number;
  /** VmRSS before the informers were created, bytes. */
  rssBefore: number;
  /** heapUsed after two GCs once synced, bytes. */
  heapAfter: number;
  /** Objects cached, summed over the informers. */
  cached: number;
  /** Informers whose lists stream (`health().watch.listMode`). */
  streamed: number;
}

/** The answer to `relist`. */
export interface RelistAnswer {
  /** heapUsed after two GCs once synced, bytes. */
  steadyHeap: number;
  /** The largest heapUsed sampled from the 410 until the relisted items were processed, bytes. */
  peakHeap: number;
  /** VmHWM during the relist (reset just before it), bytes. */
  peakRss: number;
  /** VmRSS just before the relist, bytes. */
  rssBefore: number;
  /** From the 410 to the relist processed, ms. */
  relistMs: number;
  /** Whether the informer's lists stream (`health().watch.listMode`). */
  streamed: boolean;
  samples: number;
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const status = (field: 'VmHWM' | 'VmRSS'): number => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m === null ? Number.NaN : Number(m[1]) * 1024;
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A ListerWatcher whose open watch can be ended and its next watch refused 410, as after a compaction. */
class Expiring<T> implements ListerWatcher<T> {
  readonly #inner: KubeListWatch<T>;
  #expire = false;
  #current: AbortController | undefined;

  constructor(inner: KubeListWatch<T>) {
    this.#inner = inner;
  }

  get serverIdentity(): string | undefined {
    return this.#inner.serverIdentity;
  }

  list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    return this.#inner.list(options, signal);
  }

  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    if (this.#expire && options.sendInitialEvents !== true) {
      this.#expire = false;
      throw new ApiStatusError(410, `too old resource version: ${options.resourceVersion ?? ''} (the benchmark's compaction)`, { reason: 'Expired' });
    }
    const current = new AbortController();
    signal.addEventListener('abort', () => current.abort(), { once: true });
    this.#current = current;
    return this.#inner.watch(options, current.signal);
  }

  /** Ends the open watch; the next (non-streaming) watch is answered 410. */
  expire(): void {
    this.#expire = true;
    this.#current?.abort();
  }

  close(): void {
    this.#inner.close();
  }
}

function informerOver(kubeconfig: string, namespace: string, watchList: boolean, name: string): { informer: SharedIndexInformer<unknown>; lw: Expiring<unknown> } {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const lw = new Expiring(newListWatch<unknown>(kc, { group: '', version: 'v1', resource: 'pods' }, { namespace }));
  const informer = new SharedIndexInformer<unknown>(lw, { name, logger: false, reflector: { useWatchList: watchList } });
  return { informer, lw };
}

async function sync(c: Extract<StreamSideCommand, { cmd: 'sync' }>): Promise<SyncAnswer> {
  gc();
  const rssBefore = status('VmRSS');
  const t0 = performance.now();
  const all = Array.from({ length: c.informers }, (_, i) => informerOver(c.kubeconfig, c.namespace, c.watchList, `pods-${i}`).informer);
  const ac = new AbortController();
  const runs = all.map((informer) => informer.run(ac.signal));
  await Promise.all(all.map((informer) => informer.whenSynced()));
  const syncMs = performance.now() - t0;
  const peakRss = status('VmHWM');
  gc();
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const cached = all.reduce((n, informer) => n + informer.getIndexer().list().length, 0);
  const streamed = all.filter((informer) => informer.health().watch.listMode === 'streaming').length;
  ac.abort();
  await Promise.all(runs);
  if (cached !== c.pods * c.informers) throw new Error(`cached ${cached} objects, expected ${c.pods * c.informers}`);
  return { syncMs, peakRss, rssBefore, heapAfter, cached, streamed };
}

async function relist(c: Extract<StreamSideCommand, { cmd: 'relist' }>): Promise<RelistAnswer> {
  const { informer, lw } = informerOver(c.kubeconfig, c.namespace, c.watchList, 'pods');
  const ac = new AbortController();
  const run = informer.run(ac.signal);
  await informer.whenSynced();
  await sleep(500);
  gc();
  gc();
  const steadyHeap = getHeapStatistics().used_heap_size;
  const rssBefore = status('VmRSS');
  writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current RSS
  let peakHeap = steadyHeap;
  let samples = 0;
  const sample = (): void => {
    samples++;
    const used = getHeapStatistics().used_heap_size;
    if (used > peakHeap) peakHeap = used;
  };
  const timer = setInterval(sample, 2);
  const t0 = performance.now();
  lw.expire();
  while (informer.health().counters.relists === 0) await sleep(5);
  // The relisted items are processed by the informer's loop: wait until its queue has been drained.
  for (let i = 0; i < 50; i++) await sleep(10);
  clearInterval(timer);
  const relistMs = performance.now() - t0;
  const peakRss = status('VmHWM');
  ac.abort();
  await run;
  const streamed = informer.health().watch.listMode === 'streaming';
  return { steadyHeap, peakHeap, peakRss, rssBefore, relistMs, streamed, samples };
}

serveRpc<StreamSideCommand>((command) => {
  switch (command.cmd) {
    case 'sync': return sync(command);
    case 'relist': return relist(command);
    case 'exit': return undefined;
  }
});
