// The restart storm of issue 50, at unit level: a Controller starts on 2 000 cached primaries (its initial
// list) and a new primary is created while they wait; with the default priority its reconcile starts next,
// ahead of the initial list's remainder; with `priority: false` (FIFO) it waits behind all of them.
// The wall-clock version of this, on a real kube-apiserver against controller-runtime, is the bench's
// storm phase (bench/lib/storm-phase.ts, docs/benchmarks.md "Restart storm").

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { Action, Controller, type ControllerOptions } from '../../src/controller/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { fixture, widget, widgets } from './fixture.js';

failOnUnhandledRejections();

const INITIAL = 2000;
const CONCURRENCY = 4;

/**
 * Runs the storm: every reconcile holds until released, one at a time in start order; the new primary is
 * created once the first `CONCURRENCY` reconciles of the initial list are running. Returns the keys in the
 * order their reconciles started, up to and including the new primary's (all of them if it never starts).
 */
async function storm(options: Partial<ControllerOptions>): Promise<string[]> {
  const f = fixture();
  const w = f.source(widgets);
  for (let i = 0; i < INITIAL; i++) w.add(widget(`old-${i}`));
  const started: string[] = [];
  const gates: Array<() => void> = [];
  const controller = Controller.for(f.factory, widgets).build(
    (key) => {
      started.push(key);
      return new Promise<Action>((resolve) => gates.push(() => resolve(Action.done())));
    },
    { clock: f.clock, logger: false, concurrency: CONCURRENCY, ...options },
  );
  f.factory.start(f.ac.signal);
  const run = controller.run(f.ac.signal);
  await f.factory.waitForCacheSync(f.ac.signal);
  await flushPromises(6);
  expect(started).toHaveLength(CONCURRENCY);
  w.add(widget('new'));
  await flushPromises(6);
  while (!started.includes('ns/new') && gates.length > 0) {
    gates.shift()!();
    await flushPromises(6);
  }
  f.ac.abort();
  for (const open of gates.splice(0)) open();
  await run;
  return started.slice(0, started.indexOf('ns/new') + 1);
}

describe('restart storm (issue 50)', () => {
  it(`a primary created during the initial list's ${INITIAL} reconciles starts in the next free slot with the default priority, last of all with priority: false`, async () => {
    const prioritized = await storm({});
    // The first CONCURRENCY were running when it was created; it takes the first slot that frees.
    expect(prioritized.at(-1)).toBe('ns/new');
    expect(prioritized).toHaveLength(CONCURRENCY + 1);

    const fifo = await storm({ priority: false });
    expect(fifo.at(-1)).toBe('ns/new');
    expect(fifo).toHaveLength(INITIAL + 1);
  });
});
