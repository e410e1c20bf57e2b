// The pushed read (READ_PUSHED): while the reflector waits on a watch, the decoder offers it each event
// inside the callback of the chunk that brought it, and the common event is applied there, with no
// promise between the chunk and the store. What must not change is everything the reflector does: the
// same store calls, reports, versions and requests, in the same order, as when every event is awaited.
// The differential test below drives one random script twice — through a watch whose decoder pushes and
// through the same decoder with READ_PUSHED hidden — and compares all of it.

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import { decodeWatchStream } from '../../src/listwatch/index.js';
import { READ_PUSHED, READ_READY, SETTLED_BY, type ListOptions, type ListerWatcher, type ObjectList, type ReadyIterator, type WatchEvent } from '../../src/listwatch/types.js';
import { Reflector } from '../../src/reflector/index.js';
import { pod, podList, RecordingStore, seededRandom, settle, type Pod } from './helpers.js';

/** Lists at the script's current version; each watch is a Readable the test pushes chunks into. */
class StreamLW implements ListerWatcher<Pod> {
  readonly streams: Readable[] = [];
  readonly requests: string[] = [];
  /** `next()` calls on the watches' iterators (a pushed read is one call for many events). */
  nexts = 0;
  /** The version lists answer with (the script moves it). */
  version = 1;
  /** The names lists return. */
  names: string[] = [];

  constructor(private readonly push: boolean) {}

  list(options: ListOptions): Promise<ObjectList<Pod>> {
    this.requests.push(`list ${options.resourceVersion ?? '-'} ${options.resourceVersionMatch ?? ''}`);
    const rv = String(this.version);
    return Promise.resolve(podList(rv, this.names.map((n) => pod(n, rv))));
  }

  watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<Pod>>> {
    this.requests.push(`watch ${options.resourceVersion ?? '-'}`);
    const stream = new Readable({ read() {} });
    this.streams.push(stream);
    const it = decodeWatchStream<Pod>(stream, { signal }) as AsyncIterableIterator<WatchEvent<Pod>> & ReadyIterator<Pod>;
    const next = it.next.bind(it);
    it.next = () => {
      this.nexts++;
      return next();
    };
    if (this.push) return Promise.resolve(it);
    // The same decoder without READ_PUSHED: every event is read with next() or READ_READY.
    const plain = {
      next: () => it.next(),
      return: () => (it.return as () => Promise<IteratorResult<WatchEvent<Pod>>>)(),
      [READ_READY]: () => it[READ_READY](),
      [SETTLED_BY]: signal,
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return Promise.resolve(plain);
  }

  /** The watch being read, when it is still open. */
  open(): Readable | undefined {
    const last = this.streams[this.streams.length - 1];
    return last === undefined || last.destroyed ? undefined : last;
  }
}

/** One random script: lines of watch events, cut into chunks anywhere, with store failures and relists. */
function script(seed: number): { chunks: string[]; failAt: Set<number> } {
  const random = seededRandom(seed);
  const names = ['a', 'b', 'c', 'd'];
  let rv = 1;
  const lines: string[] = [];
  for (let i = 0; i < 120; i++) {
    const r = random();
    const name = names[Math.floor(random() * names.length)];
    let event: WatchEvent<Pod>;
    if (r < 0.55) event = { type: 'MODIFIED', object: pod(name, String(++rv)) };
    else if (r < 0.7) event = { type: 'ADDED', object: pod(name, String(++rv)) };
    else if (r < 0.8) event = { type: 'DELETED', object: pod(name, String(++rv)) };
    else if (r < 0.86) event = { type: 'BOOKMARK', object: { metadata: { name: '', resourceVersion: String(++rv) } } };
    else if (r < 0.91) event = { type: 'MODIFIED', object: pod(name, String(Math.max(1, rv - 3))) }; // a regression
    else if (r < 0.94) event = { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'gone' } as unknown as Pod };
    else if (r < 0.97) event = { type: 'MODIFIED', object: { kind: 'Node', metadata: { name, resourceVersion: String(++rv) } } as unknown as Pod };
    else event = { type: 'ADDED', object: pod(name, String(rv)) }; // at the held version
    lines.push(`${JSON.stringify(event)}\n`);
  }
  const body = lines.join('');
  const chunks: string[] = [];
  for (let at = 0; at < body.length; ) {
    // One event per chunk, several, or an event cut in two (as kube-apiserver's TLS records cut them).
    const len = random() < 0.5 ? body.indexOf('\n', at) + 1 - at : Math.max(1, Math.floor(random() * 400));
    chunks.push(body.slice(at, at + len));
    at += len;
  }
  const failAt = new Set<number>();
  for (let i = 0; i < 4; i++) failAt.add(5 + Math.floor(random() * 80));
  return { chunks, failAt };
}

