// bench/lib/rpc.ts, the one channel between the benchmark's runner and its forked helpers: answers by id,
// errors with the child's message and stack, time limits, abort, the child's exit, and nothing left running.

import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { forkRpc, RpcChildError, RpcRemoteError, type RpcChild, type RpcChildOptions } from '../../bench/lib/rpc.js';
import { FakeClock } from '../../src/testing/index.js';
import type { FixtureCommand } from './rpc-child.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'rpc-child.ts');
const started: Array<RpcChild<FixtureCommand>> = [];

function start(options: Partial<RpcChildOptions> = {}): RpcChild<FixtureCommand> {
  const child = forkRpc<FixtureCommand>(CHILD, { name: 'fixture', execArgv: ['--import', 'tsx'], ...options });
  started.push(child);
  return child;
}

/** Whether a process with this id still runs. */
function running(pid: number | undefined): boolean {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.pid !== undefined && running(child.pid)) process.kill(child.pid, 'SIGKILL');
    await child.exited;
  }
});

describe('forkRpc and serveRpc', () => {
  it('matches answers to commands by id, so a late answer lets others through', async () => {
    const child = start();
    const held = child.call<string>({ cmd: 'hold' });
    await expect(child.call({ cmd: 'echo', value: { a: [1, null, 'ü'] } })).resolves.toEqual({ a: [1, null, 'ü'] });
    await expect(child.call({ cmd: 'release', value: 'late' })).resolves.toBe('released');
    await expect(held).resolves.toBe('late');
    await child.close();
    expect(await child.exited).toBe(0);
  });

  it('carries a failed command back with the child\'s message and stack, and keeps serving', async () => {
    const child = start();
    const err = await child.call({ cmd: 'fail', message: 'no such pod' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcRemoteError);
    const remote = err as RpcRemoteError;
    expect(remote.message).toBe('fixture: no such pod');
    expect(remote.remoteName).toBe('TypeError');
    expect(remote.remoteStack).toContain('failingHandler');
    expect(remote.stack).toContain('(command fail)');
    expect(remote.stack).toContain('rpc-child.ts');
    await expect(child.call({ cmd: 'echo', value: 1 })).resolves.toBe(1);
    // An answer IPC cannot carry is the command's error, not a child that dies of an unhandled rejection.
    await expect(child.call({ cmd: 'bigint' })).rejects.toThrow(/fixture: .*BigInt/);
    await expect(child.call({ cmd: 'echo', value: 2 })).resolves.toBe(2);
  });

  it('kills a child that does not answer within the time limit', async () => {
    const clock = new FakeClock();
    const child = start({ clock, timeoutMs: 60_000 });
    const hung = child.call({ cmd: 'hang' }, { timeoutMs: 1000 }).catch((e: unknown) => e);
    await clock.waitForTimers(1);
    await clock.advance(1000);
    const err = await hung;
    expect(err).toBeInstanceOf(RpcChildError);
    expect((err as Error).message).toBe('fixture: no answer to hang within 1000 ms (killed)');
    expect(await child.exited).toBeNull();
    expect(running(child.pid)).toBe(false);
    await expect(child.call({ cmd: 'echo', value: 1 })).rejects.toThrow('fixture process gone before echo');
  });

  it('rejects what waits, naming the exit code, when the child exits', async () => {
    const child = start();
    const held = child.call({ cmd: 'hold' }).catch((e: unknown) => e);
    await expect(child.call({ cmd: 'crash', code: 3 })).rejects.toThrow('fixture process exited (code 3) during crash');
    expect(((await held) as Error).message).toBe('fixture process exited (code 3) during hold');
    expect(await child.exited).toBe(3);
    await child.close();
  });

  it('kills the child and rejects what waits when the signal aborts', async () => {
    const abort = new AbortController();
    const child = start({ signal: abort.signal });
    await expect(child.call({ cmd: 'echo', value: 'up' })).resolves.toBe('up');
    const hung = child.call({ cmd: 'hang' });
    abort.abort(new Error('runner stopped'));
    await expect(hung).rejects.toThrow('fixture: aborted during hang (Error: runner stopped)');
    expect(await child.exited).toBeNull();
    expect(running(child.pid)).toBe(false);
  });

  it('sends one command at a time with serial, and overlaps them without', async () => {
    const serial = start({ serial: true });
    const [seenSerial] = await Promise.all([serial.call<string[]>({ cmd: 'linger' }), serial.call({ cmd: 'echo', value: 1 })]);
    expect(seenSerial).toEqual([]);
    const overlapping = start();
    const [seen] = await Promise.all([overlapping.call<string[]>({ cmd: 'linger' }), overlapping.call({ cmd: 'echo', value: 1 })]);
    expect(seen).toEqual(['echo']);
  });

  it('kills a child that does not exit within the grace after exit', async () => {
    const clock = new FakeClock();
    const child = start({ clock, serial: true });
    await expect(child.call({ cmd: 'echo', value: 'up' })).resolves.toBe('up');
    const hung = child.call({ cmd: 'hang' }).catch((e: unknown) => e);
    // The exit command waits behind the hung one (serial): only the grace ends the child.
    const closed = child.close();
    await clock.waitForTimers(1);
    await clock.advance(30_000);
    await closed;
    expect(await child.exited).toBeNull();
    expect(((await hung) as Error).message).toBe('fixture process exited (SIGKILL) during hang');
  });

  it('the child exits by itself once the runner is gone', async () => {
    const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise((resolve) => child.once('message', resolve));
    child.disconnect();
    expect(await exited).toBe(0);
  });
});
