// assignSlots: balanced within one, deterministic, and close to minimal movement on a join or a leave.

import { describe, expect, it } from 'vitest';
import { assignSlots } from '../../src/sharding/assign.js';

const counts = (a: string[]): Map<string, number> => a.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>());
const moved = (a: string[], b: string[]): number => a.filter((id, i) => b[i] !== id).length;

describe('assignSlots', () => {
  it('gives every slot to one member, each member floor or ceil of its share', () => {
    for (const n of [1, 7, 16, 64, 100]) {
      for (let m = 1; m <= 9; m++) {
        const members = Array.from({ length: m }, (_, i) => `replica-${i}`);
        const a = assignSlots(n, members);
        expect(a.every((id) => members.includes(id))).toBe(true);
        const c = counts(a);
        for (const id of members) expect([Math.floor(n / m), Math.ceil(n / m)]).toContain(c.get(id) ?? 0);
      }
    }
  });

  it('does not depend on the order of the members, and ignores duplicates', () => {
    expect(assignSlots(64, ['c', 'a', 'b', 'a'])).toEqual(assignSlots(64, ['a', 'b', 'c']));
    expect(assignSlots(8, [])).toEqual(new Array(8).fill(''));
  });

  it('given the current holders, a join moves only the share of the newcomer and a leave only the slots of the leaver', () => {
    const members = ['web-0', 'web-1', 'web-2', 'web-3'];
    const before = assignSlots(64, members);
    const joined = assignSlots(64, [...members, 'web-4'], before);
    const share = counts(joined).get('web-4')!;
    expect([12, 13]).toContain(share);
    expect(moved(before, joined)).toBe(share); // exactly the slots the newcomer takes
    const left = assignSlots(64, ['web-0', 'web-1', 'web-3'], before);
    expect(moved(before, left)).toBe(16); // exactly web-2's
    for (let i = 0; i < 64; i++) if (before[i] !== 'web-2') expect(left[i]).toBe(before[i]);
    // Without the current holders it is still balanced, only less sticky.
    const c = counts(assignSlots(64, [...members, 'web-4']));
    expect([...c.values()].every((n) => n === 12 || n === 13)).toBe(true);
  });
});
