// The informer room's barrel: controller loop, SharedIndexInformer, processor, sync waits, factory, health.
export * from './errors.js';
export * from './handler.js';
export type { ErrorPolicy } from './listener.js';
export { SingleFileTracker, AsyncTracker } from './sync-track.js';
export * from './wait-for-cache-sync.js';
export * from './transforms.js';
export type { HealthThresholds, InformerHealth, InformerState, InformerCounters, HandlerHealth, WatchHealth, StaleCache } from './health.js';
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
export * from './factory.js';
export type { Observed } from './observed.js';
