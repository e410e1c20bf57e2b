// The reflector's state machine, walked with no I/O: every state × every result kind, then the variants
// that decide each recovery (which failure rewatches, which relists, which relists from "").

import { describe, expect, it } from 'vitest';
import { ApiStatusError, ErrorCodes, KubeInformerError } from '../../src/core/errors.js';
import { metaNamespaceKeyFunc } from '../../src/core/keys.js';
import { INITIAL_MEMORY, STATE_KINDS, planOf, readsStream, resyncArmed, start, step } from '../../src/reflector/machine.js';
import type { State, Transition } from '../../src/reflector/machine.js';
import { RESULT_KINDS, chain } from '../../src/reflector/machine-types.js';
import type { MachineEnv, Report, Result } from '../../src/reflector/machine-types.js';
import { streamRequest } from '../../src/reflector/requests.js';
import type { Memory } from '../../src/reflector/requests.js';
import { bookmark, connRefused, gone, pod, podList, statusEvent } from './helpers.js';
import type { Pod } from './helpers.js';

type StateKind = (typeof STATE_KINDS)[number];
type ResultKind = (typeof RESULT_KINDS)[number];

function env(over: Partial<MachineEnv<Pod>> = {}): MachineEnv<Pod> {
  return {
    name: 't', keyFunc: metaNamespaceKeyFunc, expectedKind: undefined, expectedApiVersion: undefined,
    pageSize: undefined, useWatchList: false, oneCycle: false, onResourceMissing: 'retry', storedVersion: undefined, ...over,
  };
}

const mem: Memory = { ...INITIAL_MEMORY, versions: { held: '10', observed: undefined, enabled: true } };

/** One state of each kind (waiting: before a re-watch; `waitingForCycle` below is the other one). */
const states: Record<StateKind, State<Pod>> = {
  listing: { kind: 'listing', mem, request: { resourceVersion: '10' } },
  paging: {
    kind: 'paging', mem, request: { resourceVersion: '10', limit: 1 }, resourceVersion: '12',
    pages: chain(undefined, [pod('a', '11')]), next: { continue: 'c1', limit: 1 },
  },
  refetching: { kind: 'refetching', mem, request: { resourceVersion: '10', limit: 1 }, options: { resourceVersion: '12', resourceVersionMatch: 'NotOlderThan' } },
  streamOpening: { kind: 'streamOpening', mem, options: streamRequest(mem) },
  streaming: { kind: 'streaming', mem, initial: chain(undefined, ['a', pod('a', '11')] as const) },
  watchOpening: { kind: 'watchOpening', mem, options: { resourceVersion: '10', allowWatchBookmarks: true } },
  watching: { kind: 'watching', mem, session: { fromStart: true, sawNonAdded: false, delivered: false } },
  waiting: { kind: 'waiting', mem, then: 'watch', atLeastMs: 0 },
  absent: { kind: 'absent', mem: { ...mem, absent: true, consistent: true } },
  stopped: { kind: 'stopped', mem, error: undefined },
};
const waitingForCycle: State<Pod> = { kind: 'waiting', mem, then: 'cycle', atLeastMs: 0 };

/** One result of each kind. */
const results: Record<ResultKind, Result<Pod>> = {
  page: { kind: 'page', page: podList('12', [pod('b', '12')]) },
  opened: { kind: 'opened' },
  event: { kind: 'event', event: { type: 'MODIFIED', object: pod('a', '11') } },
  closed: { kind: 'closed', lastedMs: 60_000, received: 3, requestedTimeoutMs: 300_000 },
  timedOut: { kind: 'timedOut', afterMs: 330_000 },
  failed: { kind: 'failed', error: new Error('boom') },
  storeFailed: { kind: 'storeFailed', error: new Error('store broke'), op: 'add' },
  slept: { kind: 'slept' },
  resyncDue: { kind: 'resyncDue' },
  relistDue: { kind: 'relistDue' },
  aborted: { kind: 'aborted' },
};

