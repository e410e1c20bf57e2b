// ObservedWrites: the waits for a key's recorded writes run outside the worker slots (issue 29) — many
// at once, on one run signal, without piling listeners on it.

import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from '../../src/core/clock.js';
import { resources } from '../../src/core/index.js';
import { ObservedWrites, type SourceInformer } from '../../src/controller/index.js';
import { AbortedError } from '../../src/core/errors.js';

/** An informer whose cache never catches up until `observe()`; waits end with their signal. */
function laggingInformer(): { informer: SourceInformer; observe(): void } {
  const waiting: Array<() => void> = [];
  const wait = (_obj: unknown, signal?: AbortSignal): Promise<unknown> =>
    new Promise((resolve, reject) => {
      waiting.push(() => resolve(undefined));
      signal?.addEventListener('abort', () => reject(new AbortedError('aborted')), { once: true });
    });
  const informer = { name: 'configmaps', awaitObserved: wait, awaitDeleted: wait } as unknown as SourceInformer;
  return { informer, observe: () => waiting.splice(0).forEach((f) => f()) };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const answer = (name: string, rv: string): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion: rv } });

const warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('ObservedWrites', () => {
  it('waits for 50 keys at once on one run signal (one listener, no MaxListenersExceededWarning), and reschedules each held key once observed', async () => {
    process.on('warning', onWarning);
    const clock = new FakeClock();
    const { informer, observe } = laggingInformer();
    const writes = new ObservedWrites('controller c', [{ resource: resources.configmaps, informer }]);
    const run = new AbortController();
    const rescheduled: string[] = [];
    for (let i = 0; i < 50; i++) {
      const key = `ns/k${i}`;
      // 12 writes for one key: more than the default limit of listeners on its own wait's signal.
      for (let w = 0; w < 12; w++) writes.record(key, answer(`c${i}-${w}`, String(100 + w)));
      expect(writes.hold(key)).toBe(true);
      writes.settleLater(key, run.signal, 10_000, clock, quiet, (k) => rescheduled.push(k));
    }
    await flushPromises();
    expect(rescheduled).toEqual([]);
    observe();
    await flushPromises();
    expect(rescheduled).toHaveLength(50);
    expect(writes.size).toBe(0);
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it("ends every wait when the run's signal aborts, rescheduling nothing", async () => {
    const clock = new FakeClock();
    const { informer } = laggingInformer();
    const writes = new ObservedWrites('controller c', [{ resource: resources.configmaps, informer }]);
    const run = new AbortController();
    const rescheduled: string[] = [];
    for (let i = 0; i < 3; i++) {
      writes.record(`ns/k${i}`, answer(`c${i}`, '7'));
      writes.hold(`ns/k${i}`);
      writes.settleLater(`ns/k${i}`, run.signal, 10_000, clock, quiet, (k) => rescheduled.push(k));
    }
    run.abort();
    await flushPromises();
    expect(rescheduled).toEqual([]);
    expect(writes.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
