// Who should hold which slot: a pure function of the slot count and the live members, the same on
// every replica that sees the same members.

import { shardHash } from '../core/shard-selector.js';

/**
 * Assigns `slotCount` slots to `members`: every slot to one member, each member `floor(N/M)` or
 * `ceil(N/M)` slots (balanced within one), moving as few slots as it can from `current`.
 *
 * Sticky rendezvous hashing with bounded loads: every (slot, member) pair gets a score from the FNV-1a
 * hash of `member/slot`. First every slot stays with its current holder when that holder is a member
 * with room (a member over its share keeps its best-scored slots); then the other slots are taken pair
 * by pair from the highest score down, each by the first member with room. The members that may take
 * `ceil(N/M)` are the `N mod M` with the highest score of their own name. So a join moves about the
 * newcomer's share and a leave only the leaver's slots. Deterministic for the same members and current
 * holders (the order of `members` does not matter, duplicates count once); replicas that read the Leases
 * at different moments may disagree for a period — the Leases, not the assignment, keep slots exclusive.
 *
 * @param current - for each slot its current holder (`''` for none); default none
 * @returns for each slot index, the identity of the member that should hold it (`''` when there is no
 *   member)
 */
export function assignSlots(slotCount: number, members: readonly string[], current: readonly string[] = []): string[] {
  const ids = [...new Set(members)].sort();
  const out = new Array<string>(slotCount).fill('');
  if (ids.length === 0 || slotCount <= 0) return out;
  const m = ids.length;
  const base = Math.floor(slotCount / m);
  const bigger = new Set(
    [...ids]
      .sort((a, b) => compare(shardHash(`${b}#share`), shardHash(`${a}#share`)) || compare(a, b))
      .slice(0, slotCount % m),
  );
  const room = new Map(ids.map((id) => [id, base + (bigger.has(id) ? 1 : 0)]));
  const pairs: Array<{ score: string; slot: number; member: string }> = [];
  for (let slot = 0; slot < slotCount; slot++) {
    for (const member of ids) pairs.push({ score: shardHash(`${member}/${slot}`), slot, member });
  }
  pairs.sort((a, b) => compare(b.score, a.score) || a.slot - b.slot || compare(a.member, b.member));
  const take = (p: { slot: number; member: string }): void => {
    out[p.slot] = p.member;
    room.set(p.member, room.get(p.member)! - 1);
  };
  // Sticky first: current holders keep what they have room for, best-scored first.
  for (const p of pairs) if (current[p.slot] === p.member && out[p.slot] === '' && room.get(p.member)! > 0) take(p);
  for (const p of pairs) if (out[p.slot] === '' && room.get(p.member)! > 0) take(p);
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
