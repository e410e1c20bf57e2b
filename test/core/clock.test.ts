import { describe, expect, it } from 'vitest';
import { FakeClock, realClock, sleep } from '../../src/core/index.js';

describe('FakeClock', () => {
  it('fires timers in due order, ties in the order they were set', async () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('b'), 20);
    clock.setTimeout(() => fired.push('a'), 10);
    clock.setTimeout(() => fired.push('c'), 20);
    await clock.advance(15);
    expect(fired).toEqual(['a']);
    expect(clock.now()).toBe(15);
    await clock.advance(5);
    expect(fired).toEqual(['a', 'b', 'c']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('fires a timer set by another timer when it falls inside the same advance', async () => {
    const clock = new FakeClock();
    const at: number[] = [];
    clock.setTimeout(() => {
      at.push(clock.now());
      clock.setTimeout(() => at.push(clock.now()), 10);
    }, 10);
    await clock.advance(25);
    expect(at).toEqual([10, 20]);
  });

  it('runs promise chains between timers as real time would', async () => {
    const clock = new FakeClock();
    const log: number[] = [];
    const loop = async (): Promise<void> => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 100);
        await Promise.resolve();
        log.push(clock.now());
      }
    };
    const done = loop();
    await clock.advance(300);
    await done;
    expect(log).toEqual([100, 200, 300]);
  });

  it('does not fire a cleared timer', async () => {
    const clock = new FakeClock();
    let fired = false;
    const t = clock.setTimeout(() => (fired = true), 5);
    clock.clearTimeout(t);
    await clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('reports pending delays and the next one', () => {
    const clock = new FakeClock(1000);
    clock.setTimeout(() => {}, 30);
    clock.setTimeout(() => {}, 10);
    expect(clock.nextTimerDelay()).toBe(10);
    expect(clock.pendingDelays()).toEqual([10, 30]);
  });

  it('resolves waitForTimers once enough timers are set', async () => {
    const clock = new FakeClock();
    const waiting = clock.waitForTimers(2);
    let resolved = false;
    void waiting.then(() => (resolved = true));
    clock.setTimeout(() => {}, 1);
    await Promise.resolve();
    expect(resolved).toBe(false);
    clock.setTimeout(() => {}, 1);
    await waiting;
    expect(resolved).toBe(true);
  });
});

describe('sleep', () => {
  it('resolves true when the time has elapsed', async () => {
    const clock = new FakeClock();
    const p = sleep(clock, 50);
    await clock.advance(50);
    await expect(p).resolves.toBe(true);
  });

  it('resolves false at once when aborted, leaving no timer behind', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const p = sleep(clock, 50, ac.signal);
    expect(clock.pendingTimers()).toBe(1);
    ac.abort();
    await expect(p).resolves.toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves false without setting a timer when the signal is already aborted', async () => {
    const clock = new FakeClock();
    await expect(sleep(clock, 50, AbortSignal.abort())).resolves.toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('works on the real clock for a zero delay', async () => {
    await expect(sleep(realClock, 0)).resolves.toBe(true);
  });
});