/** Runs the script through a reflector; everything it did, in order. */
async function run(seed: number, push: boolean): Promise<{ log: string[]; nexts: number; events: number }> {
  const { chunks, failAt } = script(seed);
  const lw = new StreamLW(push);
  const clock = new FakeClock();
  const store = new RecordingStore();
  let calls = 0;
  const log: string[] = [];
  const fail = (): void => {
    if (failAt.has(++calls)) throw new Error(`store call ${calls} failed`);
  };
  for (const op of ['add', 'update', 'delete'] as const) {
    const original = store[op].bind(store);
    store[op] = (obj: Pod): void => {
      fail();
      original(obj);
      log.push(store.ops[store.ops.length - 1]);
    };
  }
  const resync = store.resync.bind(store);
  store.resync = (): void => {
    resync();
    log.push('resync');
  };
  const replace = store.replace.bind(store);
  store.replace = (items: Pod[], rv: string): void => {
    replace(items, rv);
    log.push(store.ops[store.ops.length - 1]);
  };
  // Half the scripts run a resync timer: a pushed read then stays in flight across resync ticks.
  const r = new Reflector<Pod>(lw, store, { clock, random: () => 0, knownObjects: store, resyncPeriodMs: seed % 2 === 0 ? 2500 : 0 });
  let events = 0;
  r.events.on('event', (e) => {
    events++;
    log.push(`event ${e.type} ${e.key}@${e.resourceVersion} ${e.outcome}`);
  });
  r.events.on('bookmark', (e) => log.push(`bookmark ${e.resourceVersion}`));
  r.events.on('regression', (e) => log.push(`regression ${e.eventType} ${e.key} ${e.reason} ${e.heldResourceVersion}→${e.eventResourceVersion}`));
  r.events.on('error', (e) => log.push(`error ${e.phase} ${e.action}: ${e.error.message}`));
  r.events.on('watchOpened', (e) => log.push(`watchOpened ${e.resourceVersion}`));
  r.events.on('watchEnded', (e) => log.push(`watchEnded ${e.reason}`));
  const ac = new AbortController();
  const running = r.run(ac.signal);
  await settle();
  let version = 1;
  for (const chunk of chunks) {
    for (const m of chunk.matchAll(/"resourceVersion":"(\d+)"/g)) version = Math.max(version, Number(m[1]));
    lw.version = version;
    lw.open()?.push(chunk);
    await settle();
    await clock.advance(1000);
    log.push(`held ${r.lastSyncResourceVersion()}`);
  }
  ac.abort();
  await running;
  log.push(...lw.requests, `store ${JSON.stringify(store.snapshot())}`, `rv ${store.rvUpdates.join(',')}`);
  return { log, nexts: lw.nexts, events };
}

describe('the pushed read', () => {
  const seen: string[] = [];
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
    it(`does what awaiting every event does (script ${seed})`, async () => {
      const pushed = await run(seed, true);
      const awaited = await run(seed, false);
      expect(pushed.log).toEqual(awaited.log);
      seen.push(...awaited.log);
      // An oracle of its own (both runs share the short path): the version only moves forward. Every
      // list answers at the newest version written so far, so the applied events' versions rise strictly.
      const applied = pushed.log.flatMap((l) => /^event \w+ \S+@(\d+) applied$/.exec(l)?.[1] ?? []).map(Number);
      expect(applied.length).toBeGreaterThan(10);
      expect(applied.filter((rv, i) => i > 0 && rv <= applied[i - 1])).toEqual([]);
      // The pushed side took most events without a next() of its own.
      expect(awaited.nexts).toBeGreaterThan(awaited.events / 2);
      expect(pushed.nexts).toBeLessThan(awaited.nexts / 2);
    });
  }

  it('the scripts met every kind of outcome', () => {
    const text = seen.join('\n');
    for (const what of ['event MODIFIED', 'event ADDED', 'event DELETED', 'bookmark', 'regression', 'store call', 'watchEnded', 'list 0', 'NotOlderThan', 'resync']) {
      expect(text).toContain(what);
    }
  });
});