/**
 * The transition table, as the tests read it: the next state's kind, `same` (the state itself, no
 * effect: the result does not concern that state) or `stay` (the state itself, with effects).
 * `waiting` is the wait before a re-watch; END of a cycle is `waiting` (before a relist).
 */
const TABLE: Record<StateKind, Record<ResultKind, StateKind | 'same' | 'stay'>> = {
  listing: { page: 'watchOpening', opened: 'same', event: 'same', closed: 'same', timedOut: 'waiting', failed: 'waiting', storeFailed: 'waiting', slept: 'same', resyncDue: 'same', relistDue: 'same', aborted: 'stopped' },
  paging: { page: 'watchOpening', opened: 'same', event: 'same', closed: 'same', timedOut: 'waiting', failed: 'waiting', storeFailed: 'waiting', slept: 'same', resyncDue: 'same', relistDue: 'same', aborted: 'stopped' },
  refetching: { page: 'watchOpening', opened: 'same', event: 'same', closed: 'same', timedOut: 'waiting', failed: 'waiting', storeFailed: 'waiting', slept: 'same', resyncDue: 'same', relistDue: 'same', aborted: 'stopped' },
  streamOpening: { page: 'same', opened: 'streaming', event: 'same', closed: 'same', timedOut: 'listing', failed: 'listing', storeFailed: 'same', slept: 'same', resyncDue: 'same', relistDue: 'listing', aborted: 'stopped' },
  streaming: { page: 'same', opened: 'same', event: 'streaming', closed: 'listing', timedOut: 'listing', failed: 'listing', storeFailed: 'listing', slept: 'same', resyncDue: 'same', relistDue: 'listing', aborted: 'stopped' },
  watchOpening: { page: 'same', opened: 'watching', event: 'same', closed: 'same', timedOut: 'waiting', failed: 'waiting', storeFailed: 'waiting', slept: 'same', resyncDue: 'stay', relistDue: 'listing', aborted: 'stopped' },
  watching: { page: 'same', opened: 'same', event: 'watching', closed: 'watchOpening', timedOut: 'watchOpening', failed: 'waiting', storeFailed: 'waiting', slept: 'same', resyncDue: 'stay', relistDue: 'listing', aborted: 'stopped' },
  waiting: { page: 'same', opened: 'same', event: 'same', closed: 'same', timedOut: 'same', failed: 'same', storeFailed: 'waiting', slept: 'watchOpening', resyncDue: 'stay', relistDue: 'same', aborted: 'stopped' },
  absent: { page: 'same', opened: 'same', event: 'same', closed: 'same', timedOut: 'same', failed: 'same', storeFailed: 'same', slept: 'listing', resyncDue: 'same', relistDue: 'listing', aborted: 'stopped' },
  stopped: { page: 'same', opened: 'same', event: 'same', closed: 'same', timedOut: 'same', failed: 'same', storeFailed: 'same', slept: 'same', resyncDue: 'same', relistDue: 'same', aborted: 'same' },
};

const errors = (t: Transition<Pod>): Array<Extract<Report, { kind: 'error' }>['payload']> =>
  t.reports.flatMap((r) => (r.kind === 'error' ? [r.payload] : []));

/** Checks one transition against its table entry; returns a description of the mismatch, or ''. */
function check(from: State<Pod>, result: Result<Pod>, expected: StateKind | 'same' | 'stay', e = env()): string {
  const t = step(from, result, e);
  const where = `${from.kind} × ${result.kind}`;
  if (expected === 'same') {
    return t.state === from && t.ops.length === 0 && t.reports.length === 0 ? '' : `${where}: expected no change, got ${t.state.kind}`;
  }
  if (expected === 'stay') return t.state === from && t.ops.length + t.reports.length > 0 ? '' : `${where}: expected the same state with effects`;
  return t.state.kind === expected ? '' : `${where}: expected ${expected}, got ${t.state.kind}`;
}

