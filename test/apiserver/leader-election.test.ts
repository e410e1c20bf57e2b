// Leader election on a real coordination.k8s.io/v1 Lease: LeaderElector + LeaseLock over CoordinationV1Api.
//
// Real time here (no fake clock reaches the server): a 2 s lease, renewed every 0.4 s, given up after
// 1.5 s of failed renewals. Waits are for events (renewals, new leaders); the only timing assertions
// bound how long a takeover took, with generous margins.

import diagnosticsChannel from 'node:diagnostics_channel';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinationV1Api, CoreV1Api, Watch } from '@kubernetes/client-node';
import { channelNames } from '../../src/index.js';
import { LeaderElector, LeaseLock, type LeaderElectionEvent, type LeaseWatch } from '../../src/leaderelection/index.js';
import { EventRecorder, startRealApiServer, type RealApiServer } from './harness.js';

const LEASE_MS = 2000;
const RENEW_DEADLINE_MS = 1500;
const RETRY_MS = 400;

/** One term of leadership: from `onStartedLeading` until its signal aborted (`end` undefined while leading). */
interface Term {
  who: string;
  start: number;
  end: number | undefined;
}

describe('leader election on a real Lease', () => {
  let server: RealApiServer;
  let coordination: CoordinationV1Api;
  const namespace = `ki-le-${randomBytes(3).toString('hex')}`;
  const leaseName = 'ki-controller';
  const events = new EventRecorder<LeaderElectionEvent>();
  const onEvent = (message: unknown): void => events.record(message as LeaderElectionEvent);

  beforeAll(async () => {
    server = await startRealApiServer();
    coordination = server.kubeConfig.makeApiClient(CoordinationV1Api);
    await server.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    diagnosticsChannel.subscribe(channelNames.leaderElection, onEvent);
  });
  afterAll(async () => {
    diagnosticsChannel.unsubscribe(channelNames.leaderElection, onEvent);
    await server?.stop();
  });

  const terms: Term[] = [];
  const started = new EventRecorder<string>();

  /** Starts a candidate on the shared Lease; each has its own client, as separate processes would. */
  function candidate(who: string, releaseOnCancel: boolean) {
    const elector = new LeaderElector({
      name: who,
      lock: new LeaseLock({ client: server.kubeConfig.makeApiClient(CoordinationV1Api), namespace, name: leaseName, identity: who }),
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_DEADLINE_MS,
      retryPeriodMs: RETRY_MS,
      releaseOnCancel,
      onStartedLeading: (signal) => {
        const term: Term = { who, start: performance.now(), end: undefined };
        terms.push(term);
        started.record(who);
        return new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            term.end = performance.now();
            resolve();
          }, { once: true }),
        );
      },
    });
    const controller = new AbortController();
    const running = elector.run(controller.signal);
    return {
      elector,
      running,
      /** Aborts the run; resolves with the abort time once `run()` has settled. */
      async stop(): Promise<number> {
        const at = performance.now();
        controller.abort();
        await running;
        return at;
      },
    };
  }

  const count = (who: string, event: LeaderElectionEvent['event']) => (log: LeaderElectionEvent[]) =>
    log.filter((e) => e.name === who && e.event === event).length;

  it('keeps exactly one leader, fails over after the lease expires, and hands over at once on release', async () => {
    const a = candidate('a', false);
    await started.until((s) => s.includes('a'));
    const b = candidate('b', true);
    // b sees a as the holder, then a renews for longer than a whole lease while b keeps trying.
    await events.until((log) => log.some((e) => e.name === 'b' && e.event === 'new-leader' && e.leader === 'a'));
    const renewedBefore = count('a', 'renewed')(events.events);
    await events.until((log) => count('a', 'renewed')(log) >= renewedBefore + Math.ceil((LEASE_MS * 1.5) / RETRY_MS));
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);
    expect(started.events).toEqual(['a']);
    const held = await coordination.readNamespacedLease({ name: leaseName, namespace });
    expect(held.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: LEASE_MS / 1000, leaseTransitions: 0 });

    // a stops without releasing (a crash, as far as the Lease can tell): b must wait for the lease to run out.
    const aStopped = await a.stop();
    expect((await coordination.readNamespacedLease({ name: leaseName, namespace })).spec?.holderIdentity).toBe('a');
    await started.until((s) => s.includes('b'));
    const failover = terms.find((t) => t.who === 'b')!.start - aStopped;
    // Not before a's last renewal (≤ one retry before the stop) plus the lease; within the lease plus two
    // jittered retries and slack for a loaded machine.
    expect(failover).toBeGreaterThan(LEASE_MS - RETRY_MS - 500);
    expect(failover).toBeLessThan(LEASE_MS + 2 * RETRY_MS * 2.2 + 2000);
    expect(b.elector.isLeader()).toBe(true);

    // c joins and sees b; b is cancelled with releaseOnCancel, so c need not wait for the lease.
    const c = candidate('c', false);
    await events.until((log) => log.some((e) => e.name === 'c' && e.event === 'new-leader' && e.leader === 'b'));
    const bStopped = await b.stop();
    expect(events.events.some((e) => e.name === 'b' && e.event === 'released')).toBe(true);
    await started.until((s) => s.includes('c'));
    const handover = terms.find((t) => t.who === 'c')!.start - bStopped;
    // A released lease is free at once: c takes it on its next attempt, well inside one lease duration.
    expect(handover).toBeLessThan(LEASE_MS);
    const final = await coordination.readNamespacedLease({ name: leaseName, namespace });
    expect(final.spec).toMatchObject({ holderIdentity: 'c', leaseTransitions: 2 });
    await c.stop();

    // Never two leaders at once: every term ended before the next one began.
    expect(terms.map((t) => t.who)).toEqual(['a', 'b', 'c']);
    for (let i = 1; i < terms.length; i++) expect(terms[i]!.start).toBeGreaterThanOrEqual(terms[i - 1]!.end!);
    expect(terms.every((t) => t.end !== undefined)).toBe(true);
  });

  // Issue 48: with the default timings (15 s lease, 2 s retry), a follower polling alone would take the
  // released Lease up to 4.4 s later; a follower whose LeaseLock watches the Lease takes it at once.
  it('with the default retry period, a watching follower leads well within 1 s of the release', async () => {
    const lease = 'ki-watched';
    const watchEvents = new EventRecorder<string>();
    const leading = new EventRecorder<string>();
    /** client-node's Watch, the events it delivers recorded (so the test knows the follower's watch is open). */
    const watched = (who: string): LeaseWatch => {
      const watch = new Watch(server.kubeConfig);
      return {
        watch: (path, query, callback, done) =>
          watch.watch(path, query, (phase, object, raw) => {
            watchEvents.record(`${who} ${phase}`);
            callback(phase, object, raw);
          }, done),
      };
    };
    const start = (who: string) => {
      const controller = new AbortController();
      let startedAt = 0;
      const elector = new LeaderElector({
        name: `default-${who}`,
        lock: new LeaseLock({ client: server.kubeConfig.makeApiClient(CoordinationV1Api), namespace, name: lease, identity: who, watch: watched(who) }),
        releaseOnCancel: true,
        logger: false,
        onStartedLeading: (signal) => {
          startedAt = performance.now();
          leading.record(who);
          return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        },
      });
      const running = elector.run(controller.signal);
      return { elector, running, startedAt: () => startedAt, stop: () => (controller.abort(), running) };
    };
    const first = start('first');
    await leading.until((l) => l.includes('first'));
    const second = start('second');
    await watchEvents.until((log) => log.includes('second ADDED')); // following, its watch open
    const releasedAt = performance.now();
    await first.stop();
    await leading.until((l) => l.includes('second'));
    const handover = second.startedAt() - releasedAt;
    process.stderr.write(`leader-election: default retry period, watching follower led ${handover.toFixed(0)} ms after the leader's stop began\n`);
    expect(handover).toBeLessThan(1000);
    expect(second.elector.isLeader()).toBe(true);
    expect((await coordination.readNamespacedLease({ name: lease, namespace })).spec).toMatchObject({ holderIdentity: 'second', leaseTransitions: 1 });
    await second.stop();
  });
});
