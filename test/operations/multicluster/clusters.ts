// The multi-cluster tests' fixture: two fake API servers (east and west) and a stop signal, fresh for each
// test and closed after it; and a wait that turns the event loop (never a timer) until a condition holds.

import { afterEach, beforeEach } from 'vitest';
import { flushPromises } from '../../../src/core/index.js';
import type { ClusterProvider, ClusterSink } from '../../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../../src/testing/index.js';

/** What {@link useTwoClusters} hands each test. */
export interface TwoClusters {
  readonly east: FakeApiServer;
  readonly west: FakeApiServer;
  /** Aborted after the test, before the servers close. */
  readonly stop: AbortController;
}

/**
 * Registers hooks that start east and west (and a stop controller) before each test, handing them to
 * `use`, and after it abort `stop`, run `cleanups` (last first) and close both servers.
 */
export function useTwoClusters(use: (clusters: TwoClusters) => void, cleanups: Array<() => unknown> = []): void {
  let current: TwoClusters | undefined;
  beforeEach(async () => {
    current = { east: await startFakeApiServer(), west: await startFakeApiServer(), stop: new AbortController() };
    use(current);
  });
  afterEach(async () => {
    if (current === undefined) return;
    current.stop.abort();
    for (const c of cleanups.splice(0).reverse()) await c();
    await Promise.all([current.east.close(), current.west.close()]);
    current = undefined;
  });
}

/** Lets I/O and promise chains run (setImmediate turns, never a timer) until `cond()` holds. */
export async function until(cond: () => boolean, what: string, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A provider a test drives by hand: the sink it was given, once `run` started. */
export function handProvider(): ClusterProvider & { sink: ClusterSink | undefined } {
  const p: ClusterProvider & { sink: ClusterSink | undefined } = {
    name: 'hand',
    sink: undefined,
    run: async (signal, sink) => {
      p.sink = sink;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  return p;
}
