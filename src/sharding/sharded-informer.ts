// An informer over the slots a replica owns: one SharedIndexInformer per slot, following a ShardRing's
// owned set, so a change of slots lists and watches only the slots that moved. A user of the informer
// room's partition core (`Partitions`), keyed by slot.

import type { DeepReadonly } from '../core/types.js';
import { validateOptions } from '../core/options.js';
import type { ShardSelector } from '../core/shard-selector.js';
import type { ResourceEventHandler, SharedInformerRegistration } from '../informer/handler.js';
import type { InformerHealth, Observed } from '../informer/index.js';
import { Partitions, informerEventStream, type AddEventHandlerOptions, type PartitionedIndexer, type InformerEventStream, type InformerEventStreamOptions } from '../informer/index.js';
import type { SharedIndexInformer } from '../informer/shared-index-informer.js';
import type { ShardRing } from './ring.js';

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

/** The union of the owned slots' indexers: what a sharded cache can answer. */
export type ShardedIndexer<T> = PartitionedIndexer<T>;

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
  readonly #ring: ShardRing;
  readonly #name: string;
  readonly #parts: Partitions<number, T>;

  /** Throws `INVALID_OPTION` for an option of the wrong type or an unknown one. */
  constructor(options: ShardedInformerOptions<T>) {
    validateOptions('ShardedInformer', options, { ring: 'object', informerFor: 'function', name: 'string' });
    this.#ring = options.ring;
    this.#name = options.name ?? 'sharded';
    const ring = this.#ring;
    this.#parts = new Partitions<number, T>({
      name: this.#name,
      label: `sharded informer ${this.#name}`,
      partName: (slot) => `slot ${slot}`,
      informerFor: (slot) => options.informerFor(ring.selectorFor([slot]) as ShardSelector, slot), // one slot: never empty
      compare: (a, b) => a - b,
    });
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
    return this.#parts.addEventHandler(handler, options);
  }

  /**
   * The notifications of every slot held as an async iterable, each loop a handler registration of its
   * own: see {@link InformerEventStream}. Throws `INFORMER_STOPPED` when stopped.
   */
  events(signal?: AbortSignal, options?: InformerEventStreamOptions): InformerEventStream<T> {
    return informerEventStream(this, this.#name, signal, options);
  }

  /** Removes a handler added with {@link ShardedInformer.addEventHandler} from every slot. */
  removeEventHandler(registration: SharedInformerRegistration): void {
    this.#parts.removeEventHandler(registration);
  }

  /** The slots cached now, ascending. */
  slots(): number[] {
    return this.#parts.keys();
  }

  /** The union of the owned slots' caches. */
  getIndexer(): ShardedIndexer<T> {
    return this.#parts.getIndexer();
  }

  /** The cached object under `key` in any owned slot (the cache's own: read-only). */
  get(key: string): DeepReadonly<T> | undefined {
    return this.#parts.getIndexer().getByKey(key);
  }

  /** Every cached object of the owned slots (the cache's own: read-only). */
  list(): DeepReadonly<T>[] {
    return this.#parts.getIndexer().list();
  }

  /** True when every owned slot's informer has synced (also when no slot is owned). */
  hasSynced(): boolean {
    return this.#parts.hasSynced();
  }

  /**
   * Resolves `true` once `slot`'s informer has synced, `false` when `slot` is not (or no longer) cached
   * or this informer stopped first. Rejects when that informer cannot sync (its `whenSynced` error).
   */
  async whenSlotSynced(slot: number): Promise<boolean> {
    this.#follow();
    return this.#parts.whenPartSynced(slot);
  }

  /**
   * Waits until `written` is in the cache of its slot (`SharedIndexInformer.awaitObserved`). Resolves
   * `undefined` at once when its slot is not owned: this replica does not cache it.
   */
  async awaitObserved(written: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    this.#follow();
    return this.#parts.awaitObserved(this.#ring.slotOf(written), written, signal);
  }

  /**
   * Waits until the cache of its slot saw the deletion of `deleted` (`SharedIndexInformer.awaitDeleted`).
   * Resolves `undefined` at once when its slot is not owned: this replica does not cache it.
   */
  async awaitDeleted(deleted: unknown, signal?: AbortSignal): Promise<Observed | undefined> {
    this.#follow();
    return this.#parts.awaitDeleted(this.#ring.slotOf(deleted), deleted, signal);
  }

  /** `health()` of each owned slot's informer, by slot. */
  health(): Record<number, InformerHealth> {
    return Object.fromEntries(this.#parts.health());
  }

  /** Whether `run` was called. */
  isStarted(): boolean {
    return this.#parts.isStarted();
  }

  /** Whether `run` ended: this informer cannot run again. */
  isStopped(): boolean {
    return this.#parts.isStopped();
  }

  /**
   * Follows the ring's owned slots until `signal` aborts, then stops every slot's informer and resolves.
   * Rejects when a slot's informer fails (a handler threw), having stopped the others, or when a slot's
   * informer cannot be made (`informerFor` threw); rejects with `INFORMER_STOPPED` when run a second
   * time (a sharded informer runs once, like a `SharedIndexInformer`).
   */
  async run(signal: AbortSignal): Promise<void> {
    let unsubscribe = (): void => {};
    try {
      await this.#parts.run(signal, () => {
        unsubscribe = this.#ring.subscribe(() => this.#follow());
        this.#follow();
      });
    } finally {
      unsubscribe();
    }
  }

  /** Starts the informers of the slots gained and stops those of the slots lost (not as deletes). */
  #follow(): void {
    if (!this.#parts.isRunning()) return;
    const want = new Set(this.#ring.ownedSlots());
    for (const slot of this.#parts.keys()) if (!want.has(slot)) this.#parts.remove(slot, false);
    for (const slot of want) {
      if (this.#parts.informerOf(slot) !== undefined) continue;
      try {
        this.#parts.add(slot);
      } catch (err) {
        this.#parts.fail(`slot ${slot}`, err); // fails the run: no silent gap in the cache
        return;
      }
    }
  }
}
