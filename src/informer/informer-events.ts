// `informer.on(...)`: client-node's event names on top of handler registrations and reflector events.

import { type DeletedFinalStateUnknown } from '../core/keys.js';
import { toError } from '../core/errors.js';
import type { DeepReadonly } from '../core/types.js';
import { HandlerError } from './errors.js';
import type { ResourceEventHandler, SharedInformerRegistration } from './handler.js';

/**
 * The listeners of `informer.on(event, listener)`, by event name — client-node's informer events,
 * with the same guarantees as `addEventHandler`:
 *
 * - `add(obj, isInInitialList)`: an object appeared (also once per object of the first list).
 * - `update(obj, oldObj)`: an object changed, or was re-delivered by a resync — the new object first,
 *   as client-node passes it.
 * - `change(obj)`: `add` or `update`.
 * - `delete(obj)`: an object was deleted; a {@link DeletedFinalStateUnknown} tombstone when only a
 *   relist noticed it.
 * - `error(err)`: a list or watch failed; the informer recovers by itself (unlike client-node's,
 *   which stops). To learn that it cannot sync at all, await `whenSynced()`.
 * - `connect()`: a watch opened.
 * - `synced()`: the first full list is in the cache **and** has reached every `add`/`update`/`change`/
 *   `delete` listener added before the sync (each registration's `hasSynced()`, client-go's meaning):
 *   a count of `add` calls read in a `synced` listener is the whole initial list. Not called when the
 *   informer stops first.
 *
 * Each `add`/`update`/`change`/`delete` listener is its own handler registration, with its own buffer
 * and delivery loop (a slow one delays only itself; it shows in `health()` as `on-<event>-<n>`).
 * `error`/`connect`/`synced` listeners are called as the informer learns of the event. Any listener
 * that throws or rejects stops the informer, and `run()` rejects with a `HandlerError` (code
 * `HANDLER_FAILED`) whose `cause` is what it threw — as a throwing handler does.
 */
export interface InformerEventListeners<T> {
  /** An object was added (or listed by the first list). */
  add: (obj: DeepReadonly<T>, isInInitialList: boolean) => void | Promise<void>;
  /** An object changed, or was re-delivered by a resync. */
  update: (obj: DeepReadonly<T>, oldObj: DeepReadonly<T>) => void | Promise<void>;
  /** An object was added or changed. */
  change: (obj: DeepReadonly<T>) => void | Promise<void>;
  /** An object was deleted; a tombstone when its final state is unknown. */
  delete: (obj: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>) => void | Promise<void>;
  /** A list or watch failed; the informer retries by itself. */
  error: (err: Error) => void | Promise<void>;
  /** A watch opened. */
  connect: () => void | Promise<void>;
  /** The cache synced and the initial objects reached every object-event listener (`add`, ...). */
  synced: () => void | Promise<void>;
}

/** An event name of `informer.on(...)`. */
export type InformerEventName = keyof InformerEventListeners<unknown>;

/** The events a listener receives through a handler registration. */
type ObjectEventName = 'add' | 'update' | 'change' | 'delete';
/** The events the informer emits itself. */
type SignalEventName = 'error' | 'connect' | 'synced';

const OBJECT_EVENTS = new Set<string>(['add', 'update', 'change', 'delete']);
const SIGNAL_EVENTS = new Set<string>(['error', 'connect', 'synced']);

/** What {@link InformerEvents} needs from its informer. */
export interface InformerEventsHost<T> {
  /** Registers a handler (its own buffer and loop). */
  addEventHandler(handler: ResourceEventHandler<T>, options: { name: string }): SharedInformerRegistration;
  /** Removes a registration. */
  removeEventHandler(registration: SharedInformerRegistration): void;
  /** Stops the informer with this error (the first failure wins). */
  fail(err: Error): void;
}

/** Keeps the `on`/`off` listeners of one informer and turns them into registrations and calls. */
export class InformerEvents<T> {
  readonly #host: InformerEventsHost<T>;
  readonly #registrations = new Map<string, Map<unknown, SharedInformerRegistration[]>>();
  readonly #signals = new Map<SignalEventName, Array<(...args: never[]) => unknown>>();
  #count = 0;

