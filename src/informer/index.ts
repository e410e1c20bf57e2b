// The informer room's barrel: controller loop, SharedIndexInformer, processor, sync waits, factory, health.
export * from './errors.js';
export * from './handler.js';
export type { Notification, AddNotification, UpdateNotification, DeleteNotification, ErrorPolicy, ListenerStats } from './listener.js';
export { determineResyncPeriod, MINIMUM_RESYNC_PERIOD_MS } from './processor.js';
export * from './sync-track.js';
export * from './wait-for-cache-sync.js';
export * from './transforms.js';
export * from './health.js';
export {
  processDeltas,
  isSyncDelta,
  newController,
  closeListerWatcher,
  type DeltaHandler,
  type Controller,
  type ControllerConfig,
  type ReflectorController,
} from './controller.js';
export * from './new-informer.js';
export type { SharedIndexInformerOptions, AddEventHandlerOptions } from './options.js';
export { SharedIndexInformer } from './shared-index-informer.js';
export * from './factory.js';
