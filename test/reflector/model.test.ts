import { describe, expect, it } from 'vitest';
import { harness, seededRandom, settle, statusEvent } from './helpers.js';
import type { Harness, Pod } from './helpers.js';
import { ModelSource, faults } from './model-source.js';

/** More seeds on demand: REFLECTOR_MODEL_SEEDS=500 npx vitest run test/reflector/model.test.ts */
const SEEDS = Number(process.env.REFLECTOR_MODEL_SEEDS ?? 24);
const NAMES = Array.from({ length: 12 }, (_, i) => `obj-${i}`);

/** Store operations never go back: after a replace at R, every applied event is newer than the last. */
function replayedOps(ops: string[]): string[] {
  const bad: string[] = [];
  let last = -1;
  for (const op of ops) {
    const m = /^(?:replace@(\d+)|\w+ [^@]+@(\d+))/.exec(op);
    if (m === null) continue;
    const rv = Number(m[1] ?? m[2]);
    if (m[1] === undefined && rv <= last) bad.push(`${op} after ${last}`);
    last = rv;
  }
  return bad;
}

async function runModel(seed: number, steps: number, useWatchList: boolean): Promise<{ h: Harness; source: ModelSource; log: string[] }> {
  const rand = seededRandom(seed);
  const h = harness({ useWatchList, random: seededRandom(seed ^ 0x5eed), minWatchTimeoutMs: 60_000, pageSize: seed % 3 === 0 ? 5 : undefined });
  const source = new ModelSource(h.lw, h.clock);
  const log: string[] = [];
  const pick = <V>(xs: readonly V[]): V => xs[Math.floor(rand() * xs.length)];
  for (let i = 0; i < 6; i++) source.upsert(pick(NAMES));
  h.start();
  await settle();
  for (let step = 0; step < steps; step++) {
    const r = rand();
    let what: string;
    if (r < 0.45) source.upsert((what = pick(NAMES)));
    else if (r < 0.6) source.remove((what = pick(NAMES)));
    else if (r < 0.63) {
      what = 'drop';
      source.dropWatches();
    } else if (r < 0.65) {
      what = 'stall';
      source.stallWatches();
    } else if (r < 0.68) {
      what = 'compact';
      source.compact();
      source.dropWatches();
    } else if (r < 0.7) {
      what = '410 event';
      source.injectEvent(statusEvent(410, 'Expired'));
    } else if (r < 0.72) {
      what = 'bogus type';
      source.injectEvent({ type: 'BOGUS' as 'ADDED', object: {} as Pod });
    } else if (r < 0.74) {
      what = 'decode';
      source.breakWatches(faults.decode());
    } else if (r < 0.76) {
      what = 'reset';
      source.breakWatches(faults.reset());
    } else if (r < 0.78) {
      what = 'list fault';
      if (source.listFaults.length < 2) source.listFaults.push(pick([faults.listBroken, faults.throttled])());
    } else if (r < 0.81) {
      what = 'watch fault';
      if (source.watchFaults.length < 2) source.watchFaults.push(pick([faults.refused, faults.throttled])());
    } else if (r < 0.84) {
      what = 'stale delete';
      source.staleDeletes = true;
      source.remove(pick(NAMES));
      source.staleDeletes = false;
    } else if (r < 0.86) {
      what = 'noname';
      source.injectEvent({ type: 'ADDED', object: { metadata: { resourceVersion: String(source.rv) } } as Pod });
    } else what = 'quiet';
    log.push(what);
    await settle();
    await h.clock.advance(Math.floor(rand() * 3000));
  }
  // Heal: no new faults (queued ones dropped); let backoffs expire and stalled watches time out.
  source.listFaults.length = 0;
  source.watchFaults.length = 0;
  for (let t = 0; t < 40; t++) await h.clock.advance(10_000);
  return { h, source, log };
}

describe('Reflector model test', () => {
  it('ends with the store equal to the server after random changes and faults, never asking for an older version', async () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const useWatchList = seed % 2 === 0;
      const { h, source, log } = await runModel(seed, 250, useWatchList);
      const context = `seed ${seed} (useWatchList ${useWatchList}); last ops: ${log.slice(-8).join(', ')}`;
      expect(h.store.snapshot(), context).toEqual(source.snapshot());
      expect(h.reflector.lastSyncResourceVersion(), context).toBe(String(source.rv));
      expect(h.lw.backwardRequests(), context).toEqual([]);
      expect(source.violations, context).toEqual([]);
      expect(replayedOps(h.store.ops), context).toEqual([]);
      expect(h.reflector.stats().watchConnected, context).toBe(true);
      await h.stop();
      expect(source.openWatches(), context).toBe(0);
    }
  });

  it('the replay check catches an event applied twice', () => {
    expect(replayedOps(['replace@10 [a]', 'update a@11', 'update a@11'])).toEqual(['update a@11 after 11']);
    expect(replayedOps(['replace@10 [a]', 'update a@11', 'replace@12 [a]', 'update a@13'])).toEqual([]);
  });
});
