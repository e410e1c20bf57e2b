// Issue 48: a following elector learns of a release from its lock's watch and tries at once; polling every retryPeriodMs stays the floor.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { LeaderElectionRecord, ResourceLock } from '../../src/leaderelection/lock.js';
import { LeaderElector } from '../../src/leaderelection/elector.js';
import { InMemoryLock, InMemoryLockStore } from '../../src/leaderelection/memory-lock.js';
import { memoryLog } from '../controller/fixture.js';

/** An in-memory lock whose watch the test breaks: it rejects (or ends at once) instead of watching. */
class BrokenWatchLock implements ResourceLock {
  opens: number[] = [];
  constructor(
    readonly inner: InMemoryLock,
    readonly clock: FakeClock,
    readonly how: 'reject' | 'end',
  ) {}
  get = (signal?: AbortSignal) => this.inner.get(signal);
  create = (record: LeaderElectionRecord, signal?: AbortSignal) => this.inner.create(record, signal);
  update = (record: LeaderElectionRecord, signal?: AbortSignal) => this.inner.update(record, signal);
  identity = () => this.inner.identity();
  describe = () => this.inner.describe();
  watch = async (): Promise<void> => {
    this.opens.push(this.clock.now());
    if (this.how === 'reject') throw new Error('watch refused: HTTP 403');
  };
}

const RETRY_MS = 2_000; // the default retry period
const base = (clock: FakeClock) => ({ clock, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: RETRY_MS, random: () => 0.999999 });

/**
 * A leads, B follows with `followerLock`; A stops with a release while B is mid-wait. Returns the fake
 * ms from the release to B's acquisition, and B's run to stop.
 */
async function handover(clock: FakeClock, store: InMemoryLockStore, followerLock: ResourceLock) {
  const stopA = new AbortController();
  const a = new LeaderElector({ ...base(clock), lock: new InMemoryLock('a', store), releaseOnCancel: true, onStartedLeading: () => {}, logger: false });
  const aRun = a.run(stopA.signal);
  await clock.advance(0);
  expect(a.isLeader()).toBe(true);
  let acquiredAt = -1;
  const stopB = new AbortController();
  const b = new LeaderElector({ ...base(clock), lock: followerLock, onStartedLeading: () => void (acquiredAt = clock.now()), logger: false });
  const bRun = b.run(stopB.signal);
  await clock.advance(0);
  await clock.advance(RETRY_MS * 0.7);
  expect(b.getLeader()).toBe('a');
  stopA.abort();
  await aRun;
  const releasedAt = clock.now();
  while (acquiredAt < 0) await clock.advance(1);
  expect(store.record).toMatchObject({ holderIdentity: 'b', leaderTransitions: 1 }); // a released, then b took it
  return { ms: acquiredAt - releasedAt, b, stop: async () => (stopB.abort(), await bRun) };
}

describe('a follower woken by the lock watch', () => {
  it('leads within a few ms of the release with the default retry period (3000 ms by polling alone)', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const { ms, b, stop } = await handover(clock, store, new InMemoryLock('b', store));
    expect(ms).toBeLessThanOrEqual(5);
    expect(b.isLeader()).toBe(true);
    expect(store.watchers).toBe(0); // the watch closes once B leads: nothing is watched while leading
    await stop();
    expect(store.watchers).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a lock without watch polls as before: 2.2 × retryPeriodMs at worst after the wait began (3000 ms here)', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const { ms, stop } = await handover(clock, store, new InMemoryLock('b', store, { watch: false }));
    expect(ms).toBeCloseTo(RETRY_MS * 2.2 - RETRY_MS * 0.7, 0);
    await stop();
  });

  it('learns of a new holder at once and keeps following it', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const leaders: string[] = [];
    const now = new Date(0);
    store.create({ holderIdentity: 'x', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaderTransitions: 0 });
    const stop = new AbortController();
    const b = new LeaderElector({ ...base(clock), lock: new InMemoryLock('b', store), onStartedLeading: () => {}, onNewLeader: (who) => void leaders.push(who), logger: false });
    const run = b.run(stop.signal);
    await clock.advance(100);
    expect(store.watchers).toBe(1);
    store.forceWrite({ holderIdentity: 'y', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaderTransitions: 1 });
    await clock.advance(0);
    expect(b.getLeader()).toBe('y');
    expect(leaders).toEqual(['x', 'y']);
    // y's renewals (same holder) wake nobody; B stays a follower while y renews.
    for (let i = 0; i < 20; i++) {
      store.forceWrite({ holderIdentity: 'y', leaseDurationSeconds: 15, acquireTime: now, renewTime: new Date(i), leaderTransitions: 1 });
      await clock.advance(RETRY_MS);
    }
    expect(b.isLeader()).toBe(false);
    stop.abort();
    await run;
    expect(store.watchers).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it.each(['reject', 'end'] as const)('a watch that keeps failing (%s) is re-opened with backoff, never stops the elector, and polling still hands over', async (how) => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const log = memoryLog();
    const lock = new BrokenWatchLock(new InMemoryLock('b', store), clock, how);
    const stopA = new AbortController();
    const a = new LeaderElector({ ...base(clock), lock: new InMemoryLock('a', store), releaseOnCancel: true, onStartedLeading: () => {}, logger: false });
    const aRun = a.run(stopA.signal);
    await clock.advance(0);
    let acquiredAt = -1;
    const stopB = new AbortController();
    const b = new LeaderElector({ ...base(clock), lock, onStartedLeading: () => void (acquiredAt = clock.now()), logger: log.logger });
    const bRun = b.run(stopB.signal);
    await clock.advance(60_000);
    // Backoff from 0.8 s doubling to 30 s (jittered up to 2×): a handful of opens in a minute, not a loop.
    expect(lock.opens.length).toBeGreaterThanOrEqual(3);
    expect(lock.opens.length).toBeLessThanOrEqual(7);
    const gaps = lock.opens.slice(1).map((t, i) => t - lock.opens[i]!);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThanOrEqual(gaps[i - 1]!);
    if (how === 'reject') expect(log.lines.join('\n')).toMatch(/the lock's watch failed, re-opening it with backoff \(polling every 2 s meanwhile\): watch refused: HTTP 403/);
    stopA.abort();
    await aRun;
    const releasedAt = clock.now();
    while (acquiredAt < 0) await clock.advance(10);
    expect(acquiredAt - releasedAt).toBeLessThanOrEqual(RETRY_MS * 2.2);
    stopB.abort();
    await bRun;
    const opened = lock.opens.length;
    await clock.advance(120_000);
    expect(lock.opens.length).toBe(opened);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a stop while following closes the watch and leaves no timer', async () => {
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const now = new Date(0);
    store.create({ holderIdentity: 'x', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaderTransitions: 0 });
    const stop = new AbortController();
    const b = new LeaderElector({ ...base(clock), lock: new InMemoryLock('b', store), onStartedLeading: () => {}, logger: false });
    const run = b.run(stop.signal);
    await clock.advance(500);
    expect(store.watchers).toBe(1);
    stop.abort();
    await run;
    expect(store.watchers).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
