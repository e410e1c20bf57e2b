// Ports client-go's basic work-queue tests (WQ-1..11) plus the queue's own guarantees.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises, sleep } from '../../src/core/clock.js';
import { WorkQueue } from '../../src/workqueue/queue.js';
import { driveUntil, TracingStrategy, track } from './helpers.js';

type ShutdownMode = 'shutDown' | 'shutDownWithDrain';

async function shutDownAndDrive<T>(q: WorkQueue<T>, mode: ShutdownMode, clock: FakeClock, done: () => boolean) {
  if (mode === 'shutDown') q.shutDown();
  const drained = mode === 'shutDownWithDrain' ? track(q.shutDownWithDrain()) : undefined;
  await driveUntil(clock, () => done() && (drained?.settled() ?? true));
}

describe('WorkQueue', () => {
  // WQ-1
  it.each<ShutdownMode>(['shutDown', 'shutDownWithDrain'])(
    'hands every producer item to consumers and ignores adds after shutdown (%s)',
    async (mode) => {
      const clock = new FakeClock();
      const q = new WorkQueue<number | string>();
      let producing = 50;
      const producers = Array.from({ length: 50 }, async (_, id) => {
        for (let j = 0; j < 50; j++) {
          q.add(id);
          await sleep(clock, 1);
        }
        producing--;
      });
      let consumersLeft = 10;
      const received: unknown[] = [];
      const consumers = Array.from({ length: 10 }, async () => {
        for (;;) {
          const { item, shutdown } = await q.get();
          if (shutdown) break;
          received.push(item);
          await sleep(clock, 3);
          q.done(item);
        }
        consumersLeft--;
      });
      await driveUntil(clock, () => producing === 0);
      await Promise.all(producers);
      if (mode === 'shutDown') q.shutDown();
      const drained = mode === 'shutDownWithDrain' ? track(q.shutDownWithDrain()) : undefined;
      q.add('added after shutdown!');
      await driveUntil(clock, () => consumersLeft === 0 && (drained?.settled() ?? true));
      await Promise.all(consumers);
      expect(received).not.toContain('added after shutdown!');
      expect(new Set(received)).toEqual(new Set(Array.from({ length: 50 }, (_, i) => i)));
      expect(q.len()).toBe(0);
    },
  );

  // WQ-2
  it.each<ShutdownMode>(['shutDown', 'shutDownWithDrain'])(
    'delivers an item re-added while processing once more after done (%s)',
    async (mode) => {
      const clock = new FakeClock();
      const q = new WorkQueue<number>();
      for (let id = 0; id < 50; id++) q.add(id);
      let consumersLeft = 10;
      const seenTotal = new Map<number, number>();
      const consumers = Array.from({ length: 10 }, async () => {
        const seen = new Map<number, number>();
        for (;;) {
          const { item, shutdown } = await q.get();
          if (shutdown) break;
          seenTotal.set(item, (seenTotal.get(item) ?? 0) + 1);
          const count = (seen.get(item) ?? 0) + 1;
          seen.set(item, count);
          if (count < 2) q.add(item);
          await sleep(clock, 1);
          q.done(item);
        }
        consumersLeft--;
      });
      await driveUntil(clock, () => q.len() === 0);
      await shutDownAndDrive(q, mode, clock, () => consumersLeft === 0);
      await Promise.all(consumers);
      expect(q.len()).toBe(0);
      for (let id = 0; id < 50; id++) expect(seenTotal.get(id)).toBeGreaterThanOrEqual(2);
    },
  );

  // WQ-3
  it('counts only distinct waiting items in len', () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    expect(q.len()).toBe(1);
    q.add('bar');
    expect(q.len()).toBe(2);
    q.add('foo');
    expect(q.len()).toBe(2);
  });

  // WQ-4
  it('hands an item out again after done when it was re-added while processing', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    const first = await q.get();
    expect(first).toEqual({ item: 'foo', shutdown: false });
    q.add('foo');
    expect(q.len()).toBe(0);
    q.done('foo');
    expect(q.len()).toBe(1);
    const second = await q.get();
    expect(second).toEqual({ item: 'foo', shutdown: false });
    q.done('foo');
    expect(q.len()).toBe(0);
  });

  // WQ-5
  it('collapses two adds of a waiting item into one and touches it', async () => {
    const strategy = new TracingStrategy<string>();
    const q = new WorkQueue<string>({ queue: strategy });
    q.add('bar');
    q.add('bar');
    expect((await q.get()).item).toBe('bar');
    q.done('bar');
    expect(q.len()).toBe(0);
    expect(strategy.touched).toEqual(['bar']);
  });

  // WQ-6
  it('never hands an item being processed to a second worker', async () => {
    const strategy = new TracingStrategy<string>();
    const q = new WorkQueue<string>({ queue: strategy });
    q.add('foo');
    expect((await q.get()).item).toBe('foo');
    q.add('foo');
    q.add('foo');
    const second = track(q.get());
    await flushPromises();
    expect(second.settled()).toBe(false);
    q.done('foo');
    expect(await second.promise).toEqual({ item: 'foo', shutdown: false });
    q.done('foo');
    expect(q.len()).toBe(0);
    expect(strategy.touched).toEqual([]);
  });

  // WQ-7
  it('shutDownWithDrain waits for the items in flight', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    q.add('bar');
    await q.get();
    await q.get();
    const drained = track(q.shutDownWithDrain());
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
    await flushPromises();
    expect(drained.settled()).toBe(false);
    q.done('foo');
    await flushPromises();
    expect(drained.settled()).toBe(false);
    q.done('bar');
    await drained.promise;
  });

  // WQ-8
  it('shutDown returns at once with items in flight', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    q.add('bar');
    await q.get();
    await q.get();
    q.shutDown();
    expect(q.shuttingDown()).toBe(true);
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  // WQ-9
  it('a later shutDown releases a pending shutDownWithDrain', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    q.add('bar');
    await q.get();
    await q.get();
    const drained = track(q.shutDownWithDrain());
    expect((await q.get()).shutdown).toBe(true);
    await flushPromises();
    expect(drained.settled()).toBe(false);
    q.shutDown();
    await drained.promise;
  });

  // WQ-10
  it('a dirty item finished during a drain is still handed out', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    await q.get();
    q.add('foo');
    const drained = track(q.shutDownWithDrain());
    const waiting = track(q.get());
    expect(await waiting.promise).toEqual({ item: undefined, shutdown: true });
    q.done('foo');
    expect(await q.get()).toEqual({ item: 'foo', shutdown: false });
    q.done('foo');
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
    await drained.promise;
  });

  // WQ-11
  it('keeps no reference to an item after it was added, taken and done', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const q = new WorkQueue<object>();
    // A separate frame, so no suspended local of this test keeps the item alive.
    const cycle = async (): Promise<WeakRef<object>> => {
      const item = { big: new Array(1000).fill('x') };
      q.add(item);
      const { item: got } = await q.get();
      q.done(got as object);
      return new WeakRef(item);
    };
    const ref = await cycle();
    for (let i = 0; i < 20 && ref.deref() !== undefined; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(ref.deref()).toBeUndefined();
  });

  // NC-40
  it('hands out items queued before shutdown, then reports shutdown', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.shutDown();
    q.add('c');
    expect(await q.get()).toEqual({ item: 'a', shutdown: false });
    expect(await q.get()).toEqual({ item: 'b', shutdown: false });
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  // NC-39 (designed out)
  it('ignores done for an item that is not being processed', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    q.done('foo');
    expect(q.len()).toBe(1);
    expect((await q.get()).item).toBe('foo');
    q.done('foo');
    expect(q.len()).toBe(0);
  });

  it('wakes every waiting get with shutdown', async () => {
    const q = new WorkQueue<string>();
    const waiters = [track(q.get()), track(q.get()), track(q.get())];
    await flushPromises();
    expect(waiters.some((w) => w.settled())).toBe(false);
    q.shutDown();
    for (const w of waiters) expect(await w.promise).toEqual({ item: undefined, shutdown: true });
  });

  it('wakes waiting workers oldest first, one item each', async () => {
    const q = new WorkQueue<string>();
    const a = track(q.get());
    const b = track(q.get());
    q.add('x');
    await flushPromises();
    expect(a.value()).toEqual({ item: 'x', shutdown: false });
    expect(b.settled()).toBe(false);
    q.add('y');
    expect(await b.promise).toEqual({ item: 'y', shutdown: false });
  });

  it('compares object items by identity and primitives by value', () => {
    const q = new WorkQueue<unknown>();
    q.add({ k: 1 });
    q.add({ k: 1 });
    q.add('k');
    q.add('k');
    q.add(1);
    q.add(1);
    expect(q.len()).toBe(4);
  });

  it('onEmpty resolves once nothing waits and onIdle once nothing is processed either', async () => {
    const q = new WorkQueue<string>();
    await q.onIdle();
    q.add('a');
    const empty = track(q.onEmpty());
    const idle = track(q.onIdle());
    await flushPromises();
    expect(empty.settled()).toBe(false);
    await q.get();
    await flushPromises();
    expect(empty.settled()).toBe(true);
    expect(idle.settled()).toBe(false);
    q.done('a');
    await idle.promise;
  });

  it('rejects a metrics provider on an unnamed queue and a bad update period', () => {
    const provider = {} as never;
    expect(() => new WorkQueue({ metricsProvider: provider })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new WorkQueue({ metricsUpdatePeriodMs: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it('checks every option at construction and names the option in an InvalidOptionError', () => {
    const invalid = (message: string): unknown =>
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining(message) });
    expect(() => new WorkQueue('pods' as never)).toThrow(invalid('WorkQueue: options must be an object, got "pods"'));
    expect(() => new WorkQueue({ name: 7 } as never)).toThrow(invalid('WorkQueue: option name must be a string'));
    expect(() => new WorkQueue({ clock: {} } as never)).toThrow(invalid('option clock'));
    expect(() => new WorkQueue({ metricsUpdatePeriodMs: Number.NaN })).toThrow(invalid('option metricsUpdatePeriodMs'));
    expect(() => new WorkQueue({ metricsUpdatePeriodMs: Infinity })).toThrow(invalid('option metricsUpdatePeriodMs'));
    expect(() => new WorkQueue({ metricsProvider: {} as never })).toThrow(invalid('option metricsProvider needs a non-empty name'));
    expect(() => new WorkQueue({ name: 'q', metricsProvider: {} as never })).toThrow(invalid('option metricsProvider must be a WorkQueueMetricsProvider'));
    expect(() => new WorkQueue({ queue: [] as never })).toThrow(invalid('option queue must be an object'));
    expect(() => new WorkQueue({ queue: { push: () => {}, len: () => 0 } as never })).toThrow(invalid('pop is not a function'));
    expect(() => new WorkQueue({ queue: { push: () => {}, pop: () => 1, len: () => 0, touch: 1 } as never })).toThrow(
      invalid('option queue.touch must be a function'),
    );
    expect(new WorkQueue({ name: 'ok', queue: new TracingStrategy<string>() }).name).toBe('ok');
  });
});
