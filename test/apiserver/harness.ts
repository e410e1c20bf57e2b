// Starts a real etcd + kube-apiserver (+ kube-controller-manager when asked) for the real-apiserver suite, on kube-informer/envtest.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { startTestEnvironment } from '../../src/envtest/index.js';
import { DeletedFinalStateUnknown, type DeepReadonly, type KubeObject } from '../../src/core/index.js';
import type { SharedIndexInformer } from '../../src/informer/index.js';
import { newResourceClient, resources } from '../../src/index.js';
import type { ListOptions, ListerWatcher, ObjectList, WatchEvent } from '../../src/listwatch/index.js';

const scriptsDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'apiserver');

/** The path of `scripts/apiserver/build.sh`. */
export const buildScript = join(scriptsDir, 'build.sh');

/** Options of {@link startRealApiServer}. */
export interface RealApiServerOptions {
  /** Extra kube-apiserver flags, e.g. `['--watch-cache=false']`. Default: none. */
  apiServerArgs?: string[];
  /** Milliseconds to wait for the servers to become ready (the build is separate). Default: 180 000. */
  readyTimeoutMs?: number;
  /**
   * Also run kube-controller-manager (its default `*` controllers: deployment, replicaset,
   * endpointslice, garbage collector, namespace, …), with extra flags if given. Default: not run.
   */
  controllerManager?: boolean | { args?: string[] };
  /**
   * Start a server of this caller's own even with the default flags: for a test that restarts, compacts,
   * stops or checks the pids of its server, or that needs exact cluster-wide state. Default: false — with
   * the default flags the suite's one shared server (started by its global setup) is used when there is
   * one, and a server of its own is started otherwise (outside vitest, e.g. `npm run soak -- --real`).
   */
  private?: boolean;
}

/**
 * A running etcd + kube-apiserver pair; `stop()` ends both and removes their temp dir. On the suite's
 * shared server (`shared` true) `stop()` leaves it running for the next file and `restart()` rejects.
 */
export interface RealApiServer {
  /** True on a handle of the suite's shared server (see {@link RealApiServerOptions.private}). */
  shared: boolean;
  /** A kubeconfig file for the server: CA-verified TLS and a bearer token of a `system:masters` user. */
  kubeConfigPath: string;
  /** `kubeConfigPath`, loaded. */
  kubeConfig: KubeConfig;
  /** The apiserver's URL, `https://127.0.0.1:<port>`. */
  server: string;
  /** The bearer token of the kubeconfig's user. */
  token: string;
  /** The CA certificate bundle (PEM) that the serving certificate verifies against. */
  ca: string;
  /** etcd's client URL, `http://127.0.0.1:<port>`; its v3 JSON gateway is served there too. */
  etcdEndpoint: string;
  /**
   * The process ids, so a test can check that `stop()` left nothing behind (`controllerManager` 0 when
   * not run; `script` is envtest's reaper, the watchdog that would clean up after a crashed runner).
   */
  pids: { apiServer: number; etcd: number; controllerManager: number; script: number };
  /** The temp dir: `kube-apiserver.log`, `etcd.log`, `kube-controller-manager.log`, the PKI (removed by `stop()`). */
  dir: string;
  /**
   * Kills kube-apiserver or etcd with SIGKILL and starts it again (same flags, ports and data), then
   * resolves once the apiserver's `/readyz` is ok again, with how long that took.
   */
  restart(what: 'kube-apiserver' | 'etcd'): Promise<{ ms: number }>;
  /** Stops the servers, removes the temp dir; rejects if a server had died under the tests. */
  stop(): Promise<void>;
}

/**
 * Builds the binaries if this machine has none cached (minutes on a fresh machine; instant afterwards)
 * and resolves with the bin dir. The vitest global setup calls this once, before any timeout applies.
 */
