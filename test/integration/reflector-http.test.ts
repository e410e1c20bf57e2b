// The reflector over real HTTP: newListWatch against the test kit's fake API server, with every fault.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { newListWatch } from '../../src/listwatch/index.js';
import type { KubeListWatch } from '../../src/listwatch/index.js';
import { Reflector } from '../../src/reflector/index.js';
import type { RegressionInfo, ReflectorErrorContext, ReflectorOptions } from '../../src/reflector/index.js';
import { startFakeApiServer } from '../../src/testing/index.js';
import type { FakeApiServer, FakeApiServerOptions } from '../../src/testing/index.js';
import { RecordingLW, RecordingStore, pod, until } from '../reflector/helpers.js';
import type { Pod } from '../reflector/helpers.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const BACKOFF_MS = 100;

interface HttpHarness {
  server: FakeApiServer;
  raw: KubeListWatch<Pod>;
  lw: RecordingLW<Pod>;
  clock: FakeClock;
  store: RecordingStore<Pod>;
  reflector: Reflector<Pod>;
  errors: Array<{ error: Error; context: ReflectorErrorContext }>;
  regressions: RegressionInfo[];
  codes(): string[];
  /** The server's pods as `{ name: rv }`. */
  truth(): Record<string, string | undefined>;
  /** Waits for `cond`, moving the fake clock by the backoff step between polls of real I/O. */
  until(cond: () => boolean, what: string): Promise<void>;
  /** Waits until the store equals the server and a watch is open. */
  converged(what: string): Promise<void>;
  stop(): Promise<void>;
}

const open: HttpHarness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.stop().catch(() => undefined);
});

async function httpHarness(options: ReflectorOptions<Pod> = {}, serverOptions: FakeApiServerOptions = {}): Promise<HttpHarness> {
  const server = await startFakeApiServer(serverOptions);
  const raw = newListWatch<Pod>(server.kubeConfig, PODS, { namespace: 'default' });
  const lw = new RecordingLW<Pod>(raw);
  const clock = new FakeClock();
  const store = new RecordingStore<Pod>();
  const errors: HttpHarness['errors'] = [];
  const regressions: RegressionInfo[] = [];
  const controller = new AbortController();
  const reflector = new Reflector<Pod>(lw, store, {
    clock,
    random: () => 0,
    name: 'http',
    backoff: { initialMs: BACKOFF_MS, factor: 1, jitter: 0 },
    onError: (error, context) => errors.push({ error, context }),
    onRegression: (info) => regressions.push(info),
    ...options,
  });
  const running = reflector.run(controller.signal);
  let stopped = false;
  const h: HttpHarness = {
    server, raw, lw, clock, store, reflector, errors, regressions,
    codes: () => errors.map((e) => String((e.error as { code?: unknown }).code)),
    truth: () => Object.fromEntries(server.list<Pod>(PODS, 'default').map((p) => [`default/${p.metadata.name}`, p.metadata.resourceVersion])),
    async until(cond, what) {
      await until(() => {
        if (cond()) return true;
        void clock.advance(BACKOFF_MS);
        return false;
      }, what);
    },
    async converged(what) {
      await h.until(() => JSON.stringify(store.snapshot()) === JSON.stringify(h.truth()) && reflector.stats().watchConnected, what);
      expect(store.snapshot()).toEqual(h.truth());
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      controller.abort();
      await running;
      raw.close();
      expect(clock.pendingTimers()).toBe(0);
      await until(() => server.openWatches() === 0, 'the server to see every watch closed');
      await server.close();
    },
  };
  open.push(h);
  return h;
}

const create = (h: HttpHarness, name: string, spec: Record<string, unknown> = {}): Pod => h.server.create<Pod>(PODS, { ...pod(name), spec });
const update = (h: HttpHarness, name: string, spec: Record<string, unknown>): Pod => h.server.update<Pod>(PODS, { ...pod(name), spec });

