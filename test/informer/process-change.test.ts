// The watched change's short path above the reflector (issue 29): a change the DeltaFIFO hands to its
// parked consumer goes to `processChange` instead of `processDeltas` of a one-delta list. The two must
// be indistinguishable: the same cache, the same handler calls in the same order, the same errors, the
// same sync bookkeeping. The model test drives one script through both and compares everything.

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { DeletedFinalStateUnknown, deletionHandlingMetaNamespaceKeyFunc, type KeyFunc } from '../../src/core/keys.js';
import { DeltaFIFO, type ChangeProcessFunc, type Deltas } from '../../src/fifo/index.js';
import { processChange, processDeltas, type DeltaHandler } from '../../src/informer/index.js';
import { newIndexer } from '../../src/store/store.js';
import { seededRandom } from '../../src/testing/random.js';
import { pod, type Pod } from './helpers.js';

const keyFunc = deletionHandlingMetaNamespaceKeyFunc as KeyFunc<Pod>;

/** One pipeline: a DeltaFIFO whose consumer loop parks as newController's does, into an indexer. */
class Pipeline {
  readonly history: string[] = [];
  readonly errors: string[] = [];
  readonly indexer = newIndexer<Pod>(keyFunc, { app: (o) => [o.metadata.labels?.app ?? ''] });
  readonly fifo = new DeltaFIFO<Pod>({ knownObjects: this.indexer, emitDeltaTypeReplaced: true });
  /** Names whose handler call returns a promise (a slow handler) or throws. */
  slow = new Set<string>();
  failing = new Set<string>();
  pending: Array<() => void> = [];
  #stopped = false;

  constructor(readonly withChange: boolean) {}

