// The shard ring: replicas of one controller share the hash space, slot by slot, over Leases.
// Each period a replica renews its member Lease, reads the ring's Leases, computes who should hold
// which slot from the live members, and steps every slot's state machine (slot.ts). See docs/sharding.md.

import { setMaxListeners } from 'node:events';
import { ABORTED, ChildAbort, TIMED_OUT, callWithTimeout } from '../core/abort.js';
import { AbortedError, AlreadyStartedError, ErrorCodes, KubeInformerError } from '../core/errors.js';
import { realClock, sleep, type Clock, type ClockTimer } from '../core/clock.js';
import { RateLimitedLog, errorFields, formatDuration, resolveLogger, withFields, type Logger } from '../core/log.js';
import { InvalidOptionError, validateOptions } from '../core/options.js';
import { hasPermissions, type HasPermissions, type Permission } from '../core/permissions.js';
import { HASH_SPACE, evenRange, shardFieldValue, shardHash, shardSelector, type HashRange, type ShardField, type ShardSelector } from '../core/shard-selector.js';
import { channels, publish } from '../observability/channels.js';
import { assignSlots } from './assign.js';
import { IDLE, slotOwned, stepSlot, type SlotEffect, type SlotEvent, type SlotState } from './slot.js';
import type { ShardRingHealth, ShardRingOptions } from './ring-options.js';
import { RingConflictError, type RingLease, type RingStore } from './store.js';

interface Observed {
  version: string;
  at: number;
}

/**
 * A replica's membership in a shard ring. Guarantee: a slot is owned by at most one replica at a time,
 * as long as clocks run at the same rate within `(leaseDurationMs − renewDeadlineMs) / leaseDurationMs`
 * and work of a slot stops when its signal aborts (see docs/sharding.md for the argument and the
 * sequence diagrams). Start work only when {@link ShardRing.owns} says so, run it under
 * {@link ShardRing.track}: a slot handed over is released only after its tracked work finished.
 */
export class ShardRing implements HasPermissions {
  readonly #store: RingStore;
  readonly #name: string;
  readonly #identity: string;
  readonly #slotCount: number;
  readonly #field: ShardField;
  readonly #timing: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number; stopGraceMs: number };
  readonly #clock: Clock;
  readonly #log: Logger;
  /** Failed reads of the store: the first at once, then one line per interval with a count. */
  readonly #readFailures: RateLimitedLog;
  readonly #onSlotsChanged: ((owned: readonly number[]) => void) | undefined;
  #slots: SlotState[];
  readonly #inFlight: number[];
  readonly #fences: AbortController[];
  /** Per slot: the timer that fences it at `renewedAt + renewDeadline` unless renewed first. */
  readonly #deadlines: Array<ClockTimer | undefined>;
  readonly #observed = new Map<string, Observed>();
  #members: string[] = [];
  #owned: number[] = [];
  #lastRebalanceAt: number | undefined;
  /** Set while the live members outgrow `slots / 10` (the load rule), to warn once per crossing. */
  #tooFewSlots: string | undefined;
  /** When the members were first seen above `slots / 10` in this crossing. */
  #overSince: number | undefined;
  #failures = 0;
  #running = false;
  /** What bounds store calls besides the deadline: the run's signal, and nothing while leaving. */
  #opParent: AbortSignal = new AbortController().signal;
  readonly #listeners = new Set<(owned: readonly number[]) => void>();
  #wakeDrain: (() => void) | undefined;

  constructor(options: ShardRingOptions) {
    validateOptions('ShardRing', options, {
      store: 'object', name: 'string', identity: 'string', slots: 'positiveCount', field: ['uid', 'namespace'],
      leaseDurationMs: 'positiveDuration', renewDeadlineMs: 'positiveDuration', retryPeriodMs: 'positiveDuration', stopGraceMs: 'duration',
      onSlotsChanged: 'function', clock: 'clock', logger: 'logger',
    });
    const leaseDurationMs = options.leaseDurationMs ?? 15_000;
    const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    const retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (!options.name || !options.identity) throw new InvalidOptionError('ShardRing: name and identity are required (non-empty strings)');
    if (!(retryPeriodMs < renewDeadlineMs && renewDeadlineMs < leaseDurationMs)) {
      throw new InvalidOptionError(`ShardRing: needs retryPeriodMs < renewDeadlineMs < leaseDurationMs, got ${retryPeriodMs}, ${renewDeadlineMs}, ${leaseDurationMs}`);
    }
    this.#store = options.store;
    this.#name = options.name;
    this.#identity = options.identity;
    this.#slotCount = options.slots ?? 64;
    this.#field = options.field ?? 'uid';
    this.#timing = { leaseDurationMs, renewDeadlineMs, retryPeriodMs, stopGraceMs: options.stopGraceMs ?? 10_000 };
    this.#clock = options.clock ?? realClock;
    this.#log = withFields(resolveLogger(options.logger), { component: 'shard-ring', name: this.#name });
    this.#readFailures = new RateLimitedLog(this.#log, this.#clock);
    this.#onSlotsChanged = options.onSlotsChanged;
    this.#slots = new Array<SlotState>(this.#slotCount).fill(IDLE);
    this.#inFlight = new Array<number>(this.#slotCount).fill(0);
    this.#fences = Array.from({ length: this.#slotCount }, () => new AbortController());
    this.#deadlines = new Array<ClockTimer | undefined>(this.#slotCount).fill(undefined);
  }

