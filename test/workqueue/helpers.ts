// Shared helpers of the workqueue tests: settle tracking, a clock driver, a tracing strategy, a PRNG.

import { FakeClock, flushPromises } from '../../src/core/clock.js';
import { FifoQueueStrategy, type QueueStrategy } from '../../src/workqueue/queue.js';
export { seededRandom } from '../../src/testing/random.js';

/** Wraps a promise so a test can ask whether it settled yet, without awaiting it. */
export function track<T>(promise: Promise<T>): { settled: () => boolean; value: () => T | undefined; promise: Promise<T> } {
  let settled = false;
  let value: T | undefined;
  const p = promise.then((v) => {
    settled = true;
    value = v;
    return v;
  });
  return { settled: () => settled, value: () => value, promise: p };
}

/** Advances `clock` in `stepMs` steps until `done()` is true; fails after `maxSteps`. */
export async function driveUntil(clock: FakeClock, done: () => boolean, stepMs = 1, maxSteps = 100_000): Promise<void> {
  for (let i = 0; i < maxSteps; i++) {
    await flushPromises();
    if (done()) return;
    await clock.advance(stepMs);
  }
  throw new Error(`condition not reached after ${maxSteps} steps of ${stepMs} ms`);
}

/** A FIFO strategy that records which items were touched (WQ-5, WQ-6). */
export class TracingStrategy<T> implements QueueStrategy<T> {
  readonly touched: T[] = [];
  readonly #inner = new FifoQueueStrategy<T>();
  push(item: T): void {
    this.#inner.push(item);
  }
  pop(): T {
    return this.#inner.pop();
  }
  len(): number {
    return this.#inner.len();
  }
  touch(item: T): void {
    this.touched.push(item);
  }
}

