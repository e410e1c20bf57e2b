// An informer over the slots a replica owns: one SharedIndexInformer per slot, following a ShardRing's
// owned set, so a change of slots lists and watches only the slots that moved.

import type { DeepReadonly } from '../core/types.js';
import { validateOptions } from '../core/options.js';
import type { ShardSelector } from '../core/shard-selector.js';
import { toError } from '../core/errors.js';
import { TaskScope } from '../core/task-scope.js';
import { InformerStoppedError } from '../informer/errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from '../informer/handler.js';
import type { InformerHealth, Observed } from '../informer/index.js';
import { ADD_EVENT_HANDLER_OPTION_SCHEMA, type AddEventHandlerOptions } from '../informer/index.js';
import type { SharedIndexInformer } from '../informer/shared-index-informer.js';
import { ShardedRegistration, type SlotSet } from './sharded-registration.js';
import type { ShardRing } from './ring.js';

/** A promise and its resolve (Node 20 has no `Promise.withResolvers`). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Options of {@link ShardedInformer}. */
export interface ShardedInformerOptions<T> {
  /** The ring whose owned slots are cached: a slot gained is listed and watched, a slot lost dropped. Required. */
  ring: ShardRing;
  /**
   * A new, unstarted informer over one slot, whose list and watch carry `shard` — e.g.
   * `(shard) => factory.newInformer(resources.configmaps, { shard })`, or
   * `(shard) => new SharedIndexInformer(newListWatch(kc, gvr, { shard }), options)`. Each is run,
   * and stopped when its slot is lost, by this informer. Required.
   */
  informerFor: (shard: ShardSelector, slot: number) => SharedIndexInformer<T>;
  /** The name in logs and errors. Default `sharded`. */
  name?: string;
}

interface SlotInformer<T> {
  readonly informer: SharedIndexInformer<T>;
  /** Stops this slot's informer (the scope waits for it). */
  readonly stop: AbortController;
}

/** The union of the owned slots' indexers: what a sharded cache can answer. */
export interface ShardedIndexer<T> {
  /** The cached object under `key` in any owned slot (the cache's own: read-only). */
  getByKey(key: string): DeepReadonly<T> | undefined;
  /** The keys of every owned slot. */
  listKeys(): string[];
  /** Every cached object of the owned slots. */
  list(): DeepReadonly<T>[];
  /** The objects of every owned slot indexed under `indexedValue` (an index of the slot informers). */
  byIndex(indexName: string, indexedValue: string): DeepReadonly<T>[];
}

/**
 * The cache of the slots a replica owns in a {@link ShardRing}: while it runs, it follows the ring's
 * owned set — a slot gained gets its own informer, whose list and watch carry that slot's
 * `shardSelector` (its objects arrive as adds with `isInInitialList`); a slot lost has its informer
 * stopped. A slot lost is **not** reported as deletes: its objects still exist, another replica owns
 * them now. Handlers added apply to every slot, present and future; reads span the owned slots.
 * `Controller`'s `sharded` option makes one per sharded resource, its slots'
 * informers from `factory.newInformer(resource, { shard })`.
 *
 * Warning: each slot lists and watches on its own. On a server without the `ShardedListAndWatch` gate
 * every slot's list carries the whole collection (filtered on the client, with a warning): shard only
 * where the server applies shard selectors (docs/sharding.md).
 */
