// The short path for the common watch event (src/reflector/watched-change.ts) against step(): over every
// combination of watching state, memory, options and event built below, whenever the short path answers,
// step() gives the same next state, the same store operations and the same reports. The table stays the
// one source of behaviour; the short path only computes its most common row faster.

import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { metaNamespaceKeyFunc } from '../../src/core/keys.js';
import type { WatchEvent } from '../../src/listwatch/types.js';
import { INITIAL_MEMORY, step } from '../../src/reflector/machine.js';
import type { State } from '../../src/reflector/machine.js';
import type { MachineEnv } from '../../src/reflector/machine-types.js';
import type { Memory } from '../../src/reflector/requests.js';
import type { Versions } from '../../src/reflector/versions.js';
import { watchedChange } from '../../src/reflector/watched-change.js';
import { asTransition, harness, pod, podList, settle } from './helpers.js';
import type { Pod } from './helpers.js';

type Watching = Extract<State<Pod>, { kind: 'watching' }>;

const BIG = '123456789012345678901234567890';
const VERSIONS: Versions[] = [
  { held: '10', observed: undefined, enabled: true },
  { held: '10', observed: '5', enabled: true },
  { held: '10', observed: '10', enabled: true },
  { held: '10', observed: '15', enabled: true },
  { held: '', observed: undefined, enabled: true },
  { held: '', observed: '7', enabled: true },
  { held: '0', observed: undefined, enabled: true },
  { held: '10', observed: undefined, enabled: false },
  { held: 'opaque', observed: undefined, enabled: false },
  { held: BIG, observed: undefined, enabled: true },
];

function* watchingStates(): Generator<Watching> {
  for (const versions of VERSIONS) {
    for (const flags of [0, 1, 2, 3, 4]) {
      const mem: Memory = {
        ...INITIAL_MEMORY, versions, expiredRelist: flags === 1, repair: flags === 2, consistent: flags === 3, pagedCache: flags === 4,
      };
      for (let s = 0; s < 8; s++) {
        yield { kind: 'watching', mem, session: { fromStart: (s & 1) !== 0, sawNonAdded: (s & 2) !== 0, delivered: (s & 4) !== 0 } };
      }
    }
  }
}

const base: MachineEnv<Pod> = {
  name: 't', keyFunc: metaNamespaceKeyFunc, expectedKind: undefined, expectedApiVersion: undefined,
  pageSize: undefined, useWatchList: false, oneCycle: false, onResourceMissing: 'retry', storedVersion: undefined,
};
const ENVS: MachineEnv<Pod>[] = [
  base,
  { ...base, storedVersion: () => undefined },
  { ...base, storedVersion: () => '12' },
  { ...base, storedVersion: () => '20' },
  { ...base, storedVersion: () => 'opaque' },
  { ...base, expectedKind: 'Pod', expectedApiVersion: 'v1' },
  { ...base, keyFunc: (p) => `k/${p.metadata?.name ?? ''}` },
  { ...base, keyFunc: () => { throw new Error('no key'); } },
];

const RVS = [undefined, '', '0', '5', '9', '10', '11', '12', '15', '20', '011', '-3', 'opaque', BIG, `${BIG}1`];
const OBJECTS: unknown[] = [
  ...RVS.map((rv) => pod('a', rv)),
  pod('b', '11', { kind: 'Pod', apiVersion: 'v1' }),
  { kind: 'Service', apiVersion: 'v1', metadata: { name: 's', resourceVersion: '11' } },
  { kind: 'Pod', apiVersion: 'apps/v1', metadata: { name: 's', resourceVersion: '11' } },
  { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '11' } },
  { metadata: { resourceVersion: '11' } },
  { metadata: { name: 'n', namespace: 7, resourceVersion: '11' } },
  { metadata: { name: 'x', resourceVersion: 11 } },
  { metadata: null },
  null,
  'a string',
];
const TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR', 'NONSENSE', undefined];

