// The informer room's barrel: controller loop, SharedIndexInformer, processor, factory; and, from the rooms it builds on, the
// sync waits and health types (health/) and the read-your-writes answer (observed/) that its API hands out.
export * from './errors.js';
export * from './handler.js';
export type { ErrorPolicy } from './listener.js';
export { SingleFileTracker, AsyncTracker, waitForCacheSync, waitForCacheSyncWithOptions, waitForNamedCacheSync } from '../health/index.js';
export type { InformerSynced, SyncSource, WaitForCacheSyncOptions } from '../health/index.js';
export { stripManagedFields, stripAnnotations, stripBulkyMetadata, composeTransforms, LAST_APPLIED_CONFIGURATION_ANNOTATION, type TransformFunc } from './perf/index.js';
export type { HealthThresholds, InformerHealth, InformerState, InformerCounters, HandlerHealth, WatchHealth, StaleCache, AbsentResource } from '../health/index.js';
export {
  processDeltas,
  processChange,
  isSyncDelta,
  newController,
  type DeltaHandler,
  type InformerController,
  type ControllerConfig,
  type ReflectorController,
} from './controller.js';
export * from './new-informer.js';
export type { SharedIndexInformerOptions, AddEventHandlerOptions } from './options.js';
export { SharedIndexInformer, informerIndexer } from './shared-index-informer.js';
export type { InformerEventListeners, InformerEventName } from './informer-events.js';
export type { InformerEvent, InformerEventStream, InformerEventStreamOptions } from './events-stream.js';
export { watch, reflect, type WatcherEvent, type WatcherOptions, type WatcherSource } from './watcher.js';
// The one implementation of events() (ShardedInformer's too); not in an entry point.
export { informerEventStream } from './events-stream.js';
export * from './factory.js';
export { type ResourceCacheOptions, type MetadataOnlyCacheOptions, type NamespaceSetCacheOptions } from './cache-options.js';
// For the Controller's for/owns/watches and its namespaces option; not in an entry point.
export { checkCacheOptions } from './cache-options.js';
export type { Observed } from '../observed/index.js';
export { NamespaceSetInformer, checkNamespaceSet, type NamespaceSetInformerOptions } from './namespace-set.js';
// The partition core of ShardedInformer and NamespaceSetInformer; not in an entry point.
export { Partitions, type PartitionedIndexer } from './partitioned.js';