describe('the reflector state machine, every state × every result kind', () => {
  it('follows the transition table for each of the 10 × 11 pairs', () => {
    const mismatches = STATE_KINDS.flatMap((s) => RESULT_KINDS.map((r) => check(states[s], results[r], TABLE[s][r]))).filter((m) => m !== '');
    expect(mismatches).toEqual([]);
    // The wait before a relist: only `slept` (and an abort) moves it.
    const cycle = RESULT_KINDS.map((r) => check(waitingForCycle, results[r], r === 'slept' ? 'listing' : r === 'aborted' ? 'stopped' : 'same'));
    expect(cycle.filter((m) => m !== '')).toEqual([]);
  });

  it('plans exactly one request per state, and says where the stream is read and the resync timer runs', () => {
    expect(Object.fromEntries(STATE_KINDS.map((s) => [s, planOf(states[s]).kind]))).toEqual({
      listing: 'list', paging: 'list', refetching: 'list', streamOpening: 'watch', streaming: 'read',
      watchOpening: 'watch', watching: 'read', waiting: 'sleep', absent: 'sleep', stopped: 'stop',
    });
    expect(planOf(states.paging)).toEqual({ kind: 'list', options: { continue: 'c1', limit: 1 } });
    expect(STATE_KINDS.filter((s) => readsStream(states[s]))).toEqual(['streaming', 'watching']);
    expect(STATE_KINDS.filter((s) => resyncArmed(states[s]))).toEqual(['watchOpening', 'watching', 'waiting']);
    expect(resyncArmed(waitingForCycle)).toBe(false);
  });

  it('reports every recovery with the action that matches the next state', () => {
    for (const s of [...STATE_KINDS.map((k) => states[k]), waitingForCycle]) {
      for (const r of RESULT_KINDS) {
        const t = step(s, results[r], env());
        for (const e of errors(t)) {
          const where = `${s.kind} × ${r} (${e.action})`;
          // A relist follows a backoff, or comes at once after a 410 from a server that answers.
          if (e.action === 'relist') expect(['waitingcycle', 'listing', 'streamOpening'], where).toContain(t.state.kind === 'waiting' ? `waiting${t.state.then}` : t.state.kind);
          if (e.action === 'rewatch') expect(['waitingwatch', 'watchOpening'], where).toContain(t.state.kind === 'waiting' ? `waiting${t.state.then}` : t.state.kind);
          if (e.action === 'fallback') expect(t.state.kind, where).toBe('listing');
          expect(e.name, where).toBe('t');
        }
      }
    }
  });

  it('ends at the end of the first cycle, with its error, under oneCycle; an abort stops any state without one', () => {
    const once = env({ oneCycle: true });
    const ended = step(states.watching, results.failed, once);
    expect(ended.state).toMatchObject({ kind: 'stopped', error: (results.failed as { error: Error }).error });
    expect(planOf(ended.state)).toEqual({ kind: 'stop', error: (results.failed as { error: Error }).error });
    for (const s of STATE_KINDS) expect(step(states[s], results.aborted, once).state).toMatchObject({ kind: 'stopped', error: undefined });
  });

  it('starts a cycle with a list at "0" (limit 500), or a streaming list from the held version', () => {
    expect(start(INITIAL_MEMORY, env())).toEqual({ kind: 'listing', mem: INITIAL_MEMORY, request: { resourceVersion: '0', limit: 500 } });
    expect(start(mem, env({ useWatchList: true }))).toMatchObject({
      kind: 'streamOpening', options: { resourceVersion: '10', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true, allowWatchBookmarks: true },
    });
    expect(start({ ...mem, repair: true }, env())).toMatchObject({ request: { resourceVersion: '10', resourceVersionMatch: 'NotOlderThan' } });
    expect(start({ ...mem, consistent: true }, env())).toMatchObject({ request: { resourceVersion: '', limit: 500 } });
  });
});

const failed = (error: unknown): Result<Pod> => ({ kind: 'failed', error });
const event = (e: unknown): Result<Pod> => ({ kind: 'event', event: e as never });
const decode = new KubeInformerError(ErrorCodes.WATCH_DECODE, 'malformed line');
const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
const tooLarge = new ApiStatusError(504, 'Too large resource version: 40, current: 39');

