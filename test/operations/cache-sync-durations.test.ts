// The manager's cache wait prints whole milliseconds, however fractional the clock's readings (issue 47, defect 6).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import { waitForCaches, type SyncingInformer } from '../../src/operations/cache-sync.js';

/** An informer that never syncs: its wait rejects with a 404 every time it is asked. */
const unsyncable: SyncingInformer = {
  name: 'example.com/v1/widgets',
  hasSynced: () => false,
  isStopped: () => false,
  whenSynced: () => Promise.reject(new Error('the server could not find the requested resource (404)')),
  health: () => ({ problems: [] }),
};

describe('waitForCaches: durations in its messages', () => {
  it('rounds the time waited in its warning and its error to whole milliseconds', async () => {
    const fake = new FakeClock();
    // A real timer fires late, and a monotonic clock's readings are rarely whole: every reading after
    // the first is 0.655115 ms later than the timer was due.
    let reads = 0;
    const clock = { now: () => fake.now() + (reads++ === 0 ? 0 : 0.655115), setTimeout: fake.setTimeout.bind(fake), clearTimeout: fake.clearTimeout.bind(fake) };
    const lines: string[] = [];
    const log = { debug: () => {}, info: () => {}, warn: (m: string) => void lines.push(m), error: () => {} };
    const ac = new AbortController();
    const waiting = waitForCaches([unsyncable], ac.signal, { timeoutMs: 10_000, warningIntervalMs: 5_000, pollMs: 1_000, clock, log });
    let failure: Error | undefined;
    waiting.catch((err: Error) => (failure = err));
    await fake.advance(5_000);
    expect(lines.filter((l) => l.startsWith('manager: still waiting'))).toEqual([expect.stringMatching(/^manager: still waiting for the caches after 5001 ms \(/)]);
    await fake.advance(5_000);
    expect(failure?.message).toMatch(/^manager: gave up waiting for the caches after 10001 ms \(cacheSyncTimeoutMs 10000\)/);
    ac.abort();
  });
});
