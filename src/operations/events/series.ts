// The correlator's memory: live series by key (a window and an LRU bound), and the per-object token buckets.

import { TokenBucket } from '../../runtime/token-bucket.js';
import type { EventsV1Event } from './types.js';

/**
 * One series: an Event as first written, the occurrences seen since, and what the server has. A write
 * brings the server to `count` — a create (with `series` once `count` ≥ 2) or a PATCH of `series`.
 */
export interface SeriesEntry {
  /** The series key. */
  readonly key: string;
  /** The Event to create (its name can be replaced after a name collision). */
  readonly event: EventsV1Event;
  /** Occurrences in the series (1: a singleton so far). */
  count: number;
  /** Clock ms of the last occurrence: the series window counts from it. */
  lastObservedAt: number;
  /** MicroTime of the last occurrence (`series.lastObservedTime`). */
  lastObservedTime: string;
  /** Occurrences not yet carried by a write attempt. */
  pending: number;
  /** The count the server has (0: nothing written yet). */
  writtenCount: number;
  /** The Event exists on the server, as far as the recorder knows. */
  created: boolean;
  /** The count a create carried whose outcome is unknown (a timeout, a reset, a 5xx); 0 when none. */
  ambiguousCount: number;
  /** A write of this series waits in the buffer. */
  queued: boolean;
}

/**
 * The live series, least recently observed first. A series lives while repeats come within `windowMs`
 * of its last occurrence (client-go's `finishTime`); expired ones are pruned from the front on each
 * lookup, so no timer is needed, and at most `capacity` are kept.
 */
export class SeriesCache {
  readonly #entries = new Map<string, SeriesEntry>();
  readonly #windowMs: number;
  readonly #capacity: number;

  constructor(windowMs: number, capacity: number) {
    this.#windowMs = windowMs;
    this.#capacity = capacity;
  }

  /** How many series are remembered. */
  get size(): number {
    return this.#entries.size;
  }

  /** The series of `key` if its last occurrence is within the window at `now`; prunes expired ones. */
  get(key: string, now: number): SeriesEntry | undefined {
    for (const [k, e] of this.#entries) {
      if (!this.#expired(e, now)) break;
      this.#entries.delete(k);
    }
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#expired(entry, now)) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Marks `entry` as the most recently observed. */
  touch(entry: SeriesEntry): void {
    if (this.#entries.delete(entry.key)) this.#entries.set(entry.key, entry);
  }

  /** Remembers a new series, forgetting the least recently observed beyond the capacity. */
  add(entry: SeriesEntry): void {
    this.#entries.delete(entry.key);
    this.#entries.set(entry.key, entry);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }

  #expired(entry: SeriesEntry, now: number): boolean {
    return now - entry.lastObservedAt > this.#windowMs;
  }
}

/**
 * Token buckets by key (client-go's `EventSourceObjectSpamFilter`: a passive token bucket per key in an
 * LRU cache): each starts full with `burst` tokens and gets one back every `refillMs`, continuously. A
 * forgotten bucket starts full again. `refillMs` 0 means no limit.
 */
export class TokenBuckets {
  readonly #buckets = new Map<string, TokenBucket>();
  readonly #burst: number;
  readonly #refillMs: number;
  readonly #capacity: number;

  constructor(burst: number, refillMs: number, capacity: number) {
    this.#burst = burst;
    this.#refillMs = refillMs;
    this.#capacity = capacity;
  }

  /** Takes a token from `key`'s bucket at `now`; false when it has none. */
  tryTake(key: string, now: number): boolean {
    if (this.#refillMs === 0) return true;
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) bucket = new TokenBucket(this.#burst, 1, this.#refillMs, now);
    else this.#buckets.delete(key); // re-inserted below: most recently used last
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > this.#capacity) {
      const oldest = this.#buckets.keys().next();
      if (oldest.done !== true) this.#buckets.delete(oldest.value);
    }
    return bucket.tryTake(now);
  }
}
