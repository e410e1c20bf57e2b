// waitForCacheSync: poll "has synced" functions until all are true or the signal aborts.

import { validateOptions } from '../core/options.js';
import { ChildAbort } from '../core/abort.js';
import { realClock, type Clock, type ClockTimer } from '../core/clock.js';

/** A function telling whether a cache has synced (client-go's `InformerSynced`). */
export type InformerSynced = () => boolean;

/**
 * Something that can say why it never synced: an informer or a handler registration. Passing one
 * to {@link waitForCacheSync} instead of `() => informer.hasSynced()` makes the wait reject with the
 * reason instead of waiting until the signal aborts.
 */
export interface SyncSource {
  /** True once synced. */
  hasSynced(): boolean;
  /** Resolves once synced; rejects with the reason it cannot sync. */
  whenSynced(signal?: AbortSignal): Promise<void>;
}

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
 * Waits until every source has synced. Resolves `true` when all have, `false` when `signal` aborts
 * first (already aborted → `false` unless everything has already synced). Informers and handler
 * registrations ({@link SyncSource}) make it reject with the reason one of them cannot sync (a
 * failure, a stop, answers retrying cannot fix, an unreachable server: see `whenSynced`). Plain
 * functions (client-go's `InformerSynced`) are polled every 100 ms. Leaves no timer or listener behind.
 *
 * Warning: a plain function that never turns true keeps this waiting until the signal aborts, and
 * `false` does not say why. Pass the informer itself to learn why.
 *
 * @example
 * ```ts
 * if (!(await waitForCacheSync(signal, pods, services))) return; // aborted; rejects with the reason
 * ```
 */
export async function waitForCacheSync(signal: AbortSignal, ...sources: Array<InformerSynced | SyncSource>): Promise<boolean> {
  const link = new ChildAbort(signal);
  try {
    const fns: InformerSynced[] = [];
    const waits: Array<Promise<void>> = [];
    for (const source of sources) {
      if (typeof source === 'function') {
        fns.push(source);
        continue;
      }
      fns.push(() => source.hasSynced());
      waits.push(
        source.whenSynced(link.signal).catch((err: unknown) => {
          if (!link.signal.aborted) throw err;
        }),
      );
    }
    const polled = waitForCacheSyncWithOptions({ signal: link.signal }, ...fns);
    await Promise.all(waits);
    return await polled;
  } finally {
    link.dispose();
  }
}

/** {@link waitForCacheSync} with an injectable clock and poll interval. */
export function waitForCacheSyncWithOptions(
  options: WaitForCacheSyncOptions,
  ...hasSynced: InformerSynced[]
): Promise<boolean> {
  try {
    validateOptions('waitForCacheSyncWithOptions', options, { signal: 'object', clock: 'clock', pollIntervalMs: 'duration' });
  } catch (err) {
    return Promise.reject(err);
  }
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
