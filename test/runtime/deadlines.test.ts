// The fixed-length deadline tracker: each entry expires exactly at its due time unless deleted, on one clock timer.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { Deadlines } from '../../src/runtime/deadlines.js';
import { seededRandom } from '../../src/testing/random.js';

describe('Deadlines', () => {
  it('expires an entry at its due time, not one deleted before, and keeps one timer whatever the count', async () => {
    const clock = new FakeClock();
    const expired: Array<[string, number]> = [];
    const deadlines = new Deadlines<string>(clock, 100, (e) => expired.push([e, clock.now()]));
    deadlines.add('a');
    await clock.advance(10);
    deadlines.add('b');
    deadlines.add('c');
    expect(clock.pendingTimers()).toBe(1);
    expect(deadlines.delete('a')).toBe(true);
    expect(deadlines.delete('a')).toBe(false);
    await clock.advance(89); // t = 99
    expect(expired).toEqual([]);
    await clock.advance(1); // a's time: it is gone, the timer moves on to b
    expect(expired).toEqual([]);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(10); // t = 110
    expect(expired).toEqual([
      ['b', 110],
      ['c', 110],
    ]);
    expect(deadlines.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0); // nothing left: no timer
  });

  it('keeps an entry added twice at its first deadline, and clear() takes the timer away', async () => {
    const clock = new FakeClock();
    const expired: string[] = [];
    const deadlines = new Deadlines<string>(clock, 50, (e) => expired.push(e));
    deadlines.add('a');
    await clock.advance(30);
    deadlines.add('a');
    await clock.advance(20);
    expect(expired).toEqual(['a']);
    deadlines.add('b');
    deadlines.clear();
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(100);
    expect(expired).toEqual(['a']);
  });

  it('lets a callback add and delete entries (what expired was taken out first)', async () => {
    const clock = new FakeClock();
    const expired: string[] = [];
    const deadlines: Deadlines<string> = new Deadlines<string>(clock, 10, (e) => {
      expired.push(e);
      if (e === 'a') {
        deadlines.delete('c');
        deadlines.add('d'); // due 10 ms after a expired
      }
    });
    deadlines.add('a');
    deadlines.add('b');
    await clock.advance(5);
    deadlines.add('c');
    await clock.advance(5); // a and b expire; c is deleted by a's callback
    expect(expired).toEqual(['a', 'b']);
    await clock.advance(10);
    expect(expired).toEqual(['a', 'b', 'd']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('matches a model over 5 000 random adds, deletes and clock moves: each entry expires exactly at add + ms', async () => {
    const rand = seededRandom(Number(process.env.DEADLINES_SEED ?? 20261127));
    const clock = new FakeClock();
    const ms = 40;
    const fired = new Map<number, number>();
    const deadlines = new Deadlines<number>(clock, ms, (e) => {
      expect(fired.has(e)).toBe(false);
      fired.set(e, clock.now());
    });
    const live = new Map<number, number>(); // the model: entry → due time
    const due = new Map<number, number>(); // every entry that was not deleted → its due time
    let next = 0;
    for (let step = 0; step < 5_000; step++) {
      const r = rand();
      if (r < 0.45) {
        deadlines.add(next);
        live.set(next, clock.now() + ms);
        due.set(next, clock.now() + ms);
        next++;
      } else if (r < 0.75 && live.size > 0) {
        const keys = [...live.keys()];
        const victim = keys[Math.floor(rand() * keys.length)];
        expect(deadlines.delete(victim)).toBe(true);
        live.delete(victim);
        due.delete(victim);
      } else {
        const target = clock.now() + Math.floor(rand() * 15);
        await clock.advance(target - clock.now());
        for (const [e, at] of [...live]) if (at <= target) live.delete(e);
      }
      expect(deadlines.size).toBe(live.size);
      expect(clock.pendingTimers()).toBeLessThanOrEqual(1);
    }
    await clock.advance(ms);
    expect(deadlines.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    expect(fired).toEqual(due); // the entries not deleted, each at add + ms; the deleted ones never
  });
});
