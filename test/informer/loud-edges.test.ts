// Silence is a bug (the kubelet PLEG incident): every failure a user can cause reaches what they
// await, the log and health() — on the injected clock, over a fake source.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ApiStatusError } from '../../src/core/errors.js';
import type { Logger } from '../../src/core/log.js';
import { SharedIndexInformer, waitForCacheSync } from '../../src/informer/index.js';
import { KubeConfigError, NetworkError } from '../../src/listwatch/errors.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { deferred, pod, failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

/** A logger that records every line with its level. */
function recordingLogger(): Logger & { lines: Array<[string, string]> } {
  const lines: Array<[string, string]> = [];
  const at = (level: string) => (message: string) => void lines.push([level, message]);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function refused(): NetworkError {
  return new NetworkError('GET /api/v1/pods: connect ECONNREFUSED 127.0.0.1:1', { syscallCode: 'ECONNREFUSED' });
}

function setup(listError: Error | undefined, extra: ConstructorParameters<typeof SharedIndexInformer<Pod>>[1] = {}) {
  const clock = new FakeClock();
  const source = new FakeControllerSource<Pod>();
  source.listError = listError;
  const logger = recordingLogger();
  const informer = new SharedIndexInformer<Pod>(source, { clock, name: 'v1/pods', logger, ...extra });
  const ac = new AbortController();
  const done = informer.run(ac.signal);
  const stop = async (): Promise<void> => {
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
  };
  return { clock, source, logger, informer, ac, done, stop };
}

async function advance(clock: FakeClock, ms: number, step = 500): Promise<void> {
  for (let t = 0; t < ms; t += step) await clock.advance(step);
}

describe('sync waits always come with a why', () => {
  const persistent: Array<[string, () => Error, RegExp]> = [
    ['a 400 (a selector the server rejects)', () => new ApiStatusError(400, 'unable to parse requirement', { reason: 'BadRequest' }), /HTTP 400/],
    ['a 401 (bad credentials)', () => new ApiStatusError(401, 'Unauthorized', { reason: 'Unauthorized' }), /HTTP 401/],
    ['a 403 (missing RBAC)', () => new ApiStatusError(403, 'pods is forbidden', { reason: 'Forbidden' }), /HTTP 403/],
    ['a 404 (an unknown resource)', () => new ApiStatusError(404, 'the server could not find the requested resource', { reason: 'NotFound' }), /HTTP 404/],
    ['a 422', () => new ApiStatusError(422, 'invalid', { reason: 'Invalid' }), /HTTP 422/],
    ['a KubeConfig failure', () => new KubeConfigError('exec plugin failed'), /KUBECONFIG/],
    ['a TLS failure', () => new NetworkError('self-signed certificate', { syscallCode: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), /DEPTH_ZERO_SELF_SIGNED_CERT/],
    ['a DNS failure', () => new NetworkError('getaddrinfo ENOTFOUND kube.invalid', { syscallCode: 'ENOTFOUND' }), /ENOTFOUND/],
  ];
  for (const [what, make, reason] of persistent) {
    it(`rejects whenSynced, a registration's whenSynced and waitForCacheSync after 3 failures in a row with ${what}`, async () => {
      const cause = make();
      const t = setup(cause);
      const reg = t.informer.addEventHandler({});
      const waits = [t.informer.whenSynced(), reg.whenSynced(), waitForCacheSync(t.ac.signal, t.informer)].map((p) => p.catch((e: unknown) => e));
      await advance(t.clock, 10_000);
      for (const w of waits) {
        const err = (await w) as Error & { code: string };
        expect(err).toBeInstanceOf(Error);
        expect(err.code).toBe((cause as Error & { code: string }).code);
        expect(err.message).toMatch(/informer v1\/pods cannot sync: 3 list\/watch requests in a row failed with/);
        expect(err.message).toMatch(reason);
        expect(err.cause).toBe(cause);
      }
      expect(t.informer.isStopped()).toBe(false); // it keeps retrying, as client-go's does
      await t.stop();
    });
  }

  it('keeps waiting through errors that retrying fixes (500, 429, resets), and resolves when they pass', async () => {
    const t = setup(new ApiStatusError(500, 'etcd leader changed'));
    let synced = false;
    const waiting = t.informer.whenSynced().then(() => (synced = true));
    await advance(t.clock, 30_000);
    t.source.listError = new NetworkError('socket hang up', { syscallCode: 'ECONNRESET' });
    await advance(t.clock, 30_000);
    expect(synced).toBe(false);
    t.source.listError = undefined;
    await advance(t.clock, 60_000);
    await waiting;
    expect(synced).toBe(true);
    await t.stop();
  });

  it('rejects after the server has been unreachable for syncUnreachableMs (default 10 s), not before', async () => {
    const t = setup(refused());
    const waiting = t.informer.whenSynced().catch((e: unknown) => e);
    let settled = false;
    void waiting.then(() => (settled = true));
    await advance(t.clock, 9_500);
    expect(settled).toBe(false);
    await advance(t.clock, 1_000);
    const err = (await waiting) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('NETWORK');
    expect(err.syscallCode).toBe('ECONNREFUSED');
    expect(err.message).toMatch(/informer v1\/pods cannot sync: the API server has been unreachable for 10 s \(ECONNREFUSED\)/);
    await t.stop();
  });

  it('honours syncUnreachableMs and syncFailureThreshold', async () => {
    const t = setup(refused(), { syncUnreachableMs: 2_000 });
    const waiting = t.informer.whenSynced().catch((e: unknown) => e);
    await advance(t.clock, 2_500);
    expect(await waiting).toMatchObject({ message: expect.stringMatching(/unreachable for 2 s/) });
    await t.stop();
    const u = setup(new ApiStatusError(403, 'forbidden'), { syncFailureThreshold: 1 });
    await expect(u.informer.whenSynced()).rejects.toMatchObject({ message: expect.stringMatching(/1 list\/watch requests in a row/) });
    await u.stop();
  });

  it('a wait started after the informer stopped rejects with INFORMER_STOPPED: a dead informer never reports synced', async () => {
    const t = setup(undefined);
    t.source.add(pod('a'));
    await t.informer.whenSynced();
    await until(() => t.informer.lister().list().length === 1);
    expect(t.informer.hasSynced()).toBe(true);
    await t.stop();
    expect(t.informer.hasSynced()).toBe(false);
    await expect(t.informer.whenSynced()).rejects.toMatchObject({ code: 'INFORMER_STOPPED', message: 'informer v1/pods has stopped' });
    await expect(waitForCacheSync(new AbortController().signal, t.informer)).rejects.toMatchObject({ code: 'INFORMER_STOPPED' });
    expect(t.informer.lister().list()).toHaveLength(1); // the last state stays readable
  });

  it('waitForCacheSync still takes plain functions (polled) and resolves false when aborted', async () => {
    const ac = new AbortController();
    const waiting = waitForCacheSync(ac.signal, () => false);
    ac.abort();
    expect(await waiting).toBe(false);
    expect(await waitForCacheSync(new AbortController().signal, () => true)).toBe(true);
  });
});

describe('errors are visible by default: the logger', () => {
  it('logs the first failure of a kind at once, then counts repeats and logs again with the count after 30 s', async () => {
    const t = setup(new ApiStatusError(500, 'etcd leader changed'));
    await until(() => t.logger.lines.length > 0);
    expect(t.logger.lines).toEqual([['warn', expect.stringMatching(/^informer v1\/pods: list failed, will list again: etcd leader changed$/)]]);
    await advance(t.clock, 29_000);
    expect(t.logger.lines).toHaveLength(1);
    // The next failure after the 30 s window logs with the count. When it comes depends on the
    // reflector's jittered backoff (up to ~50 s after the start), so advance until it has, within 5 min.
    const warns = (): Array<[string, string]> => t.logger.lines.filter(([level]) => level === 'warn');
    for (let elapsed = 0; warns().length < 2 && elapsed < 300_000; elapsed += 500) await t.clock.advance(500);
    expect(warns()).toHaveLength(2);
    expect(warns()[1][1]).toMatch(/\(and \d+ more like it in the last 30 s\)$/);
    await t.stop();
  });

  it('logs an error line when sync waits give up, and an info line when the server answers again', async () => {
    const t = setup(new ApiStatusError(403, 'pods is forbidden'));
    await advance(t.clock, 10_000);
    expect(t.logger.lines).toContainEqual(['error', expect.stringMatching(/cannot sync: 3 list\/watch requests in a row failed with HTTP 403.*sync waits reject; the informer keeps retrying/)]);
    t.source.listError = undefined;
    await advance(t.clock, 60_000);
    expect(t.informer.hasSynced()).toBe(true);
    expect(t.logger.lines).toContainEqual(['info', expect.stringMatching(/^informer v1\/pods: list succeeded again after \d+ failures$/)]);
    await t.stop();
  });

  it('logs why an informer stopped, and prints nothing at all with logger: false', async () => {
    const t = setup(undefined);
    t.informer.addEventHandler({
      onAdd: () => {
        throw new Error('boom');
      },
    });
    t.source.add(pod('a'));
    await expect(t.done).rejects.toMatchObject({ code: 'HANDLER_FAILED' });
    expect(t.logger.lines).toContainEqual(['error', expect.stringMatching(/^informer v1\/pods stopped: event handler handler-1 failed in onAdd for "default\/a": boom$/)]);
    const original = { warn: console.warn, error: console.error, info: console.info, debug: console.debug };
    const printed: unknown[] = [];
    console.warn = console.error = console.info = console.debug = (...args: unknown[]) => void printed.push(args);
    try {
      const quiet = setup(new ApiStatusError(403, 'forbidden'), { logger: false });
      await advance(quiet.clock, 10_000);
      await quiet.stop();
    } finally {
      Object.assign(console, original);
    }
    expect(printed).toEqual([]);
  });
});

describe('health that tells the truth: live and ready', () => {
  it('is live but not ready while never synced with consecutive errors, naming the last error', async () => {
    const t = setup(new ApiStatusError(403, 'pods is forbidden'), { health: { watchStallMs: 300_000 } });
    await advance(t.clock, 5_000);
    const h = t.informer.health();
    expect(h).toMatchObject({ state: 'running', synced: false, live: true, ready: false, healthy: false });
    expect(h.watch.consecutiveErrors).toBeGreaterThanOrEqual(3);
    expect(h.problems).toEqual([expect.stringMatching(/^cache not synced yet: \d+ list\/watch failures in a row \(last error: pods is forbidden\)$/)]);
    await t.stop();
  });

  it('is ready once synced with the watch connected, and not ready when the watch stays disconnected past watchDisconnectedMs', async () => {
    const t = setup(undefined, { health: { watchDisconnectedMs: 20_000 } });
    t.source.add(pod('a'));
    await t.informer.whenSynced();
    await until(() => t.informer.health().watch.connected);
    expect(t.informer.health()).toMatchObject({ live: true, ready: true, healthy: true, problems: [] });
    t.source.watchError = refused();
    t.source.listError = refused();
    t.source.sendError(500); // ends the watch; every reopen is refused from now on
    await until(() => !t.informer.health().watch.connected);
    await advance(t.clock, 25_000);
    const h = t.informer.health();
    expect(h).toMatchObject({ synced: true, live: true, ready: false });
    expect(h.problems).toEqual([
      expect.stringMatching(/^watch disconnected for \d+ ms, the cache is going stale \(last error: .*ECONNREFUSED/),
      // The ERROR ended the cycle: the cache is known stale until a relist, deferred while lists are refused.
      expect.stringMatching(/^cache is stale for \d+ ms \(.*ECONNREFUSED.*\); relist deferred by backoff until .*Z \(in \d+ ms\)$/),
    ]);
    await t.stop();
  });

  it('is not live when a handler callback is stuck, and not live once stopped or failed', async () => {
    const t = setup(undefined, { health: { slowHandlerMs: 5_000 } });
    const hang = deferred();
    t.informer.addEventHandler({ onAdd: () => hang.promise }, { name: 'stuck' });
    t.source.add(pod('a'));
    await t.informer.whenSynced();
    await advance(t.clock, 6_000);
    const h = t.informer.health();
    expect(h).toMatchObject({ live: false, ready: false });
    expect(h.handlers[0]).toMatchObject({ name: 'stuck', wedged: true, slow: true });
    expect(h.problems).toContainEqual(expect.stringMatching(/^handler stuck is stuck: /));
    hang.resolve();
    await until(() => t.informer.health().live);
    await t.stop();
    expect(t.informer.health()).toMatchObject({ state: 'stopped', live: false, ready: false, problems: ['informer is stopped'] });
  });
});

describe('validation at construction', () => {
  it('rejects out-of-range informer options with INVALID_OPTION naming the option', () => {
    const source = new FakeControllerSource<Pod>();
    const bad: Array<[object, RegExp]> = [
      [{ resyncPeriodMs: -1 }, /resyncPeriodMs must be a finite number of milliseconds >= 0, got -1/],
      [{ stopGraceMs: Number.POSITIVE_INFINITY }, /stopGraceMs/],
      [{ syncUnreachableMs: Number.NaN }, /syncUnreachableMs/],
      [{ syncFailureThreshold: 0 }, /syncFailureThreshold must be a whole number >= 1/],
      [{ health: { watchDisconnectedMs: -5 } }, /health\.watchDisconnectedMs/],
      [{ errorPolicy: 'ignore' }, /errorPolicy must be one of 'stop', 'report'/],
      [{ logger: { warn: () => {} } }, /logger must be false or a logger with debug, info, warn and error methods/],
      [{ clock: {} }, /clock must be a Clock/],
    ];
    for (const [options, message] of bad) {
      expect(() => new SharedIndexInformer<Pod>(source, options as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(message) }));
    }
  });
});
