// Model-based randomized test: random writes against a plain Map model, every query checked after each step.

import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/index.js';
import { IndexFuncError, IndexedStore, type IndexFunc } from '../../src/store/index.js';
import { seededRandom as prng } from '../../src/testing/random.js';


interface Obj {
  id: string;
  a: number;
  vals: number[];
}

const SEED = Number(process.env.STORE_MODEL_SEED ?? 20240611);
const STEPS = 10_000;
const KEYS = 30;
const MAX_INDICES = 8;

function run(seed: number): void {
  const rnd = prng(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  let epoch = 0; // read by "impure" index functions; changes between operations

  /** A random multi-valued index function; some throw on some objects, some depend on `epoch`. */
  const makeFunc = (): IndexFunc<Obj> => {
    const mul = 1 + int(5);
    const mod = 1 + int(6);
    const throwMod = rnd() < 0.4 ? 5 + int(20) : 0;
    const impure = rnd() < 0.25;
    return (o) => {
      if (throwMod !== 0 && o.a % throwMod === 0) throw new Error(`index refuses a=${o.a}`);
      const shift = impure ? epoch % 3 : 0;
      return o.vals.map((v) => `v${(v * mul + shift) % mod}`);
    };
  };
  const makeObj = (id: string): Obj => ({ id, a: int(200), vals: Array.from({ length: int(4) }, () => int(10)) });
  const keyOf = (o: unknown): string => (o as Obj).id;
  const ids = Array.from({ length: KEYS }, (_, i) => `k${i}`);

  const initial: Array<[string, IndexFunc<Obj>]> = [['i0', makeFunc()], ['i1', makeFunc()]];
  const store = new IndexedStore<Obj>(keyOf, Object.fromEntries(initial));
  // The model: objects, index functions in order, and each key's values per index as of its write.
  let items = new Map<string, Obj>();
  const funcs: Array<[string, IndexFunc<Obj>]> = [...initial];
  let recorded = new Map<string, Map<string, string[]>>(); // index name → key → values

  /** What the store should compute: the values, or the error it should throw. */
  const valuesFor = (fn: IndexFunc<Obj>, o: Obj): string[] | Error => {
    try {
      return Array.from(new Set(fn(o)));
    } catch (e) {
      return e as Error;
    }
  };
  const expectIndexError = (action: () => void, indexName: string, key: string): void => {
    let caught: unknown;
    try {
      action();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(IndexFuncError);
    expect(caught).toMatchObject({ code: ErrorCodes.INDEX_FUNC_FAILED, indexName, key });
  };

  /** Fails with both sides shown when `actual` and `expected` differ (cheap when they agree). */
  const same = (what: string, actual: unknown, expected: unknown): void => {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    if (a !== e) expect(`${what}: ${a}`).toBe(`${what}: ${e}`);
  };
  const sorted = (xs: Iterable<string>): string[] => Array.from(xs).sort();

  const check = (step: number): void => {
    same(`step ${step} listKeys`, sorted(store.listKeys()), sorted(items.keys()));
    const list = store.list();
    same(`step ${step} list size`, list.length, items.size);
    for (const o of list) if (items.get(o.id) !== o) same(`step ${step} list identity of ${o.id}`, o, items.get(o.id));
    for (const id of ids) {
      if (store.getByKey(id) !== items.get(id)) same(`step ${step} getByKey(${id})`, store.getByKey(id), items.get(id));
      const got = store.get({ id, a: 0, vals: [] });
      if (got !== items.get(id)) same(`step ${step} get(${id})`, got, items.get(id));
    }
    same(`step ${step} getIndexers`, Object.keys(store.getIndexers()), funcs.map(([n]) => n));
    for (const [name] of funcs) {
      const buckets = new Map<string, string[]>();
      for (const [k, vals] of recorded.get(name)!) for (const v of vals) buckets.set(v, [...(buckets.get(v) ?? []), k]);
      same(`step ${step} listIndexFuncValues(${name})`, sorted(store.listIndexFuncValues(name)), sorted(buckets.keys()));
      for (let v = 0; v < 6; v++) {
        const expected = sorted(buckets.get(`v${v}`) ?? []);
        same(`step ${step} indexKeys(${name}, v${v})`, store.indexKeys(name, `v${v}`), expected);
        const objs = store.byIndex(name, `v${v}`);
        same(`step ${step} byIndex(${name}, v${v})`, sorted(objs.map((o) => o.id)), expected);
        for (const o of objs) if (o !== items.get(o.id)) same(`step ${step} byIndex identity`, o, items.get(o.id));
      }
    }
    // index(name, probe): the union of the probe's buckets, or the index function's error.
    const [probeIndex, probeFn] = pick(funcs);
    const probe = makeObj('probe');
    const probeVals = valuesFor(probeFn, probe);
    if (probeVals instanceof Error) {
      expectIndexError(() => store.index(probeIndex, probe), probeIndex, 'probe');
    } else {
      const expected = new Set<string>();
      for (const [k, vals] of recorded.get(probeIndex)!) if (vals.some((v) => probeVals.includes(v))) expected.add(k);
      const got = store.index(probeIndex, probe).map((o) => o.id);
      same(`step ${step} index(${probeIndex}, probe)`, sorted(got), sorted(expected));
      same(`step ${step} index(${probeIndex}, probe) has no duplicates`, got.length, expected.size);
    }
    if (step % 100 === 0) {
      expect(() => store.byIndex('missing', 'v0')).toThrow(expect.objectContaining({ code: ErrorCodes.UNKNOWN_INDEX }));
    }
  };

  for (const [name] of funcs) recorded.set(name, new Map());
  let snapshot = store.list();
  let snapshotCopy = [...snapshot];
  for (let step = 0; step < STEPS; step++) {
    const r = rnd();
    if (r < 0.4) {
      // add or update (an upsert either way)
      const o = makeObj(pick(ids));
      const vals = funcs.map(([n, fn]) => [n, valuesFor(fn, o)] as const);
      const failed = vals.find(([, v]) => v instanceof Error);
      if (failed) {
        expectIndexError(() => (rnd() < 0.5 ? store.add(o) : store.update(o)), failed[0], o.id);
      } else {
        if (rnd() < 0.5) store.add(o);
        else store.update(o);
        items.set(o.id, o);
        for (const [n, v] of vals) recorded.get(n)!.set(o.id, v as string[]);
      }
    } else if (r < 0.6) {
      const id = pick(ids);
      store.delete({ id, a: 0, vals: [] });
      items.delete(id);
      for (const m of recorded.values()) m.delete(id);
    } else if (r < 0.65) {
      // replace: a later item with the same key wins; indices are computed index by index.
      const list = Array.from({ length: int(12) }, () => makeObj(pick(ids)));
      const next = new Map(list.map((o) => [o.id, o]));
      let failure: [string, string] | undefined;
      const nextRecorded = new Map<string, Map<string, string[]>>();
      for (const [n, fn] of funcs) {
        const m = new Map<string, string[]>();
        for (const [k, o] of next) {
          const v = valuesFor(fn, o);
          if (v instanceof Error) {
            failure ??= [n, k];
            break;
          }
          m.set(k, v);
        }
        if (failure) break;
        nextRecorded.set(n, m);
      }
      if (failure) {
        expectIndexError(() => store.replace(list, String(step)), failure[0], failure[1]);
      } else {
        store.replace(list, String(step));
        items = next;
        recorded = nextRecorded;
      }
    } else if (r < 0.68 && funcs.length < MAX_INDICES) {
      // addIndexers: sometimes with a conflicting name
      const conflict = rnd() < 0.3;
      const name = conflict ? pick(funcs)[0] : `i${funcs.length}`;
      const fn = makeFunc();
      if (conflict) {
        expect(() => store.addIndexers({ [name]: fn })).toThrow(expect.objectContaining({ code: ErrorCodes.INDEXER_CONFLICT }));
      } else {
        const m = new Map<string, string[]>();
        let failedKey: string | undefined;
        for (const [k, o] of items) {
          const v = valuesFor(fn, o);
          if (v instanceof Error) {
            failedKey = k;
            break;
          }
          m.set(k, v);
        }
        if (failedKey !== undefined) {
          expectIndexError(() => store.addIndexers({ [name]: fn }), name, failedKey);
        } else {
          store.addIndexers({ [name]: fn });
          funcs.push([name, fn]);
          recorded.set(name, m);
        }
      }
    } else if (r < 0.72 && items.size > 0) {
      // A user bug: change a cached object in place. The model keeps the values recorded at write time.
      const o = pick([...items.values()]);
      o.vals = Array.from({ length: int(4) }, () => int(10));
      o.a = int(200);
    } else if (r < 0.8) {
      epoch++;
    } else {
      store.resync();
    }
    if (snapshot.length !== snapshotCopy.length || snapshot.some((o, i) => o !== snapshotCopy[i])) {
      expect(snapshot).toEqual(snapshotCopy);
    }
    if (rnd() < 0.1) {
      snapshot = store.list();
      snapshotCopy = [...snapshot];
    }
    check(step);
  }
}

describe('IndexedStore against a Map model', () => {
  it(`agrees with the model after each of ${STEPS} random operations (seed ${SEED})`, () => {
    try {
      run(SEED);
    } catch (e) {
      const err = e as Error;
      err.message = `model test failed with seed ${SEED} (rerun with STORE_MODEL_SEED=${SEED}): ${err.message}`;
      throw err;
    }
  });
});
