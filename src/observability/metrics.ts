// Work-queue metrics: the provider interface (client-go's MetricsProvider) and the per-queue recorder.

import type { Clock, ClockTimer } from '../core/index.js';
import { channels, publish } from './channels.js';

/** A gauge that moves by one (the queue depth). */
export interface GaugeMetric {
  /** Adds one. */
  inc(): void;
  /** Subtracts one. */
  dec(): void;
}

/** A gauge set to an absolute value (unfinished work, longest-running processor). */
export interface SettableGaugeMetric {
  /** Sets the current value. */
  set(value: number): void;
}

/** A monotonically increasing counter (adds, retries). */
export interface CounterMetric {
  /** Adds one. */
  inc(): void;
}

/** A distribution of observed values, in seconds (queue latency, work duration). */
export interface HistogramMetric {
  /** Records one observation. */
  observe(value: number): void;
}

/**
 * Creates the metrics of one named queue; mirrors client-go's `workqueue.MetricsProvider`. Each method
 * is called once per queue, at construction, with the queue's `name`. Durations are in seconds.
 *
 * - depth: +1 when an item becomes newly dirty, −1 when a worker takes it.
 * - adds: every add that made an item newly dirty (re-adds of a dirty item are not counted).
 * - latency: seconds from an item's first add to the `get` that handed it out.
 * - workDuration: seconds from `get` to `done`.
 * - unfinishedWorkSeconds: the summed age of every item currently being processed, refreshed periodically.
 * - longestRunningProcessorSeconds: the age of the oldest item being processed, refreshed periodically.
 * - retries: every `addAfter` / `addRateLimited` call.
 *
 * See {@link prometheusWorkQueueMetricsProvider} for a ready-made Prometheus implementation.
 */
export interface WorkQueueMetricsProvider {
  /** The depth gauge of queue `name`. */
  newDepthMetric(name: string): GaugeMetric;
  /** The adds counter of queue `name`. */
  newAddsMetric(name: string): CounterMetric;
  /** The queue-latency histogram (seconds) of queue `name`. */
  newLatencyMetric(name: string): HistogramMetric;
  /** The work-duration histogram (seconds) of queue `name`. */
  newWorkDurationMetric(name: string): HistogramMetric;
  /** The unfinished-work gauge (seconds) of queue `name`. */
  newUnfinishedWorkSecondsMetric(name: string): SettableGaugeMetric;
  /** The longest-running-processor gauge (seconds) of queue `name`. */
  newLongestRunningProcessorSecondsMetric(name: string): SettableGaugeMetric;
  /** The retries counter of queue `name`. */
  newRetriesMetric(name: string): CounterMetric;
}

/** The events published on `channelNames.workqueue`. */
export type WorkQueueEventType = 'add' | 'get' | 'done' | 'retry' | 'shutdown';

/**
 * A message on the `channelNames.workqueue` diagnostics channel: `{ name, event, item }` (no `item` on
 * `shutdown`). `add` is published only when the item became newly dirty.
 */
export interface WorkQueueEvent {
  /** The queue's `name` option (`''` when unnamed). */
  name: string;
  /** What happened. */
  event: WorkQueueEventType;
  /** The item concerned. */
  item?: unknown;
}

interface ProviderMetrics {
  depth: GaugeMetric;
  adds: CounterMetric;
  latency: HistogramMetric;
  workDuration: HistogramMetric;
  unfinished: SettableGaugeMetric;
  longest: SettableGaugeMetric;
  retries: CounterMetric;
}

/**
 * Records one queue's metrics and diagnostics events: the work queues', and the controller runtime's
 * scheduler (a queue of keys named after its controller). Internal to the library. Without a
 * provider it keeps no per-item state; the periodic gauge refresh runs only while a provider is set and
 * the queue has not shut down.
 */
