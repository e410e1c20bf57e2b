// What a reflector tells the world: its typed events, and the channels and hooks that listen to them.

import type { EventEmitter } from 'eventemitter3';
import { toError } from '../core/errors.js';
import { channels, publish } from '../observability/channels.js';
import type { RegressionInfo } from './errors.js';
import type { ReflectorErrorContext } from './types.js';

/** A complete list (all pages, or a streamed initial state) was handed to the store. */
export interface ListedEvent {
  /** The list's resource version (the store got `replace(items, resourceVersion)`). */
  readonly resourceVersion: string;
  /** How many objects the store got. */
  readonly items: number;
  /** True when the list was streamed over a watch (`useWatchList`); false for a paged (or unpaginated) list. */
  readonly streamed: boolean;
  /** True when the list was a consistent read (`resourceVersion=""`, from etcd): a relist asked for, or after a 410. */
  readonly consistent: boolean;
  /** Request failures (`requestFailed` errors) reported since the last completed list or opened watch. */
  readonly failuresBefore: number;
}

/** A watch stream opened (the server answered the watch request). */
export interface WatchOpenedEvent {
  /** The resource version it was opened from. */
  readonly resourceVersion: string;
  /** True for the watch of a streaming list (`sendInitialEvents`). */
  readonly streaming: boolean;
  /** Request failures reported since the last completed list or opened watch. */
  readonly failuresBefore: number;
}

/**
 * Why a watch stream ended: `closed` by the server, `stalled` (silent past its idle limit), `aborted`
 * (the reflector's signal), `stopped` (the reflector ended it: a bad event, a regression, a store
 * failure), `error` (reading it threw).
 */
export type WatchEndReason = 'closed' | 'stalled' | 'aborted' | 'stopped' | 'error';

/** A watch stream ended. */
export interface WatchEndedEvent {
  /** Why. */
  readonly reason: WatchEndReason;
  /**
   * The watch's first event was an ERROR (e.g. 410 too old resource version): the server that answered
   * refused the watch, so it never opened. Health takes back its `watchOpened` (the disconnected time
   * and the run of failures go on from before it); the `watches` counter still counts the answer.
   */
  readonly refused: boolean;
}

/**
 * A retry waits for the backoff: a relist deferred (the cycle ended with a failure), or a re-watch.
 * Published when the wait starts. Not published for a relist taken at once (a 410 from a server that
 * answers, see `machine.ts`).
 */
export interface BackoffWaitEvent {
  /**
   * What waits: a `relist` (the cache is stale until it is done), a `rewatch`, or the `recheck` of a
   * resource not served (`absent`: is it served again?).
   */
  readonly then: 'relist' | 'rewatch' | 'recheck';
  /** The wait, in ms. */
  readonly delayMs: number;
  /** When it ends, clock time in ms (`clock.now()` + `delayMs`). */
  readonly until: number;
}

/**
 * One watch event other than a BOOKMARK arrived, and what became of it: `applied` to the store,
 * `collected` into a streaming list's initial state, or `dropped` (an ERROR, an invalid event, an
 * object of another kind, a rejected regression; each also reported as an `error`).
 */
export interface WatchEventReport {
  /** The event's type as received (`ADDED`, `MODIFIED`, `DELETED`, `ERROR`, or anything else). */
  readonly type: string;
  /** The object's key, when it has one and got that far. */
  readonly key: string | undefined;
  /** The object's resource version (`""` when none). */
  readonly resourceVersion: string;
  /** What became of the event. */
  readonly outcome: 'applied' | 'collected' | 'dropped';
}

/**
 * The resource is not served (a list answered 404 under `onResourceMissing: 'absent'`: its CRD was
 * deleted, or is not created yet). The store was handed an empty list (every cached object leaves as a
 * delete), the watch stopped, and the reflector re-checks with backoff, or at once on a relist asked
 * for; the next completed list (`listed`) means it is served again. Published once per absence.
 */
export interface AbsentEvent {
  /** The 404 the list was answered with. */
  readonly error: Error;
  /** True when no list ever succeeded (the resource was never seen served: a CRD not created yet, or a misspelt resource). */
  readonly neverListed: boolean;
}

/** A BOOKMARK arrived (accepted or rejected). */
export interface BookmarkEvent {
  /** Its resource version (`""` when none). */
  readonly resourceVersion: string;
  /** True for the bookmark that ends a streamed initial list. */
  readonly initialEventsEnd: boolean;
}

/**
 * With `useWatchList: 'auto'`, the server refused a streaming list as invalid (kube-apiserver with the
 * `WatchList` feature gate off, or one that predates it): this reflector lists with pages from now on,
 * and so does every reflector whose `ListerWatcher` names the same server (`serverIdentity`), for the
 * life of the process. Published by the one reflector whose request learnt it; not an error.
 */
