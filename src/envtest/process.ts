// The server processes of a test environment, and the reaper that stops them if this process dies.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { sleep, type Clock } from '../core/clock.js';

/**
 * The reaper, run as `node -e`: it reads `pid <n>`, `forget <n>`, `dir <path>` and `done` lines on its
 * stdin. When stdin ends without `done` — the parent died (SIGKILL, a crash, a runner that killed
 * its worker), so the kernel closed the pipe — it stops every pid it holds, newest first (SIGTERM,
 * SIGKILL after the grace), then removes the directory. Node has no PR_SET_PDEATHSIG; a pipe that
 * closes with its owner is the portable lifeline. It ignores SIGINT/SIGTERM/SIGHUP (a Ctrl-C reaches
 * the whole process group; the parent's own cleanup, or its death, decides), and runs in its own
 * session so a signal to the parent's process group cannot take it down with the parent. A zombie
 * (`Z` in /proc/<pid>/stat: dead, not yet reaped by its new parent) counts as gone.
 */
const REAPER_SOURCE = `
const fs = require('node:fs');
const grace = Number(process.argv[1]) || 5000;
let pids = [];
let dir = '';
let done = false;
let buffered = '';
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
const alive = (pid) => {
  try { process.kill(pid, 0); } catch { return false; }
  try {
    const stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch { return true; }
};
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
let reaping = false;
async function reap() {
  if (reaping) return;
  reaping = true;
  if (done) process.exit(0);
  for (const pid of pids.reverse()) {
    try { process.kill(pid, 'SIGTERM'); } catch {}
    for (let waited = 0; alive(pid) && waited < grace; waited += 50) await pause(50);
    if (alive(pid)) { try { process.kill(pid, 'SIGKILL'); } catch {} }
    for (let waited = 0; alive(pid) && waited < 5000; waited += 50) await pause(50);
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  process.exit(0);
}
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let i = buffered.indexOf('\\n'); i >= 0; i = buffered.indexOf('\\n')) {
    const line = buffered.slice(0, i);
    buffered = buffered.slice(i + 1);
    const space = line.indexOf(' ');
    const verb = space < 0 ? line : line.slice(0, space);
    const arg = space < 0 ? '' : line.slice(space + 1);
    if (verb === 'pid') pids.push(Number(arg));
    else if (verb === 'forget') pids = pids.filter((p) => p !== Number(arg));
    else if (verb === 'dir') dir = arg;
    else if (verb === 'done') done = true;
  }
});
process.stdin.on('end', reap);
process.stdin.on('error', reap);
`;

/**
 * A watchdog child holding the pids and the directory of one test environment: if this process dies
 * without calling {@link Reaper.release}, the reaper stops the servers and removes the directory.
 */
export class Reaper {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;

  /** Starts the reaper for `dir`; `graceMs` is how long it waits after SIGTERM before SIGKILL. */
  constructor(dir: string, graceMs: number) {
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // a loader or `--require` meant for the tests must not break the reaper
    this.#child = spawn(process.execPath, ['-e', REAPER_SOURCE, String(graceMs)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
      env,
    });
    this.#exited = new Promise((resolve) => {
      this.#child.once('close', () => resolve());
      this.#child.once('error', () => resolve());
    });
    this.#child.stdin?.on('error', () => {
      // The reaper is gone (it only exits on `done` or a closed stdin); nothing left to tell it.
    });
    this.#child.unref();
    this.#send(`dir ${dir}`);
  }

  /** The reaper's pid (for tests that check it is gone too). */
  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** Adds a process the reaper stops if this process dies; stopped newest first. */
  watch(pid: number): void {
    this.#send(`pid ${pid}`);
  }

  /** Removes a process that already exited (so a reused pid is never signalled). */
  forget(pid: number): void {
    this.#send(`forget ${pid}`);
  }

  /** The environment was cleaned up by its owner: the reaper exits without touching anything. */
  async release(): Promise<void> {
    this.#send('done');
    this.#child.stdin?.end();
    this.#child.ref(); // the wait for its exit must keep this process alive
    await this.#exited;
  }

  #send(line: string): void {
    this.#child.stdin?.write(`${line}\n`);
  }
}

/** How a server process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  /** The exit code, `null` when a signal ended it. */
  readonly code: number | null;
  /** The signal that ended it, or `null`. */
  readonly signal: NodeJS.Signals | null;
  /** Set when the binary could not be started at all (ENOENT, EACCES). */
  readonly error?: Error;
}

/** One etcd or kube-apiserver process, its output appended to a log file. */
export class ServerProcess {
  /** `etcd` or `kube-apiserver`. */
  readonly name: string;
  /** The operating-system pid (-1 when spawning failed). */
  readonly pid: number;
  /** The file its stdout and stderr go to. */
  readonly logFile: string;
  /** Settles once the process has exited. */
  readonly exited: Promise<ProcessExit>;
  readonly #child: ChildProcess;
  #exit: ProcessExit | undefined;

  /** Spawns `binary args…` with its output appended to `logFile`, watched by `reaper`. */
  constructor(name: string, binary: string, args: readonly string[], logFile: string, reaper: Reaper) {
    this.name = name;
    this.logFile = logFile;
    const fd = openSync(logFile, 'a');
    try {
      // Not detached: in a session of its own a server would also be a scheduler autogroup of its own
      // on Linux, sharing the CPU with the test's processes differently than the servers the suite ran
      // before envtest (scripts/apiserver/start.sh's). A Ctrl-C reaches the servers too; they stop on it.
      this.#child = spawn(binary, [...args], { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    this.pid = this.#child.pid ?? -1;
    if (this.pid > 0) reaper.watch(this.pid);
    this.exited = new Promise<ProcessExit>((resolve) => {
      this.#child.once('error', (error) => {
        this.#exit ??= { code: null, signal: null, error };
        resolve(this.#exit);
      });
      this.#child.once('exit', (code, signal) => {
        this.#exit ??= { code, signal };
        resolve(this.#exit);
      });
    });
    // A forgotten stop() must not keep the test runner alive; the reaper cleans up after it.
    this.#child.unref();
  }

  /** How it ended, once it has; `undefined` while it runs. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** SIGTERM, then SIGKILL when it is still running after `graceMs`; resolves once it has exited. */
  async stop(clock: Clock, graceMs: number): Promise<ProcessExit> {
    if (this.#exit) return this.#exit;
    this.#child.ref(); // the wait for its exit must keep this process alive
    this.#child.kill('SIGTERM');
    const grace = new AbortController();
    const stopped = await Promise.race([this.exited.then(() => true), sleep(clock, graceMs, grace.signal).then(() => false)]);
    grace.abort(); // clears the grace timer when the process was quicker
    if (!stopped) this.#child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGKILL, resolving once it has exited (a crash on purpose, for `restart`). */
  async kill(): Promise<ProcessExit> {
    if (this.#exit) return this.#exit;
    this.#child.ref();
    this.#child.kill('SIGKILL');
    return this.exited;
  }

  /** The last `lines` lines of its log, for an error message. */
  logTail(lines = 20): string {
    try {
      const text = readFileSync(this.logFile, 'utf8').trimEnd();
      return text.split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** `exited with code 1`, `ended by SIGKILL`, or why it could not start. */
  describeExit(): string {
    const e = this.#exit;
    if (e === undefined) return 'is running';
    if (e.error) return `could not be started (${e.error.message})`;
    return e.signal ? `was ended by ${e.signal}` : `exited with code ${e.code}`;
  }
}
