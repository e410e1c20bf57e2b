// A seeded random walk over the pure state machine: thousands of plausible results for whatever the
// current state plans, with the machine's invariants checked after every step (no I/O, no clock).

import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/core/errors.js';
import { metaNamespaceKeyFunc } from '../../src/core/keys.js';
import { compareResourceVersion, isComparableResourceVersion } from '../../src/core/resource-version.js';
import { INITIAL_MEMORY, planOf, readsStream, resyncArmed, start, step } from '../../src/reflector/machine.js';
import type { State } from '../../src/reflector/machine.js';
import type { MachineEnv, Result } from '../../src/reflector/machine-types.js';
import { newest } from '../../src/reflector/versions.js';
import { watchedChange } from '../../src/reflector/watched-change.js';
import { asTransition, bookmark, connRefused, gone, pod, podList, seededRandom, statusEvent } from './helpers.js';
import type { Pod } from './helpers.js';

/** More seeds on demand: MACHINE_MODEL_SEEDS=500 npx vitest run test/reflector/machine-model.test.ts */
const SEEDS = Number(process.env.MACHINE_MODEL_SEEDS ?? 30);
const STEPS = 3000;
/** Watch events the reflector's short path took, over all walks (checked against step() each time). */
let shortPath = 0;

function walk(seed: number, visited: Set<string>): string[] {
  const rand = seededRandom(seed);
  const pick = <V>(xs: readonly V[]): V => xs[Math.floor(rand() * xs.length)];
  const env: MachineEnv<Pod> = {
    name: 'walk', keyFunc: metaNamespaceKeyFunc, expectedKind: undefined, expectedApiVersion: undefined,
    pageSize: seed % 3 === 0 ? 2 : undefined, useWatchList: seed % 2 === 0, oneCycle: false, onResourceMissing: 'retry', storedVersion: undefined,
  };
  let rv = 100;
  const near = (): string => String(Math.max(1, rv + Math.floor(rand() * 10) - 6));
  const errors = [gone(), connRefused(), new ApiStatusError(429, 'slow'), new ApiStatusError(500, 'etcd'), new Error('boom')];
  const violations: string[] = [];
  let state: State<Pod> = start(INITIAL_MEMORY, env);
  /** Relists taken at once (no backoff) since the last sleep or the last event a watch carried. */
  let atOnce = 0;
  for (let i = 0; i < STEPS && violations.length === 0; i++) {
    rv += Math.floor(rand() * 3);
    visited.add(state.kind);
    const plan = planOf(state);
    const bad = (what: string): void => void violations.push(`seed ${seed}, step ${i}, ${state.kind}: ${what}`);
    const held = state.mem.versions.held;
    if (plan.kind === 'watch' && !plan.streaming && plan.options.resourceVersion !== held) bad(`watch from ${plan.options.resourceVersion}, held ${held}`);
    if (plan.kind === 'list' && plan.options.continue === undefined && state.kind === 'listing') {
      const asked = plan.options.resourceVersion ?? '';
      const floor = newest(state.mem.versions);
      if (asked !== '' && asked !== '0' && isComparableResourceVersion(floor) && compareResourceVersion(asked, floor) < 0) bad(`list at ${asked}, newest ${floor}`);
      if (asked === '' && !state.mem.consistent) bad('a list at "" without a refused list before it');
    }
    let result: Result<Pod>;
    const r = rand();
    switch (plan.kind) {
      case 'list':
        if (r < 0.15) result = { kind: 'failed', error: pick(errors) };
        else if (r < 0.18) result = { kind: 'timedOut', afterMs: 1 };
        else result = { kind: 'page', page: podList(near(), [pod(`p${i}`, near())], rand() < 0.3 ? `c${i}` : undefined) };
        break;
      case 'watch':
        result = r < 0.2 ? { kind: 'failed', error: pick(errors) } : r < 0.23 ? { kind: 'timedOut', afterMs: 1 } : { kind: 'opened' };
        break;
      case 'read':
        if (r < 0.7) {
          const type = pick(['ADDED', 'MODIFIED', 'DELETED', 'ADDED', 'MODIFIED'] as const);
          result = { kind: 'event', event: { type, object: pod(pick(['a', 'b', 'c', 'd']), near()) } };
        } else if (r < 0.8) result = { kind: 'event', event: bookmark(near(), state.kind === 'streaming' && rand() < 0.5) };
        else if (r < 0.84) result = { kind: 'event', event: statusEvent(pick([410, 429, 500]), 'X') };
        else if (r < 0.9) result = { kind: 'closed', lastedMs: Math.floor(rand() * 2000), received: Math.floor(rand() * 2), requestedTimeoutMs: 1000 };
        else if (r < 0.94) result = { kind: 'timedOut', afterMs: 1 };
        else if (r < 0.97) result = { kind: 'failed', error: pick(errors) };
        else result = { kind: 'resyncDue' };
        break;
      case 'sleep':
        result = r < 0.3 && resyncArmed(state) ? { kind: 'resyncDue' } : { kind: 'slept' };
        break;
      case 'stop':
        bad('stopped without an abort');
        continue;
    }
    let t = step(state, result, env);
    if (state.kind === 'watching' && result.kind === 'event') {
      // The reflector's short path for the common event must agree with the table wherever it answers.
      const change = watchedChange(state, result.event, env);
      if (change !== undefined && !isDeepStrictEqual(asTransition(change), { state: t.state, ops: t.ops, reports: t.reports })) bad(`the short path differs from step() on ${result.event.type} at ${String(result.event.object.metadata?.resourceVersion)}`);
      if (change !== undefined) shortPath++;
    }
    if (t.ops.length > 0 && rand() < 0.03) t = step(state, { kind: 'storeFailed', error: new Error('store'), op: t.ops[0].kind }, env);
    for (const op of t.ops) {
      if ((op.kind === 'add' || op.kind === 'update' || op.kind === 'delete' || op.kind === 'resourceVersion') && state.kind !== 'watching') bad(`${op.kind} outside a watch`);
      if (op.kind === 'replace' && !['listing', 'paging', 'refetching', 'streaming'].includes(state.kind)) bad('replace outside a list');
      if (op.kind === 'resync' && !resyncArmed(state)) bad('resync outside the watch phase');
    }
    const accepted = t.reports.some((x) => x.kind === 'regression' && x.payload.accepted === true);
    const before = state.mem.versions;
    const after = t.state.mem.versions;
    if (before.enabled && after.enabled && before.held !== '' && after.held !== before.held && !accepted) {
      if (compareResourceVersion(after.held, before.held) < 0) bad(`held went back from ${before.held} to ${after.held}`);
    }
    if (t.state.kind === 'stopped') bad('stopped without an abort');
    if (readsStream(t.state) && !readsStream(state) && result.kind !== 'opened') bad(`reads a stream nobody opened (${result.kind})`);
    // No hot loop: a relist without backoff (after a 410 from a server that answers) is taken once,
    // then not again before a backoff sleep, or a watch that carried an event or lasted until it closed.
    const served = t.reports.some((x) => x.kind === 'bookmark' || (x.kind === 'event' && x.payload.type !== 'ERROR'));
    if (plan.kind === 'sleep' || served || (state.kind === 'watching' && result.kind === 'closed' && t.state.kind === 'watchOpening')) atOnce = 0;
    const relisted = t.reports.some((x) => x.kind === 'error' && x.payload.action === 'relist');
    if ((state.kind === 'watchOpening' || state.kind === 'watching') && (t.state.kind === 'listing' || t.state.kind === 'streamOpening') && relisted && ++atOnce > 1) bad('a second relist at once: a hot loop');
    state = t.state;
  }
  const abort = step(state, { kind: 'aborted' }, env);
  if (abort.state.kind !== 'stopped' || step(abort.state, { kind: 'slept' }, env).state !== abort.state) violations.push(`seed ${seed}: abort does not stop for good`);
  return violations;
}

describe('the reflector state machine, random walk', () => {
  it('keeps its invariants over thousands of plausible results: versions never go back, requests never ask older, effects stay in their states', () => {
    const violations: string[] = [];
    const visited = new Set<string>();
    for (let seed = 1; seed <= SEEDS && violations.length === 0; seed++) violations.push(...walk(seed, visited));
    expect(violations).toEqual([]);
    expect(shortPath).toBeGreaterThan(1000);
    expect([...visited].sort()).toEqual(['listing', 'paging', 'refetching', 'streamOpening', 'streaming', 'waiting', 'watchOpening', 'watching']);
  });
});
