// A SharedIndexInformer's handler registrations: each handler's listener, its name and resync period,
// and the informer's resync check period, which handlers added before `run()` may lower.

import type { SharedInformerRegistration, ResourceEventHandler } from './handler.js';
import type { StreamEnd } from './events-stream.js';
import { ProcessorListener, type ProcessorListenerOptions } from './listener.js';
import { determineResyncPeriod, MINIMUM_RESYNC_PERIOD_MS, type SharedProcessor } from './processor.js';

/** What `addEventHandler` returns: a handle on one handler's listener. */
export class Registration<T> implements SharedInformerRegistration, StreamEnd {
  readonly listener: ProcessorListener<T>;
  constructor(listener: ProcessorListener<T>) {
    this.listener = listener;
  }
  get name(): string {
    return this.listener.name;
  }
  get resyncPeriodMs(): number {
    return this.listener.resyncPeriodMs;
  }
  hasSynced(): boolean {
    return this.listener.hasSynced();
  }
  whenSynced(signal?: AbortSignal): Promise<void> {
    return this.listener.synced.wait(signal);
  }
  /** Resolves once nothing more is delivered to the handler (see {@link StreamEnd}). */
  stopping(): Promise<void> {
    return this.listener.whenStopped();
  }
  /** Resolves with why delivery ended: the informer's failure, or `INFORMER_STOPPED` (see {@link StreamEnd}). */
  ended(): Promise<Error> {
    return this.listener.synced.failed();
  }
}

/** A listener's options beside its name and periods: the same for every handler of one informer. */
export type ListenerBasics = Omit<ProcessorListenerOptions, 'name' | 'requestedResyncPeriodMs' | 'resyncPeriodMs'>;

/** The registrations of one informer, in the order they were added, and their processor. */
export class Registrations<T> implements Iterable<Registration<T>> {
  readonly #all = new Set<Registration<T>>();
  readonly #processor: SharedProcessor<T>;
  readonly #defaultResyncMs: number;
  #checkPeriodMs: number;
  #count = 0;

  /** `defaultResyncMs` is the informer's `resyncPeriodMs`: a handler's default, and the first check period. */
  constructor(processor: SharedProcessor<T>, defaultResyncMs: number) {
    this.#processor = processor;
    this.#defaultResyncMs = defaultResyncMs;
    this.#checkPeriodMs = defaultResyncMs;
  }

  /** The name of a handler added without one: `handler-<n>`, counting every handler added. */
  nextName(): string {
    return `handler-${++this.#count}`;
  }

  /** How often the informer checks whether a handler's resync is due, in ms (see `resyncCheckPeriodMs()`). */
  get checkPeriodMs(): number {
    return this.#checkPeriodMs;
  }

  /**
   * Registers `handler` with its listener and hands the listener to the processor. Its period is the
   * one it asked for (`requestedMs`, default the informer's), raised to the minimum; a period shorter
   * than the check period lowers the check period before `run()` (`started` false) and is raised to it
   * after, as client-go does.
   */
  add(handler: ResourceEventHandler<T>, name: string, requestedMs: number | undefined, started: boolean, basics: ListenerBasics): Registration<T> {
    let period = requestedMs ?? this.#defaultResyncMs;
    if (period > 0) {
      if (period < MINIMUM_RESYNC_PERIOD_MS) period = MINIMUM_RESYNC_PERIOD_MS;
      if (period < this.#checkPeriodMs) {
        if (started) period = this.#checkPeriodMs;
        else {
          this.#checkPeriodMs = period;
          this.#processor.resyncCheckPeriodChanged(period);
        }
      }
    }
    const listener = new ProcessorListener<T>(handler, {
      name,
      requestedResyncPeriodMs: period,
      resyncPeriodMs: determineResyncPeriod(period, this.#checkPeriodMs),
      ...basics,
    });
    const registration = new Registration(listener);
    this.#all.add(registration);
    this.#processor.addListener(listener);
    return registration;
  }

  /** Removes `registration` and stops its listener; returns it, or `undefined` when it was not one of these. */
  remove(registration: SharedInformerRegistration): Registration<T> | undefined {
    const reg = registration as Registration<T>;
    if (!this.#all.delete(reg)) return undefined;
    this.#processor.removeListener(reg.listener);
    return reg;
  }

  /** True when `registration` is registered here. */
  has(registration: SharedInformerRegistration): boolean {
    return this.#all.has(registration as Registration<T>);
  }

  /** How many handlers are registered. */
  get size(): number {
    return this.#all.size;
  }

  [Symbol.iterator](): IterableIterator<Registration<T>> {
    return this.#all.values();
  }
}
