// `kube-informer/cache`: the building blocks under the informers — store and indexer, DeltaFIFO,
// Reflector, the cache-mutation detector, the controller loop and sync tracking — for those who
// assemble their own pipeline, as client-go's tools/cache does.

/**
 * The building blocks of `kube-informer` (client-go's `tools/cache` below the informers): the
 * {@link Reflector}, {@link DeltaFIFO}, stores and indexers, the cache-mutation detector, the
 * controller loop and sync trackers, and kube-rs's `watcher()` / `reflector()` as {@link watch} and
 * {@link reflect}. Most controllers need only the package root.
 *
 * @packageDocumentation
 * @module kube-informer/cache
 */

// The listers, indexers, their errors and the label-selector parser are the root's (one home each).
export { IndexedStore, newStore, newIndexer, everythingSelector, nothingSelector, labelSelectorFromSet, toLabelSelector } from './store/index.js';
export type { IndexValues } from './store/index.js';
export { DeltaFIFO, FifoClosedError, TransformFailedError, isFifoClosedError, newestDelta, oldestDelta } from './fifo/index.js';
export type { ChangeProcessFunc, Delta, DeltaFIFOOptions, DeltaType, Deltas, KeyListerGetter, PopProcessFunc } from './fifo/index.js';
export { Reflector, INITIAL_EVENTS_END_ANNOTATION } from './reflector/index.js';
export {
  WatchStalledError,
  VeryShortWatchError,
  WatchEventError,
  UnexpectedKindError,
  ResourceVersionGuardDisabledError,
  UnresumableWatchError,
  ListTimeoutError,
  WatchListIncompleteError,
} from './reflector/index.js';
export type {
  ReflectorStore,
  KnownObjectsGetter,
  ReflectorStats,
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
  BackoffOptions,
} from './reflector/index.js';
export {
  CacheMutationDetector,
  NoopCacheMutationDetector,
  newCacheMutationDetector,
  cacheMutationDetectorEnabled,
} from './mutation/index.js';
export type { CacheMutationDetectorOptions, MutationDetector, MutationChange } from './mutation/index.js';
export {
  informerIndexer,
  newController,
  processDeltas,
  processChange,
  isSyncDelta,
  SingleFileTracker,
  AsyncTracker,
  waitForCacheSyncWithOptions,
  waitForNamedCacheSync,
  watch,
  reflect,
} from './informer/index.js';
export type { ControllerConfig, DeltaHandler, ReflectorController, WaitForCacheSyncOptions, WatcherEvent, WatcherOptions, WatcherSource } from './informer/index.js';
export { decodeWatchStream, ResponseDecodeError } from './listwatch/index.js';
export type { DecodeWatchStreamOptions, DecodeFailure } from './listwatch/index.js';
