// An informer over the slots a replica owns: one SharedIndexInformer per slot, so a change of slots
// lists and watches only the slots that moved. Driven by a ShardRing's owned set.

import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { SharedIndexInformer, type ResourceEventHandler, type SharedIndexInformerOptions } from '../informer/index.js';
import type { ListerWatcher } from '../listwatch/types.js';
import type { ShardSelector } from '../core/shard-selector.js';
import { TaskScope } from '../core/task-scope.js';

/** Options of {@link ShardedInformer}. */
export interface ShardedInformerOptions<T> {
  /** The shard selector of one slot (`ring.selectorFor([slot])`). Required. */
  selectorFor: (slot: number) => ShardSelector;
  /** The ListerWatcher of one shard, e.g. `(shard) => newListWatch(kc, gvr, { shard })`. Required. */
  listWatchFor: (shard: ShardSelector) => ListerWatcher<T>;
  /** Options of every slot's informer. Default: none. */
  informerOptions?: SharedIndexInformerOptions<T>;
  /** Timers of the informers. Default `realClock`. */
  clock?: Clock;
}

interface SlotInformer<T> {
  readonly informer: SharedIndexInformer<T>;
  /** Stops this slot's informer (the scope waits for it). */
  readonly stop: AbortController;
}

/**
 * The cache of the slots a replica owns: {@link ShardedInformer.setSlots} (wire it to the ring's
 * `onSlotsChanged`) starts an informer for each slot gained — its objects arrive as adds with
 * `isInInitialList` — and stops the informer of each slot lost. A slot lost is **not** reported as
 * deletes: its objects still exist, another replica owns them now. Handlers added apply to every slot.
 * Reads (`get`, `list`) span the owned slots.
 */
export class ShardedInformer<T> {
  readonly #options: ShardedInformerOptions<T>;
  readonly #slots = new Map<number, SlotInformer<T>>();
  readonly #handlers: Array<ResourceEventHandler<T>> = [];
  #scope: TaskScope | undefined;

  constructor(options: ShardedInformerOptions<T>) {
    this.#options = options;
  }

  /** Adds a handler to every slot's informer, present and future. */
  addEventHandler(handler: ResourceEventHandler<T>): void {
    this.#handlers.push(handler);
    for (const s of this.#slots.values()) s.informer.addEventHandler(handler);
  }

  /** The slots cached now, ascending. */
  slots(): number[] {
    return [...this.#slots.keys()].sort((a, b) => a - b);
  }

  /** Starts the informers of the slots gained and stops those of the slots lost. Needs {@link ShardedInformer.run}. */
  setSlots(owned: readonly number[]): void {
    const scope = this.#scope;
    if (scope === undefined || scope.signal.aborted) return;
    const want = new Set(owned);
    for (const [slot, s] of this.#slots) {
      if (want.has(slot)) continue;
      s.stop.abort();
      this.#slots.delete(slot);
    }
    for (const slot of want) {
      if (this.#slots.has(slot)) continue;
      const informer = new SharedIndexInformer<T>(this.#options.listWatchFor(this.#options.selectorFor(slot)), {
        ...this.#options.informerOptions,
        name: `${this.#options.informerOptions?.name ?? 'sharded'}/slot-${slot}`,
        clock: this.#options.clock ?? realClock,
      });
      for (const h of this.#handlers) informer.addEventHandler(h);
      const stop = new AbortController();
      void scope.spawn(`slot ${slot}`, (signal) => informer.run(AbortSignal.any([signal, stop.signal])));
      this.#slots.set(slot, { informer, stop });
    }
  }

  /** The cached object under `key` in any owned slot. */
  get(key: string): T | undefined {
    for (const s of this.#slots.values()) {
      const obj = s.informer.getStore().getByKey(key);
      if (obj !== undefined) return obj;
    }
    return undefined;
  }

  /** Every cached object of the owned slots. */
  list(): T[] {
    return [...this.#slots.values()].flatMap((s) => s.informer.getStore().list());
  }

  /** True when every owned slot's informer has synced. */
  hasSynced(): boolean {
    return [...this.#slots.values()].every((s) => s.informer.hasSynced());
  }

  /** Runs until `signal` aborts; rejects when a slot's informer fails (a handler threw), having stopped the others. */
  async run(signal: AbortSignal): Promise<void> {
    const scope = new TaskScope({ name: 'sharded informer', signal, clock: this.#options.clock ?? realClock });
    this.#scope = scope;
    try {
      await scope.closed();
    } finally {
      this.#slots.clear();
      this.#scope = undefined;
    }
  }
}
