// LeaderElector on a FakeClock with in-memory locks: acquire, renew, lose, observe, release, conflicts.

import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import { LeaderElectionError, type LeaderElectionRecord, type ResourceLock } from '../../src/leaderelection/lock.js';
import { LeaderElector, type LeaderElectorOptions } from '../../src/leaderelection/elector.js';
import { InMemoryLock, InMemoryLockStore } from '../../src/leaderelection/memory-lock.js';
import { channelNames } from '../../src/observability/channels.js';

/** Wraps a lock so a test can make operations fail or interleave another writer. */
class FlakyLock implements ResourceLock {
  failGets = false;
  failUpdates = false;
  beforeUpdate: (() => void) | undefined;
  updates = 0;
  constructor(readonly inner: InMemoryLock) {}
  get(signal?: AbortSignal) {
    if (this.failGets) return Promise.reject(new Error('get failed'));
    return this.inner.get(signal);
  }
  create(record: LeaderElectionRecord, signal?: AbortSignal) {
    return this.inner.create(record, signal);
  }
  update(record: LeaderElectionRecord, signal?: AbortSignal) {
    this.updates++;
    if (this.failUpdates) return Promise.reject(new Error('update failed'));
    this.beforeUpdate?.();
    return this.inner.update(record, signal);
  }
  identity() {
    return this.inner.identity();
  }
  describe() {
    return this.inner.describe();
  }
}

interface Harness {
  elector: LeaderElector;
  log: string[];
  abort: AbortController;
  run: Promise<void>;
  term: () => AbortSignal | undefined;
}

function start(clock: FakeClock, lock: ResourceLock, extra: Partial<LeaderElectorOptions> = {}): Harness {
  const log: string[] = [];
  let termSignal: AbortSignal | undefined;
  const elector = new LeaderElector({
    lock,
    clock,
    random: () => 0,
    onStartedLeading: (signal) => {
      termSignal = signal;
      log.push(`started@${clock.now()}`);
      signal.addEventListener('abort', () => log.push(`term-ended@${clock.now()}`));
    },
    onStoppedLeading: () => {
      log.push(`stopped@${clock.now()}`);
    },
    onNewLeader: (id) => {
      log.push(`leader:${id}`);
    },
    ...extra,
  });
  const abort = new AbortController();
  const run = elector.run(abort.signal);
  return { elector, log, abort, run, term: () => termSignal };
}

const held = (holder: string, transitions = 0, renewTime = new Date(0)): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: renewTime,
  renewTime,
  leaderTransitions: transitions,
});

