// Async fixtures every room's tests share: a guard against unhandled rejections, and a gate.

import { afterEach, beforeEach, expect } from 'vitest';
import { flushPromises } from '../../src/core/clock.js';

/**
 * Registers hooks that fail each test of the file that leaves an unhandled rejection behind (checked
 * after a microtask flush, so a rejection raised at the very end of a test is seen too).
 */
export function failOnUnhandledRejections(): void {
  let rejections: unknown[] = [];
  const onRejection = (reason: unknown): void => void rejections.push(reason);
  beforeEach(() => {
    rejections = [];
    process.on('unhandledRejection', onRejection);
  });
  afterEach(async () => {
    await flushPromises();
    process.off('unhandledRejection', onRejection);
    expect(rejections).toEqual([]);
  });
}

/** A promise with its settle functions, to hold something async open until the test says so. */
export function gate(): { promise: Promise<void>; open: () => void; fail: (e: unknown) => void } {
  let open!: () => void;
  let fail!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    open = res;
    fail = rej;
  });
  return { promise, open, fail };
}
