// Streaming list (KEP-3157): the initial state arrives over a watch, ended by a bookmark.

import { ErrorCodes, KubeInformerError } from '../core/errors.js';
import { getResourceVersion } from '../core/types.js';
import type { ListOptions } from '../listwatch/types.js';
import type { ReflectorContext } from './context.js';
import { tagPhase, watchTimeoutSeconds } from './context.js';
import { ResourceVersionRegressionError, UnexpectedKindError, WatchEventError, statusToError } from './errors.js';
import type { RegressionInfo } from './errors.js';
import { ABORTED } from '../core/abort.js';
import { isInitialEventsEnd, keyOf, kindMismatch } from './watch-events.js';
import { openWatch } from './watch-stream.js';
import type { WatchStream } from './watch-stream.js';
import { preview } from '../core/preview.js';

/** The options of a streaming-list watch: initial events, bookmarks, not older than the held version. */
export function planWatchList<T>(ctx: ReflectorContext<T>): ListOptions {
  return {
    resourceVersion: ctx.state.rvUnavailable ? '' : ctx.guard.held(),
    resourceVersionMatch: 'NotOlderThan',
    sendInitialEvents: true,
    allowWatchBookmarks: true,
    timeoutSeconds: watchTimeoutSeconds(ctx),
  };
}

/**
 * Opens a streaming-list watch and collects its initial ADDED events (MODIFIED and DELETED inside the
 * initial stream update the collection) until the BOOKMARK annotated `k8s.io/initial-events-end: "true"`,
 * then hands them to the store in one `replace(items, bookmarkRv)` and returns the same, still open,
 * stream for the watch loop. Versions of the initial events are neither checked nor adopted (they come
 * in no order); the bookmark's version must not be older than the held one.
 *
 * Resolves {@link ABORTED} when `signal` aborted. Throws on anything else (an ERROR event, a stream that
 * closes before the bookmark, a bad event): the caller falls back to a normal list.
 */
export async function watchList<T>(ctx: ReflectorContext<T>, signal: AbortSignal): Promise<WatchStream<T> | typeof ABORTED> {
  const opened = await openWatch(ctx, planWatchList(ctx), signal);
  if (opened === ABORTED) return ABORTED;
  const stream = opened;
  const initial = new Map<string, T>();
  try {
    for (;;) {
      const step = await stream.next();
      if (step.done) {
        if (step.reason === 'aborted') return ABORTED;
        throw new KubeInformerError(
          ErrorCodes.API_STATUS,
          `${ctx.name}: the streaming list ended (${step.reason}) before the initial-events-end bookmark; falling back to a list`,
        );
      }
      const { type, object } = step.event;
      if (type === 'ERROR') throw statusToError(ctx.name, object);
      if (object === null || typeof object !== 'object') {
        throw new WatchEventError(ErrorCodes.WATCH_DECODE, `${ctx.name}: ${String(type)} event without an object`);
      }
      if (type === 'BOOKMARK') {
        ctx.recorder.bookmarkSeen();
        if (!isInitialEventsEnd(object)) continue;
        const rv = getResourceVersion(object) ?? '';
        if (ctx.guard.check(rv) === 'older') {
          const info: RegressionInfo = {
            name: ctx.name, key: '', eventType: 'BOOKMARK', heldResourceVersion: ctx.guard.held(), eventResourceVersion: rv, reason: 'held',
          };
          ctx.recorder.regression(info);
          ctx.state.repairPending = true;
          throw tagPhase(new ResourceVersionRegressionError(info), 'guard');
        }
        try {
          ctx.store.replace([...initial.values()], rv);
        } catch (err) {
          throw tagPhase(err, 'store');
        }
        ctx.state.rvUnavailable = false;
        ctx.state.repairPending = false;
        ctx.guard.advance(rv);
        ctx.recorder.listed(rv, initial.size);
        return stream;
      }
      if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') {
        throw new WatchEventError(ErrorCodes.WATCH_DECODE, `${ctx.name}: unknown watch event type ${preview(type, 60)}`);
      }
      const mismatch = kindMismatch(ctx, object);
      if (mismatch !== undefined) {
        ctx.recorder.error(new UnexpectedKindError(ctx.name, mismatch, object), 'event', 'skip');
        continue;
      }
      const key = keyOf(ctx, type, object);
      if (type === 'DELETED') initial.delete(key);
      else initial.set(key, object);
    }
  } catch (err) {
    stream.stop();
    if (signal.aborted) return ABORTED;
    throw tagPhase(err, 'watch-list');
  }
}
