// The shared processor: fans notifications out to every listener and decides whose resync is due.

import type { Clock } from '../core/clock.js';
import { TaskScope } from '../core/task-scope.js';
import { channels, publish } from '../observability/channels.js';
import type { Notification, ProcessorListener } from './listener.js';

/** The smallest resync period a handler may ask for; shorter ones are raised to it. */
export const MINIMUM_RESYNC_PERIOD_MS = 1000;

/**
 * The effective resync period of a handler: 0 when it asked for none or when the informer's check
 * period is 0 (such an informer never resyncs), otherwise the larger of the two.
 */
export function determineResyncPeriod(desiredMs: number, checkMs: number): number {
  if (desiredMs === 0) return 0;
  if (checkMs === 0) return 0;
  return Math.max(desiredMs, checkMs);
}

/**
 * Holds the listeners of one informer (client-go's `sharedProcessor`). `distribute` never blocks:
 * each listener buffers without bound and delivers on its own loop.
 */
export class SharedProcessor<T> {
  /** listener → whether it is flagged "syncing" (receives sync notifications). */
  #listeners = new Map<ProcessorListener<T>, boolean>();
  /**
   * What `distribute` walks, per notification: every listener, and those flagged syncing — arrays
   * rebuilt when a listener or a flag changes, not a Map iterator and an entry per listener per change.
   */
  #all: readonly ProcessorListener<T>[] = [];
  #syncing: readonly ProcessorListener<T>[] = [];
  /** The delivery loops, one task per listener; created by `run`. */
  #scope: TaskScope | undefined;
  #stopped = false;
  #clock: Clock;

  /** Timers of the processor run on `clock`. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Adds a listener, flagged syncing; starts its loop when the processor is running. */
  addListener(listener: ProcessorListener<T>): void {
    this.#listeners.set(listener, true);
    this.#rebuild();
    if (this.isRunning()) this.#startLoop(listener);
  }

  /** Removes a listener and stops it; harmless for an unknown one. Returns whether it was present. */
  removeListener(listener: ProcessorListener<T>): boolean {
    const present = this.#listeners.delete(listener);
    if (present) {
      this.#rebuild();
      listener.stop();
    }
    return present;
  }

  /**
   * Hands `n` to every listener, or for a sync notification (a resync, or a relist that found an
   * unchanged object) only to listeners flagged syncing at the last resync check.
   */
  distribute(n: Notification<T>, isSync: boolean): void {
    const to = isSync ? this.#syncing : this.#all;
    for (let i = 0; i < to.length; i++) to[i].add(n);
  }

  /**
   * Whether any listener `distribute(n, isSync)` would reach has a callback for notifications of `kind`:
   * when none has, the informer need not make the notification (nor read the clock for it).
   */
  wants(kind: Notification<T>['kind'], isSync: boolean): boolean {
    const to = isSync ? this.#syncing : this.#all;
    for (let i = 0; i < to.length; i++) if (to[i].wants(kind)) return true;
    return false;
  }

  #rebuild(): void {
    const all: ProcessorListener<T>[] = [];
    const syncing: ProcessorListener<T>[] = [];
    for (const [listener, flagged] of this.#listeners) {
      all.push(listener);
      if (flagged) syncing.push(listener);
    }
    this.#all = all;
    this.#syncing = syncing;
  }

  /** Starts every listener's loop; listeners added later start at once. */
  run(): void {
    if (this.#scope !== undefined || this.#stopped) return;
    this.#scope = new TaskScope({
      name: 'shared processor',
      clock: this.#clock,
      // A loop that throws past its own error handling (it reports handler failures itself) and ends
      // after the stop grace has nowhere else to go.
      onLateFailure: (error, name) => publish(channels.informerHandlerError, { name, error, late: true }),
    });
    // One abort listener for all loops (not one per listener on the shared signal: past ten, Node prints
    // MaxListenersExceededWarning). The scope aborts on `stop` (which stops every listener itself) or
    // when a loop failed: then every listener stops, and loops started later start stopped.
    this.#scope.signal.addEventListener('abort', () => this.#stopListeners(), { once: true });
    for (const listener of this.#listeners.keys()) this.#startLoop(listener);
  }

  /** True while running (between `run` and `stop`). */
  isRunning(): boolean {
    return this.#scope?.state === 'open';
  }

  /**
   * Stops every listener and waits for their loops to exit — also those of listeners removed while a
   * callback was running — at most `graceMs` (callbacks already running are user code and may never
   * end; they are not awaited past the grace period). Resolves `true` when every loop exited in time;
   * rejects when a loop failed outside its handler error handling. Leaves no timer behind.
   */
  async stop(graceMs: number): Promise<boolean> {
    this.#stopped = true;
    this.#stopListeners();
    if (this.#scope === undefined) return true;
    const { abandoned } = await this.#scope.close(graceMs);
    return abandoned.length === 0;
  }

  /** Resolves once every listener delivered what it had buffered (see `ProcessorListener.whenIdle`). */
  async whenIdle(): Promise<void> {
    await Promise.all([...this.#listeners.keys()].map((listener) => listener.whenIdle()));
  }

  #startLoop(listener: ProcessorListener<T>): void {
    const scope = this.#scope as TaskScope;
    if (scope.signal.aborted) listener.stop();
    void scope.spawn(listener.name, () => listener.run());
  }

  #stopListeners(): void {
    for (const listener of this.#listeners.keys()) listener.stop();
  }

  /**
   * Flags as syncing exactly the listeners whose resync is due at `now` (and schedules their next
   * one); returns whether any is due. Called at every resync check.
   */
  shouldResync(now: number): boolean {
    let any = false;
    for (const listener of this.#listeners.keys()) {
      const due = listener.shouldResync(now);
      this.#listeners.set(listener, due);
      if (due) {
        any = true;
        listener.determineNextResync(now);
      }
    }
    this.#rebuild();
    return any;
  }

  /** Recomputes every listener's effective period after the informer's check period changed. */
  resyncCheckPeriodChanged(checkMs: number): void {
    for (const listener of this.#listeners.keys()) {
      listener.setResyncPeriod(determineResyncPeriod(listener.requestedResyncPeriodMs, checkMs));
    }
  }
}