  /** `host` is the informer. */
  constructor(host: InformerEventsHost<T>) {
    this.#host = host;
  }

  /** Adds `listener` for `event`; the same function added twice is called twice. */
  on<E extends InformerEventName>(event: E, listener: InformerEventListeners<T>[E]): void {
    if (typeof listener !== 'function') throw new TypeError(`informer.on('${event}', listener): the listener must be a function`);
    if (SIGNAL_EVENTS.has(event)) {
      const list = this.#signals.get(event as SignalEventName) ?? [];
      list.push(listener);
      this.#signals.set(event as SignalEventName, list);
      return;
    }
    if (!OBJECT_EVENTS.has(event)) {
      throw new TypeError(`informer.on: unknown event '${String(event)}' (add, update, change, delete, error, connect, synced)`);
    }
    const name = `on-${event}-${++this.#count}`;
    const registration = this.#host.addEventHandler(handlerFor<T>(event as ObjectEventName, listener), { name });
    const byListener = this.#registrations.get(event) ?? new Map<unknown, SharedInformerRegistration[]>();
    byListener.set(listener, [...(byListener.get(listener) ?? []), registration]);
    this.#registrations.set(event, byListener);
  }

  /** Removes one registration of `listener` for `event` (the most recent); harmless when absent. */
  off<E extends InformerEventName>(event: E, listener: InformerEventListeners<T>[E]): void {
    if (SIGNAL_EVENTS.has(event)) {
      const list = this.#signals.get(event as SignalEventName) ?? [];
      const at = list.lastIndexOf(listener);
      if (at >= 0) list.splice(at, 1);
      return;
    }
    const byListener = this.#registrations.get(event);
    const regs = byListener?.get(listener);
    const registration = regs?.pop();
    if (registration === undefined) return;
    if (regs?.length === 0) byListener?.delete(listener);
    this.#host.removeEventHandler(registration);
  }

  /**
   * Calls the listeners of `event`; one that throws or rejects stops the informer. `synced` listeners
   * are called once every object-event registration has handled the initial list (at once when they
   * all have; never when one's wait rejects: the informer stopped).
   */
  emit(event: 'error', err: Error): void;
  emit(event: 'connect' | 'synced'): void;
  emit(event: SignalEventName, ...args: unknown[]): void {
    if (event === 'synced') {
      const pending = this.#objectRegistrations().filter((r) => !r.hasSynced());
      if (pending.length > 0) {
        void Promise.allSettled(pending.map((r) => r.whenSynced())).then((results) => {
          // A wait rejects when the informer stopped (then there is no sync to tell of) or when its
          // listener was removed with `off` (then it no longer counts).
          const live = new Set(this.#objectRegistrations());
          if (results.every((res, i) => res.status === 'fulfilled' || !live.has(pending[i]))) this.#call(event, args);
        });
        return;
      }
    }
    this.#call(event, args);
  }

  #objectRegistrations(): SharedInformerRegistration[] {
    return [...this.#registrations.values()].flatMap((byListener) => [...byListener.values()].flat());
  }

  #call(event: SignalEventName, args: unknown[]): void {
    for (const listener of [...(this.#signals.get(event) ?? [])]) {
      const fail = (err: unknown): void => this.#host.fail(new HandlerError(`on('${event}')`, event, undefined, toError(err)));
      try {
        const result = (listener as (...a: unknown[]) => unknown)(...args);
        if (result instanceof Promise) result.catch(fail);
      } catch (err) {
        fail(err);
      }
    }
  }
}

function handlerFor<T>(event: ObjectEventName, listener: (...args: never[]) => void | Promise<void>): ResourceEventHandler<T> {
  const call = listener as (...args: unknown[]) => void | Promise<void>;
  switch (event) {
    case 'add':
      return { onAdd: (obj, initial) => call(obj, initial) };
    case 'update':
      return { onUpdate: (oldObj, newObj) => call(newObj, oldObj) };
    case 'change':
      return { onAdd: (obj) => call(obj), onUpdate: (_old, newObj) => call(newObj) };
    case 'delete':
      return { onDelete: (obj) => call(obj) };
  }
}
