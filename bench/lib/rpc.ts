// The one request/answer channel between the benchmark's runner and a forked helper process: `forkRpc` (the runner's side) and `serveRpc` (the child's).
//
// The runner forks a child (the fake-server process bench/server.ts, the real phase's writer
// bench/lib/real-writer.ts, the independent phase's server bench/lib/indep-server.ts) and sends it
// commands `{ cmd, ... }` over the IPC channel. Every command carries an id and every answer the id of
// its command, so a command may answer late (the independent server's `burst`) while others are
// answered meanwhile; `serial: true` sends one command at a time, in order, as a child that handles one
// thing at a time wants. A command the child fails comes back as an `RpcRemoteError` with the child's
// message and stack. The child is killed, and whatever waits rejected, when it exits or breaks its
// channel, when a command outlives its time limit, when the runner's signal aborts, and when the
// runner's process exits; `close()` asks it to `exit` and kills it if it has not exited within a grace.
// The child's side answers every command and, once the runner is gone (or it answered `exit`), runs its
// cleanup and exits: nothing is left running.

import { fork, type ChildProcess } from 'node:child_process';
import { realClock, type Clock, type ClockTimer } from '../../src/core/index.js';

/** A command: `cmd` names it, the other fields are its arguments. */
export interface RpcCommand {
  cmd: string;
}

/** The command `close()` sends; a child's handler answers it after its own cleanup. */
export interface ExitCommand {
  cmd: 'exit';
}

/** Runner → child. */
interface Request {
  id: number;
  command: RpcCommand;
}

/** Child → runner: `ready` once, then one answer per request. */
type Reply = { ready: true } | { id: number; ok: true; result: unknown } | { id: number; ok: false; error: { name: string; message: string; stack?: string } };

/** A command the child failed: the child's error, its message and stack carried over. */
export class RpcRemoteError extends Error {
  /** The child's error's name (`TypeError`, …). */
  readonly remoteName: string;
  /** The child's stack trace, as the child printed it. */
  readonly remoteStack: string | undefined;

  constructor(child: string, command: string, error: { name: string; message: string; stack?: string }) {
    super(`${child}: ${error.message}`);
    this.name = 'RpcRemoteError';
    this.remoteName = error.name;
    this.remoteStack = error.stack;
    this.stack = `${this.name}: ${this.message} (command ${command})\n${error.stack ?? `${error.name}: ${error.message}`}`;
  }
}

/** The child did not answer in time (it was killed), or it went away before it answered. */
export class RpcChildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RpcChildError';
  }
}

/** A command sent (or about to be) and not yet answered. */
interface Waiting {
  command: string;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  /** Its time limit, once sent. */
  timer?: ClockTimer;
}

/** How {@link forkRpc} starts and watches the child. */
export interface RpcChildOptions {
  /** What messages call the child (`server`, `writer`, …). Required. */
  name: string;
  /** The child's Node flags (`--import tsx` for a TypeScript file). Default: none. */
  execArgv?: string[];
  /** Send one command at a time, each after the last one's answer. Default: false (answers matched by id). */
  serial?: boolean;
  /** A command's time limit in ms, unless the call gives its own; past it the child is killed. Default: 0, none. */
  timeoutMs?: number;
  /** How long `close()` waits for the child to exit after `exit` before SIGKILL, ms. Default: 30 000. */
  closeGraceMs?: number;
  /** Aborting kills the child and rejects whatever waits. Default: none. */
  signal?: AbortSignal;
  /** The timers of the time limits. Default: `realClock`. */
  clock?: Clock;
}

/** The runner's handle on a child. */
export interface RpcChild<C extends RpcCommand> {
  /** The child's process id. */
  readonly pid: number | undefined;
  /** Resolves with the child's exit code (null when a signal ended it) once it exited. */
  readonly exited: Promise<number | null>;
  /** Sends `command` and resolves with its answer; `timeoutMs` overrides the child's default limit. */
  call<R = unknown>(command: C, options?: { timeoutMs?: number }): Promise<R>;
  /** Asks the child to `exit` and resolves once it exited (killed after `closeGraceMs`); harmless when it is gone. */
  close(): Promise<void>;
}

const DEFAULT_CLOSE_GRACE_MS = 30_000;

