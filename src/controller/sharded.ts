// A controller on a shard ring: only the keys of owned slots are reconciled, under the ring's
// tracking (a slot is handed over only after its reconciles finished) and fencing (a reconcile's
// signal aborts when its slot is lost); slots gained are reconciled at once. See docs/sharding.md.

import type { SharedIndexInformer } from '../informer/shared-index-informer.js';
import type { ShardRing } from '../sharding/ring.js';
import type { LazySignal } from './context.js';

/** The ring's side of a sharded controller. */
export class ShardGate {
  readonly #ring: ShardRing;
  readonly #primary: SharedIndexInformer<unknown>;
  /** The slot of each key seen in the cache, so a key whose object is gone still has an owner. */
  readonly #slots = new Map<string, number>();

  constructor(ring: ShardRing, primary: SharedIndexInformer<unknown>) {
    this.#ring = ring;
    this.#primary = primary;
  }

  /** The slot of a primary key, from its cached object (or its last known one); undefined when never seen. */
  slotOf(key: string): number | undefined {
    const obj = this.#primary.getStore().getByKey(key);
    if (obj === undefined) return this.#slots.get(key);
    const slot = this.#ring.slotOf(obj);
    this.#slots.set(key, slot);
    return slot;
  }

  /** The key's slot when this replica owns it now; undefined otherwise (its owner reconciles it). */
  ownedSlot(key: string): number | undefined {
    const slot = this.slotOf(key);
    if (slot === undefined || !this.#ring.owns(slot)) return undefined;
    if (this.#primary.getStore().getByKey(key) === undefined) this.#slots.delete(key); // gone: forget it after this one
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

  /** Calls `schedule` for every cached primary of each slot gained from now on. Returns the unsubscribe. */
  scheduleGained(schedule: (key: string) => void): () => void {
    let previous = new Set(this.#ring.ownedSlots());
    const gain = (owned: readonly number[]): void => {
      const gained = owned.filter((s) => !previous.has(s));
      previous = new Set(owned);
      if (gained.length === 0) return;
      const wanted = new Set(gained);
      for (const key of this.#primary.getStore().listKeys()) {
        const slot = this.slotOf(key);
        if (slot !== undefined && wanted.has(slot)) schedule(key);
      }
    };
    return this.#ring.subscribe(gain);
  }
}
