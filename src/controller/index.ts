// The controller room's barrel: the controller and its builder, predicates, owner mapping, the reconcile context, the scheduler, leader-election runs.
export * from './scheduler.js';
export * from './predicates.js';
export * from './mapping.js';
export * from './errors.js';
export * from './context.js';
export * from './writes.js';
export { ReconcileClient } from './client.js';
export * from './builder.js';
export * from './controller.js';
export type { ControllerStats } from './outcomes.js';
export * from './leader.js';
export * from './finalizer.js';
export * from './metrics.js';
export { Priority, defaultPriority, type PriorityFunction, type ConcurrencyGroups } from './priority.js';
export { PermissionNotDeclaredError } from '../core/permissions.js';
export type { UsesOptions } from './permissions.js';