/** Forks `modulePath` (a file that calls {@link serveRpc}) and returns the runner's handle on it. */
export function forkRpc<C extends RpcCommand>(modulePath: string, options: RpcChildOptions): RpcChild<C | ExitCommand> {
  const { name, serial = false, timeoutMs: defaultTimeoutMs = 0, closeGraceMs = DEFAULT_CLOSE_GRACE_MS, signal, clock = realClock } = options;
  const child: ChildProcess = fork(modulePath, [], { execArgv: options.execArgv ?? [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, Waiting>();
  let nextId = 1;
  let gone: Error | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  let readyFns!: { resolve: () => void; reject: (err: Error) => void };
  const ready = new Promise<void>((resolve, reject) => (readyFns = { resolve, reject }));
  ready.catch(() => {});
  let exitedFn!: (code: number | null) => void;
  const exited = new Promise<number | null>((resolve) => (exitedFn = resolve));
  child.once('exit', (code) => exitedFn(code));

  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  /** The child is of no more use: everything waiting rejects, and the child is killed if it still runs. */
  const fail = (reason: (w: Pick<Waiting, 'command'>) => Error): void => {
    gone ??= reason({ command: 'a command' });
    readyFns.reject(gone);
    for (const [id, w] of waiting) {
      waiting.delete(id);
      if (w.timer !== undefined) clock.clearTimeout(w.timer);
      w.reject(reason(w));
    }
    kill();
  };

  // The runner's process may end without closing the child (a crash): the child goes with it.
  process.once('exit', kill);
  const onAbort = (): void => fail((w) => new RpcChildError(`${name}: aborted during ${w.command} (${String(signal?.reason)})`));
  if (signal?.aborted) queueMicrotask(onAbort);
  else signal?.addEventListener('abort', onAbort, { once: true });

  child.on('message', (reply: Reply) => {
    if ('ready' in reply) return readyFns.resolve();
    const w = waiting.get(reply.id);
    if (w === undefined) return; // timed out, the child already killed
    waiting.delete(reply.id);
    if (w.timer !== undefined) clock.clearTimeout(w.timer);
    if (reply.ok) w.resolve(reply.result);
    else w.reject(new RpcRemoteError(name, w.command, reply.error));
  });
  child.once('error', (err) => {
    fail((w) => new RpcChildError(`${name}: ${err.message} (during ${w.command})`));
    if (child.pid === undefined) exitedFn(null); // it never started: no 'exit' will come
  });
  child.once('exit', (code, sig) => {
    process.off('exit', kill);
    signal?.removeEventListener('abort', onAbort);
    fail((w) => new RpcChildError(`${name} process exited (${sig ?? `code ${code}`}) during ${w.command}`));
  });

  /** Registers the command at once (an abort or exit from now on rejects it), sends it once the child is ready. */
  const send = <R>(command: C | ExitCommand, limitMs: number): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      if (gone !== undefined) return reject(new RpcChildError(`${name} process gone before ${command.cmd}`));
      const id = nextId++;
      const entry: Waiting = { command: command.cmd, resolve: resolve as (value: unknown) => void, reject };
      waiting.set(id, entry);
      void ready.then(() => {
        if (!waiting.has(id)) return;
        if (limitMs > 0) {
          const timedOut = (w: Pick<Waiting, 'command'>): Error =>
            new RpcChildError(w === entry ? `${name}: no answer to ${w.command} within ${limitMs} ms (killed)` : `${name} killed: no answer to ${command.cmd} within ${limitMs} ms (during ${w.command})`);
          entry.timer = clock.setTimeout(() => fail(timedOut), limitMs);
        }
        child.send({ id, command } satisfies Request, (err) => {
          if (err !== null && err !== undefined) fail((w) => new RpcChildError(`${name}: sending ${command.cmd} failed: ${err.message} (during ${w.command})`));
        });
      }, () => {});
    });

  const call = <R>(command: C | ExitCommand, callOptions?: { timeoutMs?: number }): Promise<R> => {
    const limitMs = callOptions?.timeoutMs ?? defaultTimeoutMs;
    if (!serial) return send<R>(command, limitMs);
    const next = queue.then(() => send<R>(command, limitMs));
    queue = next.catch(() => undefined);
    return next;
  };

  return {
    pid: child.pid,
    exited,
    call,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const grace = clock.setTimeout(kill, closeGraceMs);
      await call({ cmd: 'exit' }).catch(kill);
      await exited;
      clock.clearTimeout(grace);
    },
  };
}

/** How the child's side behaves. */
export interface ServeRpcOptions {
  /** Runs once the runner is gone (or after `exit` was answered), before the process exits. Default: nothing. */
  onDisconnect?: () => void | Promise<void>;
}

const errorOf = (err: unknown): { name: string; message: string; stack?: string } =>
  err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : { name: 'Error', message: String(err) };

/**
 * The child's side: answers each command with what `handle` returns (or the error it throws, with its
 * stack), tells the runner it is ready, disconnects after answering `exit` and exits once disconnected.
 */
export function serveRpc<C extends RpcCommand>(handle: (command: C | ExitCommand) => unknown, options: ServeRpcOptions = {}): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('serveRpc: this process was not forked with an IPC channel (start it with forkRpc)');
  process.on('message', ({ id, command }: { id: number; command: C | ExitCommand }) => {
    const answer = (reply: Reply, then?: () => void): void => {
      if (process.connected) send(reply, undefined, {}, () => then?.());
    };
    // An answer that cannot be sent (a value IPC cannot serialise) goes back as the command's error.
    void Promise.resolve()
      .then(() => handle(command))
      .then((result) => answer({ id, ok: true, result }, () => command.cmd === 'exit' && process.connected && process.disconnect()))
      .catch((err: unknown) => answer({ id, ok: false, error: errorOf(err) }));
  });
  process.once('disconnect', () => {
    void Promise.resolve()
      .then(options.onDisconnect)
      .catch((err: unknown) => console.error(err))
      .finally(() => process.exit());
  });
  send({ ready: true } satisfies Reply);
}
