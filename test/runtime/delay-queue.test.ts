// The keyed delayed queue's rules: one request per key, ties in request order, holds, one timer.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { DelayQueue } from '../../src/runtime/delay-queue.js';

const drain = (queue: DelayQueue<string>): string[] => {
  const out: string[] = [];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) out.push(`${next.key}@${next.dueAt}`);
  return out;
};

describe('DelayQueue', () => {
  it('keeps one request per key; equal due times go in the order of the requests that set them', () => {
    const queue = new DelayQueue<string>(new FakeClock(), () => {});
    for (const key of ['a', 'b', 'c', 'd']) queue.set(key, 10);
    queue.set('a', 10); // a newer request for the same time: after the others
    expect(queue.peek()?.key).toBe('b');
    expect(queue.setEarlier('c', 20)).toBe(false);
    expect(queue.setEarlier('d', 5)).toBe(true);
    queue.set('b', 30); // later is allowed with set
    expect(queue.size).toBe(4);
    expect(drain(queue)).toEqual(['d@5', 'c@10', 'a@10', 'b@30']);
  });

  it('keeps a held key out of the order until it is released, counting it all along', () => {
    const queue = new DelayQueue<string>(new FakeClock(), () => {});
    queue.set('a', 1);
    queue.set('b', 2);
    queue.hold('a');
    queue.hold('c');
    queue.set('c', 0);
    expect([queue.size, queue.peek()?.key, queue.popDue(5)?.key, queue.popDue(5)]).toEqual([3, 'b', 'b', undefined]);
    queue.release('c');
    queue.release('a');
    expect(drain(queue)).toEqual(['c@0', 'a@1']);
  });

  it('keeps one timer for the earliest key, moves it when an earlier key comes, and fires once', async () => {
    const clock = new FakeClock();
    let fired = 0;
    const queue = new DelayQueue<string>(clock, () => fired++);
    queue.set('a', 100);
    queue.arm();
    queue.arm();
    expect(clock.pendingDelays()).toEqual([100]);
    queue.set('b', 40);
    queue.arm();
    expect(clock.pendingDelays()).toEqual([40]);
    await clock.advance(40);
    expect([fired, clock.pendingTimers(), queue.popDue(clock.now())?.key]).toEqual([1, 0, 'b']);
    queue.arm();
    queue.clear();
    expect([clock.pendingTimers(), queue.size]).toEqual([0, 0]);
  });

  it('hands a burst of keys due now out in request order, interleaved by due time with earlier ones, and drops the slots it left behind', () => {
    const queue = new DelayQueue<string>(new FakeClock(), () => {});
    for (let i = 0; i < 5_000; i++) queue.set(`k${i}`, 100 + Math.floor(i / 1000)); // the ready lane: each sorts after the last
    queue.set('early', 50); // sorts before the lane's tail: the heap
    queue.set('k10', 99); // an earlier time for a key in the lane: its slot is left behind
    queue.hold('k11'); // held: its slot is left behind too
    const out: string[] = [];
    for (let i = 0; i < 3; i++) out.push(queue.pop()!.key);
    expect(out).toEqual(['early', 'k10', 'k0']);
    for (let i = 0; i < 2_000; i++) out.push(queue.pop()!.key); // past the lane's compaction point
    expect(out.slice(3, 14)).toEqual(['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9', 'k12', 'k13']);
    queue.release('k11'); // back at its own (due time, order): before every key not yet popped
    expect(queue.pop()?.key).toBe('k11');
    let last = -1;
    for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
      const i = Number(next.key.slice(1));
      expect(i).toBeGreaterThan(last);
      last = i;
    }
    expect(last).toBe(4_999);
    expect(queue.size).toBe(0);
  });

  it('hands out due keys by priority, earliest first within one; a key not yet due never blocks a lower one that is; setEarlier merges to the higher priority', () => {
    const clock = new FakeClock();
    const queue = new DelayQueue<string>(clock, () => undefined);
    queue.set('low-a', 0, -100);
    queue.set('high-later', 50, 0);
    queue.set('low-b', 0, -100);
    queue.set('high', 1, 0);
    expect(queue.setEarlier('low-b', 5, 10)).toBe(true); // raised, its due time kept
    expect(queue.setEarlier('high', 3, -100)).toBe(false);
    expect(queue.priorityOf('low-b')).toBe(10);
    const popped: string[] = [];
    for (let next = queue.popDue(10); next !== undefined; next = queue.popDue(10)) popped.push(`${next.key}:${next.priority}`);
    expect(popped).toEqual(['low-b:10', 'high:0', 'low-a:-100']);
    expect(queue.peek()).toMatchObject({ key: 'high-later', dueAt: 50 });
  });

  it('fairness: after passOverLimit pops in a row that passed over an older key, the key due the longest goes', () => {
    const clock = new FakeClock();
    const queue = new DelayQueue<string>(clock, () => undefined, { passOverLimit: 2 });
    queue.set('old-low', 0, -100);
    for (let i = 0; i < 5; i++) queue.set(`high-${i}`, 1, 0);
    const popped: string[] = [];
    for (let next = queue.popDue(10); next !== undefined; next = queue.popDue(10)) popped.push(next.key);
    expect(popped).toEqual(['high-0', 'high-1', 'old-low', 'high-2', 'high-3', 'high-4']);
  });

  it('a held key keeps its priority; released, it goes back to its level', () => {
    const clock = new FakeClock();
    const queue = new DelayQueue<string>(clock, () => undefined);
    queue.set('a', 0, -100);
    queue.set('b', 0, 7);
    queue.hold('b');
    expect(queue.popDue(0)).toMatchObject({ key: 'a', priority: -100 });
    queue.set('b', 0, 9);
    expect(queue.popDue(0)).toBeUndefined();
    queue.release('b');
    expect(queue.popDue(0)).toMatchObject({ key: 'b', priority: 9 });
    expect(queue.size).toBe(0);
  });

  it('delete takes a key out at once wherever it waits (lane, heap, another level, held), and a later request of it stands', () => {
    const queue = new DelayQueue<string>(new FakeClock(), () => undefined);
    queue.set('lane', 0);
    queue.set('later', 50);
    queue.set('heap', 10); // sorts before the lane's tail: the heap
    queue.set('high', 0, 5);
    queue.set('held', 0);
    queue.hold('held');
    expect(['lane', 'heap', 'high', 'held', 'none'].map((k) => queue.delete(k))).toEqual([true, true, true, true, false]);
    expect([queue.size, [...queue.keys()]]).toEqual([1, ['later']]);
    queue.set('lane', 60);
    queue.set('held', 0);
    expect(queue.popDue(100)).toMatchObject({ key: 'later' }); // 'held' waits for its release
    queue.release('held');
    expect(drain(queue)).toEqual(['held@0', 'lane@60']);
  });
});