describe('Reflector over HTTP (newListWatch + fake API server)', () => {
  it('lists, watches and follows adds, updates and deletes', async () => {
    const h = await httpHarness();
    create(h, 'a');
    create(h, 'b');
    await h.converged('the first list');
    create(h, 'c');
    update(h, 'a', { v: 2 });
    h.server.delete(PODS, 'b', 'default');
    await h.converged('the watch events');
    expect(h.lw.listRequests()).toHaveLength(1);
    expect(h.lw.watchRequests()[0]).toMatchObject({ allowWatchBookmarks: true, timeoutSeconds: 300 });
    expect(h.errors).toEqual([]);
    await h.stop();
  });

  it('re-watches without relisting when the server ends the watch', async () => {
    const h = await httpHarness();
    create(h, 'a');
    await h.converged('the first list');
    await h.clock.advance(2000); // the watch has lived a while (one that ends at once, empty, is "very short")
    h.server.endWatches();
    create(h, 'b');
    await h.until(() => h.lw.watchRequests().length === 2, 'a second watch');
    await h.converged('the re-watch');
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
  });

  it('relists after the history was compacted under a dropped watch (410)', async () => {
    const h = await httpHarness();
    create(h, 'a');
    await h.converged('the first list');
    await h.clock.advance(2000);
    h.server.endWatches();
    create(h, 'b', {});
    h.server.compact();
    await h.until(() => h.lw.listRequests().length === 2, 'a relist');
    await h.converged('the relist');
    expect(h.codes()).toContain('EXPIRED');
    expect(h.lw.backwardRequests()).toEqual([]);
    await h.stop();
  });

  it('backs off on a 500 list and a 429 watch with Retry-After, then converges', async () => {
    const h = await httpHarness();
    create(h, 'a');
    h.server.injectFault({ verb: 'list', type: 'status', code: 500 });
    h.server.injectFault({ verb: 'watch', type: 'status', code: 429, retryAfterSeconds: 2 });
    await h.until(() => h.codes().includes('API_STATUS') && h.codes().length >= 2, 'both faults');
    await h.converged('recovery');
    expect(h.errors.map((e) => e.context.action)).toEqual(['relist', 'rewatch']);
    expect(h.lw.listRequests()).toHaveLength(2);
    h.server.assertNoPendingFaults();
    await h.stop();
  });

  it('re-watches without relisting while the server is down (ECONNREFUSED), then catches up', async () => {
    const h = await httpHarness();
    create(h, 'a');
    await h.converged('the first list');
    await h.server.close();
    await h.until(() => h.errors.some((e) => (e.error as { syscallCode?: string }).syscallCode === 'ECONNREFUSED'), 'a refused watch');
    create(h, 'b');
    await h.server.listen();
    await h.converged('the server back');
    expect(h.lw.listRequests()).toHaveLength(1);
    expect(h.errors.every((e) => e.context.action === 'rewatch')).toBe(true);
    await h.stop();
  });

  it('re-watches from the last good version after a malformed line and after an unknown event type', async () => {
    for (const fault of [
      { type: 'malformedLine' as const, afterEvents: 1 },
      { type: 'unknownEventType' as const, afterEvents: 1 },
      { type: 'notAnEvent' as const, afterEvents: 1 },
    ]) {
      const h = await httpHarness();
      create(h, 'a');
      h.server.injectFault({ verb: 'watch', ...fault });
      await h.converged('the first list');
      create(h, 'b');
      create(h, 'c');
      await h.until(() => h.lw.watchRequests().length >= 2, `a re-watch after ${fault.type}`);
      await h.converged(`recovery from ${fault.type}`);
      expect(h.codes()).toEqual(['WATCH_DECODE']);
      expect(h.lw.listRequests()).toHaveLength(1);
      expect(h.store.ops.filter((o) => o.startsWith('add default/b@'))).toHaveLength(1);
      await h.stop();
    }
  });

  it('refuses a byte-for-byte duplicate of the last event (nothing applied twice) and repairs with a relist', async () => {
    const h = await httpHarness();
    create(h, 'a');
    h.server.injectFault({ verb: 'watch', type: 'duplicateEvent', afterEvents: 1 });
    await h.converged('the first list');
    update(h, 'a', { v: 2 });
    await h.until(() => h.regressions.length === 1, 'the duplicate to be refused');
    await h.converged('the repair');
    expect(h.store.ops.filter((o) => o.startsWith('update default/a@'))).toHaveLength(1);
    expect(h.lw.backwardRequests()).toEqual([]);
    await h.stop();
  });

  it('closes a half-open watch when the idle limit passes, and resumes from the last version', async () => {
    const h = await httpHarness({ minWatchTimeoutMs: 60_000, watchIdleMarginMs: 30_000 });
    create(h, 'a');
    h.server.injectFault({ verb: 'watch', type: 'stall', sendHeaders: true });
    await until(() => h.reflector.stats().watchConnected, 'the stalled watch to open');
    expect(h.store.snapshot()).toEqual(h.truth());
    create(h, 'b');
    await h.clock.advance(90_000);
    await h.converged('the re-watch');
    expect(h.codes()).toEqual(['WATCH_STALLED']);
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
  });

  it('re-watches without relisting after the server drops every connection', async () => {
    const h = await httpHarness();
    create(h, 'a');
    await h.converged('the first list');
    await h.server.restart();
    create(h, 'b');
    await h.converged('after the restart');
    expect(h.lw.listRequests()).toHaveLength(1);
    await h.stop();
  });

  it('pages a list and falls back to one full list when the continue token expires', async () => {
    const h = await httpHarness({ pageSize: 2 }, { watchCache: false });
    for (const n of ['a', 'b', 'c', 'd', 'e']) create(h, n);
    let compacted = false;
    h.lw.beforeList = (o) => {
      if (o.continue !== undefined && !compacted) {
        compacted = true;
        create(h, 'f');
        h.server.compact();
      }
    };
    await h.converged('the paged list');
    expect(h.lw.listRequests().map((o) => Object.keys(o).sort().join('+'))).toEqual([
      'limit+resourceVersion',
      'continue+limit',
      'resourceVersion+resourceVersionMatch',
    ]);
    expect(h.store.ops.filter((o) => o.startsWith('replace'))).toHaveLength(1);
    expect(h.lw.backwardRequests()).toEqual([]);
    await h.stop();
  });

  it('streams the initial state with useWatchList and keeps the same watch', async () => {
    const h = await httpHarness({ useWatchList: true });
    create(h, 'a');
    create(h, 'b');
    await h.converged('the streamed list');
    create(h, 'c');
    await h.converged('the following events');
    expect(h.lw.listRequests()).toEqual([]);
    expect(h.lw.watchRequests()).toHaveLength(1);
    expect(h.lw.watchRequests()[0]).toMatchObject({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true });
    expect(h.store.ops[0]).toMatch(/^replace@\d+ \[default\/a,default\/b\]$/);
    await h.stop();
  });

  // The incident (kubernetes #58545 / client-go #338) over HTTP.
  it('rejects a DELETE carrying an old resource version, relists not older, and the real deletion lands via replace', async () => {
    const h = await httpHarness();
    create(h, 'a');
    const b = create(h, 'b');
    const bRv = b.metadata.resourceVersion ?? '';
    // The first watch, after one event, sends DELETED b carrying b's old version.
    h.server.injectFault({ verb: 'watch', type: 'regressedEvent', afterEvents: 1, eventType: 'DELETED', object: b, resourceVersion: bRv });
    await h.converged('the first list');
    h.server.delete(PODS, 'b', 'default', { broadcast: false });
    const a = update(h, 'a', { v: 2 });
    await h.until(() => h.regressions.length === 1, 'the regression');
    expect(h.regressions[0]).toMatchObject({ key: 'default/b', eventType: 'DELETED', eventResourceVersion: bRv, heldResourceVersion: a.metadata.resourceVersion });
    await h.converged('the repair relist');
    expect(h.store.snapshot()).toEqual({ 'default/a': a.metadata.resourceVersion });
    expect(h.lw.listRequests()[1]).toEqual({ resourceVersion: a.metadata.resourceVersion, resourceVersionMatch: 'NotOlderThan' });
    expect(h.store.ops.filter((o) => o.startsWith('delete'))).toEqual([]);
    expect(h.lw.backwardRequests()).toEqual([]);
    await h.stop();
  });
});
