// Model-based randomized test: thousands of random DeltaFIFO operations checked against a plain model.

import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown } from '../../src/core/index.js';
import { DeltaFIFO, type DeltaType, type KeyListerGetter } from '../../src/fifo/index.js';
import { fmt, obj, prng, type FifoObj } from './helpers.js';

type Obj = FifoObj | DeletedFinalStateUnknown<FifoObj>;
interface ModelDelta { type: DeltaType; object: Obj }
interface ModelEntry { key: string; deltas: ModelDelta[] }

/** The expected queue, written as plainly as possible from the documented semantics. */
class Model {
  queue: ModelEntry[] = [];
  populated = false;
  initial = 0;
  constructor(readonly known: Map<string, FifoObj> | undefined, readonly replaceType: DeltaType) {}

  entry(key: string): ModelEntry | undefined {
    return this.queue.find((e) => e.key === key);
  }

  append(key: string, type: DeltaType, object: Obj): void {
    const e = this.entry(key);
    if (e === undefined) {
      this.queue.push({ key, deltas: [{ type, object }] });
      return;
    }
    const last = e.deltas[e.deltas.length - 1];
    if (type === 'Deleted' && last.type === 'Deleted') {
      if (last.object instanceof DeletedFinalStateUnknown) e.deltas[e.deltas.length - 1] = { type, object };
      return;
    }
    e.deltas.push({ type, object });
  }

  add(o: FifoObj, type: 'Added' | 'Updated'): void {
    this.populated = true;
    this.append(o.metadata.name, type, o);
  }

  delete(o: FifoObj): void {
    this.populated = true;
    const key = o.metadata.name;
    if (this.entry(key) === undefined && !(this.known?.has(key) ?? false)) return;
    this.append(key, 'Deleted', o);
  }

  replace(list: FifoObj[]): void {
    const listed = new Set<string>();
    for (const o of list) {
      listed.add(o.metadata.name);
      this.append(o.metadata.name, this.replaceType, o);
    }
    let deletions = 0;
    for (const e of [...this.queue]) {
      if (listed.has(e.key)) continue;
      const newest = e.deltas[e.deltas.length - 1].object;
      const last = newest instanceof DeletedFinalStateUnknown ? newest.obj : newest;
      this.append(e.key, 'Deleted', new DeletedFinalStateUnknown(e.key, last));
      deletions++;
    }
    for (const [key, o] of this.known ?? []) {
      if (listed.has(key) || this.entry(key) !== undefined) continue;
      this.append(key, 'Deleted', new DeletedFinalStateUnknown(key, o));
      deletions++;
    }
    if (!this.populated) {
      this.populated = true;
      this.initial = listed.size + deletions;
    }
  }

  resync(): void {
    for (const [key, o] of this.known ?? []) if (this.entry(key) === undefined) this.append(key, 'Sync', o);
  }

  synced(): boolean {
    return this.populated && this.initial === 0;
  }
}

async function runModel(seed: number, steps: number, epoch: number): Promise<void> {
  const rand = prng(seed);
  for (let done = 0; done < steps; done += epoch) await runEpoch(rand, seed, done, Math.min(epoch, steps - done));
}

/** One fresh queue driven through `steps` random operations (so the initial-list logic runs often). */
async function runEpoch(rand: () => number, seed: number, first: number, steps: number): Promise<void> {
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)];
  const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  const withKnown = rand() < 0.7;
  const emitReplaced = rand() < 0.5;
  // The consumer's store: the test applies every popped delta to it, as an informer would.
  const store = new Map<string, FifoObj>();
  const knownObjects: KeyListerGetter<FifoObj> = {
    listKeys: () => [...store.keys()],
    getByKey: (k) => store.get(k),
  };
  const fifo = new DeltaFIFO<FifoObj>({ knownObjects: withKnown ? knownObjects : undefined, emitDeltaTypeReplaced: emitReplaced });
  const model = new Model(withKnown ? store : undefined, emitReplaced ? 'Replaced' : 'Sync');
  let val = 0;
  const fresh = (): FifoObj => obj(pick(names), ++val);

  // Like an informer restarting: the consumer may already hold objects, and the first call is usually
  // the initial list.
  if (withKnown) for (const n of names) if (rand() < 0.4) store.set(n, obj(n, ++val));
  const startWithReplace = rand() < 0.7;

  let step = 0;
  let op = '';
  try {
    for (step = 0; step < steps; step++) {
      const r = step === 0 && startWithReplace ? 0.5 : rand();
      if (r < 0.22) {
        op = 'add';
        const o = fresh();
        fifo.add(o);
        model.add(o, 'Added');
      } else if (r < 0.36) {
        op = 'update';
        const o = fresh();
        fifo.update(o);
        model.add(o, 'Updated');
      } else if (r < 0.5) {
        op = 'delete';
        const o = fresh();
        fifo.delete(o);
        model.delete(o);
      } else if (r < 0.56) {
        op = 'replace';
        const list = names.filter(() => rand() < 0.5).map((n) => obj(n, ++val));
        if (list.length > 0 && rand() < 0.2) list.push(obj(list[0].metadata.name, ++val));
        fifo.replace(list, String(step));
        model.replace(list);
      } else if (r < 0.62) {
        op = 'resync';
        fifo.resync();
        model.resync();
      } else if (model.queue.length > 0) {
        op = 'pop';
        const expected = model.queue.shift() as ModelEntry;
        const expectedInitial = !model.synced();
        const mode = rand();
        const failure = new Error('process failed');
        let initial: boolean | undefined;
        const popped = fifo.pop((deltas, isInInitialList) => {
          initial = isInInitialList;
          if (mode < 0.1) throw failure;
          if (mode < 0.3) return Promise.resolve();
          return undefined;
        });
        const deltas = mode < 0.1 ? await popped.then(() => expect.fail('pop resolved'), (e: unknown) => {
          expect(e).toBe(failure);
          return expected.deltas;
        }) : await popped;
        if (model.initial > 0) model.initial--;
        expect(fmt(deltas)).toEqual(fmt(expected.deltas));
        expect(initial).toBe(expectedInitial);
        for (const d of expected.deltas) {
          if (d.type === 'Deleted') store.delete(expected.key);
          else store.set(expected.key, d.object as FifoObj);
        }
      }
      const actual = JSON.stringify([fifo.hasSynced(), fifo.listKeys().map((k) => [k, fmt(fifo.getByKey(k))])]);
      const wanted = JSON.stringify([model.synced(), model.queue.map((e) => [e.key, fmt(e.deltas)])]);
      if (actual !== wanted) throw new Error(`queue differs\n  model: ${wanted}\n  fifo:  ${actual}`);
    }
  } catch (err) {
    throw new Error(`DeltaFIFO model mismatch (seed ${seed}, step ${first + step}, op ${op}): ${(err as Error).message}`, { cause: err });
  }
}

describe('DeltaFIFO against a plain model', () => {
  const seeds = process.env.FIFO_MODEL_SEED ? [Number(process.env.FIFO_MODEL_SEED)] : [1, 42, 20240611, 987654321];
  for (const seed of seeds) {
    it(`matches the model over 10 000 random operations (seed ${seed})`, async () => {
      await runModel(seed, 10_000, 500);
    });
  }
});
