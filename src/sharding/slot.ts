// One slot's lifecycle on one replica, as a state machine: the states, the events, one step function.
// Pure: no I/O and no clock reads; the ring's driver performs the effects and feeds their results back.

/** A slot as this replica sees its own part in it. */
export type SlotState =
  /** Not ours. */
  | { readonly kind: 'idle' }
  /** A write claiming the slot's Lease is in flight. Not owned yet. */
  | { readonly kind: 'acquiring' }
  /**
   * Ours: new work of the slot is admitted while `now < renewedAt + renewDeadline`. `renewedAt` is when
   * the last successful renewal (or the claim) was *sent* — the conservative end of the write.
   */
  | { readonly kind: 'held'; readonly renewedAt: number; readonly renewing: boolean }
  /** Still ours on the Lease, but no new work: waiting for the slot's work in flight to finish. */
  | { readonly kind: 'draining'; readonly renewedAt: number; readonly renewing: boolean }
  /** Drained; the write that frees the Lease is in flight. Not owned. */
  | { readonly kind: 'releasing' };

/** The slot's Lease as this replica last read it. */
export interface LeaseView {
  /** The holder written in the Lease (`''` when free or when the Lease does not exist yet). */
  readonly holder: string;
  /** Nobody renewed it for a whole lease duration, as observed on this replica's clock. */
  readonly expired: boolean;
}

/** What happens to a slot. */
export type SlotEvent =
  /** The periodic look at the ring: should this replica hold the slot, and what its Lease says. */
  | { readonly kind: 'tick'; readonly now: number; readonly wanted: boolean; readonly lease: LeaseView }
  /** The claim was written; `at` is when it was sent. */
  | { readonly kind: 'claimed'; readonly at: number }
  | { readonly kind: 'claimFailed' }
  /** A renewal was written; `at` is when it was sent. */
  | { readonly kind: 'renewed'; readonly at: number }
  | { readonly kind: 'renewFailed' }
  /** The slot's work in flight reached zero while draining. */
  | { readonly kind: 'drained' }
  | { readonly kind: 'released' }
  | { readonly kind: 'releaseFailed' };

/** The writes a step asks for. */
export type SlotEffect = 'claim' | 'renew' | 'release';

/** The timing a step needs (milliseconds). */
export interface SlotTiming {
  /** Past this since the last successful renewal, the slot is no longer ours (< the lease duration). */
  readonly renewDeadlineMs: number;
}

/** A step's result: the next state and the writes to start. */
export interface SlotStep {
  readonly state: SlotState;
  readonly effects: readonly SlotEffect[];
}

export const IDLE: SlotState = Object.freeze({ kind: 'idle' });

const stay = (state: SlotState): SlotStep => ({ state, effects: [] });

/**
 * The one step function. `identity` is this replica's. Rules, in words:
 *
 * - A replica claims a slot only when the ring assigns it and its Lease is free, expired by
 *   observation, or already names this replica (a restart under the same identity).
 * - It owns the slot while held and renewed within the renew deadline; a late renewal or a Lease that
 *   names someone else ends it at once (fenced), without a write.
 * - A slot assigned elsewhere is drained first (no new work), renewed meanwhile, and released only
 *   once its work in flight finished — the next holder cannot start before this one stopped.
 */
export function stepSlot(state: SlotState, event: SlotEvent, identity: string, timing: SlotTiming): SlotStep {
  switch (state.kind) {
    case 'idle':
      if (event.kind !== 'tick' || !event.wanted) return stay(state);
      if (event.lease.holder === '' || event.lease.expired || event.lease.holder === identity) return { state: { kind: 'acquiring' }, effects: ['claim'] };
      return stay(state);
    case 'acquiring':
      if (event.kind === 'claimed') return stay({ kind: 'held', renewedAt: event.at, renewing: false });
      if (event.kind === 'claimFailed') return stay(IDLE);
      return stay(state);
    case 'held':
    case 'draining': {
      if (event.kind === 'renewed') return stay({ ...state, renewedAt: Math.max(state.renewedAt, event.at), renewing: false });
      if (event.kind === 'renewFailed') return stay({ ...state, renewing: false });
      if (event.kind === 'drained') return state.kind === 'draining' ? { state: { kind: 'releasing' }, effects: ['release'] } : stay(state);
      if (event.kind !== 'tick') return stay(state);
      // Fenced: too long without a renewal, or the Lease names another holder (it can only have been
      // taken as expired). The ring reads Leases after its own writes finished, so this is never stale.
      if (event.now - state.renewedAt >= timing.renewDeadlineMs) return stay(IDLE);
      if (event.lease.holder !== identity) return stay(IDLE);
      const kind = event.wanted ? 'held' : 'draining';
      if (state.renewing) return stay({ ...state, kind });
      return { state: { ...state, kind, renewing: true }, effects: ['renew'] };
    }
    case 'releasing':
      if (event.kind === 'released' || event.kind === 'releaseFailed') return stay(IDLE);
      return stay(state);
  }
}

/** Whether new work of the slot may start now. */
export function slotOwned(state: SlotState, now: number, timing: SlotTiming): boolean {
  return state.kind === 'held' && now - state.renewedAt < timing.renewDeadlineMs;
}
