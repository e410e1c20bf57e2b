// A handler on a partitioned informer: one registration on each part's informer, synced when all of them are.

import { abortableWait } from '../core/abort.js';
import { InformerStoppedError } from './errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from './handler.js';
import type { StreamEnd } from './events-stream.js';
import type { AddEventHandlerOptions } from './options.js';
import type { SharedIndexInformer } from './shared-index-informer.js';

/** What a {@link PartitionedRegistration} needs of its partitioned informer. @hidden */
export interface PartSet<K> {
  /** `sharded informer cms`: the informer as messages name it. */
  readonly label: string;
  isStopped(): boolean;
  /** The parts cached now. */
  keys(): K[];
  /** Resolves on the next change of the cached parts or of their failures (or on stop). */
  changed(): Promise<void>;
  /** Whether part `key` is known unable to sync and set aside (it counts for no sync). */
  isFailed(key: K): boolean;
  /**
   * Part `key` cannot sync (`err`, its informer's `whenSynced` rejection): true when the owner sets it
   * aside (the others sync without it), false when it must fail the wait.
   */
  failed(key: K, err: unknown): boolean;
}

interface Part<T> {
  readonly informer: SharedIndexInformer<T>;
  readonly registration: SharedInformerRegistration;
}

const ignore = (): void => {};

/** A promise and its resolve (the first call wins). */
function deferred<V>(): { promise: Promise<V>; resolve: (value: V) => void } {
  let resolve!: (value: V) => void;
  const promise = new Promise<V>((r) => (resolve = r));
  return { promise, resolve };
}

/** The registration a partitioned informer hands out (`ShardedInformer`, `NamespaceSetInformer`). @hidden */
export class PartitionedRegistration<K, T> implements SharedInformerRegistration, StreamEnd {
  readonly #owner: PartSet<K>;
  readonly #handler: ResourceEventHandler<T>;
  readonly #options: AddEventHandlerOptions & { name: string };
  readonly #parts = new Map<K, Part<T>>();
  /** Parts removed from the set whose informers still deliver (their deletes) until they stop. */
  readonly #leaving = new Set<Part<T>>();
  #removed = false;
  /** Settled by {@link PartitionedRegistration.stop} and {@link PartitionedRegistration.end} (or a removal). */
  readonly #stopping = deferred<undefined>();
  readonly #ended = deferred<Error>();

  constructor(owner: PartSet<K>, handler: ResourceEventHandler<T>, options: AddEventHandlerOptions & { name: string }) {
    this.#owner = owner;
    this.#handler = handler;
    this.#options = options;
  }

  /** The handler's name. */
  get name(): string {
    return this.#options.name;
  }

  /** The handler's resync period in ms on the part informers (0 = never). */
  get resyncPeriodMs(): number {
    const first = this.#parts.values().next().value;
    return first?.registration.resyncPeriodMs ?? this.#options.resyncPeriodMs ?? 0;
  }

  /** Adds the handler to a part's informer. */
  attach(key: K, informer: SharedIndexInformer<T>): void {
    if (this.#removed) return;
    this.#parts.set(key, { informer, registration: informer.addEventHandler(this.#handler, this.#options) });
  }

  /**
   * Takes a part out of this registration. With `keepDelivering`, the handler stays on that part's
   * informer (which hands its last deliveries out as it stops) until {@link PartitionedRegistration.left}.
   */
  detach(key: K, keepDelivering = false): void {
    const part = this.#parts.get(key);
    if (part === undefined) return;
    this.#parts.delete(key);
    if (keepDelivering) this.#leaving.add(part);
    else part.informer.removeEventHandler(part.registration);
  }

  /** A leaving part's informer stopped: forget it. */
  left(informer: SharedIndexInformer<T>): void {
    for (const part of this.#leaving) if (part.informer === informer) this.#leaving.delete(part);
  }

  /** Resolves once nothing more is delivered: removed, or the partitioned informer is stopping. */
  stopping(): Promise<void> {
    return this.#stopping.promise;
  }

  /** Resolves with why delivery ended: `INFORMER_STOPPED` for a removal or a stop, the failure otherwise. */
  ended(): Promise<Error> {
    return this.#ended.promise;
  }

  /** The partitioned informer is stopping: its parts deliver no more. */
  stop(): void {
    this.#stopping.resolve(undefined);
  }

  /** The partitioned informer's run ended, for `reason` (its failure, or `INFORMER_STOPPED`). */
  end(reason: Error): void {
    this.#stopping.resolve(undefined);
    this.#ended.resolve(reason);
  }

  /** Removes the handler from every part, leaving ones too; the registration never syncs again. */
  detachAll(): void {
    this.end(new InformerStoppedError(`handler ${this.name} was removed from ${this.#owner.label}`));
    this.#removed = true;
    for (const key of [...this.#parts.keys()]) this.detach(key);
    for (const part of this.#leaving) part.informer.removeEventHandler(part.registration);
    this.#leaving.clear();
  }

  /** True when every cached part's informer has synced and this handler processed each initial list. */
  hasSynced(): boolean {
    if (this.#removed) return false;
    return this.#owner.keys().every((key) => this.#owner.isFailed(key) || this.#parts.get(key)?.registration.hasSynced() === true);
  }

  /**
   * Resolves once {@link PartitionedRegistration.hasSynced} is true (at once with no part). Rejects
   * when a part's informer cannot sync (its error) unless the owner sets that part aside, when the partitioned informer stops or this handler
   * is removed first (`INFORMER_STOPPED`), and when `signal` aborts. A part dropped while waiting is not an error.
   */
  async whenSynced(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.#removed) throw new InformerStoppedError(`handler ${this.name} of ${this.#owner.label} was removed before it synced`);
      if (this.#owner.isStopped()) throw new InformerStoppedError(`${this.#owner.label} stopped before handler ${this.name} synced`);
      if (this.hasSynced()) return;
      const parts = [...this.#parts].filter(([key]) => !this.#owner.isFailed(key));
      // The parts are waited for without `signal` (they settle when their informer syncs or stops): one
      // abort listener per wait, not one per part.
      const synced = Promise.all(
        parts.map(async ([key, part]) => {
          try {
            await part.registration.whenSynced();
          } catch (err) {
            // A part dropped meanwhile is no failure, nor one its owner sets aside (it says so itself).
            if (this.#parts.get(key) === part && !this.#owner.failed(key, err)) throw err;
          }
        }),
      );
      synced.catch(ignore); // a change of parts may win the race; its rejection is still seen by the race
      await abortableWait(Promise.race([synced, this.#owner.changed()]), signal, `stopped waiting for handler ${this.name} of ${this.#owner.label} to sync: the signal was aborted`);
    }
  }
}