/** Every case: a description of each mismatch, and how many cases the short path took. */
function compareAll(): { mismatches: string[]; taken: number; cases: number } {
  const mismatches: string[] = [];
  let taken = 0;
  let cases = 0;
  for (const state of watchingStates()) {
    for (const [e, env] of ENVS.entries()) {
      for (const type of TYPES) {
        for (const object of OBJECTS) {
          cases++;
          const event = { type, object } as unknown as WatchEvent<Pod>;
          const change = watchedChange(state, event, env);
          if (change === undefined) continue;
          taken++;
          const t = step(state, { kind: 'event', event }, env);
          const fast = asTransition(change);
          const general = { state: t.state, ops: t.ops, reports: t.reports };
          if (!isDeepStrictEqual(fast, general) || (t.ops[0] as { object?: unknown }).object !== object) {
            mismatches.push(`${JSON.stringify({ mem: state.mem, session: state.session, env: e, type, object })}:\n  fast ${JSON.stringify(fast)}\n  step ${JSON.stringify(general)}`);
          }
        }
      }
    }
  }
  return { mismatches, taken, cases };
}

describe('the short path for the common watch event', () => {
  it('has exactly step()\'s effects whenever it answers, over every state, option and event combination', () => {
    const { mismatches, taken, cases } = compareAll();
    expect(mismatches.slice(0, 3)).toEqual([]);
    // Not vacuous: a good part of the combinations are the common case.
    expect(cases).toBeGreaterThan(100_000);
    expect(taken).toBeGreaterThan(5_000);
  });

  it('takes the steady state of an open watch: ADDED, MODIFIED and DELETED newer than held', () => {
    const state: Watching = {
      kind: 'watching', mem: { ...INITIAL_MEMORY, versions: { held: '10', observed: undefined, enabled: true } },
      session: { fromStart: true, sawNonAdded: true, delivered: true },
    };
    for (const type of ['ADDED', 'MODIFIED', 'DELETED'] as const) {
      const change = watchedChange(state, { type, object: pod('a', '11') }, base);
      expect(change).toMatchObject({ type, key: 'a', resourceVersion: '11', state: { kind: 'watching', mem: { versions: { held: '11' } } } });
      // The session is kept as it is: nothing per event beyond the version.
      expect(change?.state.kind === 'watching' && change.state.session).toBe(state.session);
    }
  });

  it('leaves to step() what the guard must judge: a stale event, an old one, one without a version', () => {
    const state: Watching = {
      kind: 'watching', mem: { ...INITIAL_MEMORY, versions: { held: '10', observed: undefined, enabled: true } },
      session: { fromStart: true, sawNonAdded: true, delivered: true },
    };
    for (const rv of ['10', '9', '', undefined, 'opaque']) {
      expect(watchedChange(state, { type: 'MODIFIED', object: pod('a', rv) }, base)).toBeUndefined();
    }
  });
});

describe('a reflector on the short path', () => {
  it('relists when the store refuses the version of a watched change, holding the version it had (incident 2)', async () => {
    const h = harness();
    h.lw.lists.push(podList('10', []), podList('12', [pod('a', '11')]));
    h.store.failNext.resourceVersion = new Error('version refused');
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '11') });
    await settle();
    expect(h.errors.map((e) => [e.error.message, e.context.phase, e.context.action])).toEqual([['version refused', 'store', 'relist']]);
    expect(h.reflector.lastSyncResourceVersion()).toBe('10');
    await h.clock.advance(800);
    expect(h.store.snapshot()).toEqual({ a: '11' });
    expect(h.reflector.lastSyncResourceVersion()).toBe('12');
    await h.stop();
  });

  it('reports and counts each applied change as step() would', async () => {
    const h = harness();
    const seen: unknown[] = [];
    h.reflector.events.on('event', (e) => seen.push(e));
    h.lw.lists.push(podList('10', []));
    h.start();
    await settle();
    h.lw.current.push({ type: 'ADDED', object: pod('a', '11') }, { type: 'MODIFIED', object: pod('a', '12') }, { type: 'DELETED', object: pod('a', '13') });
    await settle();
    expect(seen).toEqual([
      { type: 'ADDED', key: 'a', resourceVersion: '11', outcome: 'applied' },
      { type: 'MODIFIED', key: 'a', resourceVersion: '12', outcome: 'applied' },
      { type: 'DELETED', key: 'a', resourceVersion: '13', outcome: 'applied' },
    ]);
    expect(h.store.ops).toEqual(['replace@10 []', 'add a@11', 'update a@12', 'delete a@13']);
    expect(h.store.rvUpdates).toEqual(['11', '12', '13']);
    expect(h.reflector.stats()).toMatchObject({ events: 3 });
    expect(h.reflector.lastSyncResourceVersion()).toBe('13');
    await h.stop();
  });
});
