// LeaseLock and two LeaderElectors over real HTTP against the fake API server, time on a FakeClock.

import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import { LeaderElector } from '../../src/leaderelection/elector.js';
import { LeaseLock, type LeaseClient } from '../../src/leaderelection/lease-lock.js';
import {
  LeaderElectionError,
  LockConflictError,
  LockNotFoundError,
  type LeaderElectionRecord,
  type ResourceLock,
} from '../../src/leaderelection/lock.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

const LEASES = 'leases.coordination.k8s.io';

/** Counts lock operations in flight, so the clock only moves while no HTTP request is pending. */
class CountingLock implements ResourceLock {
  static inFlight = 0;
  constructor(readonly inner: ResourceLock) {}
  #count<T>(p: Promise<T>): Promise<T> {
    CountingLock.inFlight++;
    return p.finally(() => CountingLock.inFlight--);
  }
  get(signal?: AbortSignal) {
    return this.#count(this.inner.get(signal));
  }
  create(record: LeaderElectionRecord, signal?: AbortSignal) {
    return this.#count(this.inner.create(record, signal));
  }
  update(record: LeaderElectionRecord, signal?: AbortSignal) {
    return this.#count(this.inner.update(record, signal));
  }
  identity() {
    return this.inner.identity();
  }
  describe() {
    return this.inner.describe();
  }
}

/** Lets real I/O finish: waits until no lock call is in flight. */
async function settle(): Promise<void> {
  for (let i = 0; CountingLock.inFlight > 0 || i < 2; i++) {
    if (i > 5_000) throw new Error('a lock request never finished');
    await new Promise((r) => setTimeout(r, 1));
    await flushPromises();
  }
}

/** Moves the fake clock by `ms`, then lets the HTTP requests that started finish. */
async function step(clock: FakeClock, ms: number): Promise<void> {
  await clock.advance(ms);
  await settle();
}

const record = (holder: string, at: Date, transitions = 0): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: at,
  renewTime: at,
  leaderTransitions: transitions,
});

