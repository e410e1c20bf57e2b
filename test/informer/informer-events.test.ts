// informer.on(...): client-node's event names, with the informer's guarantees (own buffer per
// listener, a throwing listener stops the informer: kubernetes #93641).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ApiStatusError } from '../../src/core/errors.js';
import { DeletedFinalStateUnknown } from '../../src/core/keys.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { deferred, failOnUnhandledRejections, pod, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

function setup(): { clock: FakeClock; source: FakeControllerSource<Pod>; informer: SharedIndexInformer<Pod>; ac: AbortController } {
  const clock = new FakeClock();
  const source = new FakeControllerSource<Pod>();
  const informer = new SharedIndexInformer<Pod>(source, { clock, logger: false });
  return { clock, source, informer, ac: new AbortController() };
}

describe('informer.on(...)', () => {
  it("'add' gets each object with isInInitialList, 'update' the new object then the old, 'delete' the last state", async () => {
    const { source, informer, ac } = setup();
    source.add(pod('a'));
    const seen: string[] = [];
    informer
      .on('add', (obj, initial) => void seen.push(`add ${obj.metadata.name} ${initial}`))
      .on('update', (obj, old) => void seen.push(`update ${obj.metadata.labels?.v ?? '-'} from ${old.metadata.labels?.v ?? '-'}`))
      .on('delete', (obj) => void seen.push(`delete ${obj instanceof DeletedFinalStateUnknown ? 'tombstone' : obj.metadata.name}`));
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    source.add(pod('b'));
    source.modify(pod('a', { labels: { v: '2' } }));
    source.delete(pod('b'));
    await until(() => seen.length === 4);
    expect(seen).toEqual(['add a true', 'add b false', 'update 2 from -', 'delete b']);
    ac.abort();
    await done;
  });

  it("'change' fires for adds and updates, not deletes", async () => {
    const { source, informer, ac } = setup();
    const seen: string[] = [];
    informer.on('change', (obj) => void seen.push(`${obj.metadata.name}@${obj.metadata.resourceVersion}`));
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    source.add(pod('a'));
    source.modify(pod('a', { labels: { v: '2' } }));
    source.delete(pod('a'));
    await until(() => seen.length === 2);
    expect(seen.map((s) => s.split('@')[0])).toEqual(['a', 'a']);
    ac.abort();
    await done;
  });

  it("'connect' fires when a watch opens and 'synced' once the cache is filled", async () => {
    const { source, informer, ac } = setup();
    source.add(pod('a'));
    const seen: string[] = [];
    informer.on('connect', () => void seen.push('connect')).on('synced', () => void seen.push(`synced ${informer.lister().list().length}`));
    const done = informer.run(ac.signal);
    await until(() => seen.includes('connect') && seen.some((s) => s.startsWith('synced')));
    expect(seen).toContain('synced 1');
    ac.abort();
    await done;
  });

  it("'synced' fires after the initial objects reached every 'add' listener registered before it (issue 24 finding 7)", async () => {
    const { source, informer, ac } = setup();
    for (let i = 0; i < 50; i++) source.add(pod(`p${i}`));
    let fast = 0;
    let slow = 0;
    const gate = deferred();
    const counts: string[] = [];
    informer
      .on('add', () => void fast++)
      .on('add', async () => {
        await gate.promise; // a listener still busy with the first object when the cache has synced
        slow++;
      })
      .on('synced', () => void counts.push(`fast ${fast} slow ${slow}`));
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    await until(() => fast === 50);
    expect(counts).toEqual([]); // the slow listener has not had the initial objects yet
    gate.resolve();
    await until(() => counts.length === 1);
    expect(counts).toEqual(['fast 50 slow 50']);
    ac.abort();
    await done;
  });

  it("'synced' is not called when the informer stops before the 'add' listeners got the initial objects", async () => {
    const { source, informer, ac } = setup();
    source.add(pod('a'));
    const gate = deferred();
    const seen: string[] = [];
    informer.on('add', () => gate.promise).on('synced', () => void seen.push('synced'));
    const done = informer.run(ac.signal);
    await informer.whenSynced();
    ac.abort();
    gate.resolve();
    await done;
    await until(() => true);
    expect(seen).toEqual([]);
  });

  it("'error' tells of each list/watch failure while the informer keeps retrying", async () => {
    const { clock, source, informer, ac } = setup();
    source.listError = new ApiStatusError(500, 'etcd leader changed');
    const errors: Error[] = [];
    informer.on('error', (err) => void errors.push(err));
    const done = informer.run(ac.signal);
    await until(() => errors.length === 1);
    expect(errors[0].message).toBe('etcd leader changed');
    source.listError = undefined;
    for (let i = 0; i < 10 && !informer.hasSynced(); i++) await clock.advance(1000);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.isStopped()).toBe(false);
    ac.abort();
    await done;
  });

  it('off() removes a listener; the same function added twice is called twice until removed', async () => {
    const { source, informer, ac } = setup();
    let calls = 0;
    const count = (): void => {
      calls++;
    };
    informer.on('add', count).on('add', count);
    expect(informer.handlerCount()).toBe(2);
    informer.off('add', count);
    expect(informer.handlerCount()).toBe(1);
    informer.off('connect', () => {}); // harmless
    const done = informer.run(ac.signal);
    source.add(pod('a'));
    await until(() => calls === 1);
    informer.off('add', count);
    expect(informer.handlerCount()).toBe(0);
    ac.abort();
    await done;
    expect(calls).toBe(1);
  });

  it('gives each object listener its own buffer: a stuck one does not hold back another', async () => {
    const { source, informer, ac } = setup();
    const stuck = deferred();
    let fast = 0;
    informer.on('add', () => stuck.promise).on('add', () => void fast++);
    const done = informer.run(ac.signal);
    for (let i = 0; i < 50; i++) source.add(pod(`p${i}`));
    await until(() => fast === 50);
    expect(informer.health().handlers.map((h) => [h.name, h.backlog])).toEqual([
      ['on-add-1', 49],
      ['on-add-2', 0],
    ]);
    stuck.resolve();
    ac.abort();
    await done;
  });

  for (const event of ['add', 'synced', 'connect', 'error'] as const) {
    it(`stops the informer when an '${event}' listener throws: run() rejects with HANDLER_FAILED`, async () => {
      const { clock, source, informer, ac } = setup();
      source.add(pod('a'));
      if (event === 'error') source.listError = new ApiStatusError(500, 'boom');
      informer.on(event, () => {
        throw new Error(`${event} listener broke`);
      });
      const done = informer.run(ac.signal).catch((e: unknown) => e);
      await clock.advance(1000);
      const err = (await done) as Error & { code: string; cause: Error };
      expect(err.code).toBe('HANDLER_FAILED');
      expect(err.cause.message).toBe(`${event} listener broke`);
      expect(informer.isStopped()).toBe(true);
    });
  }

  it('rejects an unknown event name and a listener that is not a function', () => {
    const { informer } = setup();
    const untyped = informer.on.bind(informer) as (event: string, listener: unknown) => unknown;
    expect(() => untyped('added', () => {})).toThrow(/unknown event 'added'/);
    expect(() => informer.on('add', 'nope' as never)).toThrow(/must be a function/);
  });
});
