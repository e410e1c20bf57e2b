// useWatchList 'auto' (the default): streaming lists where the server serves them, paged lists where it
// refuses them, learnt once per server and remembered by the process — on the fake API server, both ways.

import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { Logger } from '../../src/core/log.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { forgetWatchListSupport, newListWatch } from '../../src/listwatch/index.js';
import type { ListerWatcher } from '../../src/listwatch/types.js';
import { Reflector } from '../../src/reflector/index.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from '../../src/testing/index.js';
import { failOnUnhandledRejections, pod, type Pod } from './helpers.js';

failOnUnhandledRejections();

const PODS = { group: '', version: 'v1', resource: 'pods' };

interface Logged {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
}

function recordingLogger(into: Logged[]): Logger {
  return {
    debug: (message: string) => void into.push({ level: 'debug', message }),
    info: (message: string) => void into.push({ level: 'info', message }),
    warn: (message: string) => void into.push({ level: 'warn', message }),
    error: (message: string) => void into.push({ level: 'error', message }),
  };
}

const servers: FakeApiServer[] = [];
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const server of servers.splice(0)) await server.close();
  forgetWatchListSupport();
});

async function server(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const s = await startFakeApiServer({ logger: false, ...options });
  servers.push(s);
  for (const name of ['a', 'b', 'c']) s.create(PODS, pod(name));
  return s;
}

/** Informers over `s`, run and synced at once (`count` of them, started together). */
async function informers(s: FakeApiServer, count: number, options: { useWatchList?: boolean | 'auto'; log?: Logged[] } = {}): Promise<SharedIndexInformer<Pod>[]> {
  const clock = new FakeClock();
  const list: SharedIndexInformer<Pod>[] = [];
  for (let i = 0; i < count; i++) {
    const lw = newListWatch<Pod>(s.kubeConfig, PODS, { namespace: 'default' });
    list.push(new SharedIndexInformer<Pod>(lw, {
      name: `pods-${i}`,
      clock,
      logger: options.log === undefined ? false : recordingLogger(options.log),
      reflector: options.useWatchList === undefined ? {} : { useWatchList: options.useWatchList },
    }));
  }
  const ac = new AbortController();
  const runs = list.map((informer) => informer.run(ac.signal));
  stops.push(async () => {
    ac.abort();
    await Promise.all(runs);
  });
  await Promise.all(list.map((informer) => informer.whenSynced()));
  return list;
}

