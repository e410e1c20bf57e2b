import { describe, expect, it } from 'vitest';
import { ResourceState } from '../../src/testing/index.js';
import { fieldSelectorPredicate, labelSelectorPredicate } from '../../src/testing/selectors.js';
import { decodeContinue, encodeContinue } from '../../src/testing/state-paging.js';

const obj = (name: string, namespace = '', data: Record<string, unknown> = {}) => ({
  metadata: { name, ...(namespace ? { namespace } : {}) },
  data,
});

describe('ResourceState', () => {
  it('bumps one global resourceVersion on every change and writes it into the stored object', () => {
    const s = new ResourceState();
    const a = s.create('pods', obj('a', 'ns'));
    const b = s.create('configmaps', obj('b', 'ns'));
    const a2 = s.update('pods', obj('a', 'ns', { x: 1 }));
    expect([a.rv, b.rv, a2.rv]).toEqual([1, 2, 3]);
    expect(JSON.parse(a2.json).metadata.resourceVersion).toBe('3');
    expect(s.currentResourceVersion()).toBe(3);
  });

  it('assigns a uid on create and keeps it across updates and the final delete', () => {
    const s = new ResourceState();
    const a = s.create('pods', obj('a', 'ns'));
    expect(a.meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.update('pods', obj('a', 'ns')).meta.uid).toBe(a.meta.uid);
    expect(s.delete('pods', 'ns', 'a').meta.uid).toBe(a.meta.uid);
  });

  it('never lets a caller change stored objects through what it passed in', () => {
    const s = new ResourceState();
    const input = obj('a', 'ns', { x: 1 });
    s.create('pods', input);
    input.data.x = 2;
    (input.metadata as any).name = 'changed';
    expect(JSON.parse(s.get('pods', 'ns', 'a')!.json).data.x).toBe(1);
  });

  it('answers 409 AlreadyExists, 404 NotFound and 409 Conflict like the API server', () => {
    const s = new ResourceState();
    s.create('pods', obj('a', 'ns'));
    expect(() => s.create('pods', obj('a', 'ns'))).toThrow(expect.objectContaining({ statusCode: 409, reason: 'AlreadyExists' }));
    expect(() => s.update('pods', obj('b', 'ns'))).toThrow(expect.objectContaining({ statusCode: 404, reason: 'NotFound' }));
    expect(() => s.delete('pods', 'ns', 'b')).toThrow(expect.objectContaining({ statusCode: 404 }));
    expect(() => s.update('pods', obj('a', 'ns'), { expectResourceVersion: '7' })).toThrow(
      expect.objectContaining({ statusCode: 409, reason: 'Conflict' }),
    );
  });

  it('replays changes after a version and says expired once they were compacted away', () => {
    const s = new ResourceState();
    s.create('pods', obj('a'));
    s.update('pods', obj('a'));
    s.create('pods', obj('b'));
    expect(s.changesSince('pods', 1)!.map((c) => [c.type, c.rv])).toEqual([
      ['MODIFIED', 2],
      ['ADDED', 3],
    ]);
    s.compact(2);
    expect(s.changesSince('pods', 1)).toBeUndefined();
    expect(s.changesSince('pods', 2)!.map((c) => c.rv)).toEqual([3]);
  });

  it('forgets the oldest changes past the history limit', () => {
    const s = new ResourceState({ historyLimit: 2 });
    for (const n of ['a', 'b', 'c', 'd']) s.create('pods', obj(n));
    expect(s.replayFloor('pods')).toBe(2);
    expect(s.changesSince('pods', 1)).toBeUndefined();
    expect(s.changesSince('pods', 2)!.map((c) => c.rv)).toEqual([3, 4]);
  });

  it('pages in key order with a namespace range, continuing after a key', () => {
    const s = new ResourceState();
    for (const [ns, n] of [['b', 'x'], ['a', 'z'], ['a', 'y'], ['c', 'w']]) s.create('pods', obj(n, ns));
    const first = s.page('pods', { limit: 2 });
    expect(first.entries.map((e) => e.key)).toEqual(['a/y', 'a/z']);
    expect(first.remaining).toBe(2);
    const second = s.page('pods', { limit: 2, after: first.nextAfter });
    expect(second.entries.map((e) => e.key)).toEqual(['b/x', 'c/w']);
    expect(second.nextAfter).toBeUndefined();
    expect(s.page('pods', { namespace: 'a' }).entries.map((e) => e.key)).toEqual(['a/y', 'a/z']);
  });

  it('rebuilds the state at an older version from the history', () => {
    const s = new ResourceState();
    s.create('pods', obj('a', '', { v: 1 }));
    s.create('pods', obj('b'));
    s.update('pods', obj('a', '', { v: 2 }));
    s.delete('pods', '', 'b');
    s.create('pods', obj('c'));
    const at2 = s.page('pods', { atRv: 2 });
    expect(at2.entries.map((e) => [e.key, JSON.parse(e.json).data.v])).toEqual([
      ['a', 1],
      ['b', undefined],
    ]);
    s.compact(3);
    expect(() => s.page('pods', { atRv: 2 })).toThrow(expect.objectContaining({ statusCode: 410, reason: 'Expired' }));
  });

  it('matches a random sequence of writes against a plain model, at every past version and page size', () => {
    const seed = Number(process.env.SEED ?? 0x5eed);
    let x = seed;
    const rand = (n: number): number => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x % n;
    };
    const s = new ResourceState({ historyLimit: 400 });
    const snapshots = new Map<number, Map<string, number>>();
    const model = new Map<string, number>();
    try {
      for (let step = 0; step < 1500; step++) {
        const key = `ns${rand(3)}/o${rand(25)}`;
        const [ns, name] = key.split('/');
        const op = rand(10);
        if (op === 0) {
          s.compact(s.currentResourceVersion() - rand(50));
        } else if (!model.has(key)) {
          s.create('pods', obj(name, ns, { step }));
          model.set(key, step);
        } else if (op < 7) {
          s.update('pods', obj(name, ns, { step }));
          model.set(key, step);
        } else {
          s.delete('pods', ns, name);
          model.delete(key);
        }
        snapshots.set(s.currentResourceVersion(), new Map(model));
        if (step % 25 !== 0) continue;
        const atRv = Math.max(s.replayFloor('pods'), s.currentResourceVersion() - rand(200));
        const want = [...(snapshots.get(atRv) ?? new Map())].sort(([a], [b]) => (a < b ? -1 : 1));
        const limit = 1 + rand(10);
        const got: Array<[string, number]> = [];
        let after: string | undefined;
        for (;;) {
          const page = s.page('pods', { atRv, after, limit });
          got.push(...page.entries.map((e) => [e.key, JSON.parse(e.json).data.step] as [string, number]));
          if (page.nextAfter === undefined) break;
          expect(page.remaining).toBe(want.length - got.length);
          after = page.nextAfter;
        }
        expect(got).toEqual(want);
      }
    } catch (e) {
      throw new Error(`model test failed with SEED=${seed}: ${(e as Error).message}`, { cause: e });
    }
  });
});

