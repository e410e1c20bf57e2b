// Controller priorities: the initial list low and a new object high (the restart storm), FIFO with `priority: false`,
// the reasons' priorities, and a priority or group function that fails — logged, counted, never a lost request.

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { Action, Controller, defaultPriority, Priority, type ControllerOptions, type ReconcileContext, type ReconcileReason } from '../../src/controller/index.js';
import { sourceHandler, type WatchSource } from '../../src/controller/sources.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { fixture, widget, widgets, type Widget } from './fixture.js';

failOnUnhandledRejections();

/** A controller over `n` cached widgets whose reconciles end when the test says (`next`). */
async function storm(n: number, options: ControllerOptions = {}) {
  const f = fixture();
  const source = f.source(widgets);
  for (let i = 0; i < n; i++) source.add(widget(`old-${i}`));
  const seen: Array<{ key: string; priority: number; reason: ReconcileReason }> = [];
  const open: Array<() => void> = [];
  const reconcile = (key: string, ctx: ReconcileContext<Widget>): Promise<Action> => {
    seen.push({ key, priority: ctx.priority, reason: ctx.reason });
    return new Promise((resolve) => open.push(() => resolve(Action.done())));
  };
  const controller = Controller.for(f.factory, widgets).build(reconcile, { clock: f.clock, logger: f.log.logger, ...options });
  f.factory.start(f.ac.signal);
  const running = controller.run(f.ac.signal);
  await f.factory.waitForCacheSync(f.ac.signal);
  await flushPromises(6);
  const next = async (): Promise<void> => {
    open.shift()!();
    await flushPromises(6);
  };
  return { f, source, seen, next, controller, stop: async () => (f.ac.abort(), open.splice(0).forEach((end) => end()), await running) };
}

describe('Controller priorities', () => {
  it('restart storm: the initial list is reconciled low; an object created meanwhile is reconciled next, high', async () => {
    const s = await storm(2000);
    await s.next();
    s.source.add(widget('new'));
    await flushPromises(6);
    await s.next();
    expect(s.seen.map((x) => x.key).slice(0, 3)).toEqual(['ns/old-0', 'ns/old-1', 'ns/new']);
    expect(s.seen[0]).toMatchObject({ priority: Priority.low, reason: { kind: 'watch', event: 'add', initial: true } });
    expect(s.seen[2]).toMatchObject({ priority: Priority.high, reason: { kind: 'watch', event: 'add', initial: false } });
    await s.stop();
  });

  it('priority: false keeps today’s order: the new object waits behind the initial list', async () => {
    const s = await storm(20, { priority: false });
    s.source.add(widget('new'));
    await flushPromises(6);
    for (let i = 0; i < 20; i++) await s.next();
    expect(s.seen.map((x) => x.key).indexOf('ns/new')).toBe(20);
    expect(new Set(s.seen.map((x) => x.priority))).toEqual(new Set([0]));
    await s.stop();
  });

  it('a priority function decides; one that throws or returns a non-number is logged and counted, and the request kept at the default priority', async () => {
    let calls = 0;
    const s = await storm(3, {
      priority: (key) => {
        calls++;
        if (key === 'ns/old-0') throw new Error('no priority for you');
        if (key === 'ns/old-1') return 'high' as unknown as number;
        return 42;
      },
    });
    for (let i = 0; i < 3; i++) await s.next();
    expect(calls).toBe(3);
    expect(s.seen.map((x) => [x.key, x.priority])).toEqual([
      ['ns/old-2', 42],
      ['ns/old-0', Priority.low],
      ['ns/old-1', Priority.low],
    ]);
    expect(s.controller.stats().hookFailures).toBe(2);
    expect(s.f.log.lines.filter((l) => l.startsWith('error:') && l.includes('option priority'))).toEqual([
      expect.stringContaining('threw: no priority for you for ns/old-0; the request keeps the default priority -100'),
      expect.stringContaining('returned "high", not a finite number for ns/old-1'),
    ]);
    await s.stop();
  });

  it('concurrencyGroups: a keyOf that throws or returns a non-string is logged and counted; the key still runs, in no group', async () => {
    const f = fixture();
    const source = f.source(widgets);
    for (const name of ['a', 'b', 'c']) source.add(widget(name));
    const seen: string[] = [];
    const keyOf = (key: string): string => {
      if (key === 'ns/a') throw new Error('bad group');
      return (key === 'ns/b' ? undefined : 'one') as string;
    };
    const controller = Controller.for(f.factory, widgets).build(
      async (key) => {
        seen.push(key);
        return Action.done();
      },
      { clock: f.clock, logger: f.log.logger, concurrency: 3, concurrencyGroups: { keyOf } },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    expect(seen.sort()).toEqual(['ns/a', 'ns/b', 'ns/c']);
    expect(controller.stats().hookFailures).toBe(2);
    expect(f.log.lines.filter((l) => l.includes('concurrencyGroups.keyOf'))).toEqual([
      expect.stringContaining('threw: bad group for ns/a; the key runs in no group'),
      expect.stringContaining('returned undefined, not a string for ns/b'),
    ]);
    f.ac.abort();
    await running;
  });

  it('refuses a priority option that is neither a function nor false, and a concurrencyGroups of the wrong shape, when built', () => {
    const f = fixture();
    const build = (o: object) => () => Controller.for(f.factory, widgets).build(async () => Action.done(), o as ControllerOptions);
    expect(build({ priority: true })).toThrow(/option priority must be a function \(key, reason\) => number, or false/);
    expect(build({ priority: Priority.low })).toThrow(/option priority must be a function/);
    expect(build({ concurrencyGroups: () => 'x' })).toThrow(/option concurrencyGroups must be an object/);
    expect(build({ concurrencyGroups: { keyOf: 'ns' } })).toThrow(/INVALID_OPTION|keyOf/);
  });

  it('defaultPriority: initial list, unchanged updates, resync, shard and namespace low; changes, deletes, requeue and schedule high', () => {
    const watch = (event: 'add' | 'update' | 'delete', initial = false, unchanged?: boolean): ReconcileReason => ({ kind: 'watch', role: 'for', resource: 'v1/pods', event, initial, unchanged });
    const low: ReconcileReason[] = [watch('add', true), watch('update', false, true), { kind: 'resync' }, { kind: 'shard' }, { kind: 'namespace' }];
    const high: ReconcileReason[] = [watch('add'), watch('update'), watch('delete'), { kind: 'requeue', afterMs: 5 }, { kind: 'schedule' }, { kind: 'retry', error: new Error('x') }];
    expect(low.map((r) => defaultPriority('k', r))).toEqual(low.map(() => Priority.low));
    expect(high.map((r) => defaultPriority('k', r))).toEqual(high.map(() => Priority.high));
  });

  it('an update with the same resourceVersion (a resync, a relist) is an unchanged update; a new resourceVersion is a change', () => {
    const reasons: ReconcileReason[] = [];
    const source = { role: 'for', resource: widgets, keys: () => ['ns/a'], predicates: [], cache: {} } as unknown as WatchSource;
    const handler = sourceHandler(source, (_key, reason) => reasons.push(reason));
    const at = (rv: string) => widget('a', { metadata: { name: 'a', namespace: 'ns', resourceVersion: rv } });
    handler.onUpdate!(at('5'), at('5'));
    handler.onUpdate!(at('5'), at('6'));
    expect(reasons.map((r) => r.kind === 'watch' && r.unchanged === true)).toEqual([true, true, false, false]);
  });
});