describe('the decoder behind it', () => {
  const line = (name: string, rv: string, type = 'MODIFIED'): string => `${JSON.stringify({ type, object: pod(name, rv) })}\n`;
  const pushing = (stream: Readable): ReadyIterator<Pod> => decodeWatchStream<Pod>(stream, {}) as unknown as ReadyIterator<Pod>;
  const read = (it: ReadyIterator<Pod>, sink: (e: WatchEvent<Pod>) => boolean): Promise<IteratorResult<WatchEvent<Pod>>> =>
    (it[READ_PUSHED] as NonNullable<ReadyIterator<Pod>[typeof READ_PUSHED]>).call(it, sink);

  it('offers events as chunks arrive, resolves with the first refused, keeps the rest for READ_READY', async () => {
    const stream = new Readable({ read() {} });
    const it = pushing(stream);
    const taken: string[] = [];
    let settled: IteratorResult<WatchEvent<Pod>> | undefined;
    void read(it, (e) => {
      if (e.object.metadata.name === 'c') return false;
      taken.push(e.object.metadata.name);
      return true;
    }).then((r) => (settled = r));
    stream.push(line('a', '2'));
    await settle();
    expect(taken).toEqual(['a']);
    const split = line('b', '3');
    stream.push(split.slice(0, 10));
    await settle();
    expect(taken).toEqual(['a']);
    expect(settled).toBeUndefined();
    stream.push(split.slice(10) + line('c', '4') + line('d', '5'));
    await settle();
    expect(taken).toEqual(['a', 'b']);
    expect(settled?.value?.object.metadata.name).toBe('c');
    expect(it[READ_READY]()?.object.metadata.name).toBe('d');
    expect(it[READ_READY]()).toBeUndefined();
    await it.return?.();
  });

  it('never calls the sink from inside the call: events already decoded resolve it as next() would', async () => {
    const stream = new Readable({ read() {} });
    const it = pushing(stream);
    stream.push(line('a', '2') + line('b', '3'));
    expect((await it.next()).value?.object.metadata.name).toBe('a');
    let calls = 0;
    const result = await read(it, () => {
      calls++;
      return true;
    });
    expect(result.value?.object.metadata.name).toBe('b');
    expect(calls).toBe(0);
    await it.return?.();
  });

  it('hands out every event before a bad line, then rejects; ends done when the source ends', async () => {
    const stream = new Readable({ read() {} });
    const it = pushing(stream);
    const taken: string[] = [];
    const failed = read(it, (e) => taken.push(e.object.metadata.name) > 0);
    stream.push(line('a', '2') + 'not json\n');
    await expect(failed).rejects.toMatchObject({ code: 'WATCH_DECODE' });
    expect(taken).toEqual(['a']);

    const ended = new Readable({ read() {} });
    const it2 = pushing(ended);
    const taken2: string[] = [];
    const done = read(it2, (e) => taken2.push(e.object.metadata.name) > 0);
    ended.push(line('x', '2'));
    ended.push(null);
    expect(await done).toEqual({ value: undefined, done: true });
    expect(taken2).toEqual(['x']);
  });

  it('a sink that throws rejects the read with its error; a return() ends a waiting read done', async () => {
    const stream = new Readable({ read() {} });
    const it = pushing(stream);
    const boom = new Error('sink broke');
    const failed = read(it, () => {
      throw boom;
    });
    stream.push(line('a', '2'));
    await expect(failed).rejects.toBe(boom);

    const idle = new Readable({ read() {} });
    const it2 = pushing(idle);
    const waiting = read(it2, () => true);
    await it2.return?.();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });
});
