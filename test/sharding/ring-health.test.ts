// What a ring says about itself: health(), the kube_informer_shard_* metrics, the ring channel, and a
// ring that cannot read its Leases (fenced at the renew deadline, counted, logged).

import diagnosticsChannel from 'node:diagnostics_channel';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/index.js';
import { channelNames } from '../../src/observability/channels.js';
import { probeReport, registerInformerMetrics } from '../../src/operations/index.js';
import { InMemoryRingStore, ShardRing } from '../../src/sharding/index.js';
import { memoryLog } from '../controller/fixture.js';
import { metricValue } from '../operations/prom.js';
import { CuttableStore } from './helpers.js';

describe('ShardRing health', () => {
  it('reports owned slots, members, handovers and the last rebalance; exports them; fences when the store is gone', async () => {
    const clock = new FakeClock();
    const store = new CuttableStore(new InMemoryRingStore());
    const log = memoryLog();
    const ring = new ShardRing({ store, name: 'cms', identity: 'a', slots: 4, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: log.logger });
    const published: unknown[] = [];
    const onRing = (m: unknown): void => void published.push(m);
    diagnosticsChannel.subscribe(channelNames.shardRing, onRing);
    const stop = new AbortController();
    const running = ring.run(stop.signal);
    try {
      await flushPromises(4);
      expect(ring.health()).toMatchObject({ name: 'cms', identity: 'a', members: ['a'], owned: [0, 1, 2, 3], pendingHandovers: [], failuresInARow: 0 });
      expect(published).toEqual([{ name: 'cms', identity: 'a', owned: [0, 1, 2, 3] }]);

      const reg = new promClient.Registry();
      const metrics = registerInformerMetrics(promClient, [], { registry: reg, rings: [ring] });
      const l = { ring: 'cms', identity: 'a' };
      expect(await metricValue(reg, 'kube_informer_shard_slots_owned', l)).toBe(4);
      expect(await metricValue(reg, 'kube_informer_shard_members', l)).toBe(1);
      expect(await metricValue(reg, 'kube_informer_shard_pending_handovers', l)).toBe(0);
      expect(await metricValue(reg, 'kube_informer_shard_read_failures', l)).toBe(0);

      const synced = [{ health: () => ({ name: 'v1/configmaps', live: true, ready: true, problems: [] }) }] as unknown as Parameters<typeof probeReport>[1]['informers'];
      expect(probeReport('readyz', { informers: synced, rings: [ring] })).toMatchObject({ ok: true, rings: [{ name: 'cms', identity: 'a', owned: [0, 1, 2, 3], failuresInARow: 0 }] });

      // The store goes away: reads fail, nothing is renewed; at the renew deadline the slots are fenced.
      store.cut = true;
      const signal = ring.signalFor(2);
      await clock.advance(1_000);
      expect(ring.health().failuresInARow).toBeGreaterThan(0);
      expect(ring.ownedSlots()).toEqual([0, 1, 2, 3]);
      await clock.advance(1_200);
      expect(ring.ownedSlots()).toEqual([]);
      expect(signal.aborted).toBe(true);
      expect(await metricValue(reg, 'kube_informer_shard_slots_owned', l)).toBe(0);
      expect(await metricValue(reg, 'kube_informer_shard_read_failures', l)).toBeGreaterThan(1);
      expect(log.lines.some((line) => line.startsWith('warn: shard ring cms: reading the ring failed'))).toBe(true);
      expect(log.lines.some((line) => line.includes('lost slot 2'))).toBe(true);
      expect(probeReport('readyz', { informers: synced, rings: [ring] })).toMatchObject({ ok: false, rings: [{ owned: [] }] });

      // It comes back: the slots are claimed again (they are its own Leases).
      store.cut = false;
      await clock.advance(1_000);
      expect(ring.ownedSlots()).toEqual([0, 1, 2, 3]);
      expect(ring.health().msSinceLastRebalance).toBeLessThan(1_000);
      metrics.close();
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.shardRing, onRing);
      stop.abort();
      await clock.advance(20_000);
      await running;
    }
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a store call that never answers fails at the renew deadline instead of stalling the ring; stopping is not held up', async () => {
    const clock = new FakeClock();
    const inner = new InMemoryRingStore();
    let hang = false;
    const store = {
      // Ignores its signal, as a half-open connection would.
      list: () => (hang ? new Promise<never>(() => {}) : inner.list()),
      write: (name: string, holder: string, version: string | undefined) => (hang ? new Promise<never>(() => {}) : inner.write(name, holder, version)),
    };
    const ring = new ShardRing({ store, name: 'cms', identity: 'a', slots: 2, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock, logger: false });
    const stop = new AbortController();
    const running = ring.run(stop.signal);
    await flushPromises(4);
    expect(ring.ownedSlots()).toEqual([0, 1]);
    hang = true;
    await clock.advance(3_000);
    expect(ring.ownedSlots()).toEqual([]);
    expect(ring.health().failuresInARow).toBeGreaterThan(0); // not a silent 0 while stuck
    hang = false;
    await clock.advance(3_000);
    expect(ring.ownedSlots()).toEqual([0, 1]);
    hang = true;
    await clock.advance(600); // a period is waiting on a call that will never answer
    stop.abort();
    await clock.advance(20_000);
    await running; // resolves: the call is abandoned, the leave's writes time out, nothing hangs
    expect(clock.pendingTimers()).toBe(0);
  });

  it('warns once per crossing when the live members stay above slots / 10 for a lease duration, and says so in health() and /readyz', async () => {
    const clock = new FakeClock();
    const store = new InMemoryRingStore();
    const log = memoryLog();
    const timing = { slots: 20, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock };
    const a = new ShardRing({ store, name: 'cms', identity: 'a', ...timing, logger: log.logger });
    const warnings = (): string[] => log.lines.filter((l) => l.startsWith('warn: ') && l.includes('slots'));
    const stops: AbortController[] = [];
    const runs: Array<Promise<void>> = [];
    const join = (identity: string): AbortController => {
      const stop = new AbortController();
      stops.push(stop);
      runs.push(identity === 'a' ? a.run(stop.signal) : new ShardRing({ store, name: 'cms', identity, ...timing, logger: false }).run(stop.signal));
      return stop;
    };
    try {
      join('a');
      join('b');
      await clock.advance(2_000);
      // 2 members, 20 slots: 10 × 2 = 20, within the rule.
      expect(a.health()).toMatchObject({ members: ['a', 'b'], slots: 20, tooFewSlots: undefined });
      expect(warnings()).toEqual([]);

      const c = join('c');
      await clock.advance(2_000);
      expect(a.health().members).toEqual(['a', 'b', 'c']);
      expect(a.health().tooFewSlots).toBeUndefined(); // not for a moment: a newcomer's stale view, a rolling update's surge
      expect(warnings()).toEqual([]);
      await clock.advance(1_500); // above for a lease duration (3 s)
      expect(warnings()).toEqual([
        'warn: shard ring cms: 3 live members but 20 slots: too coarse to keep each replica within 1.1/N of the objects (36.7 %; a replica may hold 7 slots, 35.0 %, before the hash\'s own unevenness); set slots: ≥ 10 × N (30 here), the same value on every replica, and restart them all (the slot count is fixed for the life of the ring)',
      ]);
      expect(a.health().tooFewSlots).toBe('3 live members need slots ≥ 30; the ring has 20');
      expect(probeReport('readyz', { informers: [], rings: [a] }).rings).toMatchObject([{ name: 'cms', slots: 20, tooFewSlots: '3 live members need slots ≥ 30; the ring has 20' }]);
      expect(log.lines.filter((l) => l.startsWith('warn: ') && !l.includes('20 slots'))).toEqual([]); // nothing else went wrong

      await clock.advance(4_000); // still 3 members: no second warning
      expect(warnings()).toHaveLength(1);

      c.abort(); // back to 2: the crossing is over (an info line), and a new one warns again
      await clock.advance(4_000);
      expect(a.health()).toMatchObject({ members: ['a', 'b'], tooFewSlots: undefined });
      expect(log.lines.filter((l) => l.startsWith('info: shard ring cms: 2 live members fit 20 slots again'))).toHaveLength(1);
      join('d');
      await clock.advance(4_000);
      expect(warnings()).toHaveLength(2);
      expect(warnings()[1]).toContain('3 live members but 20 slots');
    } finally {
      for (const stop of stops) stop.abort();
      await clock.advance(20_000);
      await Promise.all(runs);
    }
  });

  it('validates its timing', () => {
    const store = new InMemoryRingStore();
    expect(() => new ShardRing({ store, name: 'x', identity: 'a', leaseDurationMs: 1_000, renewDeadlineMs: 1_000 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new ShardRing({ store, name: '', identity: 'a' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});