describe('LeaseLock over HTTP', () => {
  let server: FakeApiServer;
  let client: LeaseClient;
  beforeEach(async () => {
    server = await startFakeApiServer();
    // Type check: client-node's CoordinationV1Api satisfies the structural LeaseClient.
    client = server.kubeConfig.makeApiClient(CoordinationV1Api);
  });
  afterEach(async () => {
    await server.close();
  });

  const lockFor = (identity: string) => new LeaseLock({ client, namespace: 'kube-system', name: 'ctl', identity });

  it('maps a missing Lease to LockNotFoundError, then creates and reads it back', async () => {
    const lock = lockFor('a');
    await expect(lock.get()).rejects.toBeInstanceOf(LockNotFoundError);
    const at = new Date('2025-03-04T05:06:07.089Z');
    await lock.create(record('a', at, 2));
    const stored = server.get(LEASES, 'ctl', 'kube-system') as { spec?: Record<string, unknown> } | undefined;
    expect(stored?.spec).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 2,
      renewTime: '2025-03-04T05:06:07.089000Z',
    });
    expect(await lockFor('b').get()).toEqual(record('a', at, 2));
    expect(lock.describe()).toBe('kube-system/ctl');
    expect(lock.identity()).toBe('a');
  });

  it('maps a stale resourceVersion on update and a duplicate create to LockConflictError', async () => {
    const a = lockFor('a');
    const b = lockFor('b');
    await a.create(record('a', new Date()));
    await b.get();
    await a.update(record('a', new Date()));
    const err = await b.update(record('b', new Date())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockConflictError);
    expect(err).toMatchObject({ code: 'LEADER_ELECTION', reason: 'conflict', cause: expect.objectContaining({ code: 409 }) });
    await expect(b.create(record('b', new Date()))).rejects.toBeInstanceOf(LockConflictError);
    await b.get();
    await b.update(record('b', new Date(), 1));
    expect((await a.get()).holderIdentity).toBe('b');
  });

  it('refuses an update before any get or create, and wraps other HTTP failures', async () => {
    const lock = lockFor('a');
    await expect(lock.update(record('a', new Date()))).rejects.toMatchObject({ reason: 'not-initialized' });
    server.injectFault({ verb: 'get', resource: 'leases', type: 'status', code: 500 });
    const err = await lock.get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaderElectionError);
    expect(err).toMatchObject({ reason: 'lock-failed', cause: expect.objectContaining({ code: 500 }) });
  });

  it("names the server's Status message when refused: a 403 says which verb and resource RBAC did not allow", async () => {
    const lock = lockFor('a');
    const message = 'leases.coordination.k8s.io is forbidden: User "system:serviceaccount:ops:op" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "default"';
    server.injectFault({ verb: 'create', resource: 'leases', type: 'status', code: 403, message });
    const err = await lock.create(record('a', new Date())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaderElectionError);
    expect((err as Error).message).toBe(`create lease ${lock.describe()} failed: HTTP 403: ${message}`);
  });

  it('rejects at once when its signal aborts during a stalled request', async () => {
    const lock = lockFor('a');
    server.injectFault({ verb: 'get', resource: 'leases', type: 'stall' });
    const ac = new AbortController();
    const pending = lock.get(ac.signal);
    ac.abort();
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('releases the Lease over HTTP on cancel: empty holder, one-second lease', async () => {
    const clock = new FakeClock();
    const elector = new LeaderElector({
      lock: new CountingLock(lockFor('a')),
      clock,
      releaseOnCancel: true,
      onStartedLeading: () => {},
    });
    const abort = new AbortController();
    const run = elector.run(abort.signal);
    await settle();
    await step(clock, 2_000);
    expect(elector.isLeader()).toBe(true);
    abort.abort();
    await run;
    const lease = server.get(LEASES, 'ctl', 'kube-system') as { spec?: Record<string, unknown> } | undefined;
    expect(lease?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('lets exactly one of two electors lead, and the other take over within a lease after the leader dies', async () => {
    const clock = new FakeClock();
    const transitions: string[] = [];
    const leading = new Set<string>();
    let overlap = false;
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const candidate = (identity: string) => {
      const abort = new AbortController();
      const elector = new LeaderElector({
        lock: new CountingLock(lockFor(identity)),
        clock,
        random,
        onStartedLeading: (signal) => {
          if (leading.size > 0) overlap = true;
          leading.add(identity);
          transitions.push(`${identity} started@${clock.now()}`);
          signal.addEventListener('abort', () => {
            leading.delete(identity);
            transitions.push(`${identity} ended@${clock.now()}`);
          });
        },
      });
      return { identity, elector, abort, run: elector.run(abort.signal) };
    };
    const a = candidate('a');
    const b = candidate('b');
    await settle();
    for (let t = 0; t < 20_000; t += 250) {
      await step(clock, 250);
      expect(leading.size).toBe(1);
    }
    const [leader, other] = leading.has('a') ? [a, b] : [b, a];
    expect(other.elector.getLeader()).toBe(leader.identity);
    leader.abort.abort(); // killed without releasing: the Lease still names it
    await leader.run;
    const diedAt = clock.now();
    while (!other.elector.isLeader()) {
      await step(clock, 250);
      // Last renewal seen at the next jittered attempt (≤ 4.4 s), then the 15 s lease, then one more attempt.
      expect(clock.now() - diedAt).toBeLessThanOrEqual(15_000 + 2 * 4_400 + 250);
    }
    expect(overlap).toBe(false);
    expect(transitions).toEqual([`${leader.identity} started@0`, `${leader.identity} ended@${diedAt}`, `${other.identity} started@${clock.now()}`]);
    const lease = server.get(LEASES, 'ctl', 'kube-system') as { spec?: Record<string, unknown> } | undefined;
    expect(lease?.spec).toMatchObject({ holderIdentity: other.identity, leaseTransitions: 1 });
    other.abort.abort();
    await other.run;
  });
});