  readonly #handler: DeltaHandler<Pod> = {
    onAdd: (o, initial) => this.#call(`add ${o.metadata.name}@${o.metadata.resourceVersion}${initial ? ' initial' : ''}`, o.metadata.name),
    onUpdate: (old, o, isSync) =>
      this.#call(`update ${o.metadata.name}@${old.metadata.resourceVersion}→${o.metadata.resourceVersion}${isSync ? ' sync' : ''}`, o.metadata.name),
    onDelete: (o) => {
      const name = o instanceof DeletedFinalStateUnknown ? o.key.split('/')[1] : o.metadata.name;
      return this.#call(`delete ${name}${o instanceof DeletedFinalStateUnknown ? ' tombstone' : ''}`, name);
    },
  };

  #call(what: string, name: string): void | Promise<void> {
    this.history.push(what);
    if (this.failing.has(name)) throw new Error(`handler failed on ${name}`);
    if (this.slow.has(name)) return new Promise<void>((resolve) => this.pending.push(resolve));
  }

  /** newController's loop: drain with tryPop, park when empty; an error is recorded and the loop goes on. */
  async run(): Promise<void> {
    const process = (d: Deltas<Pod>, initial: boolean, key: string): void | Promise<void> => processDeltas(this.#handler, this.indexer, d, initial, key);
    const change: ChangeProcessFunc<Pod> | undefined = this.withChange ? (type, o, key) => processChange(this.#handler, this.indexer, type, o, key) : undefined;
    while (!this.#stopped) {
      try {
        const taken = this.fifo.tryPop(process);
        if (taken === undefined) await this.fifo.park(process, change);
        else if (!Array.isArray(taken)) await taken;
      } catch (err) {
        if ((err as { code?: string }).code === 'FIFO_CLOSED') return;
        this.errors.push((err as Error).message);
      }
    }
  }

  stop(): void {
    this.#stopped = true;
    this.fifo.close();
  }

  /** Everything a user could observe. */
  outcome(): unknown {
    return {
      history: this.history,
      errors: this.errors,
      cache: this.indexer.list().map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort(),
      byApp: ['x', 'y'].map((app) => this.indexer.byIndex('app', app).map((o) => o.metadata.name).sort()),
      queued: this.fifo.listKeys(),
      synced: this.fifo.hasSynced(),
    };
  }
}

describe('processChange', () => {
  it('is processDeltas of the one delta: add, update, delete and the tombstone check', () => {
    const handlerCalls: string[] = [];
    const handler: DeltaHandler<Pod> = {
      onAdd: (o, initial) => void handlerCalls.push(`add ${o.metadata.name} ${initial}`),
      onUpdate: (old, o, isSync) => void handlerCalls.push(`update ${old.metadata.resourceVersion}→${o.metadata.resourceVersion} ${isSync}`),
      onDelete: (o) => void handlerCalls.push(`delete ${o instanceof DeletedFinalStateUnknown ? o.key : o.metadata.name}`),
    };
    const store = newIndexer<Pod>(keyFunc, {});
    processChange(handler, store, 'Added', pod('a', { resourceVersion: '1' }), 'default/a');
    // An Added for a cached key is an update, as processDeltas makes it; never a sync.
    processChange(handler, store, 'Added', pod('a', { resourceVersion: '1' }), 'default/a');
    processChange(handler, store, 'Updated', pod('a', { resourceVersion: '2' }));
    processChange(handler, store, 'Deleted', new DeletedFinalStateUnknown('default/a', pod('a')));
    expect(handlerCalls).toEqual(['add a false', 'update 1→1 false', 'update 1→2 false', 'delete default/a']);
    expect(store.listKeys()).toEqual([]);
    expect(() => processChange(handler, store, 'Updated', new DeletedFinalStateUnknown('default/b', pod('b')))).toThrow(TypeError);
  });
});

describe('DeltaFIFO.park with a change function', () => {
  it('takes a single change handed over, and leaves a first list and queued keys to process', async () => {
    // What the consumer holds: a delete of an unknown key is not queued (nor handed over).
    const known = new Map<string, Pod>();
    const f = new DeltaFIFO<Pod>({ keyFunc, emitDeltaTypeReplaced: true, knownObjects: { listKeys: () => [...known.keys()], getByKey: (k) => known.get(k) } });
    const seen: string[] = [];
    const process = (d: Deltas<Pod>, initial: boolean, key: string): void => void seen.push(`process ${d.map((x) => x.type).join(',')} ${key} ${initial}`);
    const change: ChangeProcessFunc<Pod> = (type, _o, key) => void seen.push(`change ${type} ${key}`);
    void f.park(process, change);
    f.replace([pod('a')], '1');
    known.set('default/a', pod('a'));
    f.update(pod('a'));
    f.add(pod('b'));
    f.delete(pod('a'));
    expect(seen).toEqual(['process Replaced default/a true', 'change Updated default/a', 'change Added default/b', 'change Deleted default/a']);
    // Two changes of one key while nobody is parked are queued: park returns at once, and tryPop hands
    // them to process together.
    const g = new DeltaFIFO<Pod>({ keyFunc });
    g.replace([], '1');
    g.update(pod('c'));
    g.update(pod('c'));
    await g.park(process, change);
    g.tryPop(process);
    expect(seen.at(-1)).toBe('process Updated,Updated default/c false');
  });

  it("rejects the park with the change function's error, and waits for its promise", async () => {
    const f = new DeltaFIFO<Pod>({ keyFunc });
    f.replace([], '1');
    const failed = f.park(
      () => undefined,
      () => {
        throw new Error('change failed');
      },
    );
    expect(() => f.update(pod('a'))).not.toThrow();
    await expect(failed).rejects.toThrow('change failed');
    let release!: () => void;
    let settled = false;
    const slow = f.park(
      () => undefined,
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    void slow.then(() => (settled = true));
    f.update(pod('b'));
    f.update(pod('c')); // the consumer is busy: queued
    expect(f.listKeys()).toEqual(['default/c']);
    await flushPromises();
    expect(settled).toBe(false);
    release();
    await flushPromises();
    expect(settled).toBe(true);
  });
});

describe('the watched change through processChange and through processDeltas (model)', () => {
  it('leaves the same cache, handler calls, errors and queue over random scripts', async () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = seededRandom(seed);
      const pick = <V>(xs: readonly V[]): V => xs[Math.floor(rand() * xs.length)];
      const names = ['a', 'b', 'c', 'd'];
      const script: Array<(p: Pipeline) => void> = [];
      const flushAfter: boolean[] = [];
      let rv = 1;
      const steps = 10 + Math.floor(rand() * 30);
      for (let i = 0; i < steps; i++) {
        const r = rand();
        const name = pick(names);
        const labels = { app: pick(['x', 'y']) };
        const v = String(++rv);
        if (r < 0.1) {
          const items = names.filter(() => rand() < 0.6).map((n) => pod(n, { resourceVersion: v, labels }));
          script.push((p) => p.fifo.replace(items, v));
        } else if (r < 0.35) script.push((p) => p.fifo.add(pod(name, { resourceVersion: v, labels })));
        else if (r < 0.65) script.push((p) => p.fifo.update(pod(name, { resourceVersion: v, labels })));
        else if (r < 0.8) script.push((p) => p.fifo.delete(pod(name, { resourceVersion: v, labels })));
        else if (r < 0.87) script.push((p) => void (p.slow.has(name) ? p.slow.delete(name) : p.slow.add(name)));
        else if (r < 0.92) script.push((p) => void (p.failing.has(name) ? p.failing.delete(name) : p.failing.add(name)));
        else script.push((p) => p.pending.splice(0).forEach((release) => release()));
        // Sometimes the loop catches up before the next step, sometimes the step comes first.
        flushAfter.push(rand() < 0.5);
      }
      const outcomes: unknown[] = [];
      for (const withChange of [false, true]) {
        const p = new Pipeline(withChange);
        const running = p.run();
        for (let i = 0; i < script.length; i++) {
          try {
            script[i](p);
          } catch (err) {
            p.errors.push(`producer: ${(err as Error).message}`);
          }
          if (flushAfter[i]) await flushPromises();
        }
        p.slow.clear();
        p.pending.splice(0).forEach((release) => release());
        await flushPromises();
        p.stop();
        await running;
        outcomes.push(p.outcome());
      }
      expect(outcomes[1], `seed ${seed}`).toEqual(outcomes[0]);
    }
  });
});
