// Issue 24 finding 2: any number of handlers on one informer, and no process warning (MaxListenersExceededWarning).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { failOnUnhandledRejections, pod, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

/** Runs `body` and returns every `process` warning emitted meanwhile (they are emitted on a later tick). */
async function captureWarnings(body: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    await body();
    await new Promise<void>((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

describe('many handlers on one informer', () => {
  it('1 000 handlers (500 before run, 500 while running) each get the objects, and no process warning is printed', async () => {
    const counts: number[] = new Array<number>(1000).fill(0);
    const warnings = await captureWarnings(async () => {
      const clock = new FakeClock();
      const source = new FakeControllerSource<Pod>();
      source.add(pod('a'));
      source.add(pod('b'));
      const informer = new SharedIndexInformer<Pod>(source, { clock, logger: false });
      const add = (i: number): void => void informer.addEventHandler({ onAdd: () => void counts[i]++ });
      for (let i = 0; i < 500; i++) add(i);
      const ac = new AbortController();
      const done = informer.run(ac.signal);
      await informer.whenSynced();
      for (let i = 500; i < 1000; i++) add(i);
      await until(() => counts.every((c) => c === 2), 'every handler got both pods', 2000);
      ac.abort();
      await done;
    });
    expect(warnings).toEqual([]);
    expect(counts.every((c) => c === 2)).toBe(true);
  });

  it('handlers removed and added again, many times over, leave no listener behind', async () => {
    const warnings = await captureWarnings(async () => {
      const clock = new FakeClock();
      const source = new FakeControllerSource<Pod>();
      const informer = new SharedIndexInformer<Pod>(source, { clock, logger: false });
      const ac = new AbortController();
      const done = informer.run(ac.signal);
      await informer.whenSynced();
      for (let round = 0; round < 50; round++) {
        const regs = Array.from({ length: 20 }, () => informer.addEventHandler({}));
        for (const r of regs) informer.removeEventHandler(r);
      }
      ac.abort();
      await done;
    });
    expect(warnings).toEqual([]);
  });
});
