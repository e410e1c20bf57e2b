// What the benchmark's processes tell each other: contender configs and the JSON lines they print.

/** How a contender child runs: sync only, sync then a burst of MODIFIED events, or a long steady watch. */
export type ContenderMode = 'sync' | 'watch' | 'steady';

/** The contenders, by id. */
export type ContenderId =
  | 'raw'
  | 'raw-meta'
  | 'client-node'
  | 'ki-1'
  | 'ki-3'
  | 'ki-strip'
  | 'ki-meta'
  | 'ki-watchlist'
  | 'ki-dist'
  | 'ki-reflector'
  | 'ki-controller'
  | 'ki-coalesce'
  | 'ki-noshare'
  | 'client-go'
  | 'client-go-meta';

/** Everything a contender child needs, passed as JSON in its first argument. */
export interface ContenderConfig {
  id: ContenderId;
  /** The server's URL (`http://127.0.0.1:<port>` for the fake server). */
  url: string;
  /** Bearer token. */
  token: string;
  /** A kubeconfig file to use instead of `url`/`token` (the real kube-apiserver). */
  kubeconfig?: string;
  /** Watch only this namespace's pods (the real kube-apiserver phase); default: all namespaces. */
  namespace?: string;
  mode: ContenderMode;
  /** Objects the cache must hold to count as synced. */
  pods: number;
  /** MODIFIED notifications every handler must see (mode `watch`). */
  events: number;
  /** No-op handlers to register. */
  handlers: number;
  /** Ask for PartialObjectMetadata. */
  metadataOnly: boolean;
  /** Apply `stripManagedFields`. */
  strip: boolean;
  /** Streaming list (`sendInitialEvents`) instead of list + watch. */
  watchList: boolean;
  /** newListWatch's `watchCoalesceMs` (the kube-informer contenders); default 0. */
  coalesceMs?: number;
  /** The informer's `shareUnchanged: false` (the kube-informer contenders); default: the informer's default. */
  noShare?: boolean;
  /** Mode `watch`: list at exactly this resourceVersion, so the watch replays the recorded events. */
  listRv?: string;
  /** Mode `steady`: memory sample period. */
  sampleMs: number;
  /** Give up waiting for the sync after this long. */
  syncTimeoutMs: number;
}

/** Printed once the cache holds every object and every handler has seen its initial adds. */
export interface SyncedLine {
  type: 'synced';
  syncMs: number;
  syncCpuMs: number;
  cached: number;
  /** Heap in use (after GC) before the informer was created, and after the sync. */
  heapBefore: number;
  heapAfter: number;
  rss: number;
  runtime?: string;
  /**
   * Milliseconds from the process's start (`performance.timeOrigin`) to the client's creation (the
   * imports, the harness's setup) and to the sync: what a harness that times the whole process sees.
   */
  startedMs?: number;
  sinceStartMs?: number;
}

/** Printed once every handler has seen `events` MODIFIED notifications. */
export interface DoneLine {
  type: 'done';
  events: number;
  /** From the first MODIFIED notification to the last one of the last handler. */
  seconds: number;
  /** CPU (user + system) over the same window. */
  cpuMs: number;
  heapAfter: number;
  rss: number;
  /** The same window's CPU ms per thread (user and system apart) and the main thread's wakeups; Node contenders on Linux only. */
  threadCpuMs?: Record<string, number>;
}

/** A steady-mode memory sample. */
export interface SampleLine {
  type: 'sample';
  /** Seconds since the contender started. */
  t: number;
  heap: number;
  rss: number;
  events: number;
  cpuMs: number;
}

/** The sync never completed (an error, or the timeout). */
export interface ErrorLine {
  type: 'error';
  message: string;
  cached: number;
}

/** Any line a contender prints. */
export type ContenderLine = SyncedLine | DoneLine | SampleLine | ErrorLine;

/** Commands the runner sends to the server process, and what it answers. */
export type ServerCommand =
  | { cmd: 'load'; pods: number; events: number }
  | { cmd: 'steady'; ratePerSecond: number }
  | { cmd: 'stop-steady' }
  | { cmd: 'exit' };

/** The server process's answer to `load`. */
export interface LoadResult {
  url: string;
  token: string;
  /** The resourceVersion after the pods were created (before the events). */
  loadedRv: string;
  /** The resourceVersion after the events. */
  finalRv: string;
  loadSeconds: number;
  eventSeconds: number;
  /** Bytes of one pod's JSON, average over a sample. */
  podBytes: number;
  /** Bytes of one pod's metadata-only JSON. */
  metaBytes: number;
}

/**
 * The independent phase's served shape (bench/lib/indep-server.ts); the default is the outside harness's. The other values change one variable at a
 * time towards the fake-server phases' shape (`--indep-shape`), to find which one moves a ratio.
 */
export interface IndepShape {
  /** `paged`: pages of `limit` (default); `whole`: every list answered whole, as the watch cache answers `resourceVersion=0`. */
  list: 'paged' | 'whole';
  /** `live`: each event built and serialised during the burst (default); `replay`: all serialised before the first write. */
  events: 'live' | 'replay';
  /** `64k`: 64 KiB writes, events cut anywhere (default); `event`: one write per event. */
  chunk: '64k' | 'event';
  /** `indep`: ~4.6 KB pods (default); `bench`: bench/lib/pods.ts's `makePod` as the fake-server phases serve it (~5 KB). */
  pod: 'indep' | 'bench';
}

/** The outside harness's shape. */
export const DEFAULT_SHAPE: IndepShape = { list: 'paged', events: 'live', chunk: '64k', pod: 'indep' };