/** `[label, result, next kind (`waiting·cycle`/`waiting·watch` for waits), action reported or '']` */
type Case = [string, Result<Pod>, string, string];

function outcome(from: State<Pod>, r: Result<Pod>): [string, string] {
  const t = step(from, r, env({ storedVersion: (k) => (k === 'cached' ? '50' : undefined) }));
  const kind = t.state.kind === 'waiting' ? `waiting·${t.state.then}` : t.state.kind;
  return [kind, errors(t).map((e) => e.action).join(',')];
}

describe('the reflector state machine, the variants that decide each recovery', () => {
  const cases: Record<string, [State<Pod>, Case[]]> = {
    'a list': [states.listing, [
      ['410 at a version: at once again at ""', failed(gone()), 'listing', 'relist'],
      ['too large resource version: at once again at ""', failed(tooLarge), 'listing', 'relist'],
      ['a 500: back off, relist', failed(new ApiStatusError(500, 'etcd')), 'waiting·cycle', 'relist'],
      ['no answer in time', { kind: 'timedOut', afterMs: 1 }, 'waiting·cycle', 'relist'],
      ['a first page with a continue token', { kind: 'page', page: podList('12', [], 'c1') }, 'paging', ''],
      ['an answer older than held: refused', { kind: 'page', page: podList('9', []) }, 'waiting·cycle', 'relist'],
      ['an answer without a version: warned, then watched', { kind: 'page', page: podList('', []) }, 'watchOpening', 'warn'],
    ]],
    'a list at ""': [{ ...states.listing, request: { resourceVersion: '' } } as State<Pod>, [
      ['410 again: back off', failed(gone()), 'waiting·cycle', 'relist'],
      ['older than held: adopted (etcd restored)', { kind: 'page', page: podList('9', []) }, 'watchOpening', ''],
    ]],
    'a next page': [states.paging, [
      ['410: the token expired, one unpaginated list', failed(gone()), 'refetching', ''],
      ['another token', { kind: 'page', page: podList('12', [], 'c2') }, 'paging', ''],
    ]],
    'a watch from "0" (its synthetic ADDED events are not adopted)': [{ ...states.watching, session: { fromStart: false, sawNonAdded: false, delivered: false } } as State<Pod>, [
      ['an ADDED older than the cached copy: rejected', event({ type: 'ADDED', object: pod('cached', '11') }), 'waiting·cycle', 'relist'],
      ['an ADDED newer than the cached copy', event({ type: 'ADDED', object: pod('cached', '60') }), 'watching', ''],
    ]],
    'a watch after unadopted events newer than held': [{ ...states.watching, mem: { ...mem, versions: { held: '10', observed: '55', enabled: true } } } as State<Pod>, [
      ['a change newer than held but older than the cached copy: rejected', event({ type: 'MODIFIED', object: pod('cached', '11') }), 'waiting·cycle', 'relist'],
      ['a change newer than the cached copy', event({ type: 'MODIFIED', object: pod('cached', '60') }), 'watching', ''],
    ]],
    'a watch request': [states.watchOpening, [
      ['connection refused: back off, re-watch', failed(connRefused()), 'waiting·watch', 'rewatch'],
      ['429: back off, re-watch', failed(new ApiStatusError(429, 'slow down')), 'waiting·watch', 'rewatch'],
      ['410 from a server that answers: relist at once', failed(gone()), 'listing', 'relist'],
      ['no connection in time: re-watch', { kind: 'timedOut', afterMs: 1 }, 'waiting·watch', 'rewatch'],
    ]],
    'a watch': [states.watching, [
      ['a change newer than held', event({ type: 'ADDED', object: pod('b', '11') }), 'watching', ''],
      ['a change at the held version: rejected', event({ type: 'DELETED', object: pod('b', '10') }), 'waiting·cycle', 'relist'],
      ['a change newer than held: applied, the held version bounds every cached copy', event({ type: 'MODIFIED', object: pod('cached', '11') }), 'watching', ''],
      ['a bookmark', event(bookmark('20')), 'watching', ''],
      ['an older bookmark: rejected', event(bookmark('5')), 'waiting·cycle', 'relist'],
      ['an ERROR 410: relist at once', event(statusEvent(410, 'Expired')), 'listing', 'relist'],
      ['an ERROR 410 with the old reason Gone: relist at once', event(statusEvent(410, 'Gone')), 'listing', 'relist'],
      ['an ERROR 429', event(statusEvent(429, 'TooManyRequests')), 'waiting·watch', 'rewatch'],
      ['an ERROR 500', event(statusEvent(500, 'InternalError')), 'waiting·cycle', 'relist'],
      ['an unknown type', event({ type: 'SURPRISE', object: pod('b', '11') }), 'waiting·watch', 'rewatch'],
      ['an object without a name', event({ type: 'ADDED', object: { metadata: {} } }), 'waiting·watch', 'rewatch'],
      ['a server-side Table: skipped', event({ type: 'ADDED', object: { apiVersion: 'meta.k8s.io/v1', kind: 'Table', metadata: { name: 't' } } }), 'watching', 'skip'],
      ['a malformed line', failed(decode), 'waiting·watch', 'rewatch'],
      ['a reset connection', failed(reset), 'waiting·watch', 'rewatch'],
      ['a 410 thrown by the stream: relist at once', failed(gone()), 'listing', 'relist'],
      ['a very short, empty watch', { kind: 'closed', lastedMs: 10, received: 0, requestedTimeoutMs: 300_000 }, 'waiting·cycle', 'relist'],
      ['an empty watch ended at its own short timeout', { kind: 'closed', lastedMs: 995, received: 0, requestedTimeoutMs: 1000 }, 'watchOpening', ''],
      ['a silent watch', { kind: 'timedOut', afterMs: 330_000 }, 'watchOpening', 'rewatch'],
      ['a resync that throws', { kind: 'storeFailed', error: new Error('x'), op: 'resync' }, 'waiting·cycle', 'relist'],
    ]],
    'a watch opened right after a relist forced by a 410': [{ ...states.watching, mem: { ...mem, expiredRelist: true } } as State<Pod>, [
      ['an ERROR 410 again: back off, relist', event(statusEvent(410, 'Expired')), 'waiting·cycle', 'relist'],
      ['a 410 thrown again: back off, relist', failed(gone()), 'waiting·cycle', 'relist'],
      ['a change: applied', event({ type: 'MODIFIED', object: pod('a', '11') }), 'watching', ''],
    ]],
    'a watch request right after a relist forced by a 410': [{ ...states.watchOpening, mem: { ...mem, expiredRelist: true } } as State<Pod>, [
      ['410 again: back off, relist', failed(gone()), 'waiting·cycle', 'relist'],
    ]],
    'a streaming list': [states.streaming, [
      ['an initial event', event({ type: 'ADDED', object: pod('b', '3') }), 'streaming', ''],
      ['a plain bookmark', event(bookmark('11')), 'streaming', ''],
      ['the initial-events-end bookmark', event(bookmark('12', true)), 'watching', ''],
      ['an older initial-events-end bookmark', event(bookmark('5', true)), 'listing', 'fallback'],
      ['an ERROR', event(statusEvent(410, 'Expired')), 'listing', 'fallback'],
      ['an invalid event', event({ type: 'ADDED', object: { metadata: {} } }), 'listing', 'fallback'],
    ]],
  };
  for (const [what, [from, list]] of Object.entries(cases)) {
    it(`handles each outcome of ${what}`, () => {
      expect(list.map(([label, r]) => [label, ...outcome(from, r)])).toEqual(list.map(([label, , kind, action]) => [label, kind, action]));
    });
  }

  it('cannot resume a watch from "0" after adopting nothing: the cycle ends (WATCH_UNRESUMABLE)', () => {
    const zero: Memory = { ...INITIAL_MEMORY, versions: { held: '0', observed: '4', enabled: true } };
    const t = step({ kind: 'watching', mem: zero, session: { fromStart: false, sawNonAdded: false, delivered: true } }, { kind: 'closed', lastedMs: 5000, received: 2, requestedTimeoutMs: 300_000 }, env());
    expect(t.state).toMatchObject({ kind: 'waiting', then: 'cycle' });
    expect(errors(t).map((e) => [e.error.name, (e.error as KubeInformerError).code])).toEqual([['UnresumableWatchError', 'WATCH_UNRESUMABLE']]);
  });

  it('applies a change as store operations and moves the held version, without touching the given state', () => {
    const t = step(states.watching, event({ type: 'MODIFIED', object: pod('a', '15') }), env());
    expect(t.ops).toEqual([{ kind: 'update', object: pod('a', '15') }, { kind: 'resourceVersion', resourceVersion: '15' }]);
    expect(t.state.mem.versions.held).toBe('15');
    expect(states.watching.mem.versions.held).toBe('10');
    expect(t.reports).toEqual([{ kind: 'event', payload: { type: 'MODIFIED', key: 'a', resourceVersion: '15', outcome: 'applied' } }]);
  });

  it('collects a streaming list in order and replaces once at the bookmark', () => {
    let s: State<Pod> = { kind: 'streaming', mem: INITIAL_MEMORY, initial: undefined };
    for (const e of [{ type: 'ADDED', object: pod('a', '1') }, { type: 'ADDED', object: pod('b', '2') }, { type: 'DELETED', object: pod('a', '3') }, bookmark('3', true)]) {
      const t: Transition<Pod> = step(s, event(e), env());
      if (e.type !== 'BOOKMARK') expect(t.ops).toEqual([]);
      else expect(t.ops).toEqual([{ kind: 'replace', items: [pod('b', '2')], resourceVersion: '3' }]);
      s = t.state;
    }
    expect(s).toMatchObject({ kind: 'watching', session: { fromStart: true }, mem: { versions: { held: '3' } } });
  });

  it('turns the guard off with one warning on the first version that is not an integer', () => {
    const t = step(states.watching, event({ type: 'MODIFIED', object: pod('a', 'xyz') }), env());
    expect(errors(t).map((e) => [(e.error as KubeInformerError).code, e.phase, e.action])).toEqual([['INVALID_RESOURCE_VERSION', 'guard', 'warn']]);
    expect(t.state.mem.versions).toEqual({ held: 'xyz', observed: undefined, enabled: false });
    const next = step(t.state, event({ type: 'MODIFIED', object: pod('a', 'abc') }), env());
    expect(errors(next)).toEqual([]);
  });

  it('relists at once after a 410 from a server that answers, once: a server that answers 410 forever gets the backoff', () => {
    // The watch phase of a server that answers every watch with ERROR 410: one relist at once, then
    // each relist waits for a backoff sleep (its result is `slept`), however often the lists succeed.
    let s: State<Pod> = states.watchOpening;
    const path: string[] = [];
    let rv = 10;
    for (let i = 0; i < 20; i++) {
      const plan = planOf(s);
      let r: Result<Pod>;
      if (plan.kind === 'watch') r = { kind: 'opened' };
      else if (plan.kind === 'read') r = event(statusEvent(410, 'Expired'));
      else if (plan.kind === 'list') r = { kind: 'page', page: podList(String(++rv), []) };
      else r = { kind: 'slept' };
      const t = step(s, r, env());
      if (plan.kind === 'read') path.push(t.state.kind === 'waiting' ? 'ERROR 410 → backoff' : 'ERROR 410 → list at once');
      s = t.state;
    }
    expect(path.length).toBeGreaterThan(3);
    expect(path).toEqual(['ERROR 410 → list at once', ...path.slice(1).map(() => 'ERROR 410 → backoff')]);
  });

  it('forgets the forced relist once a watch carries an event: the next 410 relists at once again', () => {
    const forced = step(states.watching, event(statusEvent(410, 'Expired')), env()).state;
    expect(forced).toMatchObject({ kind: 'listing', request: { resourceVersion: '10' }, mem: { expiredRelist: true } });
    const listed = step(forced, { kind: 'page', page: podList('20', []) }, env()).state;
    const opened = step(listed, { kind: 'opened' }, env()).state;
    const delivered = step(opened, event(bookmark('21')), env()).state;
    expect(delivered).toMatchObject({ kind: 'watching', mem: { expiredRelist: false }, session: { delivered: true } });
    expect(step(delivered, event(statusEvent(410, 'Expired')), env()).state.kind).toBe('listing');
    // After a streamed list too: its initial state does not count, the first event after it does.
    const streamed = step(states.watching, event(statusEvent(410, 'Expired')), env({ useWatchList: true })).state;
    expect(streamed).toMatchObject({ kind: 'streamOpening', mem: { expiredRelist: true } });
    let s: State<Pod> = step(streamed, { kind: 'opened' }, env({ useWatchList: true })).state;
    s = step(s, event(bookmark('30', true)), env({ useWatchList: true })).state;
    expect(s).toMatchObject({ kind: 'watching', mem: { expiredRelist: true } });
    expect(step(s, event(statusEvent(410, 'Expired')), env({ useWatchList: true })).state).toMatchObject({ kind: 'waiting', then: 'cycle' });
    s = step(s, event({ type: 'MODIFIED', object: pod('a', '31') }), env({ useWatchList: true })).state;
    expect(s).toMatchObject({ kind: 'watching', mem: { expiredRelist: false } });
    // A relist that fails still backs off, as any failure.
    expect(step(forced, failed(new ApiStatusError(500, 'etcd')), env()).state).toMatchObject({ kind: 'waiting', then: 'cycle' });
  });

  it('reports a watch whose first event is an ERROR as refused (it never opened), and no other', () => {
    const refused = (from: State<Pod>, r: Result<Pod>): boolean => step(from, r, env()).reports.some((x) => x.kind === 'watchRefused');
    expect(refused(states.watching, event(statusEvent(410, 'Expired')))).toBe(true);
    expect(refused(states.watching, event(statusEvent(500, 'InternalError')))).toBe(true);
    const delivered: State<Pod> = { ...states.watching, session: { fromStart: true, sawNonAdded: true, delivered: true } } as State<Pod>;
    expect(refused(delivered, event(statusEvent(410, 'Expired')))).toBe(false);
    expect(refused(states.watching, event(bookmark('11')))).toBe(false);
  });

  it('plans each backoff sleep with what it defers: a relist or a re-watch', () => {
    expect(planOf(waitingForCycle)).toEqual({ kind: 'sleep', atLeastMs: 0, then: 'relist' });
    expect(planOf(states.waiting)).toEqual({ kind: 'sleep', atLeastMs: 0, then: 'rewatch' });
  });

  it('marks request failures apart from what the reflector decided on its own', () => {
    const flags = (from: State<Pod>, r: Result<Pod>): boolean[] => errors(step(from, r, env())).map((e) => e.requestFailed);
    expect(flags(states.listing, failed(new Error('down')))).toEqual([true]);
    expect(flags(states.listing, { kind: 'timedOut', afterMs: 1 })).toEqual([true]);
    expect(flags(states.watching, event(statusEvent(500, 'x')))).toEqual([true]);
    expect(flags(states.watching, { kind: 'timedOut', afterMs: 1 })).toEqual([false]);
    expect(flags(states.watching, event({ type: 'DELETED', object: pod('b', '9') }))).toEqual([false]);
    expect(flags(states.watching, { kind: 'storeFailed', error: new Error('x'), op: 'add' })).toEqual([false]);
  });
});

