// A controller on a shard ring: the primary (and, on a namespace ring, its owned children) cached per
// owned slot; only the keys of owned slots whose caches synced are reconciled, under the ring's
// tracking (a slot is handed over only after its reconciles finished) and fencing (a reconcile's signal
// aborts when its slot is lost); the primaries of a slot gained are reconciled once its caches synced.
// See docs/sharding.md.

import { toError } from '../core/errors.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { gvrKey, type SharedInformerFactory } from '../informer/factory.js';
import type { ResourceCacheOptions } from '../informer/index.js';
import type { ShardRing } from '../sharding/ring.js';
import { ShardedInformer } from '../sharding/sharded-informer.js';
import type { LazySignal } from './context.js';
import type { SourceInformer } from './writes.js';

/** How a watched resource relates to the primary (`for`, `owns`, `watches` of the builder). */
export type SourceRole = 'for' | 'owns' | 'watches';

/**
 * Whether a source of a controller sharded on `ring` is cached per owned slot: the primary always; an
 * owned namespaced resource when the ring hashes namespaces (owner references never cross namespaces,
 * so children share their owner's slot). Everything else is watched whole: a child's uid says nothing
 * of its owner's, and a `watches` mapping may point anywhere.
 */
export function followsShard(ring: ShardRing | undefined, primary: ResourceDescriptor<unknown>, role: SourceRole, resource: ResourceDescriptor<unknown>): boolean {
  if (ring === undefined) return false;
  if (role === 'for') return true;
  return role === 'owns' && ring.field === 'namespace' && primary.namespaced && resource.namespaced;
}

/** One run's sharded informers: one per source that follows the shard, over the ring's owned slots. */
export class ShardedSources {
  readonly #informers = new Map<ResourceDescriptor<unknown>, ShardedInformer<unknown>>();

  /** One per source: each slot's informer has the source's cache options (managed fields stripped by default, as the factory's controller informers). */
  constructor(ring: ShardRing, factory: SharedInformerFactory, name: string, sources: ReadonlyArray<{ resource: ResourceDescriptor<unknown>; cache: ResourceCacheOptions<unknown> }>) {
    for (const { resource, cache } of sources) {
      const key = gvrKey(resource);
      const options = { stripManagedFields: true, ...cache };
      this.#informers.set(
        resource,
        new ShardedInformer<unknown>({ ring, name: `controller ${name}: ${key}`, informerFor: (shard, slot) => factory.newInformer(resource, { ...options, shard, name: `${key}/slot-${slot}` }) }),
      );
    }
  }

  /** The sharded informer of `resource`. */
  informerOf(resource: ResourceDescriptor<unknown>): ShardedInformer<unknown> {
    return this.#informers.get(resource) as ShardedInformer<unknown>;
  }

  /** Runs every sharded informer until `signal` aborts; rejects with the first failure. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.run(signal)));
  }

  /** True once every sharded informer's cache of `slot` synced; false when the slot was lost first. */
  async whenSlotSynced(slot: number): Promise<boolean> {
    const synced = await Promise.all([...this.#informers.values()].map((i) => i.whenSlotSynced(slot)));
    return synced.every(Boolean);
  }
}

/** The ring's side of a sharded controller. */
export class ShardGate {
  readonly #ring: ShardRing;
  readonly #primary: SourceInformer;
  readonly #sources: ShardedSources;
  /** The slot of each key seen in the cache, so a key whose object is gone still has an owner. */
  readonly #slots = new Map<string, number>();
  /** Owned slots whose caches synced since they were gained: only their keys are reconciled. */
  readonly #ready = new Set<number>();
  /** Bumped on every gain of a slot, so a sync wait of an earlier tenure cannot mark a later one ready. */
  readonly #tenure = new Map<number, number>();

  constructor(ring: ShardRing, primary: SourceInformer, sources: ShardedSources) {
    this.#ring = ring;
    this.#primary = primary;
    this.#sources = sources;
  }

  /** The slot of a primary key, from its cached object (or its last known one); undefined when never seen. */
  slotOf(key: string): number | undefined {
    const obj = this.#primary.getIndexer().getByKey(key);
    if (obj === undefined) return this.#slots.get(key);
    const slot = this.#ring.slotOf(obj);
    this.#slots.set(key, slot);
    return slot;
  }

  /**
   * The key's slot when this replica owns it now and its caches synced; undefined otherwise (its owner
   * reconciles it, or this replica will once the slot's caches synced).
   */
  ownedSlot(key: string): number | undefined {
    const slot = this.slotOf(key);
    if (slot === undefined || !this.#ready.has(slot) || !this.#ring.owns(slot)) return undefined;
    if (this.#primary.getIndexer().getByKey(key) === undefined) this.#slots.delete(key); // gone: forget it after this one
    return slot;
  }

  /** Runs `reconcile` tracked by the ring on `slot`, its signal aborted if the slot is lost. */
  run<V>(slot: number, signal: LazySignal, reconcile: () => Promise<V>): Promise<V> {
    const fence = this.#ring.signalFor(slot);
    const onLost = (): void => signal.abort(fence.reason);
    fence.addEventListener('abort', onLost, { once: true });
    const work = reconcile().finally(() => fence.removeEventListener('abort', onLost));
    return this.#ring.track(slot, work);
  }

  /**
   * Follows the ring until `signal` aborts: for each slot owned now or gained later, once its caches
   * synced, calls `schedule` for each of its cached primaries; a slot lost is forgotten. A cache that
   * cannot sync goes to `fail`. Returns the unsubscribe.
   */
  follow(schedule: (key: string) => void, fail: (err: Error) => void, signal: AbortSignal): () => void {
    let previous = new Set<number>();
    const change = (owned: readonly number[]): void => {
      const now = new Set(owned);
      for (const slot of previous) if (!now.has(slot)) this.#lose(slot);
      for (const slot of now) if (!previous.has(slot)) this.#gain(slot, schedule, fail, signal);
      previous = now;
    };
    change(this.#ring.ownedSlots());
    return this.#ring.subscribe(change);
  }

  #gain(slot: number, schedule: (key: string) => void, fail: (err: Error) => void, signal: AbortSignal): void {
    const tenure = (this.#tenure.get(slot) ?? 0) + 1;
    this.#tenure.set(slot, tenure);
    this.#sources.whenSlotSynced(slot).then(
      (synced) => {
        if (!synced || this.#tenure.get(slot) !== tenure || !this.#ring.owns(slot)) return;
        this.#ready.add(slot);
        for (const key of this.#primary.getIndexer().listKeys()) if (this.slotOf(key) === slot) schedule(key);
      },
      (err: unknown) => {
        if (!signal.aborted) fail(toError(err));
      },
    );
  }

  #lose(slot: number): void {
    this.#tenure.set(slot, (this.#tenure.get(slot) ?? 0) + 1);
    this.#ready.delete(slot);
    for (const [key, s] of this.#slots) if (s === slot) this.#slots.delete(key);
  }
}