export interface WatchListUnsupportedEvent {
  /** The server's identity (`ListerWatcher.serverIdentity`). */
  readonly server: string;
  /** The server's answer. */
  readonly error: Error;
}

/** An error the reflector recovers from (or that ended a cycle): what, where, and what happens next. */
export interface ReflectorErrorEvent extends ReflectorErrorContext {
  /** The error. */
  readonly error: Error;
  /**
   * True when a list or watch request did not get its answer: the ListerWatcher threw or rejected, a
   * watch stream broke, the server sent an ERROR event, or the request timed out before answering (a
   * list past `listTimeoutMs`, a watch that did not connect). False for what the reflector decided on
   * its own: a bad or foreign event, a regression, a store failure, a stalled or very short watch.
   */
  readonly requestFailed: boolean;
}

/** The events of a reflector, by name, with their listener signatures. */
export interface ReflectorEventMap {
  /** See {@link ListedEvent}. */
  listed: (event: ListedEvent) => void;
  /** See {@link WatchOpenedEvent}. */
  watchOpened: (event: WatchOpenedEvent) => void;
  /** See {@link WatchEndedEvent}. */
  watchEnded: (event: WatchEndedEvent) => void;
  /** See {@link BackoffWaitEvent}. */
  backoff: (event: BackoffWaitEvent) => void;
  /** See {@link WatchEventReport}. */
  event: (event: WatchEventReport) => void;
  /** See {@link BookmarkEvent}. */
  bookmark: (event: BookmarkEvent) => void;
  /** See {@link ReflectorErrorEvent}. */
  error: (event: ReflectorErrorEvent) => void;
  /** See {@link WatchListUnsupportedEvent}. */
  watchListUnsupported: (event: WatchListUnsupportedEvent) => void;
  /** A rejected (or, with `accepted`, adopted) event or list whose resource version went backwards. */
  regression: (info: RegressionInfo) => void;
  /** See {@link AbsentEvent}. */
  absent: (event: AbsentEvent) => void;
}

/**
 * The emitter a reflector publishes on (`reflector.events`), an `eventemitter3` EventEmitter: listeners
 * run synchronously, in the order they were added, at the moment the reflector decides.
 *
 * Warning: a listener must not throw. One that does is reported on the `reflectorError` channel (phase
 * `hook`) and the listeners added after it miss that one event.
 */
export type ReflectorEvents = EventEmitter<ReflectorEventMap>;

/** Reports a throwing hook or listener on the `reflectorError` channel; never throws. */
export function reportHookFailure(name: string, error: unknown): void {
  publish(channels.reflectorError, { name, error: toError(error), phase: 'hook', action: 'warn' });
}

/**
 * Re-publishes a reflector's events on the `diagnostics_channel`s: `reflectorError` `{ name, error,
 * phase, action }`, `reflectorRegression` (a `RegressionInfo`), `reflectorList` `{ name,
 * resourceVersion, items }`, `reflectorWatchStart` `{ name, resourceVersion }`, `reflectorWatchEnd`
 * `{ name, reason }`.
 */
export function publishOnChannels(events: ReflectorEvents, name: string): void {
  events.on('error', (e) => publish(channels.reflectorError, { name, error: e.error, phase: e.phase, action: e.action }));
  events.on('regression', (info) => publish(channels.reflectorRegression, { ...info }));
  events.on('listed', (e) => publish(channels.reflectorList, { name, resourceVersion: e.resourceVersion, items: e.items }));
  events.on('watchOpened', (e) => publish(channels.reflectorWatchStart, { name, resourceVersion: e.resourceVersion }));
  events.on('watchEnded', (e) => publish(channels.reflectorWatchEnd, { name, reason: e.reason }));
}

/** The option hooks of a reflector (see `ReflectorOptions`). */
export interface ReflectorHooks {
  /** Told about every reported error. */
  onError?: (error: Error, context: ReflectorErrorContext) => void;
  /** Told about every regression. */
  onRegression?: (info: RegressionInfo) => void;
}

/** Subscribes the option hooks; a hook that throws is reported (phase `hook`) and never breaks anything. */
export function subscribeHooks(events: ReflectorEvents, name: string, hooks: ReflectorHooks): void {
  const { onError, onRegression } = hooks;
  if (onError !== undefined) {
    events.on('error', (e) => {
      try {
        onError(e.error, { name: e.name, phase: e.phase, action: e.action });
      } catch (err) {
        reportHookFailure(name, err);
      }
    });
  }
  if (onRegression !== undefined) {
    events.on('regression', (info) => {
      try {
        onRegression(info);
      } catch (err) {
        reportHookFailure(name, err);
      }
    });
  }
}
