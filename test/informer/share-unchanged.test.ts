// An update shares its unchanged parts with the cached object it replaces (shareUnchanged, default on).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { shareUnchanged } from '../../src/informer/perf/share-unchanged.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

const parsed = (v: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

describe('shareUnchanged', () => {
  it('makes every equal part of the new object the old one’s, and keeps the new object and its changed parts', () => {
    const prev = parsed({ metadata: { name: 'a', resourceVersion: '1', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i:1' }, { name: 'd', image: 'j:1' }] }, status: { phase: 'Running' } });
    const next = parsed({ metadata: { name: 'a', resourceVersion: '2', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i:1' }, { name: 'd', image: 'j:2' }] }, status: { phase: 'Running' } });
    const before = JSON.stringify(next);
    const prevCopy = JSON.stringify(prev);
    expect(shareUnchanged(prev, next)).toBe(false);
    const p = prev as any;
    const n = next as any;
    expect(n.status).toBe(p.status);
    expect(n.metadata.labels).toBe(p.metadata.labels);
    expect(n.metadata).not.toBe(p.metadata);
    expect(n.spec.containers).not.toBe(p.spec.containers);
    expect(n.spec.containers[0]).toBe(p.spec.containers[0]);
    expect(n.spec.containers[1]).not.toBe(p.spec.containers[1]);
    // Values never change, on either side.
    expect(JSON.stringify(next)).toBe(before);
    expect(JSON.stringify(prev)).toBe(prevCopy);
  });

  it('reports deep equality, and tells apart extra keys, missing keys, lengths, types and null', () => {
    expect(shareUnchanged(parsed({ a: [1, { b: 'x' }], c: null }), parsed({ a: [1, { b: 'x' }], c: null }))).toBe(true);
    expect(shareUnchanged({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(shareUnchanged({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(shareUnchanged({ a: 1, b: 2 }, { a: 1, c: 2 })).toBe(false);
    expect(shareUnchanged([1, 2], [1, 2, 3])).toBe(false);
    expect(shareUnchanged([1, 2, 3], [1, 2])).toBe(false);
    expect(shareUnchanged({ 0: 'a' }, ['a'])).toBe(false);
    expect(shareUnchanged(['a'], { 0: 'a' })).toBe(false);
    expect(shareUnchanged({ a: null }, { a: {} })).toBe(false);
    expect(shareUnchanged({ a: '1' }, { a: 1 })).toBe(false);
    // A key the old object only inherits is not one it has.
    expect(shareUnchanged({}, parsed({ toString: 'x' }))).toBe(false);
    expect(shareUnchanged({}, parsed({ constructor: {} }))).toBe(false);
  });

  it('never writes an own __proto__ key, and never calls an object holding one equal', () => {
    const prev = JSON.parse('{"x":{"__proto__":{"polluted":true}},"y":{"k":1}}') as any;
    const next = JSON.parse('{"x":{"__proto__":{"polluted":true}},"y":{"k":1}}') as any;
    expect(shareUnchanged(prev, next)).toBe(false);
    expect(Object.getPrototypeOf(next.x)).toBe(Object.prototype);
    expect(Object.hasOwn(next.x, '__proto__')).toBe(true);
    expect(next.y).toBe(prev.y);
    expect(({} as any).polluted).toBeUndefined();
  });

  it('walks no deeper than 100 levels: an object nested 20 000 deep shares nothing below, and does not overflow the stack', () => {
    const nest = (depth: number, leaf: unknown): unknown => {
      let v = leaf;
      for (let i = 0; i < depth; i++) v = { v };
      return v;
    };
    const prev = { deep: nest(20_000, 'x'), shallow: nest(99, 'y') } as any;
    const next = { deep: nest(20_000, 'x'), shallow: nest(99, 'y') } as any;
    expect(shareUnchanged(prev, next)).toBe(false);
    // Compared as booleans: a failing toBe would print the 20 000-deep objects.
    expect(next.deep === prev.deep).toBe(false);
    expect(next.shallow === prev.shallow).toBe(true);
  });

  it('leaves the parts of an object it may not change (frozen by its source) as they are', () => {
    const prev = parsed({ spec: { a: { b: 1 } }, status: { c: 2 } });
    const next = Object.freeze(parsed({ spec: { a: { b: 1 } }, status: { c: 3 } }));
    expect(() => shareUnchanged(prev, next)).not.toThrow();
    expect(next.spec).not.toBe(prev.spec);
  });
});

describe('SharedIndexInformer shares an update’s unchanged parts', () => {
  const podV = (rv: string, image: string, note: string): Pod =>
    ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'default', resourceVersion: rv, annotations: { note } }, spec: { containers: [{ name: 'c', image }] } }) as Pod;

  async function update(options: { shareUnchanged?: boolean; transform?: (p: Pod) => Pod }): Promise<{ oldObj: any; newObj: any; cached: any }> {
    const source = new FakeControllerSource<Pod>();
    source.add(podV('1', 'i:1', 'one'));
    const informer = new SharedIndexInformer<Pod>(source, { clock: new FakeClock(), logger: false, ...options });
    const seen: Array<{ oldObj: any; newObj: any }> = [];
    informer.addEventHandler({ onUpdate: (oldObj, newObj) => void seen.push({ oldObj, newObj }) });
    const stop = new AbortController();
    const done = informer.run(stop.signal);
    await informer.whenSynced();
    source.modify(podV('2', 'i:1', 'two'));
    await until(() => seen.length === 1, 'the update');
    stop.abort();
    await done;
    return { ...seen[0], cached: informer.getStore().getByKey('default/a') };
  }

  it('by default: the handler’s old and new objects share what did not change, and the cache holds the new one', async () => {
    const { oldObj, newObj, cached } = await update({});
    expect(cached).toBe(newObj);
    expect(newObj.spec).toBe(oldObj.spec);
    expect(newObj.metadata).not.toBe(oldObj.metadata);
    expect(newObj.metadata.annotations.note).toBe('two');
    expect(oldObj.metadata.annotations.note).toBe('one');
    expect(oldObj.metadata.resourceVersion).toBe('1');
  });

  it('shareUnchanged: false keeps them apart', async () => {
    const { oldObj, newObj } = await update({ shareUnchanged: false });
    expect(newObj.spec).not.toBe(oldObj.spec);
    expect(newObj.spec).toEqual(oldObj.spec);
  });

  it('objects a transform froze keep their own parts, and nothing throws', async () => {
    const freeze = (o: Pod): Pod => {
      const deep = (v: unknown): void => {
        if (typeof v === 'object' && v !== null) {
          Object.freeze(v);
          for (const c of Object.values(v)) deep(c);
        }
      };
      deep(o);
      return o;
    };
    const { oldObj, newObj } = await update({ transform: freeze });
    expect(newObj.spec).not.toBe(oldObj.spec);
    expect(newObj.spec).toEqual(oldObj.spec);
  });

  it('a handler that changes a part of the old object changes the cache: the mutation detector names it', async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.add(podV('1', 'i:1', 'one'));
    const informer = new SharedIndexInformer<Pod>(source, { clock, logger: false, detectMutations: true, mutationDetection: { periodMs: 1000 } });
    informer.addEventHandler({
      onUpdate: (oldObj) => {
        ((oldObj as any).spec.containers[0] as { image: string }).image = 'changed';
      },
    });
    const done = informer.run(new AbortController().signal).catch((e: unknown) => e);
    await informer.whenSynced();
    source.modify(podV('2', 'i:1', 'two'));
    await until(() => (informer.getStore().getByKey('default/a') as any)?.spec.containers[0].image === 'changed', 'the handler');
    await clock.advance(1000);
    const err = (await done) as Error & { code: string };
    expect(err.code).toBe('CACHE_MUTATED');
    expect(err.message).toContain('spec.containers');
  });
});