describe('selectors', () => {
  const o = (labels: Record<string, string>) => ({ metadata: { name: 'n', namespace: 'ns', labels } });

  it('evaluates equality, set-based and existence label requirements', () => {
    const sel = labelSelectorPredicate('app=web, tier in (a, b),!legacy,env,track!=canary')!;
    expect(sel(o({ app: 'web', tier: 'a', env: 'x' }))).toBe(true);
    expect(sel(o({ app: 'web', tier: 'c', env: 'x' }))).toBe(false);
    expect(sel(o({ app: 'web', tier: 'a', env: 'x', legacy: '1' }))).toBe(false);
    expect(sel(o({ app: 'web', tier: 'a' }))).toBe(false);
    expect(sel(o({ app: 'web', tier: 'a', env: 'x', track: 'canary' }))).toBe(false);
    expect(labelSelectorPredicate('a notin (x)')!(o({}))).toBe(true);
    expect(labelSelectorPredicate('')).toBeUndefined();
  });

  it('rejects a label selector that does not parse with a 400 Status', () => {
    expect(() => labelSelectorPredicate('a in x')).toThrow(expect.objectContaining({ statusCode: 400 }));
  });

  it('evaluates field selectors on metadata and other dotted paths', () => {
    const sel = fieldSelectorPredicate('metadata.name=n,metadata.namespace!=kube-system')!;
    expect(sel(o({}))).toBe(true);
    expect(fieldSelectorPredicate('metadata.namespace==other')!(o({}))).toBe(false);
    expect(fieldSelectorPredicate('spec.nodeName=')!(o({}))).toBe(true);
  });

  it('round-trips continue tokens and rejects foreign ones', () => {
    expect(decodeContinue(encodeContinue({ rv: 7, after: 'ns/a' }))).toEqual({ rv: 7, after: 'ns/a' });
    expect(decodeContinue('not-a-token')).toBeUndefined();
  });
});
