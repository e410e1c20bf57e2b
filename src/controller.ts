// `kube-informer/controller`: the reconcile runtime over informers — the controller and its builder,
// the reconcile context and client, predicates, owner mapping, backoff, deadlines, finalizers,
// leader-election runs and the controller's errors. The package root keeps the informer machinery;
// the manager that runs controllers in production (probes, metrics) is `kube-informer/operations`'.

/**
 * The controller runtime of `kube-informer`: {@link Controller} and its builder, the
 * {@link ReconcileContext} and {@link ReconcileClient} a reconcile gets, {@link predicates},
 * {@link finalizer}, {@link runWhileLeading} and the errors a reconcile throws or meets
 * ({@link TerminalError}, {@link ReconcileTimeoutError}). Run controllers in production with the
 * `Manager` of `kube-informer/operations`.
 *
 * @packageDocumentation
 * @module kube-informer/controller
 */

export {
  Controller,
  Action,
  exponentialBackoff,
  Priority,
  defaultPriority,
  predicates,
  controllerOwnerKey,
  runWhileLeading,
  finalizer,
  ReconcileTimeoutError,
  TerminalError,
  NotStartedError,
  FinalizerError,
  PermissionNotDeclaredError,
} from './controller/index.js';
export type {
  ControllerBuilder,
  ControllerOptions,
  ControllerStats,
  ControllerMetricsProvider,
  ReconcileResult,
  Reconciler,
  ReconcileContext,
  ReconcileClient,
  ReconcileReason,
  ReconcileErrorPolicy,
  ExponentialBackoffOptions,
  WatchOptions,
  MetadataOnlyWatchOptions,
  ChildOf,
  Predicate,
  ChangeEvent,
  MapFunc,
  ObjectRef,
  ScheduleRequest,
  PriorityFunction,
  ConcurrencyGroups,
  RunWhileLeadingOptions,
  Runnable,
  FinalizerContext,
  FinalizerHandlers,
  UsesOptions,
} from './controller/index.js';