describe('a resource that is not served (onResourceMissing: absent)', () => {
  const absentEnv = env({ onResourceMissing: 'absent' });
  const notFound = (): Result<Pod> => ({ kind: 'failed', error: new ApiStatusError(404, 'GET /apis/example.com/v1/widgets: HTTP 404: the server could not find the requested resource') });

  it('turns absent on a list answered 404: the cache emptied once (deletes for what it held), one absent report, no error', () => {
    for (const from of [states.listing, states.paging, states.refetching]) {
      const t = step(from, notFound(), absentEnv);
      expect(t.state, from.kind).toMatchObject({ kind: 'absent', mem: { absent: true, consistent: true } });
      expect(t.ops, from.kind).toEqual([{ kind: 'replace', items: [], resourceVersion: '10' }]);
      expect(t.reports.map((r) => r.kind), from.kind).toEqual(['absent']);
      expect(t.reports[0]).toMatchObject({ payload: { neverListed: false, error: { message: expect.stringContaining('HTTP 404') as unknown } } });
    }
    // A reflector that never listed says so (a CRD not created yet, or a misspelt resource).
    const first = step({ kind: 'listing', mem: INITIAL_MEMORY, request: { resourceVersion: '0', limit: 500 } }, notFound(), absentEnv);
    expect(first.reports[0]).toMatchObject({ kind: 'absent', payload: { neverListed: true } });
    expect(first.ops).toEqual([{ kind: 'replace', items: [], resourceVersion: '' }]);
  });

  it('stays absent, with no effect, when the re-check is answered 404 again', () => {
    const absent = step(states.listing, notFound(), absentEnv).state;
    const recheck = step(absent, { kind: 'slept' }, absentEnv).state;
    expect(recheck).toMatchObject({ kind: 'listing', request: { resourceVersion: '', limit: 500 } });
    const again = step(recheck, notFound(), absentEnv);
    expect(again.state.kind).toBe('absent');
    expect(again.ops).toEqual([]);
    expect(again.reports).toEqual([]);
  });

  it('re-checks with a classic list (never a streaming one), and at once on a relist asked for', () => {
    const streamingEnv = env({ onResourceMissing: 'absent', useWatchList: true });
    expect(planOf(states.absent)).toEqual({ kind: 'sleep', atLeastMs: 0, then: 'recheck' });
    expect(step(states.absent, results.slept, streamingEnv).state.kind).toBe('listing');
    expect(step(states.absent, results.relistDue, streamingEnv).state).toMatchObject({ kind: 'listing', request: { resourceVersion: '' } });
  });

  it('leaves absent with the next complete list, which the store gets whole (the adds of a full reconcile)', () => {
    const absent = step(states.listing, notFound(), absentEnv).state;
    const listing = step(absent, results.slept, absentEnv).state;
    const back = step(listing, { kind: 'page', page: podList('40', [pod('a', '39'), pod('b', '40')]) }, absentEnv);
    expect(back.state).toMatchObject({ kind: 'watchOpening', mem: { absent: false, consistent: false } });
    expect(back.ops[0]).toMatchObject({ kind: 'replace', resourceVersion: '40' });
    expect(back.reports.map((r) => r.kind)).toEqual(['listed']);
  });

  it('lists at once, unreported, when a watch request is answered 404 (the list decides)', () => {
    for (const from of [states.watchOpening, states.streamOpening]) {
      const t = step(from, notFound(), absentEnv);
      expect(t.state, from.kind).toMatchObject({ kind: 'listing', request: { resourceVersion: '' } });
      expect(t.reports, from.kind).toEqual([]);
    }
  });

  it("keeps a 404 an error retried with backoff under 'retry' (the default) and in one cycle", () => {
    const retried = step(states.listing, notFound(), env());
    expect(retried.state).toMatchObject({ kind: 'waiting', then: 'cycle' });
    expect(errors(retried).map((e) => e.action)).toEqual(['relist']);
    const once = step(states.listing, notFound(), env({ onResourceMissing: 'absent', oneCycle: true }));
    expect(once.state.kind).toBe('stopped');
    expect(step(states.watchOpening, notFound(), env()).state).toMatchObject({ kind: 'waiting', then: 'cycle' });
  });
});
