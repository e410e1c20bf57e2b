// Issue 48: the stop at SIGTERM — shutdownSignal, /readyz false first, reconciles drained within gracefulShutdownTimeoutMs, the Lease released so the next replica leads at its next try.
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resources, SharedInformerFactory } from '../../src/index.js';
import { Action, Controller, type Runnable } from '../../src/controller.js';
import { InMemoryLock, InMemoryLockStore, LeaderElector } from '../../src/leaderelection/index.js';
import { Manager, shutdownSignal, type ShutdownProcess } from '../../src/operations/index.js';
import { FakeClock, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { memoryLog } from '../controller/fixture.js';
import { until } from '../examples/helpers.js';
import { gate } from '../helpers/async.js';

let server: FakeApiServer;
beforeEach(async () => {
  server = await startFakeApiServer({ logger: false });
});
afterEach(async () => {
  await server.close();
});

/** A process whose signals the test sends, and whose exit is recorded. */
class FakeProcess extends EventEmitter implements ShutdownProcess {
  exits: number[] = [];
  override on(event: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): this {
    return super.on(event, listener);
  }
  override off(event: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): this {
    return super.off(event, listener);
  }
  exit(code: number): void {
    this.exits.push(code);
  }
  send(signal: NodeJS.Signals): void {
    this.emit(signal, signal);
  }
}

describe('shutdownSignal', () => {
  it('aborts at the first SIGTERM with a reason naming it; a second signal exits at once with 128 + its number', () => {
    const proc = new FakeProcess();
    const log = memoryLog();
    const signal = shutdownSignal({ process: proc, logger: log.logger });
    expect(proc.listenerCount('SIGTERM')).toBe(1);
    expect(proc.listenerCount('SIGINT')).toBe(1);
    expect(signal.aborted).toBe(false);
    proc.send('SIGTERM');
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('stopped by SIGTERM');
    expect(proc.exits).toEqual([]);
    proc.send('SIGINT');
    expect(proc.exits).toEqual([130]);
    expect(log.lines).toEqual(['info: received SIGTERM: stopping in order; SIGTERM again exits at once', 'warn: received SIGINT again: exiting now (code 130) without finishing the stop']);
    signal.dispose();
    expect(proc.listenerCount('SIGTERM') + proc.listenerCount('SIGINT')).toBe(0);
  });

  it("with secondSignal 'ignore' keeps stopping; dispose (or using) removes the listeners", () => {
    const proc = new FakeProcess();
    {
      using signal = shutdownSignal({ process: proc, logger: false, secondSignal: 'ignore', signals: ['SIGTERM'] });
      expect(proc.listenerCount('SIGINT')).toBe(0);
      proc.send('SIGTERM');
      proc.send('SIGTERM');
      expect(signal.aborted).toBe(true);
      expect(proc.exits).toEqual([]);
    }
    expect(proc.listenerCount('SIGTERM')).toBe(0);
    expect(() => shutdownSignal({ process: proc, signals: ['SIGNOPE' as NodeJS.Signals] })).toThrow(/shutdownSignal: option signals must be a non-empty array of signal names/);
  });
});

describe('Manager stop', () => {
  const newFactory = () => new SharedInformerFactory(server.kubeConfig, { logger: false });

  it('at the stop: /readyz 503 at once while the reconcile in flight finishes, then the Lease is released (by default)', async () => {
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
    const store = new InMemoryLockStore();
    const factory = newFactory();
    const inFlight = gate();
    const events: string[] = [];
    const controller = Controller.for(factory, resources.configmaps).build(
      async (key) => {
        events.push(`reconcile ${key}`);
        await inFlight.promise; // ignores its signal: it finishes its work
        events.push(`finished ${key}`);
        return Action.done();
      },
      { name: 'cms', logger: false },
    );
    const proc = new FakeProcess();
    const signal = shutdownSignal({ process: proc, logger: false });
    const manager = new Manager(factory, { controllers: [controller], leaderElection: { lock: new InMemoryLock('first', store), logger: false }, probes: { port: 0, host: '127.0.0.1' }, logger: false });
    const running = manager.run(signal);
    await until(() => events.length === 1, 'the reconcile to start');
    expect(store.read()?.record.holderIdentity).toBe('first');
    proc.send('SIGTERM');
    expect((await fetch(`${manager.probeUrl}/readyz`)).status).toBe(503);
    expect(store.read()?.record.holderIdentity).toBe('first'); // not before the reconcile ended
    inFlight.open();
    await running;
    signal.dispose();
    expect(events).toEqual(['reconcile ns/a', 'finished ns/a']);
    expect(store.read()?.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  it('keeps the Lease with releaseOnCancel: false', async () => {
    const store = new InMemoryLockStore();
    const factory = newFactory();
    factory.forResource(resources.configmaps);
    const idle: Runnable = { name: 'idle', run: (s) => new Promise<void>((resolve) => s.addEventListener('abort', () => resolve(), { once: true })) };
    const manager = new Manager(factory, { controllers: [idle], leaderElection: { lock: new InMemoryLock('first', store), releaseOnCancel: false, logger: false }, logger: false });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => manager.isLeading(), 'leadership');
    stop.abort();
    await running;
    expect(store.read()?.record.holderIdentity).toBe('first');
  });

  it('abandons what still runs after gracefulShutdownTimeoutMs, naming it, and run resolves', async () => {
    const factory = newFactory();
    factory.forResource(resources.configmaps);
    const stuck: Runnable = { name: 'stuck', run: () => new Promise<void>(() => {}) };
    const log = memoryLog();
    const manager = new Manager(factory, { controllers: [stuck], gracefulShutdownTimeoutMs: 20, logger: log.logger });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    await until(() => manager.phase === 'running', 'running');
    stop.abort();
    await running;
    expect(log.lines.join('\n')).toMatch(/manager: stopped with stuck still running after 20 ms \(graceMs\); they were abandoned/);
    expect(() => new Manager(factory, { gracefulShutdownTimeoutMs: -1 })).toThrow(/Manager: option gracefulShutdownTimeoutMs must be a number of milliseconds >= 0/);
  });
});

describe('handover after a release (fake clock)', () => {
  /** Fake ms from the leader's release to the follower's acquisition, with the worst jitter; `watch: false` = a follower that only polls. */
  async function handover(retryPeriodMs: number, watch = true): Promise<number> {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const base = { clock, retryPeriodMs, renewDeadlineMs: Math.max(10_000, retryPeriodMs * 2), leaseDurationMs: 15_000, random: () => 0.999999 };
    const stopFirst = new AbortController();
    const first = new LeaderElector({ ...base, lock: new InMemoryLock('first', store), releaseOnCancel: true, onStartedLeading: () => {} });
    const firstRun = first.run(stopFirst.signal);
    await clock.advance(0);
    expect(first.isLeader()).toBe(true);
    let acquiredAt = -1;
    const stopSecond = new AbortController();
    const second = new LeaderElector({ ...base, lock: new InMemoryLock('second', store, { watch }), onStartedLeading: () => void (acquiredAt = clock.now()) });
    const secondRun = second.run(stopSecond.signal);
    await clock.advance(0); // its first try: the lease is held
    await clock.advance(retryPeriodMs * 0.7); // the follower is mid-wait when the leader stops
    stopFirst.abort();
    await firstRun;
    const releasedAt = clock.now();
    while (acquiredAt < 0) await clock.advance(10);
    expect(store.read()?.record).toMatchObject({ holderIdentity: 'second', leaderTransitions: 1 }); // released by first, then taken
    stopSecond.abort();
    await secondRun;
    return acquiredAt - releasedAt;
  }

  // The lock's watch reports the release and the follower tries at once (test/leaderelection/watch-wakeup.test.ts).
  it('a follower whose lock watches leads at once after the release, with the default retry period', async () => {
    expect(await handover(2_000)).toBeLessThanOrEqual(5);
  });

  // An acquire retry waits retryPeriodMs plus up to 1.2 × retryPeriodMs of jitter (client-go's JitterFactor): 2.2 × at worst.
  it('a follower that only polls leads at its next try: within 2.2 × retryPeriodMs of the release at worst (not leaseDurationMs)', async () => {
    const slow = await handover(2_000, false);
    expect(slow).toBeGreaterThan(1_000); // the default retry period cannot promise "within 1 s"
    expect(slow).toBeLessThanOrEqual(4_400);
    expect(await handover(400, false)).toBeLessThanOrEqual(880); // retryPeriodMs 400: within 1 s, whatever the jitter
  });
});
