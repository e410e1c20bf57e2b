// Issue 24 finding 4 over real HTTP: after an API server outage, a watch answered 410 by the server that is
// back is a relist now (not after the backoff the outage grew), and the informer is not ready meanwhile.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { KubeObject } from '../../src/core/types.js';
import { SharedIndexInformer, type InformerHealth } from '../../src/informer/index.js';
import { newListWatch, type KubeListWatch, type ListerWatcher } from '../../src/listwatch/index.js';
import type { ReflectorErrorContext } from '../../src/reflector/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';

interface Pod extends KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: Record<string, unknown>;
}

const PODS = { group: '', version: 'v1', resource: 'pods' };
const pod = (name: string, spec: Record<string, unknown> = {}): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec });

/** Real-time polling for real I/O, with the fake clock standing still. */
async function settle(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (the fake clock did not move)`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

interface Outage {
  server: FakeApiServer;
  clock: FakeClock;
  informer: SharedIndexInformer<Pod>;
  /** Clock times of the list requests. */
  lists: number[];
  /** Each reported error, with the clock time and the informer's health at that moment. */
  errors: Array<{ at: number; error: Error; context: ReflectorErrorContext; health: InformerHealth }>;
  logs: string[];
  /** Moves the fake clock in 100 ms steps, letting real I/O run between them, until `cond` (or `maxMs`). */
  advanceUntil(cond: () => boolean, maxMs: number): Promise<void>;
  spec(name: string): unknown;
  stop(): Promise<void>;
}

const open: Outage[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.stop();
});

async function startOutage(): Promise<Outage> {
  const server = await startFakeApiServer();
  server.create(PODS, pod('web'));
  const clock = new FakeClock();
  const raw: KubeListWatch<Pod> = newListWatch<Pod>(server.kubeConfig, PODS, { namespace: 'default' });
  const lists: number[] = [];
  const lw: ListerWatcher<Pod> = {
    list: (options, signal) => {
      lists.push(clock.now());
      return raw.list(options, signal);
    },
    watch: (options, signal) => raw.watch(options, signal),
  };
  const errors: Outage['errors'] = [];
  const logs: string[] = [];
  const log = (level: string) => (message: string): void => void logs.push(`${level} ${message}`);
  const informer: SharedIndexInformer<Pod> = new SharedIndexInformer<Pod>(lw, {
    name: 'pods',
    clock,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    // The reflector's default backoff (800 ms doubling to 30 s), without jitter.
    reflector: { random: () => 0 },
    onWatchError: (error, context) => errors.push({ at: clock.now(), error, context, health: informer.health() }),
  });
  const controller = new AbortController();
  const running = informer.run(controller.signal);
  const o: Outage = {
    server, clock, informer, lists, errors, logs,
    async advanceUntil(cond, maxMs) {
      const end = clock.now() + maxMs;
      while (!cond() && clock.now() < end) {
        await clock.advance(100);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    },
    spec: (name) => (informer.getStore().getByKey(`default/${name}`) as Pod | undefined)?.spec,
    async stop() {
      controller.abort();
      await running;
      raw.close();
      await server.close();
    },
  };
  open.push(o);
  await settle(() => informer.hasSynced() && informer.health().watch.connected, 'the first sync and watch');
  return o;
}

describe('a watch answered 410 after an outage (issue 24, finding 4)', () => {
  it('relists at once after the 410 (not after the outage backoff), not ready and not "connected" until the relist is in', async () => {
    const o = await startOutage();
    const { server, clock, informer } = o;
    await o.advanceUntil(() => false, 2000); // the watch has lived a while
    // A 30 s outage; meanwhile the history the watch would resume from is compacted away.
    const outageAt = clock.now();
    await server.close();
    await o.advanceUntil(() => o.errors.filter((e) => e.context.action === 'rewatch').length > 0, 1000);
    server.update(PODS, pod('web', { during: 'outage' }), { broadcast: false });
    server.compact();
    await o.advanceUntil(() => false, 30_000);
    await server.listen();
    server.update(PODS, pod('web', { image: 'v2' }), { broadcast: false }); // the spec change made at 32 s
    expect(informer.health().ready).toBe(true); // a 30 s outage stays under watchDisconnectedMs (60 s)
    // The next watch attempt comes when the outage's backoff says, and is answered 410.
    const before = o.errors.length;
    const listsBefore = o.lists.length;
    await o.advanceUntil(() => o.errors.slice(before).some((e) => e.context.action === 'relist'), 60_000);
    const expired = o.errors.slice(before).find((e) => e.context.action === 'relist');
    expect(expired?.error.message).toMatch(/too old resource version/);
    // The relist: at once, with the fake clock standing still.
    await settle(() => o.lists.length > listsBefore && o.spec('web') !== undefined && (o.spec('web') as { image?: string }).image === 'v2', 'the relist after the 410');
    expect(o.lists[listsBefore]).toBe(expired?.at);
    // At the 410, health knew the cache was stale, and the refused watch had not reset the disconnection.
    const health = expired!.health;
    expect(health.ready).toBe(false);
    expect(health.problems.join('; ')).toMatch(/cache is stale.*too old resource version/);
    expect(health.watch.connected).toBe(false);
    expect(health.watch.msDisconnected).toBeGreaterThanOrEqual(expired!.at - outageAt - 1000);
    expect(health.watch.consecutiveErrors).toBeGreaterThan(1);
    // No "watch succeeded again" for the refused watch; the recovery is told by the relist.
    expect(o.logs.filter((l) => /watch succeeded again/.test(l))).toEqual([]);
    await settle(() => informer.health().ready, 'ready again once relisted and watching');
    expect(o.logs.filter((l) => /succeeded again/.test(l))).toEqual([expect.stringMatching(/^info informer pods: list succeeded again after [7-9] failures$/)]);
  });

  it('backs off when the server answers 410 again right after the relist, says until when, and is not ready meanwhile', async () => {
    const o = await startOutage();
    const { server, informer } = o;
    await o.advanceUntil(() => false, 2000);
    server.injectFault({ verb: 'watch', type: 'status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' });
    server.injectFault({ verb: 'watch', type: 'status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' });
    server.endWatches();
    await o.advanceUntil(() => o.errors.filter((e) => e.context.action === 'relist').length >= 2, 2000);
    const [first, second] = o.errors.filter((e) => e.context.action === 'relist');
    expect(o.lists.length).toBe(2); // the first sync, and one relist at once
    expect(o.lists[1]).toBe(first.at);
    await settle(() => o.logs.some((l) => /relist deferred/.test(l)), 'the deferred-relist log line');
    const line = o.logs.find((l) => /relist deferred/.test(l))!;
    expect(line).toMatch(/^warn informer pods: relist deferred by backoff until \d{4}-\d\d-\d\dT[\d:.]+Z \(in \d+ ms\)/);
    const health = informer.health();
    expect(health.ready).toBe(false);
    expect(health.problems.join('; ')).toMatch(/cache is stale.*relist deferred by backoff until/);
    expect(line).toContain(`until ${new Date(second.at + 800).toISOString()} (in 800 ms)`);
    expect(o.lists.length).toBe(2);
    await o.advanceUntil(() => informer.health().ready, 10_000);
    expect(o.lists.length).toBe(3);
    expect(informer.health().ready).toBe(true);
    server.assertNoPendingFaults();
  });
});
