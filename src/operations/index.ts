// The operations entry point (`kube-informer/operations`): running controllers in production — the manager, probes, metrics, the Event recorder, the drift audit.
export { Manager } from './manager.js';
export { fieldsFirst, jsonLogger } from '../core/index.js';
export type { FieldsFirstLogger, JsonLoggerOptions, LogLevel } from '../core/index.js';
export { shutdownSignal } from './shutdown.js';
export type { ShutdownProcess, ShutdownSignal, ShutdownSignalOptions } from './shutdown.js';
export type { ManagedWebhookServer, ManagerOptions, ManagerCrdInstallOptions, ManagerPhase } from './manager.js';
export { probeHandler, probeReport, startProbeServer } from './probes.js';
export type { HasReadiness, InformerVerdict, MetricsRegistryLike, ProbeOptions, ProbeReport, ProbeServer, ProbeServerOptions } from './probes.js';
export { controllerMetricNames, prometheusControllerMetricsProvider } from './controller-metrics.js';
export type { PrometheusControllerMetricsOptions } from './controller-metrics.js';
export { informerMetricNames, registerInformerMetrics } from './informer-metrics.js';
export type {
  HasDriftAuditStats,
  HasFactoryHealth,
  HasInformerHealth,
  HasMultiClusterReport,
  NamedReadiness,
  HasShardRingHealth,
  InformerHealthSource,
  InformerMetricsOptions,
  InformerMetricsRegistration,
  PromCollectorClass,
  PromCollectorClientLike,
} from './informer-metrics.js';
export { EventRecorder, eventsV1Resource } from './events/index.js';
export type { EventDetails, EventObject, EventRecorderOptions, EventRecorderStats, EventsV1Event, EventSubject, EventType } from './events/index.js';
export { DriftAudit } from './drift/index.js';
export type { AuditedCache, AuditedInformer, Divergence, DriftAuditCounts, DriftAuditOptions, DriftAuditStats, DriftKind, DriftReport } from './drift/index.js';
export { CacheSyncError } from './cache-sync.js';
export { rbacManifests } from './rbac.js';
export type { RbacManifestOptions, RbacObject } from './rbac.js';
export type { PermissionReport } from './permissions.js';
export { mergePermissions, VERBS } from '../core/index.js';
export type { HasPermissions, Permission, PermissionUse, Verb } from '../core/index.js';
export type { UnsyncedInformer } from './cache-sync.js';
export { MultiClusterController, MultiClusterManager, staticClusters } from './multicluster/index.js';
export type {
  ClusterAware,
  ClusterHandle,
  ClusterProvider,
  ClusterSink,
  ClusterVerdict,
  MultiClusterControllerStats,
  MultiClusterManagerOptions,
  MultiClusterManagerStats,
  MultiClusterReport,
} from './multicluster/index.js';
export { kubeconfigSecrets, clusterApiKubeconfigSecrets, KubeconfigSecretsProvider, KUBECONFIG_SECRET_LABEL } from './multicluster/index.js';
export type { KubeconfigSecretsOptions, KubeconfigSecretsStats } from './multicluster/index.js';
export type { ProviderVerdict } from './multicluster/index.js';
export type { FleetCluster, FleetPermissionOptions } from './multicluster/index.js';
export { shardedClusters, ShardedClusterProvider } from './multicluster/index.js';
export type { ShardedClustersOptions, ShardedClustersState } from './multicluster/index.js';
export { ClusterRefusedError } from '../core/index.js';
export type { ClusterRefusal } from '../core/index.js';