/** Waits for `cond` while the fake server's real HTTP I/O runs (no timer of the library is involved). */
async function io(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The server's watches asking for initial events, and its lists, of pods. */
function requests(s: FakeApiServer): { streamed: number; lists: number } {
  const pods = s.requests().filter((r) => r.resource === 'pods');
  return {
    streamed: pods.filter((r) => r.verb === 'watch' && r.query.sendInitialEvents === 'true').length,
    lists: pods.filter((r) => r.verb === 'list').length,
  };
}

describe("useWatchList 'auto' (the default)", () => {
  it('streams the list on a server that serves streaming lists: a watch with sendInitialEvents, no list', async () => {
    const s = await server();
    const [informer] = await informers(s, 1);
    expect(informer!.getIndexer().list().map((p) => p.metadata.name).sort()).toEqual(['a', 'b', 'c']);
    expect(requests(s)).toEqual({ streamed: 1, lists: 0 });
    expect(informer!.health().watch.listMode).toBe('streaming');
  });

  it('pages the list on a server that refuses streaming lists, with one info line and no warning or error', async () => {
    const s = await server({ watchList: false });
    const log: Logged[] = [];
    const [informer] = await informers(s, 1, { log });
    expect(informer!.getIndexer().list()).toHaveLength(3);
    expect(requests(s)).toEqual({ streamed: 1, lists: 1 });
    const health = informer!.health();
    expect(health.watch.listMode).toBe('paged');
    expect(health.counters.errors).toBe(0);
    expect(health.watch.lastError).toBeUndefined();
    expect(log.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    const lines = log.filter((l) => /streaming lists/.test(l.message));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info' });
    expect(lines[0]!.message).toMatch(/does not serve streaming lists \(.*sendInitialEvents is forbidden.*\); lists are paged for http:\/\/127\.0\.0\.1:\d+ .* \/api\/v1 from now on/);
  });

  it('eight informers starting at once on a server without streaming lists send one refused request between them', async () => {
    const s = await server({ watchList: false });
    const log: Logged[] = [];
    const started = await informers(s, 8, { log });
    for (const informer of started) {
      expect(informer.getIndexer().list()).toHaveLength(3);
      expect(informer.health().watch.listMode).toBe('paged');
    }
    expect(requests(s)).toEqual({ streamed: 1, lists: 8 });
    expect(log.filter((l) => /streaming lists/.test(l.message))).toHaveLength(1);
  });

  it('eight informers starting at once on a server with streaming lists all stream', async () => {
    const s = await server();
    await informers(s, 8);
    expect(requests(s)).toEqual({ streamed: 8, lists: 0 });
  });

  it('remembers the answer for the process: an informer started later pages at once, unasked', async () => {
    const s = await server({ watchList: false });
    await informers(s, 1);
    const log: Logged[] = [];
    const [later] = await informers(s, 1, { log });
    expect(requests(s)).toEqual({ streamed: 1, lists: 2 });
    expect(later!.health().watch.listMode).toBe('paged');
    expect(log.filter((l) => l.level !== 'debug')).toEqual([]);
  });

  it('keeps one answer per server: another server (or group version) is asked on its own', async () => {
    const without = await server({ watchList: false });
    const withIt = await server();
    await informers(without, 1);
    await informers(withIt, 1);
    expect(requests(without)).toEqual({ streamed: 1, lists: 1 });
    expect(requests(withIt)).toEqual({ streamed: 1, lists: 0 });
  });

  it('relists by streaming after a 410 on a server that serves streaming lists', async () => {
    const s = await server();
    const [informer] = await informers(s, 1);
    s.create(PODS, pod('d'), { broadcast: false });
    s.compact();
    s.endWatches();
    // The watch resumes from the held version, is answered 410, and the relist streams again.
    await io(() => informer!.getIndexer().list().length === 4, 'the relist');
    expect(requests(s)).toEqual({ streamed: 2, lists: 0 });
    expect(informer!.health().counters.relists).toBe(1);
  });

  it('useWatchList false pages on a server that serves streaming lists', async () => {
    const s = await server();
    const [informer] = await informers(s, 1, { useWatchList: false });
    expect(requests(s)).toEqual({ streamed: 0, lists: 1 });
    expect(informer!.health().watch.listMode).toBe('paged');
  });

  it('useWatchList true on a server without them falls back per cycle, as a failure (warned)', async () => {
    const s = await server({ watchList: false });
    const log: Logged[] = [];
    const [informer] = await informers(s, 1, { useWatchList: true, log });
    expect(requests(s)).toEqual({ streamed: 1, lists: 1 });
    expect(informer!.health().counters.errors).toBe(1);
    expect(log.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(informer!.health().watch.listMode).toBe('streaming');
  });

  it('pages for a ListerWatcher that names no server (its own, or a fake source)', async () => {
    const s = await server();
    const raw = newListWatch<Pod>(s.kubeConfig, PODS, { namespace: 'default' });
    const lw: ListerWatcher<Pod> = { list: (o, sig) => raw.list(o, sig), watch: (o, sig) => raw.watch(o, sig) };
    const reflector = new Reflector<Pod>(lw, { add() {}, update() {}, delete() {}, replace() {}, resync() {} }, { clock: new FakeClock() });
    expect(reflector.stats().listMode).toBe('paged');
  });

  it("refuses a useWatchList other than true, false or 'auto', naming it", () => {
    const lw: ListerWatcher<Pod> = { list: () => Promise.reject(new Error('unused')), watch: () => Promise.reject(new Error('unused')) };
    const store = { add() {}, update() {}, delete() {}, replace() {}, resync() {} };
    expect(() => new Reflector<Pod>(lw, store, { useWatchList: 'yes' as unknown as boolean })).toThrow(/Reflector: option useWatchList must be one of 'true', 'false', 'auto', got "yes"/);
  });
});

describe('a relist keeps the cached copy of every unchanged object (no second copy while it runs)', () => {
  for (const useWatchList of [true, false]) {
    it(`${useWatchList ? 'a streaming' : 'a paged'} relist after a 410: unchanged objects stay the very cached objects, not transformed again; changed and new ones are the server's`, async () => {
      const s = await server();
      const clock = new FakeClock();
      let transforms = 0;
      const lw = newListWatch<Pod>(s.kubeConfig, PODS, { namespace: 'default' });
      const informer = new SharedIndexInformer<Pod>(lw, {
        clock, logger: false, reflector: { useWatchList },
        transform: (obj) => {
          transforms++;
          return obj;
        },
      });
      const ac = new AbortController();
      const run = informer.run(ac.signal);
      stops.push(async () => {
        ac.abort();
        await run;
      });
      await informer.whenSynced();
      const before = new Map(informer.getIndexer().list().map((p) => [p.metadata.name, p]));
      expect(transforms).toBe(3);
      s.update(PODS, { ...pod('b'), metadata: { ...pod('b').metadata, labels: { changed: 'yes' } } }, { broadcast: false });
      s.create(PODS, pod('d'), { broadcast: false });
      s.compact();
      s.endWatches();
      await io(() => informer.getIndexer().list().length === 4, 'the relist');
      const after = new Map(informer.getIndexer().list().map((p) => [p.metadata.name, p]));
      expect(after.get('a')).toBe(before.get('a'));
      expect(after.get('c')).toBe(before.get('c'));
      expect(after.get('b')).not.toBe(before.get('b'));
      expect(after.get('b')!.metadata.labels).toEqual({ changed: 'yes' });
      expect(transforms).toBe(5);
      expect(requests(s)).toEqual(useWatchList ? { streamed: 2, lists: 0 } : { streamed: 0, lists: 2 });
    });
  }
});
