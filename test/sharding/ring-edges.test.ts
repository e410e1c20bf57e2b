// The ring's edges: a slot number out of range is refused where work is tracked or fenced; a store that
// stays down is logged once and then every 30 s with a count, and its recovery is logged; a period's
// many concurrent store calls (one per held slot) do not trip Node's listener-leak warning.

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/index.js';
import { InMemoryRingStore, ShardRing } from '../../src/sharding/index.js';
import { memoryLog } from '../controller/fixture.js';
import { CuttableStore } from './helpers.js';

const TIMING = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 } as const;

describe('ShardRing edges', () => {
  it('refuses a slot out of range in track and signalFor; owns answers false', () => {
    const ring = new ShardRing({ ...TIMING, store: new InMemoryRingStore(), name: 'cms', identity: 'a', slots: 8, logger: false });
    for (const slot of [-1, 8, 1.5, Number.NaN]) {
      expect(() => ring.track(slot, Promise.resolve())).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
      expect(() => ring.signalFor(slot)).toThrow(/a slot is an integer in \[0, 8\)/);
      expect(ring.owns(slot)).toBe(false);
    }
  });

  it('logs a store that stays down once, then every 30 s with a count, and says when it is back', async () => {
    const clock = new FakeClock();
    const store = new CuttableStore(new InMemoryRingStore());
    const log = memoryLog();
    const ring = new ShardRing({ ...TIMING, store, name: 'cms', identity: 'a', slots: 4, clock, logger: log.logger });
    const stop = new AbortController();
    const running = ring.run(stop.signal);
    await flushPromises(4);
    store.cut = true;
    await clock.advance(29_000); // 58 periods, every read fails
    const failures = (): string[] => log.lines.filter((l) => l.startsWith('warn: shard ring cms: reading the ring failed'));
    expect(failures()).toHaveLength(1);
    expect(failures()[0]).toMatch(/\(1 in a row\)/);
    await clock.advance(2_000);
    expect(failures()).toHaveLength(2);
    expect(failures()[1]).toMatch(/\(and \d+ more like it in the last 30 s\)$/);
    store.cut = false;
    await clock.advance(500);
    expect(log.lines.filter((l) => l.startsWith('info: shard ring cms: reading the ring works again after'))).toHaveLength(1);
    await clock.advance(1_000);
    expect(ring.ownedSlots()).toEqual([0, 1, 2, 3]);
    // Down again: the first failure is logged at once.
    store.cut = true;
    await clock.advance(500);
    expect(failures()).toHaveLength(3);
    stop.abort();
    store.cut = false;
    await clock.advance(20_000);
    await running;
  });

  it('renews 64 slots at once without a MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const clock = new FakeClock();
      const ring = new ShardRing({ ...TIMING, store: new InMemoryRingStore(), name: 'cms', identity: 'a', slots: 64, clock, logger: false });
      const stop = new AbortController();
      const running = ring.run(stop.signal);
      await flushPromises(4);
      await clock.advance(3_000);
      expect(ring.ownedSlots()).toHaveLength(64);
      stop.abort();
      await clock.advance(20_000);
      await running;
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
