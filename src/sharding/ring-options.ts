// The shard ring's options and what it reports about itself (see ring.ts and docs/sharding.md).

import type { Clock } from '../core/clock.js';
import type { LoggerOption } from '../core/log.js';
import type { ShardField } from '../core/shard-selector.js';
import type { RingStore } from './store.js';

/** Options of {@link ShardRing}. */
export interface ShardRingOptions {
  /** Where the ring's Leases live: a `LeaseRingStore` (Kubernetes) or an `InMemoryRingStore` (tests). */
  store: RingStore;
  /** The ring's name: prefixes its Lease names. Required. */
  name: string;
  /** This replica's identity, unique among the replicas and per process (e.g. the pod name). Required. */
  identity: string;
  /** Slots the hash space is split into; fixed for the life of the ring; keep it ≥ 10 × the replicas (fewer: a warning, see docs/sharding.md). Default 64. */
  slots?: number;
  /** The field objects are hashed by. Default `'uid'`. */
  field?: ShardField;
  /** How long a slot or member Lease counts as held without a renewal observed, in ms. Default 15 000. */
  leaseDurationMs?: number;
  /** How long a replica keeps a slot without a successful renewal; must be < `leaseDurationMs`. Default 10 000. */
  renewDeadlineMs?: number;
  /** The period of renewals and rebalancing, in ms; must be < `renewDeadlineMs`. Default 2 000. */
  retryPeriodMs?: number;
  /** How long stopping waits for the work of held slots before releasing them anyway, in ms. Default 10 000. */
  stopGraceMs?: number;
  /** Called (synchronously, must not throw) when the set of owned slots changed. Default: none. */
  onSlotsChanged?: (owned: readonly number[]) => void;
  /** Time and timers. Default `realClock`. */
  clock?: Clock;
  /** Where failures to reach the store are logged. Default `console`. */
  logger?: LoggerOption;
}

/** What a ring reports about itself. */
export interface ShardRingHealth {
  /** The ring's name. */
  readonly name: string;
  /** This replica's identity. */
  readonly identity: string;
  /** Live members as last seen, this replica included, sorted. */
  readonly members: readonly string[];
  /** Slots whose new work this replica may start now. */
  readonly owned: readonly number[];
  /** Slots held but being handed over (their work is draining), or being claimed or released. */
  readonly pendingHandovers: readonly number[];
  /** Clock time of the last change of the owned set; undefined before the first. */
  readonly lastRebalanceAt: number | undefined;
  /** Milliseconds since that change; undefined before the first. */
  readonly msSinceLastRebalance: number | undefined;
  /** Periods in a row whose read of the ring failed. */
  readonly failuresInARow: number;
  /** Slots the hash space is split into (the `slots` option). */
  readonly slots: number;
  /**
   * Set once the live members stayed above `slots / 10` for a lease duration (e.g. `11 live members need
   * slots ≥ 110; the ring has 64`), until they fit again: a replica's load may then pass 1.1/N (see
   * docs/sharding.md). Undefined while the rule holds.
   */
  readonly tooFewSlots: string | undefined;
}
