// A handler on a ShardedInformer: one registration on each owned slot's informer, synced when all of them are.

import { abortableWait } from '../core/abort.js';
import { InformerStoppedError } from '../informer/errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from '../informer/handler.js';
import type { AddEventHandlerOptions } from '../informer/options.js';
import type { SharedIndexInformer } from '../informer/shared-index-informer.js';

/** What a {@link ShardedRegistration} needs of its sharded informer. */
export interface SlotSet {
  name: string;
  isStopped(): boolean;
  /** The slots cached now. */
  slots(): number[];
  /** Resolves on the next change of the cached slots (or on stop). */
  changed(): Promise<void>;
}

interface Part<T> {
  readonly informer: SharedIndexInformer<T>;
  readonly registration: SharedInformerRegistration;
}

const ignore = (): void => {};

/** The registration a `ShardedInformer` hands out (see `ShardedInformer.addEventHandler`). @hidden */
export class ShardedRegistration<T> implements SharedInformerRegistration {
  readonly #owner: SlotSet;
  readonly #handler: ResourceEventHandler<T>;
  readonly #options: AddEventHandlerOptions & { name: string };
  readonly #parts = new Map<number, Part<T>>();
  #removed = false;

  constructor(owner: SlotSet, handler: ResourceEventHandler<T>, options: AddEventHandlerOptions & { name: string }) {
    this.#owner = owner;
    this.#handler = handler;
    this.#options = options;
  }

  /** The handler's name. */
  get name(): string {
    return this.#options.name;
  }

  /** The handler's resync period in ms on the slot informers (0 = never). */
  get resyncPeriodMs(): number {
    const first = this.#parts.values().next().value;
    return first?.registration.resyncPeriodMs ?? this.#options.resyncPeriodMs ?? 0;
  }

  /** Adds the handler to a slot's informer. */
  attach(slot: number, informer: SharedIndexInformer<T>): void {
    if (this.#removed) return;
    this.#parts.set(slot, { informer, registration: informer.addEventHandler(this.#handler, this.#options) });
  }

  /** Removes the handler from a slot's informer. */
  detach(slot: number): void {
    const part = this.#parts.get(slot);
    if (part === undefined) return;
    this.#parts.delete(slot);
    part.informer.removeEventHandler(part.registration);
  }

  /** Removes the handler from every slot; the registration never syncs again. */
  detachAll(): void {
    this.#removed = true;
    for (const slot of [...this.#parts.keys()]) this.detach(slot);
  }

  /** True when every cached slot's informer has synced and this handler processed each initial list. */
  hasSynced(): boolean {
    if (this.#removed) return false;
    return this.#owner.slots().every((slot) => this.#parts.get(slot)?.registration.hasSynced() === true);
  }

  /**
   * Resolves once {@link ShardedRegistration.hasSynced} is true (at once with no slot owned). Rejects
   * when a slot's informer cannot sync (its error), when the sharded informer stops or this handler is
   * removed first (`INFORMER_STOPPED`), and when `signal` aborts. A slot lost while waiting is not an error.
   */
  async whenSynced(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.#removed) throw new InformerStoppedError(`handler ${this.name} of ${this.#owner.name} was removed before it synced`);
      if (this.#owner.isStopped()) throw new InformerStoppedError(`sharded informer ${this.#owner.name} stopped before handler ${this.name} synced`);
      if (this.hasSynced()) return;
      const parts = [...this.#parts];
      // The parts are waited for without `signal` (they settle when their informer syncs or stops): one
      // abort listener per wait, not one per slot.
      const synced = Promise.all(
        parts.map(async ([slot, part]) => {
          try {
            await part.registration.whenSynced();
          } catch (err) {
            if (this.#parts.get(slot) === part) throw err; // a slot lost meanwhile is no failure
          }
        }),
      );
      synced.catch(ignore); // a slot change may win the race; its rejection is still seen by the race
      await abortableWait(Promise.race([synced, this.#owner.changed()]), signal, `stopped waiting for handler ${this.name} of ${this.#owner.name} to sync: the signal was aborted`);
    }
  }
}
