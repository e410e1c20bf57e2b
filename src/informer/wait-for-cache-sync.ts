// waitForCacheSync: poll "has synced" functions until all are true or the signal aborts.

import { realClock, type Clock, type ClockTimer } from '../core/clock.js';

/** A function telling whether a cache has synced (client-go's `InformerSynced`). */
export type InformerSynced = () => boolean;

/** Options of {@link waitForCacheSyncWithOptions}. */
export interface WaitForCacheSyncOptions {
  /** Stops the wait; the promise then resolves `false`. */
  signal: AbortSignal;
  /** The clock the polling timer runs on. Default: `realClock`. */
  clock?: Clock;
  /** How often the functions are re-checked, in ms. Default: 100 (client-go's). */
  pollIntervalMs?: number;
}

/**
 * Waits until every `hasSynced` function returns true: checks at once, then every 100 ms. Resolves
 * `true` when all have synced, `false` when `signal` aborts first (already aborted → `false` unless
 * everything has already synced). Leaves no timer or listener behind.
 *
 * Warning: a function that never turns true keeps this waiting until the signal aborts, and `false`
 * does not say why. To learn why an informer never synced, use `informer.whenSynced()`, which rejects
 * with the reason (a handler failure, a persistent 403/404, the informer stopping).
 *
 * @example
 * ```ts
 * if (!(await waitForCacheSync(signal, () => pods.hasSynced()))) return; // aborted
 * ```
 */
export function waitForCacheSync(signal: AbortSignal, ...hasSynced: InformerSynced[]): Promise<boolean> {
  return waitForCacheSyncWithOptions({ signal }, ...hasSynced);
}

/** {@link waitForCacheSync} with an injectable clock and poll interval. */
export function waitForCacheSyncWithOptions(
  options: WaitForCacheSyncOptions,
  ...hasSynced: InformerSynced[]
): Promise<boolean> {
  const { signal } = options;
  const clock = options.clock ?? realClock;
  const interval = Math.max(1, options.pollIntervalMs ?? 100);
  const allSynced = (): boolean => hasSynced.every((fn) => fn());
  try {
    if (allSynced()) return Promise.resolve(true);
  } catch (err) {
    return Promise.reject(err);
  }
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve, reject) => {
    let timer: ClockTimer | undefined;
    const finish = (value: boolean | Error): void => {
      signal.removeEventListener('abort', onAbort);
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    const onAbort = (): void => finish(false);
    const poll = (): void => {
      timer = undefined;
      let done: boolean;
      try {
        done = allSynced();
      } catch (err) {
        finish(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (done) finish(true);
      else timer = clock.setTimeout(poll, interval);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    timer = clock.setTimeout(poll, interval);
  });
}

/**
 * Waits for several named caches and reports which synced: resolves with `{ name: boolean }` once all
 * have synced or the signal aborted (then the unsynced ones are `false`).
 */
export async function waitForNamedCacheSync(
  options: WaitForCacheSyncOptions,
  named: Record<string, InformerSynced>,
): Promise<Record<string, boolean>> {
  const entries = Object.entries(named);
  await waitForCacheSyncWithOptions(options, ...entries.map(([, fn]) => fn));
  return Object.fromEntries(entries.map(([name, fn]) => [name, fn()]));
}
