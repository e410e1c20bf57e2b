// Starting the benchmark's processes: the server (forked, commands over lib/rpc.ts) and one contender child (JSON lines on stdout).

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { compiled } from './build.js';
import type { ContenderConfig, ContenderId, ContenderLine, LoadResult, ServerCommand } from './protocol.js';
import { forkRpc } from './rpc.js';

/** bench/ */
export const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The server process, driven by commands. */
export interface ServerProcess {
  send<R = unknown>(cmd: ServerCommand): Promise<R>;
  load(pods: number, events: number): Promise<LoadResult>;
  close(): Promise<void>;
}

/** Forks bench/server.ts with a large heap (100 000 pods plus recorded history take gigabytes); one command at a time. */
export function startServer(): ServerProcess {
  const child = forkRpc<ServerCommand>(join(benchDir, 'server.ts'), { name: 'server', serial: true, execArgv: ['--import', 'tsx', '--expose-gc', '--max-old-space-size=16384'] });
  return {
    send: <R>(cmd: ServerCommand) => child.call<R>(cmd),
    load: (pods, events) => child.call<LoadResult>({ cmd: 'load', pods, events }),
    close: () => child.close(),
  };
}

/**
 * Which program each contender runs, and the config fields that make it that contender. `stage` picks
 * the floor a `kube-informer-stages` contender stops at (bench/contenders/kube-informer-stages.ts).
 */
export const CONTENDERS: Record<ContenderId, { program: 'raw' | 'client-node' | 'kube-informer' | 'kube-informer-dist' | 'kube-informer-stages' | 'client-go'; handlers: number; metadataOnly?: boolean; strip?: boolean; watchList?: boolean; coalesceMs?: number; noShare?: boolean; stage?: 'reflector' | 'controller'; label: string }> = {
  raw: { program: 'raw', handlers: 1, label: '(a) raw baseline' },
  'raw-meta': { program: 'raw', handlers: 1, metadataOnly: true, label: '(a) raw baseline, metadata-only' },
  'client-node': { program: 'client-node', handlers: 1, label: '(b) client-node makeInformer' },
  'ki-reflector': { program: 'kube-informer-stages', handlers: 1, stage: 'reflector', label: '(c) kube-informer\'s Reflector into an Indexer (a floor, not an informer)' },
  'ki-controller': { program: 'kube-informer-stages', handlers: 1, stage: 'controller', label: '(c) kube-informer\'s newController: Reflector, DeltaFIFO, Indexer (a floor)' },
  'ki-1': { program: 'kube-informer', handlers: 1, label: '(c) kube-informer, 1 handler' },
  'ki-coalesce': { program: 'kube-informer', handlers: 1, coalesceMs: 20, label: '(c) kube-informer, 1 handler, watchCoalesceMs: 20' },
  'ki-noshare': { program: 'kube-informer', handlers: 1, noShare: true, label: '(c) kube-informer, 1 handler, shareUnchanged: false' },
  'ki-3': { program: 'kube-informer', handlers: 3, label: '(c) kube-informer, 3 handlers' },
  'ki-strip': { program: 'kube-informer', handlers: 1, strip: true, label: '(c) kube-informer + stripManagedFields' },
  'ki-meta': { program: 'kube-informer', handlers: 1, metadataOnly: true, label: '(c) kube-informer, metadata-only' },
  'ki-watchlist': { program: 'kube-informer', handlers: 1, watchList: true, label: '(c) kube-informer, streaming list' },
  'ki-dist': { program: 'kube-informer-dist', handlers: 1, label: '(c) kube-informer from dist/, as a user builds it' },
  'client-go': { program: 'client-go', handlers: 1, label: '(d) client-go SharedIndexInformer' },
  'client-go-meta': { program: 'client-go', handlers: 1, metadataOnly: true, label: '(d) client-go metadata informer' },
};

let clientGoBin: string | undefined;

/** Builds (once per machine, cached) and returns the client-go benchmark binary. */
export function clientGoBinary(): string {
  clientGoBin ??= execFileSync('bash', [join(benchDir, 'client-go', 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'] })
    .toString()
    .trim()
    .split('\n')
    .at(-1)!;
  return clientGoBin;
}

/** A contender child: its lines as they come, and its end. */
export interface ContenderProcess {
  lines: ContenderLine[];
  onLine(fn: (line: ContenderLine) => void): void;
  /** Closes its stdin (steady mode ends) and resolves when it exited. */
  stop(): Promise<void>;
  exited: Promise<number | null>;
}

/** Starts one contender child for `cfg`; `profile` runs a Node one under --cpu-prof. */
export function startContender(cfg: ContenderConfig, profile: boolean): ContenderProcess {
  const spec = CONTENDERS[cfg.id];
  let child: ChildProcess;
  if (spec.program === 'client-go') {
    const args = cfg.kubeconfig !== undefined ? [`--kubeconfig=${cfg.kubeconfig}`] : [`--server=${cfg.url}`, `--token=${cfg.token}`];
    args.push(`--mode=${cfg.mode}`, `--pods=${cfg.pods}`, `--events=${cfg.events}`);
    if (cfg.namespace !== undefined) args.push(`--namespace=${cfg.namespace}`);
    args.push(`--handlers=${cfg.handlers}`, `--metadata=${cfg.metadataOnly}`, `--sample-ms=${cfg.sampleMs}`);
    if (cfg.listRv !== undefined) args.push(`--list-rv=${cfg.listRv}`);
    // The same requests as the other contenders: list + watch, not client-go 1.35's default streaming list.
    const env = { ...process.env, KUBE_FEATURE_WatchListClient: String(cfg.watchList) };
    child = spawn(clientGoBinary(), args, { stdio: ['pipe', 'pipe', 'inherit'], env });
  } else {
    const node = ['--expose-gc', '--max-old-space-size=8192'];
    if (profile) {
      // One directory per child: every thread writes its own profile.
      const dir = join(benchDir, 'results', 'profiles', `${cfg.id}-${cfg.mode}-${cfg.pods}-${Date.now()}`);
      mkdirSync(dir, { recursive: true });
      node.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
    }
    // Compiled, as users run it (bench/lib/build.ts); the caller built it once with buildBench().
    node.push(compiled(`contenders/${spec.program}.ts`), JSON.stringify(cfg));
    if (spec.stage !== undefined) node.push(spec.stage);
    child = spawn(process.execPath, node, { stdio: ['pipe', 'pipe', 'inherit'] });
  }
  const lines: ContenderLine[] = [];
  const listeners: Array<(line: ContenderLine) => void> = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    if (!text.startsWith('{')) return;
    const line = JSON.parse(text) as ContenderLine;
    lines.push(line);
    for (const fn of listeners) fn(line);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdin!.on('error', () => {});
  return {
    lines,
    onLine: (fn) => listeners.push(fn),
    exited,
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