export class QueueMetrics<T> {
  readonly #name: string;
  readonly #clock: Clock;
  readonly #m: ProviderMetrics | undefined;
  readonly #periodMs: number;
  readonly #addTimes = new Map<T, number>();
  readonly #processingStarts = new Map<T, number>();
  #timer: ClockTimer | undefined;

  constructor(name: string, clock: Clock, provider: WorkQueueMetricsProvider | undefined, periodMs: number) {
    this.#name = name;
    this.#clock = clock;
    this.#periodMs = periodMs;
    if (provider !== undefined) {
      this.#m = {
        depth: provider.newDepthMetric(name),
        adds: provider.newAddsMetric(name),
        latency: provider.newLatencyMetric(name),
        workDuration: provider.newWorkDurationMetric(name),
        unfinished: provider.newUnfinishedWorkSecondsMetric(name),
        longest: provider.newLongestRunningProcessorSecondsMetric(name),
        retries: provider.newRetriesMetric(name),
      };
      this.#schedule();
    }
  }

  /** Whether a provider records anything (else only the diagnostics channel hears the calls). */
  get enabled(): boolean {
    return this.#m !== undefined;
  }

  /** An item became newly dirty (at clock time `at`, default now: the start of its queue latency). */
  add(item: T, at?: number): void {
    const m = this.#m;
    if (m !== undefined) {
      m.adds.inc();
      m.depth.inc();
      if (!this.#addTimes.has(item)) this.#addTimes.set(item, at ?? this.#clock.now());
    }
    if (channels.workqueue.hasSubscribers) this.#publish('add', item);
  }

  /** A worker took the item. */
  get(item: T): void {
    const m = this.#m;
    if (m !== undefined) {
      const now = this.#clock.now();
      m.depth.dec();
      this.#processingStarts.set(item, now);
      const addedAt = this.#addTimes.get(item);
      if (addedAt !== undefined) {
        m.latency.observe((now - addedAt) / 1000);
        this.#addTimes.delete(item);
      }
    }
    if (channels.workqueue.hasSubscribers) this.#publish('get', item);
  }

  /** A worker finished the item. */
  done(item: T): void {
    const m = this.#m;
    if (m !== undefined) {
      const startedAt = this.#processingStarts.get(item);
      if (startedAt !== undefined) {
        m.workDuration.observe((this.#clock.now() - startedAt) / 1000);
        this.#processingStarts.delete(item);
      }
    }
    if (channels.workqueue.hasSubscribers) this.#publish('done', item);
  }

  /** The item left the queue without a worker taking it (a scheduler's `forget`): out of the depth. */
  drop(item: T): void {
    const m = this.#m;
    if (m !== undefined && this.#addTimes.delete(item)) m.depth.dec();
  }

  /** A delayed add was requested. */
  retry(item: T): void {
    this.#m?.retries.inc();
    if (channels.workqueue.hasSubscribers) this.#publish('retry', item);
  }

  /** Refreshes the unfinished-work and longest-running gauges now. */
  updateUnfinishedWork(): void {
    const m = this.#m;
    if (m === undefined) return;
    const now = this.#clock.now();
    let total = 0;
    let oldest = 0;
    for (const startedAt of this.#processingStarts.values()) {
      const age = now - startedAt;
      total += age;
      if (age > oldest) oldest = age;
    }
    m.unfinished.set(total / 1000);
    m.longest.set(oldest / 1000);
  }

  /** The queue shut down: stop the periodic refresh (after one last refresh) and tell listeners. */
  shutdown(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
      this.updateUnfinishedWork();
    }
    if (channels.workqueue.hasSubscribers) publish(channels.workqueue, { name: this.#name, event: 'shutdown' });
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.updateUnfinishedWork();
      this.#schedule();
    }, this.#periodMs);
    // The refresh alone must never keep a process alive.
    this.#timer.unref?.();
  }

  #publish(event: WorkQueueEventType, item: T): void {
    const message: WorkQueueEvent = { name: this.#name, event, item };
    publish(channels.workqueue, message);
  }
}