describe('LeaderElector', () => {
  it('validates its options like client-go', () => {
    const lock = new InMemoryLock('a');
    const base = { lock, onStartedLeading: () => {} };
    const invalid = expect.objectContaining({ code: 'INVALID_OPTION' });
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(invalid);
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })).toThrow(invalid);
    expect(() => new LeaderElector({ ...base, retryPeriodMs: 0 })).toThrow(invalid);
    expect(() => new LeaderElector({ ...base, leaseDurationMs: Number.NaN })).toThrow(invalid);
    expect(() => new LeaderElector({ lock } as unknown as LeaderElectorOptions)).toThrow(invalid);
    expect(() => new LeaderElector({ ...base, lock: new InMemoryLock('') })).toThrow(invalid);
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 2_401, retryPeriodMs: 2_000 })).not.toThrow();
  });

  it('creates an absent lock, leads, and renews every retry period', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const h = start(clock, new InMemoryLock('a', store));
    await flushPromises();
    expect(h.elector.isLeader()).toBe(true);
    expect(h.elector.getLeader()).toBe('a');
    expect(h.log).toEqual(['leader:a', 'started@0']);
    expect(store.record).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaderTransitions: 0 });
    const firstAcquire = store.record?.acquireTime?.getTime();
    const v = store.version;
    await clock.advance(2_000);
    expect(store.version).toBe(v + 1);
    await clock.advance(2_000);
    expect(store.version).toBe(v + 2);
    expect(store.record?.acquireTime?.getTime()).toBe(firstAcquire);
    expect(store.record?.renewTime?.getTime()).toBe((firstAcquire ?? 0) + 4_000);
    h.abort.abort();
    await h.run;
    expect(h.log).toEqual(['leader:a', 'started@0', 'term-ended@4000', 'stopped@4000']);
    expect(store.record?.holderIdentity).toBe('a');
    expect(clock.pendingTimers()).toBe(0);
  });

  it("waits a full lease duration of its own observation before taking over another holder's lock", async () => {
    const clock = new FakeClock(100_000);
    const store = new InMemoryLockStore();
    // The holder's timestamps are decades old (clock skew): only the local observation time counts.
    store.create(held('b', 3, new Date('2000-01-01T00:00:00Z')));
    const h = start(clock, new InMemoryLock('a', store));
    await flushPromises();
    expect(h.elector.isLeader()).toBe(false);
    expect(h.elector.getLeader()).toBe('b');
    await clock.advance(14_000);
    expect(h.elector.isLeader()).toBe(false);
    await clock.advance(2_000);
    expect(h.elector.isLeader()).toBe(true);
    expect(h.log).toEqual(['leader:b', 'leader:a', 'started@116000']);
    expect(store.record).toMatchObject({ holderIdentity: 'a', leaderTransitions: 4 });
    h.abort.abort();
    await h.run;
  });

  it('never takes over from a holder that keeps renewing', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    store.create(held('b'));
    const h = start(clock, new InMemoryLock('a', store));
    for (let t = 0; t < 60_000; t += 5_000) {
      store.forceWrite(held('b', 0, new Date(t)));
      await clock.advance(5_000);
      expect(h.elector.isLeader()).toBe(false);
    }
    h.abort.abort();
    await h.run;
    expect(h.log).toEqual(['leader:b', 'stopped@60000']);
  });

  it('stops leading when renewals fail until the renew deadline', async () => {
    const clock = new FakeClock();
    const lock = new FlakyLock(new InMemoryLock('a'));
    const h = start(clock, lock);
    await clock.advance(2_000);
    expect(h.elector.isLeader()).toBe(true);
    lock.failUpdates = true;
    await clock.advance(2_000); // t=4000: the renewal poll starts and fails
    expect(h.elector.isLeader()).toBe(true);
    await clock.advance(9_999);
    expect(h.elector.isLeader()).toBe(true);
    expect(h.term()?.aborted).toBe(false);
    await clock.advance(1);
    expect(h.elector.isLeader()).toBe(false);
    await h.run;
    expect(h.log).toEqual(['leader:a', 'started@0', 'term-ended@14000', 'stopped@14000']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('ends its term at once when it observes another holder while leading', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const h = start(clock, new InMemoryLock('a', store));
    await flushPromises();
    expect(h.elector.isLeader()).toBe(true);
    store.forceWrite(held('b', 1));
    await clock.advance(2_000);
    expect(h.elector.isLeader()).toBe(false);
    expect(h.elector.getLeader()).toBe('b');
    await h.run;
    expect(h.log).toEqual(['leader:a', 'started@0', 'leader:b', 'term-ended@2000', 'stopped@2000']);
  });

  it('releases the lock on cancel after the leading work settled, so another candidate takes over at once', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const order: string[] = [];
    const a = start(clock, new InMemoryLock('a', store), {
      releaseOnCancel: true,
      onStartedLeading: (signal) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            order.push('work aborted');
            setImmediate(() => {
              order.push(`work finished, holder ${store.record?.holderIdentity}`);
              resolve();
            });
          }),
        ),
    });
    await flushPromises();
    // b only polls, so the released record can be read before b's next try (a watching b takes it at once: watch-wakeup.test.ts).
    const b = start(clock, new InMemoryLock('b', store, { watch: false }));
    await clock.advance(3_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    a.abort.abort();
    await a.run;
    order.push(`released, holder '${store.record?.holderIdentity}'`);
    expect(order).toEqual(['work aborted', 'work finished, holder a', "released, holder ''"]);
    expect(store.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaderTransitions: 0 });
    await clock.advance(2_000);
    expect(b.elector.isLeader()).toBe(true);
    expect(store.record).toMatchObject({ holderIdentity: 'b', leaderTransitions: 1 });
    b.abort.abort();
    await b.run;
  });

  it('treats a conflicting update as a lost round and retries', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    store.create({ ...held(''), leaseDurationSeconds: 1 });
    const lock = new FlakyLock(new InMemoryLock('a', store));
    // Candidate b writes between a's read and a's update: a's compare-and-swap fails with a conflict.
    lock.beforeUpdate = () => {
      lock.beforeUpdate = undefined;
      store.forceWrite(held('b', 1));
    };
    const errors: unknown[] = [];
    const listener = (m: unknown) => errors.push((m as { error?: unknown }).error);
    diagnosticsChannel.subscribe(channelNames.leaderElection, listener);
    try {
      const h = start(clock, lock);
      await flushPromises();
      expect(h.elector.isLeader()).toBe(false);
      expect(errors.filter(Boolean)).toEqual([expect.objectContaining({ code: 'LEADER_ELECTION', reason: 'conflict' })]);
      await clock.advance(2_000);
      expect(h.elector.getLeader()).toBe('b');
      expect(h.elector.isLeader()).toBe(false);
      await clock.advance(16_000);
      expect(h.elector.isLeader()).toBe(true);
      expect(store.record).toMatchObject({ holderIdentity: 'a', leaderTransitions: 2 });
      h.abort.abort();
      await h.run;
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.leaderElection, listener);
    }
  });

  it('jitters acquire retries by the injected random source', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    store.create(held('b'));
    const h = start(clock, new InMemoryLock('a', store), { random: () => 0.5 });
    await flushPromises();
    // 2000 ms × (1 + 0.5 × 1.2)
    expect(clock.pendingDelays()).toEqual([3_200]);
    h.abort.abort();
    await h.run;
  });

  it('keeps retrying through lock failures', async () => {
    const clock = new FakeClock();
    const lock = new FlakyLock(new InMemoryLock('a'));
    lock.failGets = true;
    const h = start(clock, lock);
    await clock.advance(10_000);
    expect(h.elector.isLeader()).toBe(false);
    lock.failGets = false;
    await clock.advance(2_000);
    expect(h.elector.isLeader()).toBe(true);
    h.abort.abort();
    await h.run;
  });

  it('logs a lock failure (a 403 on the Lease) at once, its repeats once per 30 s with a count, and again at once after a success', async () => {
    const clock = new FakeClock();
    const lock = new FlakyLock(new InMemoryLock('a'));
    lock.failGets = true;
    const lines: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: (m: string) => void lines.push(m), error: (m: string) => void lines.push(`error: ${m}`) };
    const h = start(clock, lock, { logger });
    await flushPromises();
    expect(lines).toEqual(['leader election in-memory/a: the lock failed, retrying every 2 s: get failed']);
    await clock.advance(30_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/get failed \(and \d+ more like it in the last 30 s\)$/);
    lock.failGets = false;
    await clock.advance(2_000);
    expect(h.elector.isLeader()).toBe(true);
    lock.failUpdates = true;
    await clock.advance(2_000);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('leader election in-memory/a: the lock failed, retrying every 2 s: update failed');
    h.abort.abort();
    await h.run;
  });

  it('ends the run with the callback error when onStartedLeading throws, releasing the lock', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const boom = new Error('boom');
    const h = start(clock, new InMemoryLock('a', store), {
      releaseOnCancel: true,
      onStartedLeading: async () => {
        throw boom;
      },
    });
    const err = await h.run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LeaderElectionError);
    expect(err).toMatchObject({ code: 'LEADER_ELECTION', reason: 'callback-failed', cause: boom });
    expect(store.record?.holderIdentity).toBe('');
    expect(h.log).toEqual(['leader:a', 'stopped@0']);
  });

  it('calls onStoppedLeading and resolves when cancelled before ever leading; refuses a second run', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    store.create(held('b'));
    const h = start(clock, new InMemoryLock('a', store));
    await clock.advance(1_000);
    h.abort.abort();
    await h.run;
    expect(h.log).toEqual(['leader:b', 'stopped@1000']);
    await expect(h.elector.run()).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
  });

  it('lets exactly one of two candidates lead, and the other take over within a lease after the leader dies', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const leading = new Set<string>();
    let overlap = false;
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const candidate = (id: string) =>
      start(clock, new InMemoryLock(id, store), {
        random,
        onStartedLeading: (signal) => {
          if (leading.size > 0) overlap = true;
          leading.add(id);
          signal.addEventListener('abort', () => leading.delete(id));
        },
      });
    const a = candidate('a');
    const b = candidate('b');
    for (let i = 0; i < 30; i++) {
      await clock.advance(1_000);
      expect(leading.size).toBe(1);
    }
    const first = [...leading][0];
    const [leader, other] = first === 'a' ? [a, b] : [b, a];
    leader.abort.abort(); // dies without releasing: the lock still names it
    await leader.run;
    const diedAt = clock.now();
    while (!other.elector.isLeader()) await clock.advance(100);
    // The survivor sees the last renewal at its next (jittered, ≤ 4.4 s) attempt, waits the 15 s lease
    // from that observation, and acquires at the next attempt after it.
    expect(clock.now() - diedAt).toBeLessThanOrEqual(15_000 + 2 * 4_400);
    expect(overlap).toBe(false);
    other.abort.abort();
    await other.run;
  });
});
