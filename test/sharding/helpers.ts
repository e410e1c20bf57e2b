// Shared by the shard ring tests: a Lease store that can be cut off, and a wait that moves a fake clock.

import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, beforeEach } from 'vitest';
import type { Clock, ClockTimer, FakeClock } from '../../src/core/clock.js';
import { channelNames } from '../../src/observability/channels.js';
import type { RingLease, RingStore } from '../../src/sharding/index.js';
import { until } from '../examples/helpers.js';

/** A {@link RingStore} whose every call fails while `cut` is set: a partition, or a server that is down. */
export class CuttableStore implements RingStore {
  cut = false;
  constructor(readonly inner: RingStore) {}
  list(): Promise<RingLease[]> {
    return this.cut ? Promise.reject(new Error('connection refused')) : this.inner.list();
  }
  write(name: string, holder: string, version: string | undefined): Promise<void> {
    return this.cut ? Promise.reject(new Error('connection refused')) : this.inner.write(name, holder, version);
  }
}

/** Advances `clock` in 250 ms steps (letting real I/O run between them) until `holds()`; throws with `what` otherwise. */
export async function settle(clock: FakeClock, what: string, holds: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !holds(); i++) {
    await clock.advance(250);
    await until(() => true, 'a turn');
  }
  await until(holds, what);
}

/**
 * The messages of the `kube-informer:sharding:fallback` channel during each test of the file (the array
 * is emptied before each test). Call at the top of a test file.
 */
export function useShardFallbacks(): unknown[] {
  const fallbacks: unknown[] = [];
  const onFallback = (m: unknown): void => void fallbacks.push(m);
  beforeEach(() => {
    fallbacks.length = 0;
    diagnosticsChannel.subscribe(channelNames.shardFallback, onFallback);
  });
  afterEach(() => void diagnosticsChannel.unsubscribe(channelNames.shardFallback, onFallback));
  return fallbacks;
}

/**
 * A replica's view of a shared fake timeline: its clock runs at `rate` (1 = true time; clock skew is a
 * rate), and a freeze holds its timers back until `thaw` (the process is paused).
 */
export class ReplicaClock implements Clock {
  readonly #base: FakeClock;
  readonly #rate: number;
  readonly #origin: number;
  frozen = false;
  readonly #held: Array<() => void> = [];

  constructor(base: FakeClock, rate: number) {
    this.#base = base;
    this.#rate = rate;
    this.#origin = base.now();
  }
  now(): number {
    return this.#origin + (this.#base.now() - this.#origin) * this.#rate;
  }
  setTimeout(callback: () => void, delayMs: number): ClockTimer {
    return this.#base.setTimeout(() => (this.frozen ? this.#held.push(callback) : callback()), Math.max(0, delayMs) / this.#rate);
  }
  clearTimeout(timer: ClockTimer): void {
    this.#base.clearTimeout(timer);
  }
  thaw(): void {
    this.frozen = false;
    for (const cb of this.#held.splice(0)) cb();
  }
}