export class ShardedInformer<T> {
  readonly #options: ShardedInformerOptions<T>;
  readonly #ring: ShardRing;
  readonly #name: string;
  readonly #slots = new Map<number, SlotInformer<T>>();
  readonly #registrations = new Set<ShardedRegistration<T>>();
  readonly #indexer: ShardedIndexer<T>;
  /** What registrations see of this informer. */
  readonly #slotSet: SlotSet = {
    name: '',
    isStopped: () => this.isStopped(),
    slots: () => this.slots(),
    changed: () => this.#changed.promise,
  };
  #scope: TaskScope | undefined;
  #state: 'new' | 'running' | 'stopped' = 'new';
  #changed = signal();
  #handlerCount = 0;

  /** Throws `INVALID_OPTION` for an option of the wrong type or an unknown one. */
  constructor(options: ShardedInformerOptions<T>) {
    validateOptions('ShardedInformer', options, { ring: 'object', informerFor: 'function', name: 'string' });
    this.#options = options;
    this.#ring = options.ring;
    this.#name = options.name ?? 'sharded';
    this.#slotSet.name = this.#name;
    const informers = (): Array<SharedIndexInformer<T>> => [...this.#slots.values()].map((s) => s.informer);
    this.#indexer = {
      getByKey: (key) => {
        for (const informer of informers()) {
          const obj = informer.getIndexer().getByKey(key);
          if (obj !== undefined) return obj;
        }
        return undefined;
      },
      listKeys: () => informers().flatMap((i) => i.getIndexer().listKeys()),
      list: () => informers().flatMap((i) => i.getIndexer().list()),
      byIndex: (index, value) => informers().flatMap((i) => i.getIndexer().byIndex(index, value)),
    };
  }

  /** The name in logs and errors (`name`, default `sharded`). */
  get name(): string {
    return this.#name;
  }

  /** The ring whose owned slots this informer caches. */
  get ring(): ShardRing {
    return this.#ring;
  }

  /**
   * Adds `handler` to every slot's informer, present and future. The registration has synced when
   * every owned slot's informer has synced and the handler processed its initial list.
   */
  addEventHandler(handler: ResourceEventHandler<T>, options: AddEventHandlerOptions = {}): SharedInformerRegistration {
    validateOptions(`${this.#name}.addEventHandler`, options, ADD_EVENT_HANDLER_OPTION_SCHEMA);
    const name = options.name ?? `handler-${++this.#handlerCount}`;
    const registration = new ShardedRegistration<T>(this.#slotSet, handler, { ...options, name });
    this.#registrations.add(registration);
    for (const [slot, s] of this.#slots) registration.attach(slot, s.informer);
    return registration;
  }

  /** Removes a handler added with {@link ShardedInformer.addEventHandler} from every slot. */
  removeEventHandler(registration: SharedInformerRegistration): void {
    const mine = registration as ShardedRegistration<T>;
    if (!this.#registrations.delete(mine)) return;
    mine.detachAll();
    this.#notify();
  }

  /** The slots cached now, ascending. */
  slots(): number[] {
    return [...this.#slots.keys()].sort((a, b) => a - b);
  }

  /** The union of the owned slots' caches. */
  getIndexer(): ShardedIndexer<T> {
    return this.#indexer;
  }

  /** The cached object under `key` in any owned slot (the cache's own: read-only). */
  get(key: string): DeepReadonly<T> | undefined {
    return this.#indexer.getByKey(key);
  }

  /** Every cached object of the owned slots (the cache's own: read-only). */
  list(): DeepReadonly<T>[] {
    return this.#indexer.list();
  }

  /** True when every owned slot's informer has synced (also when no slot is owned). */
  hasSynced(): boolean {
    return [...this.#slots.values()].every((s) => s.informer.hasSynced());
  }

  /**
   * Resolves `true` once `slot`'s informer has synced, `false` when `slot` is not (or no longer) cached
   * or this informer stopped first. Rejects when that informer cannot sync (its `whenSynced` error).
   */
  async whenSlotSynced(slot: number): Promise<boolean> {
    this.#follow();
    const s = this.#slots.get(slot);
    if (s === undefined) return false;
    try {
      await s.informer.whenSynced();
      return true;
    } catch (err) {
      if (this.#slots.get(slot) !== s || this.#state === 'stopped') return false; // dropped: the slot was lost, or the run ended
      throw err;
    }
  }

  /**
   * Waits until `written` is in the cache of its slot (`SharedIndexInformer.awaitObserved`). Resolves
   * `undefined` at once when its slot is not owned: this replica does not cache it.
   */
  async awaitObserved(written: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    this.#follow();
    const informer = this.#slots.get(this.#ring.slotOf(written))?.informer;
    return informer === undefined ? undefined : informer.awaitObserved(written, signal);
  }

  /**
   * Waits until the cache of its slot saw the deletion of `deleted` (`SharedIndexInformer.awaitDeleted`).
   * Resolves `undefined` at once when its slot is not owned: this replica does not cache it.
   */
  async awaitDeleted(deleted: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    this.#follow();
    const informer = this.#slots.get(this.#ring.slotOf(deleted))?.informer;
    return informer === undefined ? undefined : informer.awaitDeleted(deleted, signal);
  }

  /** `health()` of each owned slot's informer, by slot. */
  health(): Record<number, InformerHealth> {
    return Object.fromEntries([...this.#slots].map(([slot, s]) => [slot, s.informer.health()]));
  }

  /** Whether `run` was called. */
  isStarted(): boolean {
    return this.#state !== 'new';
  }

  /** Whether `run` ended: this informer cannot run again. */
  isStopped(): boolean {
    return this.#state === 'stopped';
  }

  /**
   * Follows the ring's owned slots until `signal` aborts, then stops every slot's informer and resolves.
   * Rejects when a slot's informer fails (a handler threw), having stopped the others, or when a slot's
   * informer cannot be made (`informerFor` threw); rejects with `INFORMER_STOPPED` when run a second
   * time (a sharded informer runs once, like a `SharedIndexInformer`).
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'new') throw new InformerStoppedError(`sharded informer ${this.#name} has run already; create a new one`);
    this.#state = 'running';
    const scope = new TaskScope({ name: `sharded informer ${this.#name}`, signal });
    this.#scope = scope;
    // One listener stops every slot's informer when the run ends (a per-slot `AbortSignal.any` would pile
    // one listener per slot on the scope's signal).
    scope.signal.addEventListener('abort', () => this.#slots.forEach((s) => s.stop.abort()), { once: true });
    const unsubscribe = this.#ring.subscribe(() => this.#follow());
    this.#follow();
    try {
      await scope.closed();
    } finally {
      unsubscribe();
      this.#state = 'stopped';
      this.#slots.clear();
      this.#scope = undefined;
      this.#notify();
    }
  }

  /** Starts the informers of the slots gained and stops those of the slots lost. */
  #follow(): void {
    const scope = this.#scope;
    if (scope === undefined || scope.state !== 'open') return;
    const want = new Set(this.#ring.ownedSlots());
    let changed = false;
    for (const [slot, s] of this.#slots) {
      if (want.has(slot)) continue;
      this.#slots.delete(slot);
      for (const r of this.#registrations) r.detach(slot);
      s.stop.abort();
      changed = true;
    }
    for (const slot of want) {
      if (this.#slots.has(slot)) continue;
      const shard = this.#ring.selectorFor([slot]) as ShardSelector; // one slot: never empty
      let informer: SharedIndexInformer<T>;
      try {
        informer = this.#options.informerFor(shard, slot);
      } catch (err) {
        void scope.spawn(`slot ${slot}`, () => Promise.reject(toError(err))); // fails the run: no silent gap in the cache
        return;
      }
      for (const r of this.#registrations) r.attach(slot, informer);
      const stop = new AbortController();
      void scope.spawn(`slot ${slot}`, () => informer.run(stop.signal)); // stopped with its slot, or by run's end (below)
      this.#slots.set(slot, { informer, stop });
      changed = true;
    }
    if (changed) this.#notify();
  }

  #notify(): void {
    const done = this.#changed;
    this.#changed = signal();
    done.resolve();
  }
}