export async function buildRealApiServer(): Promise<string> {
  const child = spawn('bash', [buildScript], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new Error(`scripts/apiserver/build.sh failed with exit code ${code}`);
  return out.trim().split('\n').at(-1) ?? '';
}

/**
 * Starts etcd and kube-apiserver (and kube-controller-manager when asked) with
 * `kube-informer/envtest` — the suite dogfoods what users get — from the binaries build.sh made, with
 * the flags the suite relies on: etcd compaction off (tests compact when they mean to), the
 * ServiceAccount admission plugin on as on a cluster, and server-side sharded list and watch on from
 * 1.36. envtest's reaper stops everything if the test runner dies.
 *
 * With the default flags (no `apiServerArgs`, no `controllerManager`) and without `private`, resolves
 * with a handle on the suite's shared server when the global setup started one: test files then share
 * one etcd + kube-apiserver instead of starting a pair each. They must keep to their own namespaces
 * ({@link freshNamespace}) and cluster-scoped names, and assert nothing cluster-wide.
 */
export async function startRealApiServer(options: RealApiServerOptions = {}): Promise<RealApiServer> {
  const defaults = (options.apiServerArgs ?? []).length === 0 && (options.controllerManager ?? false) === false;
  const shared = defaults && options.private !== true ? await sharedApiServer() : undefined;
  if (shared !== undefined) return sharedHandle(shared);
  const binaryAssetsDir = await buildRealApiServer(); // cached: returns at once
  const minor = Number(/k8s-v1\.(\d+)\./.exec(binaryAssetsDir)?.[1] ?? 0);
  const env = await startTestEnvironment({
    binaryAssetsDir,
    apiServerArgs: [
      '--etcd-compaction-interval=0',
      '--disable-admission-plugins=',
      ...(minor >= 36 ? ['--feature-gates=ShardedListAndWatch=true'] : []),
      ...(options.apiServerArgs ?? []),
    ],
    controllerManager: options.controllerManager,
    startTimeoutMs: options.readyTimeoutMs ?? 180_000,
  });
  return {
    shared: false,
    kubeConfigPath: env.kubeconfigPath,
    kubeConfig: env.kubeConfig,
    server: env.server,
    token: env.token,
    ca: env.ca,
    etcdEndpoint: env.etcdEndpoint,
    get pids() {
      const { apiServer, etcd, controllerManager, reaper } = env.pids;
      return { apiServer, etcd, controllerManager, script: reaper };
    },
    dir: env.dir,
    async restart(what) {
      const started = Date.now();
      await env.restart(what);
      return { ms: Date.now() - started };
    },
    stop: () => env.stop(),
  };
}

/** What the global setup hands the test files about the shared server (plain data: it crosses processes). */
export type SharedApiServerInfo = Pick<RealApiServer, 'kubeConfigPath' | 'server' | 'token' | 'ca' | 'etcdEndpoint' | 'pids' | 'dir'>;

declare module 'vitest' {
  export interface ProvidedContext {
    /** The real-apiserver suite's shared server, when its global setup started one. */
    sharedRealApiServer: SharedApiServerInfo | undefined;
  }
}

/** The shared server the global setup provided, or undefined (outside vitest, or none started). */
async function sharedApiServer(): Promise<SharedApiServerInfo | undefined> {
  if (process.env.VITEST === undefined) return undefined;
  const { inject } = await import('vitest');
  return inject('sharedRealApiServer');
}

/** The plain data of a running server, for the global setup's `provide`. */
export function sharedApiServerInfo(server: RealApiServer): SharedApiServerInfo {
  const { kubeConfigPath, server: url, token, ca, etcdEndpoint, pids, dir } = server;
  return { kubeConfigPath, server: url, token, ca, etcdEndpoint, pids: { ...pids }, dir };
}

/** A handle on the shared server: `stop()` only checks it is still up; `restart()` rejects. */
function sharedHandle(info: SharedApiServerInfo): RealApiServer {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(info.kubeConfigPath);
  return {
    ...info,
    shared: true,
    kubeConfig,
    restart: (what) =>
      Promise.reject(
        new Error(
          `restart('${what}') on the real-apiserver suite's shared server: it would break the other test files; ` +
            'a test that kills, restarts or reconfigures its server starts one of its own with startRealApiServer({ private: true })',
        ),
      ),
    stop: async () => {
      const dead = (['apiServer', 'etcd'] as const).filter((p) => !processRunning(info.pids[p]));
      if (dead.length > 0) throw new Error(`the real-apiserver suite's shared server died under the tests (${dead.join(', ')} gone); logs in ${info.dir}`);
    },
  };
}

/** etcd's current revision (= the newest Kubernetes resourceVersion), read through the v3 JSON gateway. */
export async function etcdRevision(etcdEndpoint: string): Promise<number> {
  const answer = (await etcdPost(etcdEndpoint, '/v3/kv/range', {
    key: Buffer.from('kube-informer-probe').toString('base64'),
  })) as { header: { revision: string } };
  return Number(answer.header.revision);
}

/**
 * Compacts etcd's history up to `revision` (default: the current one) through the v3 JSON gateway, the
 * way the apiserver's compactor does. A watch or exact list from an older resourceVersion then answers
 * 410 Gone wherever the apiserver has to ask etcd for it.
 */
export async function compactEtcd(etcdEndpoint: string, revision?: number): Promise<number> {
  const target = revision ?? (await etcdRevision(etcdEndpoint));
  await etcdPost(etcdEndpoint, '/v3/kv/compaction', { revision: String(target), physical: true });
  return target;
}

async function etcdPost(etcdEndpoint: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(etcdEndpoint + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`etcd ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** One event of a raw watch opened by {@link watchUntil}. */
export interface RawWatchEvent {
  /** `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`. */
  type: string;
  /** The object, or a `Status` for `ERROR`. */
  object: { metadata?: { name?: string; resourceVersion?: string }; code?: number; [key: string]: unknown };
}

/**
 * Opens a watch with `@kubernetes/client-node`'s `Watch` (the real HTTP stack, no kube-informer code) and
 * resolves with every event up to and including the first that `until` accepts, then closes the watch.
 * Rejects when the stream ends or fails first. No timer: the test's own timeout bounds the wait.
 */
export async function watchUntil(
  kubeConfig: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  until: (event: RawWatchEvent) => boolean,
): Promise<RawWatchEvent[]> {
  const events: RawWatchEvent[] = [];
  let controller: AbortController | undefined;
  let matched = false;
  return new Promise<RawWatchEvent[]>((resolve, reject) => {
    new Watch(kubeConfig)
      .watch(
        path,
        query,
        (type, object: RawWatchEvent['object']) => {
          if (matched) return;
          events.push({ type, object });
          if (!until({ type, object })) return;
          matched = true;
          controller?.abort();
          resolve(events);
        },
        (err: unknown) => {
          if (matched) return;
          const why = err instanceof Error ? err.message : String(err ?? 'closed by the server');
          reject(new Error(`watch ${path} ended before the awaited event (${why}); saw ${JSON.stringify(events)}`));
        },
      )
      .then((c) => {
        controller = c;
        if (matched) c.abort();
      }, reject);
  });
}

/**
 * Collects what a test's handlers saw and lets the test wait for a condition on it, without timers:
 * every `record` re-checks the waiting conditions. The test's own timeout bounds a wait.
 */
export class EventRecorder<E> {
  /** Everything recorded, in order. */
  readonly events: E[] = [];
  #waiters: Array<{ done: (events: E[]) => boolean; resolve: () => void }> = [];

  /** Adds one entry and wakes every wait whose condition now holds. */
  record(event: E): void {
    this.events.push(event);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.done(this.events)) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once `done(events)` is true (at once if it already is). */
  until(done: (events: E[]) => boolean): Promise<void> {
    if (done(this.events)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ done, resolve }));
  }
}

/** What {@link runInformer} hands back: the recorded notifications and a way to stop the informer. */
export interface RunningInformer {
  /** `add <name> <summary>`, `update <name> <summary>`, `delete <name>`, in delivery order. */
  seen: EventRecorder<string>;
  /** Initial-list adds (`isInInitialList`), in delivery order, as `<name> <summary>`. */
  initial: string[];
  /** Aborts the informer and resolves once `run()` has settled. */
  stop(): Promise<void>;
}

/**
 * Registers a recording handler on `informer`, runs it and resolves once it has synced. Each
 * notification is recorded as one line: the callback, the object's name and `summary(obj)` (a
 * tombstone records its key). Handlers never throw, so `run()` settles only through `stop()`.
 */
export async function runInformer<T extends KubeObject>(
  informer: SharedIndexInformer<T>,
  summary: (obj: DeepReadonly<T>) => string = () => '',
): Promise<RunningInformer> {
  const seen = new EventRecorder<string>();
  const initial: string[] = [];
  const line = (obj: DeepReadonly<T>): string => `${obj.metadata?.name ?? '?'} ${summary(obj)}`.trimEnd();
  informer.addEventHandler({
    onAdd: (obj, isInInitialList) => {
      if (isInInitialList) initial.push(line(obj));
      seen.record(`add ${line(obj)}`);
    },
    onUpdate: (_old, obj) => seen.record(`update ${line(obj)}`),
    onDelete: (obj) => seen.record(`delete ${obj instanceof DeletedFinalStateUnknown ? obj.key : obj.metadata?.name ?? '?'}`),
  });
  const controller = new AbortController();
  const running = informer.run(controller.signal);
  // A run() that fails before the sync must fail the wait too, not leave it hanging.
  await Promise.race([informer.whenSynced(controller.signal), running.then(() => Promise.reject(new Error('the informer stopped before it synced')))]);
  return {
    seen,
    initial,
    stop: async () => {
      controller.abort();
      await running;
    },
  };
}

/** One entry of a {@link RecordingListerWatcher}'s log. */
export type ListWatchLogEntry =
  | { op: 'list'; options: ListOptions; items: number; resourceVersion: string; continue: string }
  | { op: 'watch'; options: ListOptions }
  | { op: 'event'; type: string; name: string; resourceVersion: string }
  | { op: 'closed' };

/**
 * Passes every call through to a real ListerWatcher and logs, in order: each list page answered, each
 * watch opened, each watch event once its consumer has **finished with it** (the reflector asked for the
 * next one, so the event has been applied), and each watch the server closed (not ones we aborted).
 * `beforeWatch(n)`, when set, runs before the n-th watch (1-based) is opened.
 */
export class RecordingListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  /** The log; wait on it with `log.until`. */
  readonly log = new EventRecorder<ListWatchLogEntry>();
  readonly #inner: ListerWatcher<T>;
  readonly #beforeWatch: ((n: number) => Promise<void>) | undefined;
  #watchCalls = 0;

  constructor(inner: ListerWatcher<T>, beforeWatch?: (n: number) => Promise<void>) {
    this.#inner = inner;
    this.#beforeWatch = beforeWatch;
  }

  /** The log entries of one kind. */
  entries<K extends ListWatchLogEntry['op']>(op: K): Array<Extract<ListWatchLogEntry, { op: K }>> {
    return this.log.events.filter((e): e is Extract<ListWatchLogEntry, { op: K }> => e.op === op);
  }

  /** Releases the inner ListerWatcher's pooled sockets, when it has a `close()` (newListWatch's does). */
  close(): void {
    (this.#inner as { close?: () => void }).close?.();
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    const page = await this.#inner.list(options, signal);
    this.log.record({
      op: 'list',
      options: { ...options },
      items: page.items.length,
      resourceVersion: page.metadata.resourceVersion ?? '',
      continue: page.metadata.continue ?? '',
    });
    return page;
  }

  async watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    const n = ++this.#watchCalls;
    await this.#beforeWatch?.(n);
    const inner = await this.#inner.watch(options, signal);
    this.log.record({ op: 'watch', options: { ...options } });
    const log = this.log;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) {
          yield event;
          const meta = (event.object as KubeObject).metadata;
          log.record({ op: 'event', type: event.type, name: meta?.name ?? '', resourceVersion: meta?.resourceVersion ?? '' });
        }
        if (!signal.aborted) log.record({ op: 'closed' });
      },
    };
  }
}

/** Creates a namespace named `prefix-` and six random hex digits on `server`, and returns its name. */
export async function freshNamespace(server: RealApiServer, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const namespaces = newResourceClient(server.kubeConfig, resources.namespaces);
  try {
    await namespaces.create({ metadata: { name } });
  } finally {
    namespaces.close();
  }
  return name;
}

/** True while a process with this id exists. */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
