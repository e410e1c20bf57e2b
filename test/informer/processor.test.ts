// Processor and listeners: unbounded per-handler buffers, isolation of slow handlers, resync routing.

import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises, sleep } from '../../src/core/clock.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { ProcessorListener, type Notification } from '../../src/informer/listener.js';
import { determineResyncPeriod, SharedProcessor } from '../../src/informer/processor.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { pod, prng, until, type Pod } from './helpers.js';

function listener(clock: FakeClock, received: string[], periodMs = 0, upstream = () => true): ProcessorListener<Pod> {
  return new ProcessorListener<Pod>(
    {
      onAdd: (o, initial) => void received.push(`add ${o.metadata.name}${initial ? ' initial' : ''}`),
      onUpdate: (_o, n) => void received.push(`update ${n.metadata.name}`),
      onDelete: (o) => void received.push(`delete ${(o as Pod).metadata.name}`),
    },
    {
      name: 'l',
      requestedResyncPeriodMs: periodMs,
      resyncPeriodMs: periodMs,
      clock,
      errorPolicy: 'stop',
      onFatal: (err) => {
        throw err;
      },
      upstreamHasSynced: upstream,
      keyOf: () => undefined,
    },
  );
}

const add = (name: string, at = 0, isInInitialList = false): Notification<Pod> => ({ kind: 'add', obj: pod(name), isInInitialList, at });

describe('ProcessorListener', () => {
  it('buffers without bound before its loop starts and delivers in order afterwards (SI-3)', async () => {
    const clock = new FakeClock();
    const got: string[] = [];
    const l = listener(clock, got);
    for (let i = 0; i < 5000; i++) l.add(add(`p${i}`));
    expect(l.stats().backlog).toBe(5000);
    void l.run();
    await until(() => got.length === 5000);
    expect(got.slice(0, 3)).toEqual(['add p0', 'add p1', 'add p2']);
    expect(got[4999]).toBe('add p4999');
    expect(l.stats()).toMatchObject({ backlog: 0, delivered: 5000, maxBacklog: 5000 });
    l.stop();
    await l.done();
  });

  it('counts initial-list items and syncs only once all are handled and the upstream synced', async () => {
    const clock = new FakeClock();
    const got: string[] = [];
    let upstream = false;
    const l = listener(clock, got, 0, () => upstream);
    l.add(add('a', 0, true));
    l.add(add('b', 0, true));
    expect(l.hasSynced()).toBe(false);
    upstream = true;
    expect(l.hasSynced()).toBe(false);
    const synced = l.synced.wait();
    void l.run();
    await synced;
    expect(got).toEqual(['add a initial', 'add b initial']);
    expect(l.hasSynced()).toBe(true);
    l.stop();
  });

  it('drops its buffer when stopped and its loop exits', async () => {
    const clock = new FakeClock();
    const got: string[] = [];
    const l = listener(clock, got);
    l.add(add('a'));
    l.stop();
    void l.run();
    l.add(add('b'));
    await l.done();
    await flushPromises();
    expect(got).toEqual([]);
  });

  // The delivery loop is a function run by microtasks, no longer an async function (issue 29): what it
  // owes its handler and the others on the thread is pinned here.
  it('delivers what was buffered at once in run(), and gives others a turn after 64 callbacks', async () => {
    const got: string[] = [];
    const l = listener(new FakeClock(), got);
    for (let i = 0; i < 150; i++) l.add(add(`p${i}`));
    void l.run();
    expect(got).toHaveLength(64);
    await Promise.resolve();
    expect(got).toHaveLength(128);
    await Promise.resolve();
    expect(got).toHaveLength(150);
    // Parked: a later notification comes in a microtask of its own, not inside add().
    l.add(add('late'));
    expect(got).toHaveLength(150);
    await Promise.resolve();
    expect(got[150]).toBe('add late');
    l.stop();
    await l.done();
  });

  it('waits for a callback’s promise before the next notification, and counts a rejection as a failure', async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
    const errors: string[] = [];
    const l = new ProcessorListener<Pod>(
      {
        onAdd: (o) => {
          calls.push(o.metadata.name);
          return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
        },
      },
      { name: 'slow', requestedResyncPeriodMs: 0, resyncPeriodMs: 0, clock, errorPolicy: 'report', onError: (e) => void errors.push(e.message), onFatal: () => {}, upstreamHasSynced: () => true, keyOf: () => undefined },
    );
    void l.run();
    l.add(add('a'));
    l.add(add('b'));
    l.add(add('c'));
    await flushPromises();
    expect(calls).toEqual(['a']);
    expect(l.stats()).toMatchObject({ backlog: 2, delivered: 0 });
    await clock.advance(5);
    expect(l.stats().inFlightSince).toBe(0);
    pending[0].reject(new Error('no'));
    await flushPromises();
    expect(calls).toEqual(['a', 'b']);
    expect(l.stats()).toMatchObject({ delivered: 1, failures: 1, inFlightSince: 5 });
    expect(errors).toHaveLength(1);
    pending[1].resolve();
    await flushPromises();
    expect(calls).toEqual(['a', 'b', 'c']);
    l.stop();
    pending[2].resolve();
    await l.done();
    expect(l.stats()).toMatchObject({ delivered: 3, failures: 1 });
  });

  it('ends done() with the error when its own bookkeeping throws (here the clock)', async () => {
    const clock = new FakeClock();
    const now = clock.now.bind(clock);
    let reads = 0;
    // The constructor's read works; delivery's throws.
    clock.now = () => {
      if (++reads > 1) throw new Error('clock broke');
      return now();
    };
    const got: string[] = [];
    const l = listener(clock, got);
    void l.run();
    l.add(add('a'));
    await expect(l.done()).rejects.toThrow('clock broke');
    expect(got).toEqual([]);
  });
});

