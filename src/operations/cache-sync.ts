// The manager's wait for its caches: keeps waiting through informers that cannot sync yet (a CRD installed later, RBAC fixed later), warns every interval, gives up naming every one.

import { ChildAbort } from '../core/abort.js';
import { sleep, type Clock, type ClockTimer } from '../core/clock.js';
import { ErrorCodes, KubeInformerError } from '../core/errors.js';
import { formatDuration, type Logger } from '../core/log.js';
import type { NamespaceSetInformer } from '../informer/index.js';

/** What the manager's wait reads of an informer (a `SharedIndexInformer`). */
export interface SyncingInformer {
  /** Its name (`v1/pods`). */
  readonly name: string;
  /** True once synced. */
  hasSynced(): boolean;
  /** True once stopped or failed: it will never sync. */
  isStopped(): boolean;
  /** Resolves once synced; rejects with the reason it cannot sync (see `SharedIndexInformer.whenSynced`). */
  whenSynced(signal?: AbortSignal): Promise<void>;
  /** Its health: `problems` say what is wrong while it has not synced. */
  health(): { problems: string[] };
}

/**
 * What the cache wait needs of a namespace set (`SharedInformerFactory.namespaceSets()`): it is synced
 * when every namespace synced or was set aside (a forbidden one is loud in its own health), and its
 * problems are its namespaces', each named.
 */
export function syncingSet(set: NamespaceSetInformer<unknown>): SyncingInformer {
  return {
    name: set.name,
    hasSynced: () => set.hasSynced(),
    isStopped: () => set.isStopped(),
    whenSynced: (signal) => set.whenSynced(signal),
    health: () => ({ problems: Object.entries(set.health()).flatMap(([namespace, h]) => h.problems.map((p) => `namespace ${namespace}: ${p}`)) }),
  };
}

/** One informer a {@link CacheSyncError} names. */
export interface UnsyncedInformer {
  /** The informer's name (`v1/pods`). */
  readonly informer: string;
  /** Why it cannot sync: the error its `whenSynced()` rejects with (`API_STATUS` 403/404, `NETWORK`, ...). */
  readonly error: Error;
}

/**
 * A {@link Manager} gave up waiting for its caches (code `CACHE_SYNC_FAILED`): `informers` names every
 * informer that cannot sync, each with its reason; `cause` is the first of them.
 */
export class CacheSyncError extends KubeInformerError {
  /** Every informer that cannot sync, with its reason, in the factory's order. */
  readonly informers: readonly UnsyncedInformer[];
  /** `informers` must not be empty. */
  constructor(message: string, informers: readonly UnsyncedInformer[]) {
    super(ErrorCodes.CACHE_SYNC_FAILED, message, { cause: informers[0]?.error });
    this.informers = informers;
  }
}

/** How the manager waits (see `ManagerOptions`). */
export interface CacheWaitOptions {
  /** Give up this long after the wait began, once an informer cannot sync; `Infinity`: never. */
  timeoutMs: number;
  /** A warning naming every informer not synced yet, this often. */
  warningIntervalMs: number;
  /** How often an informer that cannot sync is asked again. */
  pollMs: number;
  clock: Clock;
  log: Logger;
}

/**
 * Waits until every informer synced, or `signal` aborts (then it resolves too). An informer that cannot
 * sync yet is waited for (and asked again every `pollMs`): a warning names it at once and every
 * `warningIntervalMs` names every informer not synced with its reason. Once `timeoutMs` has passed since
 * the start and an informer cannot sync, rejects with a {@link CacheSyncError} naming every one that
 * cannot. Rejects at once with the error of an informer that stopped or failed (it never syncs).
 */
export async function waitForCaches(informers: readonly SyncingInformer[], signal: AbortSignal, options: CacheWaitOptions): Promise<void> {
  const { clock, log, timeoutMs } = options;
  const startedAt = clock.now();
  /** Informers whose sync waits reject now, with the reason; `announced`: those already warned about once. */
  const blocked = new Map<SyncingInformer, Error>();
  const announced = new Set<SyncingInformer>();
  const link = new ChildAbort(signal); // aborted when the wait ends, so the informers' waits end too
  const waitSignal = link.signal;
  let settle!: (err?: Error) => void;
  const done = new Promise<void>((resolve, reject) => (settle = (err) => (err === undefined ? resolve() : reject(err))));
  const giveUpIfDue = (): void => {
    if (blocked.size === 0 || clock.now() - startedAt < timeoutMs) return;
    const all = informers.filter((i) => blocked.has(i)).map((i) => ({ informer: i.name, error: blocked.get(i) as Error }));
    const syncing = informers.filter((i) => !i.hasSynced() && !blocked.has(i)).map((i) => i.name);
    const still = syncing.length === 0 ? '' : ` (still syncing: ${syncing.join(', ')})`;
    const reasons = all.map((u) => `${u.informer}: ${u.error.message}`).join('; ');
    settle(new CacheSyncError(`manager: gave up waiting for the caches after ${formatDuration(clock.now() - startedAt)} (cacheSyncTimeoutMs ${timeoutMs}): ${all.length} informer${all.length === 1 ? '' : 's'} cannot sync — ${reasons}${still}`, all));
  };
  const deadline: ClockTimer | undefined = Number.isFinite(timeoutMs) && timeoutMs > 0 ? clock.setTimeout(giveUpIfDue, timeoutMs) : undefined;
  let warning: ClockTimer | undefined;
  const warn = (): void => {
    const waiting = informers.filter((i) => !i.hasSynced());
    if (waiting.length > 0) {
      const what = waiting.map((i) => `${i.name} ${blocked.has(i) ? `cannot sync: ${(blocked.get(i) as Error).message}` : `still syncing${problemsOf(i)}`}`).join('; ');
      log.warn(`manager: still waiting for the caches after ${formatDuration(clock.now() - startedAt)} (/readyz answers 503 meanwhile; ${giveUpText(timeoutMs)}): ${what}`);
    }
    warning = clock.setTimeout(warn, options.warningIntervalMs);
  };
  warning = clock.setTimeout(warn, options.warningIntervalMs);
  const follow = async (informer: SyncingInformer): Promise<void> => {
    while (!waitSignal.aborted) {
      try {
        await informer.whenSynced(waitSignal);
        blocked.delete(informer);
        return;
      } catch (err) {
        if (waitSignal.aborted) return;
        if (informer.isStopped()) return settle(err as Error);
        if (!announced.has(informer)) log.warn(`manager: ${(err as Error).message}; ${giveUpText(timeoutMs)}`);
        announced.add(informer);
        blocked.set(informer, err as Error);
        giveUpIfDue();
      }
      await sleep(clock, options.pollMs, waitSignal);
      // Asked again below: a wait that still rejects puts it back at once (a microtask later, before any timer).
      blocked.delete(informer);
    }
  };
  void Promise.all(informers.map(follow)).then(() => settle());
  try {
    await done;
  } finally {
    link.dispose();
    if (deadline !== undefined) clock.clearTimeout(deadline);
    if (warning !== undefined) clock.clearTimeout(warning);
  }
}

function giveUpText(timeoutMs: number): string {
  return timeoutMs === Infinity ? 'waiting until it syncs (cacheSyncTimeoutMs: Infinity)' : `the manager stops if a cache still cannot sync ${formatDuration(timeoutMs)} after the start (cacheSyncTimeoutMs)`;
}

function problemsOf(informer: SyncingInformer): string {
  const problems = informer.health().problems;
  return problems.length === 0 ? '' : ` (${problems.join('; ')})`;
}
