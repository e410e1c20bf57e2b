// The reflector room's barrel: Reflector, its options, events, stats, errors and backoff.
export { Reflector } from './reflector.js';
export type {
  ReflectorStore,
  KnownObjectsGetter,
  ReflectorOptions,
  ReflectorStats,
  ReflectorErrorContext,
  ReflectorPhase,
  ReflectorAction,
} from './types.js';
export type {
  ReflectorEvents,
  ReflectorEventMap,
  ListedEvent,
  WatchOpenedEvent,
  WatchEndedEvent,
  WatchEndReason,
  BackoffWaitEvent,
  WatchListUnsupportedEvent,
  WatchEventReport,
  BookmarkEvent,
  AbsentEvent,
  ReflectorErrorEvent,
} from './events.js';
export type { BackoffOptions } from '../runtime/backoff.js';
export {
  ResourceVersionRegressionError,
  WatchStalledError,
  VeryShortWatchError,
  WatchEventError,
  UnexpectedKindError,
  ResourceVersionGuardDisabledError,
  UnresumableWatchError,
  ListTimeoutError,
  WatchListIncompleteError,
} from './errors.js';
export type { RegressionInfo } from './errors.js';
export { INITIAL_EVENTS_END_ANNOTATION } from './watch-event.js';
// For the rooms above (the informer's options and follower, the sync-failure policy); not in an entry point.
export { REFLECTOR_OPTION_SCHEMA } from './reflector.js';
export { STAGE_LIST_PAGE } from './types.js';
export { reportHookFailure } from './events.js';
export { statusCodeOf } from './errors.js';
