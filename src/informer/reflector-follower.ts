// What a SharedIndexInformer does with its reflector's events, the one record of what happened: health
// and the sync-failure policy follow them, the catch-up waiters check, the log tells failures,
// recoveries and deferred relists, and the `onWatchError` hook and `on('error' | 'connect')` hear of them.

import type { Clock } from '../core/clock.js';
import { errorFields, formatClockTime, formatDuration, type RateLimitedLog } from '../core/log.js';
import { failureReason, type SourceHealth, type SyncFailureTracker } from '../health/index.js';
import type { CatchUpWaiters } from '../observed/index.js';
import { reportHookFailure, type ReflectorEvents } from '../reflector/index.js';
import type { ReflectorErrorContext } from '../reflector/types.js';
import type { InformerEvents } from './informer-events.js';

/** What a {@link ReflectorFollower} tells, and where: the informer's own parts. */
export interface ReflectorFollowerDeps<T> {
  /** The informer's name, in log lines. */
  readonly name: string;
  /** The informer's log (a repeated warning is rate-limited; a recovery resets it). */
  readonly log: RateLimitedLog;
  /** What `health()` knows of the watch. */
  readonly source: SourceHealth;
  /** The sync-failure policy of `whenSynced()`. */
  readonly syncFailures: SyncFailureTracker;
  /** The waiters of `awaitResourceVersion` and `relist`. */
  readonly catchUp: CatchUpWaiters;
  /** The listeners of `on('error' | 'connect')`. */
  readonly events: InformerEvents<T>;
  /** The `onWatchError` option, when given. */
  readonly onWatchError: ((err: Error, context: ReflectorErrorContext) => void) | undefined;
  /** Whether the informer's cache has synced. */
  readonly hasSynced: () => boolean;
  /** The informer's clock: a backoff's end is printed as its wall-clock time. */
  readonly clock: Clock;
}

/** Subscribes an informer's parts to its reflector's events (see the file's opening comment). */
export class ReflectorFollower<T> {
  readonly #deps: ReflectorFollowerDeps<T>;
  /** The failures the open watch's opening ended, until it carried something (see #watchServed). */
  #watchRecovered = 0;
  /** The resource is not served (an `absent` event, until the next list): its return is logged. */
  #absent = false;

  /** `deps` are the informer's parts that hear of the reflector. */
  constructor(deps: ReflectorFollowerDeps<T>) {
    this.#deps = deps;
  }

  /** Health, the sync-failure policy and the log follow the reflector's events (its one source of truth). */
  follow(events: ReflectorEvents): void {
    const { source, syncFailures, catchUp } = this.#deps;
    source.subscribe(events);
    syncFailures.subscribe(events);
    events.on('error', (e) => this.#onWatchError(e.error, { name: e.name, phase: e.phase, action: e.action }));
    events.on('listed', (e) => {
      if (this.#absent) {
        this.#absent = false;
        this.#deps.log.logger.info(`informer ${this.#deps.name}: its resource is served again; listed ${e.items} object${e.items === 1 ? '' : 's'}, delivered as adds`, { state: 'running', items: e.items });
      }
      this.#onSourceSucceeded('list', e.failuresBefore);
      catchUp.listed(e.consistent, e.resourceVersion);
    });
    events.on('event', (e) => {
      catchUp.check();
      if (e.type !== 'ERROR') this.#watchServed();
    });
    events.on('bookmark', () => {
      catchUp.check();
      this.#watchServed();
    });
    events.on('watchOpened', (e) => {
      // "Succeeded again" is told once the watch carries something or ends unrefused: a watch refused
      // by its first event (an ERROR 410 after an outage) is no success.
      this.#watchRecovered = e.failuresBefore;
      this.#deps.events.emit('connect');
    });
    events.on('watchEnded', (e) => {
      if (e.refused) this.#watchRecovered = 0;
      else this.#watchServed();
    });
    events.on('watchListUnsupported', (e) => {
      // Told once per server and process (the other informers of that server just page): no failure.
      this.#deps.log.logger.info(
        `informer ${this.#deps.name}: the API server does not serve streaming lists (${e.error.message}); lists are paged for ${e.server} from now on (useWatchList 'auto')`,
        { server: e.server },
      );
    });
    events.on('absent', (e) => {
      const { name, log } = this.#deps;
      this.#absent = true;
      const never = e.neverListed ? ' — it has not been served since the informer started: if it should exist, check its group, version and plural (a misspelt resource looks the same)' : ' (its CRD deleted?)';
      log.logger.warn(
        `informer ${name}: its resource is not served (${e.error.message})${never}; the informer is absent: its cached objects were delivered as deletes, it counts as synced and ready with an empty cache, and lists again when the resource is served`,
        { state: 'absent', ...errorFields(e.error) },
      );
    });
    events.on('backoff', (e) => {
      // A synced cache stays stale meanwhile (health() says so too): say until when. (Before the first
      // sync, the failed list's own warning and the sync-failure policy speak.)
      if (e.then !== 'relist' || !this.#deps.hasSynced()) return;
      const name = this.#deps.name;
      this.#deps.log.log('warn', 'relist-deferred', `informer ${name}: relist deferred by backoff until ${formatClockTime(this.#deps.clock, e.until)} (in ${formatDuration(e.delayMs)}); the cache is stale until then`, { delayMs: e.delayMs });
    });
  }

  #onWatchError(err: Error, ctx: ReflectorErrorContext): void {
    const { name, log } = this.#deps;
    const next = ACTION_TEXT[ctx.action];
    log.log('warn', `${ctx.phase}:${failureReason(err)}`, `informer ${name}: ${ctx.phase} failed, ${next}: ${err.message}`, { phase: ctx.phase, action: ctx.action, ...errorFields(err) });
    try {
      this.#deps.onWatchError?.(err, ctx);
    } catch (hookError) {
      reportHookFailure(name, hookError);
    }
    this.#deps.events.emit('error', err);
  }

  /** The open watch carried something (or ended unrefused): a recovery it ended is told now. */
  #watchServed(): void {
    if (this.#watchRecovered === 0) return;
    const failuresBefore = this.#watchRecovered;
    this.#watchRecovered = 0;
    this.#onSourceSucceeded('watch', failuresBefore);
  }

  #onSourceSucceeded(what: 'list' | 'watch', failuresBefore: number): void {
    if (failuresBefore === 0) return;
    const { name, log } = this.#deps;
    log.reset();
    log.logger.info(`informer ${name}: ${what} succeeded again after ${failuresBefore} failure${failuresBefore === 1 ? '' : 's'}`, { phase: what, failures: failuresBefore });
  }
}

const ACTION_TEXT: Record<ReflectorErrorContext['action'], string> = {
  relist: 'will list again',
  rewatch: 'will back off and watch again from the last resource version',
  skip: 'skipped that event',
  fallback: 'falling back to a paged list',
  warn: 'continuing',
};
