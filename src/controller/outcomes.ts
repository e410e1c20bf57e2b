// How a reconcile failed: a TerminalError (in the cause chain), a programming error the runtime raised (marked by `misuse`); the counts of outcomes (`ControllerStats`).

import { TerminalError } from './errors.js';

/** A snapshot of a {@link Controller}'s work. Counters add up over every run. */
export interface ControllerStats {
  /** Whether `run` is in progress. */
  readonly active: boolean;
  /** Keys waiting for a reconcile. */
  readonly queued: number;
  /** Reconciles running now. */
  readonly running: number;
  /** Keys whose last reconcile failed. */
  readonly failing: number;
  /** Reconciles that returned an action. */
  readonly succeeded: number;
  /** Reconciles that threw, rejected or timed out (not those the stop interrupted). */
  readonly failed: number;
  /** Reconciles that ran past `reconcileTimeoutMs` (counted in `failed` too). */
  readonly timedOut: number;
  /** Reconciles that failed with a `TerminalError`, not retried (counted in `failed` too). */
  readonly terminal: number;
  /**
   * Reconciles that the controller's stop (or, sharded, the loss of their slot) interrupted — they
   * rejected after `ctx.signal` aborted: not failures, not retried.
   */
  readonly stopped: number;
  /**
   * Calls of the `priority` or `concurrencyGroups.keyOf` option that threw or returned a bad value
   * (each logged; the request kept at the default priority, or the key run in no group).
   */
  readonly hookFailures: number;
}

/** The first error of `error`'s `cause` chain (itself included) that `test` accepts, or undefined. */
function findCause(error: unknown, test: (e: unknown) => boolean): unknown {
  let e = error;
  for (let depth = 0; depth < 16 && e !== undefined && e !== null; depth++) {
    if (test(e)) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether `error` is a {@link TerminalError}, or caused by one. */
export function isTerminal(error: unknown): boolean {
  return findCause(error, (e) => e instanceof TerminalError) !== undefined;
}

/** The error's stable `code`, or its name. */
export function codeOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.name;
}

const misuses = new WeakSet<object>();

/**
 * Marks `error` as raised by the runtime for a programming mistake of a reconciler (`ctx.children` of
 * a resource not owned, `ctx.wrote` of a resource not watched, a result that is not an `Action`), and
 * returns it. A reconcile that fails with such an error (or one caused by it) stops the controller.
 */
export function misuse<E extends Error>(error: E): E {
  misuses.add(error);
  return error;
}

/** The error of `error`'s `cause` chain that {@link misuse} marked, or undefined. */
export function misuseIn(error: unknown): Error | undefined {
  return findCause(error, (e) => typeof e === 'object' && misuses.has(e as object)) as Error | undefined;
}
