// The reflector room's barrel: Reflector, its options, stats, errors and backoff.
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
export { Backoff, resolveBackoffOptions } from './backoff.js';
export type { BackoffOptions, ResolvedBackoffOptions } from './backoff.js';
export {
  ResourceVersionRegressionError,
  WatchStalledError,
  VeryShortWatchError,
  WatchEventError,
  UnexpectedKindError,
  ResourceVersionGuardDisabledError,
  UnresumableWatchError,
  ListTimeoutError,
  isConnectionRefused,
  isNetworkError,
  isTooManyRequests,
  isTooLargeResourceVersion,
  retryAfterMs,
} from './errors.js';
export type { RegressionInfo } from './errors.js';
export { ResourceVersionGuard } from './resource-version-guard.js';
export type { GuardVerdict } from './resource-version-guard.js';
export { INITIAL_EVENTS_END_ANNOTATION } from './watch-events.js';
