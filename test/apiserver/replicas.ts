// Replica processes for the sharded tests on the real kube-apiserver: spawn an example's replica entry,
// follow its one-line JSON status, read its ownership log, and check that log for overlaps.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** An ownership-log line: a reconcile of `key` started (`p: 's'`) or ended (`p: 'e'`) on replica `r` at `t` (ms). */
export interface OwnershipEntry {
  t: number;
  r: string;
  key?: string;
  p?: string;
}

/** The status line every replica example prints once a second (more fields per example). */
export interface ReplicaStatus {
  identity: string;
  owned: number[];
  events: number;
  bytes: number;
}

/** A replica example running as a child process (`node --import tsx <script> ...args --identity <id> <logFlag> <file>`). */
export class ReplicaProcess<S extends ReplicaStatus> {
  readonly status: S;
  readonly logFile: string;
  readonly child: ChildProcess;
  exited = false;
  /** The log read so far: entries of whole lines, and the bytes they took (the next read starts there). */
  readonly #read: { entries: OwnershipEntry[]; bytes: number } = { entries: [], bytes: 0 };

  constructor(readonly identity: string, script: string, args: readonly string[], options: { dir: string; logFlag: string; initial: Omit<S, keyof ReplicaStatus> }) {
    this.logFile = join(options.dir, `${identity}.jsonl`);
    this.status = { identity, owned: [], events: 0, bytes: 0, ...options.initial } as unknown as S;
    this.child = spawn(process.execPath, ['--import', 'tsx', script, ...args, '--identity', identity, options.logFlag, this.logFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffered = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        if (line.startsWith('{"identity"')) Object.assign(this.status, JSON.parse(line) as S);
        else process.stderr.write(`${identity}: ${line}\n`);
        buffered = buffered.slice(nl + 1);
      }
    });
    this.child.once('exit', () => (this.exited = true));
  }

  /**
   * The ownership log so far (whole lines only: the replica may be appending the last one right now).
   * Only what was appended since the last call is read and parsed: `until` polls every 100 ms, and at
   * 100 000 objects the whole log is hundreds of thousands of lines.
   */
  entries(): OwnershipEntry[] {
    if (!existsSync(this.logFile)) return this.#read.entries;
    const fd = openSync(this.logFile, 'r');
    try {
      const buf = Buffer.alloc(Math.max(0, fstatSync(fd).size - this.#read.bytes));
      const n = readSync(fd, buf, 0, buf.length, this.#read.bytes);
      const end = buf.subarray(0, n).lastIndexOf(0x0a) + 1;
      for (const l of buf.subarray(0, end).toString('utf8').split('\n')) if (l !== '') this.#read.entries.push(JSON.parse(l) as OwnershipEntry);
      this.#read.bytes += end;
    } finally {
      closeSync(fd);
    }
    return this.#read.entries;
  }

  /** The process's peak resident set (VmHWM of /proc/<pid>/status) in MiB; undefined once exited or off Linux. */
  peakRssMiB(): number | undefined {
    return this.child.pid === undefined ? undefined : peakRssMiB(this.child.pid);
  }
}

/** Peak resident set of process `pid` in MiB (VmHWM of /proc/<pid>/status); undefined when unknown (gone, not Linux). */
export function peakRssMiB(pid: number): number | undefined {
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/** Polls `holds` every 100 ms; resolves with the ms it took, rejects after `timeoutMs` naming `what`. */
export async function until(what: string, holds: () => boolean, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (!holds()) {
    if (Date.now() - start > timeoutMs) throw new Error(`not true after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - start;
}

/** The keys whose reconciles ended on `replicas` at or after `after` (ms). */
export function reconciledKeys(replicas: ReadonlyArray<ReplicaProcess<ReplicaStatus>>, after = 0): Set<string> {
  return new Set(replicas.flatMap((r) => r.entries().filter((e) => e.p === 'e' && e.t >= after && e.key !== undefined).map((e) => e.key!)));
}

/**
 * Every pair of reconciles of one key by two replicas that overlap in time, from the ownership logs.
 * A reconcile still open ends at `openUntil(replica)` (a killed replica's at its death).
 */
export function ownershipOverlaps(replicas: ReadonlyArray<ReplicaProcess<ReplicaStatus>>, openUntil: (r: ReplicaProcess<ReplicaStatus>) => number): { overlaps: string[]; reconciles: number } {
  const intervals = new Map<string, Array<{ r: string; s: number; e: number }>>();
  const add = (key: string, interval: { r: string; s: number; e: number }): void => void (intervals.get(key) ?? intervals.set(key, []).get(key)!).push(interval);
  for (const r of replicas) {
    const open = new Map<string, number>();
    for (const e of r.entries()) {
      if (e.key === undefined) continue;
      if (e.p === 's') open.set(e.key, e.t);
      else if (e.p === 'e' && open.has(e.key)) {
        add(e.key, { r: r.identity, s: open.get(e.key)!, e: e.t });
        open.delete(e.key);
      }
    }
    for (const [key, s] of open) add(key, { r: r.identity, s, e: openUntil(r) });
  }
  const overlaps: string[] = [];
  for (const [key, list] of intervals) {
    list.sort((a, b) => a.s - b.s);
    let last = list[0]; // of the reconciles before, the one that ended last
    for (const next of list.slice(1)) {
      if (next.r !== last.r && next.s < last.e) overlaps.push(`${key}: ${last.r} ${next.r}`);
      if (next.e > last.e) last = next;
    }
  }
  return { overlaps, reconciles: [...intervals.values()].reduce((n, l) => n + l.length, 0) };
}