describe('SharedProcessor', () => {
  it('computes effective resync periods like client-go', () => {
    expect(determineResyncPeriod(0, 1000)).toBe(0);
    expect(determineResyncPeriod(5000, 0)).toBe(0);
    expect(determineResyncPeriod(500, 1000)).toBe(1000);
    expect(determineResyncPeriod(5000, 1000)).toBe(5000);
  });

  it('waits for stuck callbacks only for the grace period when stopping', async () => {
    const clock = new FakeClock();
    const p = new SharedProcessor<Pod>(clock);
    const stuck = new ProcessorListener<Pod>({ onAdd: () => new Promise<void>(() => {}) }, {
      name: 'stuck',
      requestedResyncPeriodMs: 0,
      resyncPeriodMs: 0,
      clock,
      errorPolicy: 'stop',
      onFatal: () => {},
      upstreamHasSynced: () => true,
      keyOf: () => undefined,
    });
    p.addListener(stuck);
    p.run();
    p.distribute(add('a'), false);
    await flushPromises();
    expect(stuck.stats().inFlightSince).toBe(0);
    let result: boolean | undefined;
    const stopping = p.stop(300).then((r) => {
      result = r;
    });
    await clock.advance(299);
    expect(result).toBeUndefined();
    await clock.advance(1);
    await stopping;
    expect(result).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('matches a plain model over thousands of random distributions, resync checks, adds and removals', async () => {
    const seed = Number(process.env.SEED ?? 0x9e3779b9);
    const rand = prng(seed);
    const clock = new FakeClock();
    const p = new SharedProcessor<Pod>(clock);
    p.run();
    interface ModelListener {
      l: ProcessorListener<Pod>;
      got: string[];
      want: string[];
      period: number;
      next: number;
      syncing: boolean;
    }
    const live: ModelListener[] = [];
    let now = 0;
    for (let step = 0; step < 3000; step++) {
      const x = rand();
      if (x < 0.05 || live.length === 0) {
        const period = [0, 1000, 2000, 3000][Math.floor(rand() * 4)];
        const got: string[] = [];
        const l = listener(clock, got, period);
        p.addListener(l);
        live.push({ l, got, want: [], period, next: now + period, syncing: true });
      } else if (x < 0.08) {
        // Removal drops what is still buffered, so let it catch up first; nothing arrives afterwards.
        const [m] = live.splice(Math.floor(rand() * live.length), 1);
        await flushPromises(1);
        p.removeListener(m.l);
        p.distribute(add(`after-removal-${step}`), false);
        for (const other of live) other.want.push(`add after-removal-${step}`);
        await flushPromises(1);
        expect(m.got, `seed ${seed} step ${step}: removed listener got exactly what it was sent`).toEqual(m.want);
      } else if (x < 0.15) {
        now += Math.floor(rand() * 1500);
        await clock.advance(now - clock.now());
        const any = p.shouldResync(now);
        let modelAny = false;
        for (const m of live) {
          m.syncing = m.period !== 0 && now >= m.next;
          if (m.syncing) {
            m.next = now + m.period;
            modelAny = true;
          }
        }
        expect(any, `seed ${seed} step ${step}`).toBe(modelAny);
      } else {
        const isSync = rand() < 0.4;
        const name = `p${step}`;
        p.distribute({ kind: 'update', oldObj: pod(name), newObj: pod(name), at: now }, isSync);
        for (const m of live) if (!isSync || m.syncing) m.want.push(`update ${name}`);
      }
      if (step % 10 === 0) {
        await flushPromises(1);
        for (const m of live) expect(m.got, `seed ${seed} step ${step}`).toEqual(m.want);
      }
    }
    await p.stop(0);
  });
});

describe('slow handlers', () => {
  it('never delay other handlers: one sleeps 1 s per event while another receives 1 000 events', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    const informer = new SharedIndexInformer<Pod>(source, { clock, health: { slowHandlerMs: 5_000 } });
    let slowDone = 0;
    informer.addEventHandler(
      {
        onAdd: async () => {
          await sleep(clock, 1000);
          slowDone++;
        },
      },
      { name: 'slow' },
    );
    const fast: string[] = [];
    informer.addEventHandler({ onAdd: (o) => void fast.push(o.metadata.name) }, { name: 'fast' });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    for (let i = 0; i < 1000; i++) source.add(pod(`p${i}`));
    // Time stands still: the slow handler cannot finish even one event, yet the fast one gets all.
    await until(() => fast.length === 1000, 'fast handler', 5000);
    expect(fast[999]).toBe('p999');
    expect(slowDone).toBe(0);
    let health = informer.health();
    const slow = health.handlers.find((h) => h.name === 'slow');
    expect(slow).toMatchObject({ backlog: 999, slow: false, inFlightMs: 0 });
    expect(health.handlers.find((h) => h.name === 'fast')).toMatchObject({ backlog: 0, delivered: 1000 });
    await clock.advance(3000);
    expect(slowDone).toBe(3);
    await clock.advance(3000);
    health = informer.health();
    expect(health.handlers.find((h) => h.name === 'slow')).toMatchObject({ slow: true, oldestPendingAgeMs: 6000 });
    expect(health.healthy).toBe(false);
    expect(health.problems.join('\n')).toMatch(/handler slow is slow: backlog 99\d/);
    ac.abort();
    await clock.advance(500);
    await done;
    // Only the slow handler's own sleep is left; the informer left nothing.
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(1000);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('handlers without some callbacks', () => {
  const options = (clock: FakeClock, upstream: () => boolean) => ({
    name: 'partial',
    requestedResyncPeriodMs: 0,
    resyncPeriodMs: 0,
    clock,
    errorPolicy: 'stop' as const,
    onFatal: (err: Error) => {
      throw err;
    },
    upstreamHasSynced: upstream,
    keyOf: () => undefined,
  });

  it('buffer nothing for a callback the handler lacks, and an initial list does not hold their sync', async () => {
    const clock = new FakeClock();
    const got: string[] = [];
    let upstream = false;
    const handler: { onUpdate: (o: Pod, n: Pod) => void; onAdd?: (o: Pod) => void } = { onUpdate: (_o, n) => void got.push(`update ${n.metadata.name}`) };
    const l = new ProcessorListener<Pod>(handler, options(clock, () => upstream));
    for (let i = 0; i < 1000; i++) l.add(add(`p${i}`, 0, true));
    expect(l.wants('add')).toBe(false);
    expect(l.wants('update')).toBe(true);
    expect(l.stats()).toMatchObject({ backlog: 0, maxBacklog: 0 });
    upstream = true;
    // Nothing was counted in flight: synced as soon as the upstream is, before the loop even runs.
    expect(l.hasSynced()).toBe(true);
    l.add({ kind: 'update', oldObj: pod('a'), newObj: pod('a'), at: 0 });
    l.add({ kind: 'delete', obj: pod('a'), at: 0 });
    expect(l.stats().backlog).toBe(1);
    void l.run();
    await until(() => got.length === 1);
    // A callback assigned later is called for the notifications made after it.
    handler.onAdd = (o) => void got.push(`add ${o.metadata.name}`);
    l.add(add('late'));
    await until(() => got.length === 2);
    expect(got).toEqual(['update a', 'add late']);
    expect(l.stats()).toMatchObject({ backlog: 0, delivered: 2 });
    l.stop();
    await l.done();
  });

  it('are not sent what they cannot take, next to a handler that takes everything (informer)', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    for (let i = 0; i < 50; i++) source.add(pod(`p${i}`));
    const informer = new SharedIndexInformer<Pod>(source, { clock });
    const updates: string[] = [];
    const onlyUpdates = informer.addEventHandler({ onUpdate: (_o, n) => void updates.push(n.metadata.name) }, { name: 'updates' });
    const all: string[] = [];
    const everything = informer.addEventHandler(
      {
        onAdd: (o) => void all.push(`add ${o.metadata.name}`),
        onUpdate: (_o, n) => void all.push(`update ${n.metadata.name}`),
        onDelete: (o) => void all.push(`delete ${(o as Pod).metadata.name}`),
      },
      { name: 'everything' },
    );
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await Promise.all([onlyUpdates.whenSynced(), everything.whenSynced()]);
    expect(all).toHaveLength(50);
    source.modify(pod('p1', { labels: { x: '1' } }));
    source.delete(pod('p2'));
    await until(() => all.length === 52 && updates.length === 1);
    expect(all.slice(50)).toEqual(['update p1', 'delete p2']);
    expect(updates).toEqual(['p1']);
    const health = informer.health();
    expect(health.handlers.find((h) => h.name === 'updates')).toMatchObject({ delivered: 1, maxBacklog: 1 });
    expect(health.handlers.find((h) => h.name === 'everything')).toMatchObject({ delivered: 52 });
    ac.abort();
    await done;
  });
});
