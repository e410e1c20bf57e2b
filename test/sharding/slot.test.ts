// The slot state machine, step by step: claims only free, expired or own Leases; fenced by the renew
// deadline or another holder; a slot handed over drains before it is released.

import { describe, expect, it } from 'vitest';
import { IDLE, slotOwned, stepSlot, type SlotEvent, type SlotState } from '../../src/sharding/slot.js';

const timing = { renewDeadlineMs: 10_000 };
const me = 'me';
const tick = (now: number, wanted: boolean, holder: string, expired = false): SlotEvent => ({ kind: 'tick', now, wanted, lease: { holder, expired } });
const run = (events: SlotEvent[], from: SlotState = IDLE): { state: SlotState; effects: string[] } => {
  let state = from;
  const effects: string[] = [];
  for (const e of events) {
    const s = stepSlot(state, e, me, timing);
    state = s.state;
    effects.push(...s.effects);
  }
  return { state, effects };
};

describe('stepSlot', () => {
  it('claims a wanted slot whose Lease is free, expired or its own; never one held by a live other', () => {
    expect(run([tick(0, true, '')]).effects).toEqual(['claim']);
    expect(run([tick(0, true, 'other', true)]).effects).toEqual(['claim']);
    expect(run([tick(0, true, me)]).effects).toEqual(['claim']);
    expect(run([tick(0, true, 'other', false)])).toEqual({ state: IDLE, effects: [] });
    expect(run([tick(0, false, '')])).toEqual({ state: IDLE, effects: [] });
  });

  it('owns from the claim until the renew deadline after the last renewal sent', () => {
    const { state } = run([tick(0, true, ''), { kind: 'claimed', at: 100 }]);
    expect(slotOwned(state, 100, timing)).toBe(true);
    expect(slotOwned(state, 10_099, timing)).toBe(true);
    expect(slotOwned(state, 10_100, timing)).toBe(false);
    const renewed = run([tick(2_000, true, me), { kind: 'renewed', at: 2_000 }], state);
    expect(renewed.effects).toEqual(['renew']);
    expect(slotOwned(renewed.state, 11_999, timing)).toBe(true);
  });

  it('a failed claim leaves the slot idle; a failed renewal keeps it until the deadline', () => {
    expect(run([tick(0, true, ''), { kind: 'claimFailed' }]).state).toEqual(IDLE);
    const held = run([tick(0, true, ''), { kind: 'claimed', at: 0 }, tick(2_000, true, me), { kind: 'renewFailed' }]).state;
    expect(slotOwned(held, 9_999, timing)).toBe(true);
    expect(run([tick(10_000, true, me)], held).state).toEqual(IDLE);
  });

  it('is fenced at once by a Lease that names another holder', () => {
    const held = run([tick(0, true, ''), { kind: 'claimed', at: 0 }]).state;
    expect(run([tick(1_000, true, 'other')], held).state).toEqual(IDLE);
  });

  it('hands over: not wanted → draining (renewed, not owned) → drained → release → idle', () => {
    const held = run([tick(0, true, ''), { kind: 'claimed', at: 0 }]).state;
    const draining = run([tick(2_000, false, me)], held);
    expect(draining.state.kind).toBe('draining');
    expect(draining.effects).toEqual(['renew']);
    expect(slotOwned(draining.state, 2_000, timing)).toBe(false);
    const kept = run([{ kind: 'renewed', at: 2_000 }, tick(4_000, false, me), { kind: 'renewed', at: 4_000 }], draining.state);
    expect(kept.state).toMatchObject({ kind: 'draining', renewedAt: 4_000 });
    const released = run([{ kind: 'drained' }, { kind: 'released' }], kept.state);
    expect(released).toEqual({ state: IDLE, effects: ['release'] });
    // Wanted again before it drained: it is held (owned) again, no release.
    expect(run([tick(5_000, true, me)], kept.state).state.kind).toBe('held');
  });
});