  /** `shard-ring:<name>`: its name as a `Runnable` (a `Manager`'s `runnables` may hold the ring) and in log lines. */
  get name(): string {
    return `shard-ring:${this.#name}`;
  }

  /** This replica's identity. */
  get identity(): string {
    return this.#identity;
  }

  /** What objects are hashed by (`uid` or `namespace`). */
  get field(): ShardField {
    return this.#field;
  }

  /**
   * What the ring needs (see `HasPermissions`): its store's permissions (a `LeaseRingStore`: `list`,
   * `create`, `update` of Leases in its namespace); none for a store that has no `permissions()`
   * (`InMemoryRingStore`).
   */
  permissions(): Permission[] {
    return hasPermissions(this.#store) ? this.#store.permissions() : [];
  }

  /** Whether `run` is in progress (only a running ring owns slots). */
  get running(): boolean {
    return this.#running;
  }

  /** The slot an object belongs to: the top of its field's hash, scaled to the slot count. */
  slotOf(obj: unknown): number {
    return this.slotOfName(shardFieldValue(obj, this.#field));
  }

  /**
   * The slot a name belongs to, hashed as `slotOf` hashes an object's field value: what places
   * something that is not an object (a cluster, in `shardedClusters`) on the ring.
   */
  slotOfName(name: string): number {
    return Number((BigInt(`0x${shardHash(name)}`) * BigInt(this.#slotCount)) / HASH_SPACE);
  }

  /** The hash range of slot `i`. */
  rangeOf(slot: number): HashRange {
    return evenRange(slot, this.#slotCount);
  }

  /** A shard selector for the given slots (adjacent ones merged), or undefined for none. */
  selectorFor(slots: readonly number[]): ShardSelector | undefined {
    return slots.length === 0 ? undefined : shardSelector(this.#field, slots.map((s) => this.rangeOf(s)));
  }

  /** Whether new work of `slot` may start now. */
  owns(slot: number): boolean {
    const state = this.#slots[slot];
    return state !== undefined && slotOwned(state, this.#clock.now(), this.#timing);
  }

  /** The slots owned now, ascending. */
  ownedSlots(): number[] {
    const now = this.#clock.now(); // one instant for every slot
    const owned: number[] = [];
    this.#slots.forEach((s, i) => {
      if (slotOwned(s, now, this.#timing)) owned.push(i);
    });
    return owned;
  }

  /**
   * Aborted when this replica stops owning `slot` without a handover (a renewal too late, the Lease
   * taken): work of the slot must stop. A fresh signal after each abort.
   */
  signalFor(slot: number): AbortSignal {
    return this.#fences[this.#checkSlot('signalFor', slot)].signal;
  }

  /**
   * Counts `work` as in flight on `slot` until it settles; a slot handed over waits for it. Returns
   * `work`. Throws `INVALID_OPTION` for a slot that is not an integer in `[0, slots)`, as `signalFor`
   * does (`owns` answers false for one).
   */
  track<V>(slot: number, work: Promise<V>): Promise<V> {
    this.#inFlight[this.#checkSlot('track', slot)]++;
    const done = (): void => {
      this.#inFlight[slot]--;
      if (this.#inFlight[slot] === 0) this.#wakeDrain?.();
    };
    work.then(done, done);
    return work;
  }

  /**
   * Calls `listener` (synchronously; it must not throw) on every change of the owned set, like
   * `onSlotsChanged`. Returns the function that removes it.
   */
  subscribe(listener: (owned: readonly number[]) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Owned slots, pending handovers, members, the last rebalance and failed reads, now (see docs/sharding.md#health). */
  health(): ShardRingHealth {
    return {
      name: this.#name,
      identity: this.#identity,
      members: [...this.#members],
      owned: this.ownedSlots(),
      pendingHandovers: this.#slots.flatMap((s, i) => (s.kind === 'draining' || s.kind === 'acquiring' || s.kind === 'releasing' ? [i] : [])),
      lastRebalanceAt: this.#lastRebalanceAt,
      msSinceLastRebalance: this.#lastRebalanceAt === undefined ? undefined : this.#clock.now() - this.#lastRebalanceAt,
      failuresInARow: this.#failures,
      slots: this.#slotCount,
      tooFewSlots: this.#tooFewSlots,
    };
  }

  /**
   * Joins the ring and keeps this replica's share until `signal` aborts; then hands every slot over
   * (drained, at most `stopGraceMs`), marks the member Lease free and resolves. Rejects only when
   * already running.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new AlreadyStartedError(`shard ring ${this.#name}`);
    this.#running = true;
    // One listener on the caller's signal; the store calls of a period (one per held slot, at once)
    // listen on this child, whose listener limit fits them.
    const op = new ChildAbort(signal);
    setMaxListeners(this.#slotCount + 16, op.signal);
    this.#opParent = op.signal;
    try {
      while (!signal.aborted) {
        await this.#period(true);
        if (!(await sleep(this.#clock, this.#timing.retryPeriodMs, signal))) break;
      }
      this.#opParent = new AbortController().signal; // the handover's writes must go out
      setMaxListeners(this.#slotCount + 16, this.#opParent);
      await this.#leave();
    } finally {
      op.dispose();
      this.#running = false;
    }
  }

  #checkSlot(what: string, slot: number): number {
    if (!Number.isInteger(slot) || slot < 0 || slot >= this.#slotCount) {
      throw new InvalidOptionError(`shard ring ${this.#name}: ${what}(${String(slot)}): a slot is an integer in [0, ${this.#slotCount})`);
    }
    return slot;
  }

  /**
   * The load rule (docs/sharding.md): slots ≥ 10 × live members keeps every replica within 1.1/N of the
   * objects; fewer, and a replica's whole-slot share alone can pass it. A warning once the members
   * stayed above `slots / 10` for a lease duration, an info line when they are back within: once per
   * crossing, not per period. The lease duration passes over what is no crossing: a newcomer counts a
   * dead member until its Lease expires in the newcomer's view, a rolling update adds a pod for a moment.
   */
  #checkSlotRule(now: number): void {
    const n = this.#members.length;
    const fits = n * 10 <= this.#slotCount;
    if (fits) {
      if (this.#tooFewSlots !== undefined) this.#log.info(`shard ring ${this.#name}: ${n} live members fit ${this.#slotCount} slots again (slots ≥ 10 × N)`);
      this.#tooFewSlots = undefined;
      this.#overSince = undefined;
      return;
    }
    this.#overSince ??= now;
    if (this.#tooFewSlots !== undefined || now - this.#overSince < this.#timing.leaseDurationMs) return;
    this.#tooFewSlots = `${n} live members need slots ≥ ${n * 10}; the ring has ${this.#slotCount}`;
    const most = Math.ceil(this.#slotCount / n);
    const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;
    this.#log.warn(
      `shard ring ${this.#name}: ${n} live members but ${this.#slotCount} slots: too coarse to keep each replica within 1.1/N of the objects (${pct(1.1 / n)}; ` +
        `a replica may hold ${most} slots, ${pct(most / this.#slotCount)}, before the hash's own unevenness); set slots: ≥ 10 × N (${n * 10} here), ` +
        `the same value on every replica, and restart them all (the slot count is fixed for the life of the ring)`,
      { members: n, slots: this.#slotCount },
    );
  }

  #memberLease(identity: string): string {
    return `${this.#name}-member-${identity}`;
  }

  #slotLease(slot: number): string {
    return `${this.#name}-slot-${slot}`;
  }

  /** One period: read, heartbeat, assign, step every slot, write, release what drained. */
  async #period(staying: boolean): Promise<void> {
    let leases: Map<string, RingLease>;
    try {
      leases = new Map((await this.#list()).map((l) => [l.name, l]));
      if (this.#failures > 0) {
        this.#log.info(`shard ring ${this.#name}: reading the ring works again after ${this.#failures} failed reads`);
        this.#readFailures.reset();
      }
      this.#failures = 0;
    } catch (err) {
      this.#failures++;
      this.#readFailures.log('warn', 'read', `shard ring ${this.#name}: reading the ring failed (${this.#failures} in a row), slots not renewed: ${String(err)}`);
      this.#settle();
      return;
    }
    // After the read: a version is observed no earlier than it was written, so expiry is never early.
    const now = this.#clock.now();
    for (const l of leases.values()) {
      const seen = this.#observed.get(l.name);
      if (seen === undefined || seen.version !== l.version) this.#observed.set(l.name, { version: l.version, at: now });
    }
    const expired = (name: string): boolean => now - (this.#observed.get(name)?.at ?? now) >= this.#timing.leaseDurationMs;
    const mine = leases.get(this.#memberLease(this.#identity));
    if (staying) await this.#write(this.#memberLease(this.#identity), this.#identity, mine?.version);
    const prefix = `${this.#name}-member-`;
    const members = [...leases.values()].filter((l) => l.name.startsWith(prefix) && l.holder !== '' && l.name !== this.#memberLease(this.#identity) && !expired(l.name)).map((l) => l.holder);
    if (staying) members.push(this.#identity);
    this.#members = [...new Set(members)].sort();
    this.#checkSlotRule(now);
    // Current holders (by their live slot Leases) keep their slots where the balance allows: few moves.
    const current = Array.from({ length: this.#slotCount }, (_, slot) => {
      const lease = leases.get(this.#slotLease(slot));
      return lease !== undefined && lease.holder !== '' && !expired(lease.name) ? lease.holder : '';
    });
    const assignment = assignSlots(this.#slotCount, this.#members, current);
    const writes: Array<Promise<void>> = [];
    for (let slot = 0; slot < this.#slotCount; slot++) {
      const name = this.#slotLease(slot);
      const lease = leases.get(name);
      const view = { holder: lease?.holder ?? '', expired: lease !== undefined && expired(name) };
      const effects = this.#step(slot, { kind: 'tick', now, wanted: staying && assignment[slot] === this.#identity, lease: view });
      for (const effect of effects) writes.push(this.#perform(slot, effect, lease?.version));
    }
    await Promise.all(writes);
    // Drained slots are released now, at the versions this period's renewals left (read again).
    const drained = this.#slots.flatMap((s, slot) => (s.kind === 'draining' && this.#inFlight[slot] === 0 ? [slot] : []));
    if (drained.length > 0) {
      const fresh = await this.#list().then((ls) => new Map(ls.map((l) => [l.name, l])), () => undefined);
      if (fresh !== undefined) {
        const released: Array<Promise<void>> = [];
        for (const slot of drained) {
          for (const effect of this.#step(slot, { kind: 'drained' })) released.push(this.#perform(slot, effect, fresh.get(this.#slotLease(slot))?.version));
        }
        await Promise.all(released);
      }
    }
    this.#settle();
  }

  #step(slot: number, event: SlotEvent): readonly SlotEffect[] {
    const before = this.#slots[slot];
    const { state, effects } = stepSlot(before, event, this.#identity, this.#timing);
    this.#slots[slot] = state;
    const heldBefore = before.kind === 'held' || before.kind === 'draining';
    if (heldBefore && state.kind === 'idle') this.#fence(slot, 'no renewal within the renew deadline, or the Lease was taken');
    if (state.kind === 'held' || state.kind === 'draining') {
      if (!heldBefore || state.renewedAt !== (before as { renewedAt: number }).renewedAt) this.#armDeadline(slot, state.renewedAt);
    } else {
      const timer = this.#deadlines[slot];
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      this.#deadlines[slot] = undefined;
    }
    return effects;
  }

  /**
   * Fences the slot at `renewedAt + renewDeadline` unless a renewal comes first — by a timer, so a
   * period stuck on an unanswered request (or a process that was frozen) cannot keep work running.
   */
  #armDeadline(slot: number, renewedAt: number): void {
    const previous = this.#deadlines[slot];
    if (previous !== undefined) this.#clock.clearTimeout(previous);
    this.#deadlines[slot] = this.#clock.setTimeout(() => {
      this.#deadlines[slot] = undefined;
      const state = this.#slots[slot];
      if ((state.kind === 'held' || state.kind === 'draining') && state.renewedAt === renewedAt) {
        this.#slots[slot] = IDLE;
        this.#fence(slot, `no renewal within ${formatDuration(this.#timing.renewDeadlineMs)}`);
        this.#settle();
      }
    }, renewedAt + this.#timing.renewDeadlineMs - this.#clock.now());
  }

  /** Lost without a handover: whatever still runs on the slot must stop. */
  #fence(slot: number, why: string): void {
    this.#fences[slot].abort(new AbortedError(`shard ring ${this.#name}: slot ${slot} is no longer ours (${why})`));
    this.#fences[slot] = new AbortController();
    this.#log.warn(`shard ring ${this.#name}: lost slot ${slot}: ${why}`, { slot });
  }

  async #perform(slot: number, effect: SlotEffect, version: string | undefined): Promise<void> {
    const sent = this.#clock.now();
    const ok = await this.#write(this.#slotLease(slot), effect === 'release' ? '' : this.#identity, version);
    const event: SlotEvent =
      effect === 'claim' ? (ok ? { kind: 'claimed', at: sent } : { kind: 'claimFailed' })
      : effect === 'renew' ? (ok ? { kind: 'renewed', at: sent } : { kind: 'renewFailed' })
      : ok ? { kind: 'released' } : { kind: 'releaseFailed' };
    this.#step(slot, event);
  }

  #list(): Promise<RingLease[]> {
    return this.#bounded('reading the ring', (signal) => this.#store.list(signal));
  }

  /**
   * A store call bounded by the renew deadline and, while running, by the run's signal: a request that
   * never answers (a half-open connection) fails like any other instead of stalling the ring — its slots
   * are fenced by then anyway — and stopping is never held up by one.
   */
  async #bounded<V>(what: string, call: (signal: AbortSignal) => Promise<V>): Promise<V> {
    const result = await callWithTimeout(this.#clock, this.#timing.renewDeadlineMs, this.#opParent, call);
    if (result === ABORTED) throw new AbortedError(`shard ring ${this.#name}: ${what} abandoned: the ring is stopping`);
    if (result === TIMED_OUT) throw new KubeInformerError(ErrorCodes.NETWORK, `shard ring ${this.#name}: ${what}: no answer within ${formatDuration(this.#timing.renewDeadlineMs)}`);
    return result;
  }

  /** A compare-and-swap write; false when it conflicted or failed (a conflict is normal: another replica won). */
  async #write(name: string, holder: string, version: string | undefined): Promise<boolean> {
    try {
      await this.#bounded(`writing lease ${name}`, (signal) => this.#store.write(name, holder, version, signal));
      return true;
    } catch (err) {
      if (!(err instanceof RingConflictError)) this.#log.warn(`shard ring ${this.#name}: writing lease ${name} failed: ${String(err)}`, { lease: name, ...errorFields(err) });
      return false;
    }
  }

  /** Publishes a change of the owned set. */
  #settle(): void {
    const owned = this.ownedSlots();
    if (owned.length === this.#owned.length && owned.every((s, i) => s === this.#owned[i])) return;
    this.#owned = owned;
    this.#lastRebalanceAt = this.#clock.now();
    publish(channels.shardRing, { name: this.#name, identity: this.#identity, owned });
    this.#onSlotsChanged?.(owned);
    for (const listener of this.#listeners) listener(owned);
  }

  /** Hands everything over: no slot wanted, work drained (bounded), slots released, member Lease freed. */
  async #leave(): Promise<void> {
    const deadline = this.#clock.now() + this.#timing.stopGraceMs;
    for (;;) {
      await this.#period(false);
      const busy = this.#slots.some((s) => s.kind !== 'idle');
      if (!busy || this.#clock.now() >= deadline) break;
      // Wait for work to finish (or the next period, to keep renewing what still drains).
      await Promise.race([
        new Promise<void>((resolve) => (this.#wakeDrain = resolve)),
        sleep(this.#clock, Math.min(this.#timing.retryPeriodMs, Math.max(0, deadline - this.#clock.now()))),
      ]);
      this.#wakeDrain = undefined;
    }
    const leases = await this.#list().catch(() => [] as RingLease[]);
    const member = leases.find((l) => l.name === this.#memberLease(this.#identity));
    if (member !== undefined) await this.#write(member.name, '', member.version);
    // Past the grace: what still runs is fenced; its slots are left to expire (nobody takes them sooner).
    for (let slot = 0; slot < this.#slotCount; slot++) {
      if (this.#slots[slot].kind !== 'idle') this.#fence(slot, 'stopped before it drained');
      const timer = this.#deadlines[slot];
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      this.#deadlines[slot] = undefined;
      this.#slots[slot] = IDLE;
    }
    this.#settle();
  }
}
